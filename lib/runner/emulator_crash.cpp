// A failed emulated step whose failure carries QEMU's own signature is an emulator crash.
#include "runner/runner_internal.hpp"

namespace emurun::detail {

void classify_emulator_crash(const Step& step, const QemuCrashScanner* scanner, StepResult& r) {
    if (r.status != StepStatus::failed || !step.emulated()) {
        return;
    }
    std::optional<std::string> evidence = scanner ? scanner->evidence() : std::nullopt;
    // Only in exec mode is the step's own process the emulator: elsewhere a signal is a shell's
    // or the guest program's.
    if (!evidence && step.emulation == Emulation::exec && r.signal) {
        evidence = qemu_killed_evidence(*r.signal);
    }
    if (evidence) {
        r.status = StepStatus::emulator_crash;
        r.evidence = std::move(evidence);
    }
}

} // namespace emurun::detail
