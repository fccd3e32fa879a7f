// Private: text as each report format may hold it.
#pragma once

#include "util/fd.hpp"
#include "util/text.hpp"

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace emurun::detail {

/// Escaped for XML text and attributes; what XML 1.0 cannot hold (control characters other than
/// tab and newlines, ANSI colour codes from logs, invalid UTF-8) is dropped.
std::string xml_escape(std::string_view text);
/// Text from a report as a terminal or a Markdown page may show it: control characters and
/// bidi overrides as \xHH / \uHHHH.
using util::printable;
/// A Markdown table cell: no raw HTML, no '|' that splits the cell, nothing unprintable.
std::string md_cell(std::string_view text);
/// log_tail's text from the last bytes of a log (`skipped`: the bytes before them, unread):
/// at most `max_lines` whole lines, after a line counting what was left out of `name`.
std::string tail_text(std::string text, std::uint64_t skipped, std::size_t max_lines,
                      const std::string& name);
/// log_tail's defaults (report.hpp), which to_junit uses.
inline constexpr std::size_t k_log_tail_lines = 100;
inline constexpr std::size_t k_log_tail_bytes = 64 * 1024;
/// The logs to_junit reads: each only beneath the log dir of JunitLogs (see report.hpp).
class LogTails {
  public:
    explicit LogTails(const std::optional<std::filesystem::path>& log_dir);
    /// log_tail of `log`, or a line saying why it was left out; empty for a missing log.
    [[nodiscard]] std::string tail(const std::filesystem::path& log) const;

  private:
    std::filesystem::path m_dir; ///< absolute, normal
    util::UniqueFd m_fd;         ///< m_dir, opened
    std::string m_why;           ///< why no log is read, when m_fd is not open
};
/// `v` through printf's `format`.
std::string number(double v, const char* format = "%.3f");

} // namespace emurun::detail
