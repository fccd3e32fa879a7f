// How the library tells its caller what it noticed but did not fail on (a fallback taken, a
// leftover it could not remove, a registration note): through a sink the caller passes in the
// request. The library has no logger of its own and writes nothing to stdout or stderr; with no
// sink (the default), such notes are dropped.
// Layer: core. Its ABI is kept within a SOVERSION (abi/libemurun.abi; docs/api/mainpage.md).
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <utility>

namespace emurun {

/// How much a diagnostic matters to the person running the tool.
enum class Severity {
    debug,   ///< detail for someone debugging emurun (the CLI shows it with -v)
    info,    ///< worth saying, nothing to act on
    warning, ///< something the user may want to act on (the CLI shows it by default)
};

/// One diagnostic: a sentence without a trailing newline and without a program-name prefix.
struct Diagnostic {
    Severity severity = Severity::warning; ///< how much it matters to the user
    std::string text;                      ///< the sentence itself
};

/// Where the library sends its diagnostics. Called on the calling thread, synchronously; it must
/// not throw. An empty function drops them.
using DiagnosticSink = std::function<void(const Diagnostic&)>;

/// Send `text` to `sink` with `severity`; nothing when the sink is empty.
inline void emit(const DiagnosticSink& sink, Severity severity, std::string text) {
    if (sink) {
        sink(Diagnostic{severity, std::move(text)});
    }
}

} // namespace emurun
