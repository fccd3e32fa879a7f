// Private: text as each report format may hold it.
#pragma once

#include <string>
#include <string_view>

namespace emurun::detail {

/// Escaped for XML text and attributes; what XML 1.0 cannot hold (control characters other than
/// tab and newlines, ANSI colour codes from logs, invalid UTF-8) is dropped.
std::string xml_escape(std::string_view text);
/// Text from a report as a terminal or a Markdown page may show it: control characters and
/// bidi overrides as \xHH / \uHHHH.
std::string printable(std::string_view text);
/// A Markdown table cell: no raw HTML, no '|' that splits the cell, nothing unprintable.
std::string md_cell(std::string_view text);
/// `v` through printf's `format`.
std::string number(double v, const char* format = "%.3f");

} // namespace emurun::detail
