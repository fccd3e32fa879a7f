// Telling QEMU's own crashes apart from the guest program's failures. QEMU 7.2 prints
// "qemu: uncaught target signal N (...)" whenever the guest dies of a core-dumping signal (its
// own NULL dereference, raise(SIGSEGV), an illegal instruction) and then kills itself with the
// same host signal; only its other messages, or dying of a signal it did not report for the
// guest, are QEMU's own failures.
#include <emurun/qemu.hpp>

#include <algorithm>
#include <array>
#include <charconv>
#include <csignal>
#include <cstring>

namespace emurun {
namespace {

constexpr std::size_t k_max_line = 1024;

// Messages QEMU's linux-user prints when it gives up (checked against qemu 7.2's strings and
// later versions' "QEMU internal SIGSEGV {code=..., addr=...}").
constexpr std::array<std::string_view, 7> k_signatures = {
    "qemu: unhandled CPU exception",
    "qemu: fatal: ",
    ": tcg fatal error",
    "qemu:handle_cpu_signal received signal outside vCPU context",
    "QEMU internal SIG",
    "Unhandled trap: 0x",
    "Unhandled program exception: 0x",
};

// QEMU's LOG_UNIMP messages about the guest's requests (linux-user/syscall.c, s390x's decoder).
constexpr std::array<std::string_view, 3> k_unsupported_starts = {
    "Unsupported syscall: ", "Unsupported ioctl", "unimplemented opcode 0x"};
constexpr std::string_view k_guest_signal = "qemu: uncaught target signal ";

// "qemu-aarch64-static: ../tcg/tcg.c:123: ...: Assertion `x' failed." and glib's
// "code should not be reached" from a qemu-<cpu> binary.
bool is_qemu_assertion(std::string_view line) {
    if (!line.starts_with("qemu-")) {
        return false;
    }
    return line.find(": Assertion `") != std::string_view::npos ||
           line.find("code should not be reached") != std::string_view::npos;
}

std::string signal_name(int sig) {
    const char* name = ::sigabbrev_np(sig);
    return std::to_string(sig) + " (SIG" + (name ? name : "?") + ")";
}

std::string guest_signal_note(int sig, const std::string& line) {
    std::string note = "a guest program died of signal " + signal_name(sig) +
                       ", its own crash as QEMU reported it (" + line + ")";
    if (sig == SIGILL) {
        note += "; an instruction the emulated CPU model lacks raises it too";
    }
    return note;
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

std::optional<int> qemu_guest_signal(std::string_view line) {
    auto at = line.find(k_guest_signal);
    if (at == std::string_view::npos) {
        return std::nullopt;
    }
    line.remove_prefix(at + k_guest_signal.size());
    int sig = 0;
    auto [end, ec] = std::from_chars(line.data(), line.data() + line.size(), sig);
    if (ec != std::errc{} || sig <= 0) {
        return std::nullopt;
    }
    return sig;
}

bool is_qemu_unsupported_line(std::string_view line) {
    return std::ranges::any_of(k_unsupported_starts,
                               [&](std::string_view start) { return line.starts_with(start); });
}

void QemuCrashScanner::feed(std::string_view chunk) {
    while (!chunk.empty()) {
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
    auto keep = [this](Kind kind, bool matches) {
        if (matches && !m_found[kind]) {
            m_found[kind] = m_line;
        }
    };
    keep(k_crash, is_qemu_crash_line(m_line));
    keep(k_guest_signal, qemu_guest_signal(m_line).has_value());
    keep(k_unsupported, is_qemu_unsupported_line(m_line));
    m_line.clear();
}

// The first line of `kind`, the unterminated last line included (the emulator died mid-line).
std::optional<std::string> QemuCrashScanner::first(Kind kind) const {
    if (m_found[kind] || m_line.empty()) {
        return m_found[kind];
    }
    QemuCrashScanner last;
    last.m_line = m_line;
    last.end_line();
    return last.m_found[kind];
}

std::optional<std::string> QemuCrashScanner::evidence() const {
    return first(k_crash);
}

std::optional<std::string> QemuCrashScanner::guest_signal_line() const {
    return first(k_guest_signal);
}

std::optional<std::string> QemuCrashScanner::unsupported_line() const {
    return first(k_unsupported);
}

std::optional<std::string> qemu_killed_evidence(int sig) {
    constexpr std::array k_crash_signals = {SIGSEGV, SIGBUS,  SIGILL, SIGABRT,
                                            SIGFPE,  SIGTRAP, SIGSYS};
    if (std::find(k_crash_signals.begin(), k_crash_signals.end(), sig) == k_crash_signals.end()) {
        return std::nullopt;
    }
    return "the emulator was killed by signal " + signal_name(sig) +
           " and reported no guest signal: QEMU itself crashed";
}

std::optional<int> guest_rt_signal(int host_signal) {
    constexpr int k_host_rtmin = 34; // glibc's SIGRTMIN: 32 and 33 are its own
    constexpr int k_guest_rtmin = 32;
    if (host_signal < k_host_rtmin || host_signal > 64) {
        return std::nullopt;
    }
    return host_signal - k_host_rtmin + k_guest_rtmin;
}

QemuVerdict judge_qemu_failure(const QemuCrashScanner& seen, std::optional<int> emulator_signal) {
    using Kind = QemuVerdict::Kind;
    if (auto line = seen.evidence()) {
        return {Kind::emulator_crash, *line};
    }
    auto guest_line = seen.guest_signal_line();
    const int guest = guest_line ? qemu_guest_signal(*guest_line).value_or(0) : 0; // 0: none
    if (emulator_signal && *emulator_signal != guest) {
        if (auto evidence = qemu_killed_evidence(*emulator_signal)) {
            return {Kind::emulator_crash, *evidence};
        }
    }
    if (guest != 0) {
        return {Kind::guest_signal, guest_signal_note(guest, *guest_line)};
    }
    if (auto line = seen.unsupported_line()) {
        return {Kind::unsupported, "QEMU reported something it does not emulate before the "
                                   "failure (" +
                                       *line + ")"};
    }
    return {};
}

} // namespace emurun
