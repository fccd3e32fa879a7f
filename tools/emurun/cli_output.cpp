#include "cli_output.hpp"

#include "cli.hpp"

#include <emurun_term.hpp>

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstdlib>
#include <unistd.h>

namespace emurun::cli {
namespace {

bool g_stdout_color = false;
bool g_stderr_color = false;
bool g_terminal_controls = true;

// The CLI's own presentation settings come from its environment (NO_COLOR, TERM,
// EMURUN_VERBOSE); the library reads none of them.
bool dumb_terminal() {
    const char* term = std::getenv("TERM");
    return term != nullptr && std::string_view(term) == "dumb";
}

} // namespace

ColorMode parse_color_mode(std::string_view text) {
    if (text == "auto") {
        return ColorMode::automatic;
    }
    if (text == "always") {
        return ColorMode::always;
    }
    if (text == "never") {
        return ColorMode::never;
    }
    throw Failure(Error{"--color " + std::string(text), "expected auto, always or never", ""},
                  k_exit_usage);
}

bool color_enabled(ColorMode mode, int fd) {
    if (mode != ColorMode::automatic) {
        return mode == ColorMode::always;
    }
    const char* no_color = std::getenv("NO_COLOR"); // https://no-color.org: set and not empty
    if ((no_color != nullptr && *no_color != '\0') || dumb_terminal()) {
        return false;
    }
    return ::isatty(fd) != 0;
}

bool stdout_color() {
    return g_stdout_color;
}
StatusStyle table_style() {
    return stdout_color() ? StatusStyle(status_color) : StatusStyle();
}

bool stderr_color() {
    return g_stderr_color;
}
bool terminal_controls() {
    return g_terminal_controls;
}

namespace {
int g_verbosity = 0;
} // namespace

bool verbose_output() {
    return g_verbosity > 0;
}

void setup_output(int verbosity, ColorMode color) {
    g_verbosity = verbosity;
    g_stdout_color = color_enabled(color, STDOUT_FILENO);
    g_stderr_color = color_enabled(color, STDERR_FILENO);
    g_terminal_controls = color != ColorMode::never && !dumb_terminal();
    auto sink = std::make_shared<spdlog::sinks::stderr_color_sink_mt>(
        g_stderr_color ? spdlog::color_mode::always : spdlog::color_mode::never);
    auto logger = std::make_shared<spdlog::logger>("emurun", std::move(sink));
    spdlog::set_default_logger(std::move(logger));
    if (verbosity > 0) {
        spdlog::set_pattern("emurun[%P] %H:%M:%S.%e %^%l%$: %v");
        spdlog::set_level(verbosity > 1 ? spdlog::level::trace : spdlog::level::debug);
    } else {
        spdlog::set_pattern("emurun: %^%l%$: %v");
        spdlog::set_level(verbosity < 0 ? spdlog::level::err : spdlog::level::warn);
    }
}

DiagnosticSink log_sink() {
    return [](const Diagnostic& d) {
        switch (d.severity) {
        case Severity::debug:
            spdlog::debug("{}", d.text);
            return;
        case Severity::info:
            spdlog::info("{}", d.text);
            return;
        case Severity::warning:
            spdlog::warn("{}", d.text);
            return;
        }
    };
}

std::string paint(std::string_view text, std::string_view sgr, bool enabled) {
    if (!enabled) {
        return std::string(text);
    }
    return "\033[" + std::string(sgr) + "m" + std::string(text) + "\033[0m";
}

int verbosity_from_env() {
    const char* v = std::getenv("EMURUN_VERBOSE");
    if (!v || !*v) {
        return 0;
    }
    char* end = nullptr;
    long n = std::strtol(v, &end, 10);
    return *end == '\0' ? static_cast<int>(std::clamp(n, -1L, 2L)) : 0;
}

} // namespace emurun::cli
