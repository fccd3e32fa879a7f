// Where and how the CLI writes: diagnostics always on stderr, colour decided once.
#pragma once

#include <emurun/diagnostics.hpp>
#include <emurun/report.hpp>

#include <string>
#include <string_view>

namespace emurun::cli {

/// --color=auto|always|never.
enum class ColorMode { automatic, always, never };

/// Parse a --color value; throws Failure (exit 2) naming a bad one.
ColorMode parse_color_mode(std::string_view text);

/// Whether to write ANSI colour to `fd`: never/always as asked; auto means a terminal, `TERM` not
/// "dumb" and `NO_COLOR` unset or empty (https://no-color.org).
bool color_enabled(ColorMode mode, int fd);

/// The process-wide choice for stdout and stderr, set by setup_output().
bool stdout_color();
bool stderr_color();
/// How to_table's status cells look on stdout: coloured (status_color) when stdout_color().
StatusStyle table_style();

/// Cursor controls (the progress line's \r and ESC [K) are allowed: not with --color=never
/// nor TERM=dumb; NO_COLOR does not turn them off (it is about colour).
bool terminal_controls();

/// Route spdlog's default logger to stderr (it writes to stdout otherwise) and set its level:
/// verbosity < 0 errors only (-q), 0 warnings, 1 debug (-v), 2+ trace (-vv).
void setup_output(int verbosity, ColorMode color);
/// The sink the CLI hands the library: each diagnostic through spdlog's default logger at its
/// severity (debug, info, warn), so setup_output()'s level and pattern apply.
DiagnosticSink log_sink();
/// -v given (or EMURUN_VERBOSE >= 1): the last setup_output's verbosity is above 0.
bool verbose_output();

/// `text` wrapped in the SGR code `sgr` (e.g. "32" green) when `enabled`, else `text` itself.
std::string paint(std::string_view text, std::string_view sgr, bool enabled);

/// Verbosity from the environment, where no option can be passed (emurun started by a build
/// tool, shims that link emurun itself): EMURUN_VERBOSE
/// ("-1" quiet, "1", "2"); 0 when unset or not a number.
int verbosity_from_env();

} // namespace emurun::cli
