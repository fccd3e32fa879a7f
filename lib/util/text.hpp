// Text from outside (a report, a root's files, a command's output) as a terminal may show it.
#pragma once

#include <string>
#include <string_view>

namespace emurun::util {

/// `text` with control characters (ESC, NUL, CR, DEL; newlines and tabs too unless
/// `keep_lines`) as \xHH and bidi overrides (U+202A..U+202E, U+2066..U+2069) as \uHHHH, so
/// it cannot recolour the terminal, forge a line or read backwards.
[[nodiscard]] std::string printable(std::string_view text, bool keep_lines = false);

} // namespace emurun::util
