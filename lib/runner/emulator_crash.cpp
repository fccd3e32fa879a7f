// A failed emulated step: an emulator crash when QEMU's own signature says so, else a failure
// with a note of what QEMU reported (the guest's fatal signal, a feature it lacks).
#include "runner/runner_internal.hpp"

namespace emurun::detail {

void classify_emulator_crash(const Step& step, const QemuCrashScanner* scanner, StepResult& r) {
    if (r.status != StepStatus::failed || !step.emulated()) {
        return;
    }
    // Only in exec mode is the step's own process the emulator: elsewhere a signal is a shell's
    // or the guest program's.
    const bool is_emulator = step.emulation == Emulation::exec;
    if (is_emulator && r.signal) {
        if (auto guest = guest_rt_signal(*r.signal)) { // QEMU's host signal for it is another
            r.message += (r.message.empty() ? "" : "; ") + std::string("the guest died of its ") +
                         "real-time signal " + std::to_string(*guest) + " (QEMU killed itself " +
                         "with host signal " + std::to_string(*r.signal) + ")";
            r.signal = *guest;
        }
    }
    auto verdict = judge_qemu_failure(scanner ? *scanner : QemuCrashScanner{},
                                      is_emulator ? r.signal : std::nullopt);
    switch (verdict.kind) {
    case QemuVerdict::Kind::none:
        return;
    case QemuVerdict::Kind::emulator_crash:
        r.status = StepStatus::emulator_crash;
        r.evidence = std::move(verdict.text);
        return;
    case QemuVerdict::Kind::guest_signal:
    case QemuVerdict::Kind::unsupported:
        r.message += (r.message.empty() ? "" : "; ") + verdict.text;
        return;
    }
}

} // namespace emurun::detail
