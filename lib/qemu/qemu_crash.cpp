// Telling QEMU's own crashes apart from the guest program's failures: its messages on stderr,
// or the emulator killed by a host signal without reporting a guest signal.
#include <emurun/qemu.hpp>

#include <algorithm>
#include <array>
#include <csignal>
#include <cstring>

namespace emurun {
namespace {

constexpr std::size_t k_max_line = 1024;

// Messages QEMU's linux-user prints when it gives up (checked against qemu 7.2's strings and
// later versions' "QEMU internal SIGSEGV {code=..., addr=...}").
constexpr std::array<std::string_view, 5> k_signatures = {
    "qemu: uncaught target signal",
    "qemu: unhandled CPU exception",
    "qemu: fatal: ",
    "qemu:handle_cpu_signal received signal outside vCPU context",
    "QEMU internal SIG",
};

// "qemu-aarch64-static: ../tcg/tcg.c:123: ...: Assertion `x' failed." and glib's
// "code should not be reached" from a qemu-<cpu> binary.
bool is_qemu_assertion(std::string_view line) {
    if (!line.starts_with("qemu-")) {
        return false;
    }
    return line.find(": Assertion `") != std::string_view::npos ||
           line.find("code should not be reached") != std::string_view::npos;
}

} // namespace

bool is_qemu_crash_line(std::string_view line) {
    for (auto signature : k_signatures) {
        if (line.find(signature) != std::string_view::npos) {
            return true;
        }
    }
    return is_qemu_assertion(line);
}

void QemuCrashScanner::feed(std::string_view chunk) {
    while (!chunk.empty() && !m_evidence) {
        auto nl = chunk.find('\n');
        auto part = chunk.substr(0, nl);
        // A line longer than the cap keeps its start, where the signatures are.
        m_line.append(part.substr(0, k_max_line - std::min(k_max_line, m_line.size())));
        if (nl == std::string_view::npos) {
            return;
        }
        end_line();
        chunk.remove_prefix(nl + 1);
    }
}

void QemuCrashScanner::end_line() {
    if (!m_line.empty() && m_line.back() == '\r') {
        m_line.pop_back();
    }
    if (is_qemu_crash_line(m_line)) {
        m_evidence = m_line;
    }
    m_line.clear();
}

std::optional<std::string> QemuCrashScanner::evidence() const {
    if (m_evidence || !is_qemu_crash_line(m_line)) {
        return m_evidence;
    }
    return m_line;
}

std::optional<std::string> qemu_killed_evidence(int sig) {
    constexpr std::array k_crash_signals = {SIGSEGV, SIGBUS,  SIGILL, SIGABRT,
                                            SIGFPE,  SIGTRAP, SIGSYS};
    if (std::find(k_crash_signals.begin(), k_crash_signals.end(), sig) == k_crash_signals.end()) {
        return std::nullopt;
    }
    const char* name = ::sigabbrev_np(sig);
    return "the emulator was killed by signal " + std::to_string(sig) + " (SIG" +
           (name ? name : "?") + ") and reported no guest signal: QEMU itself crashed";
}

} // namespace emurun
