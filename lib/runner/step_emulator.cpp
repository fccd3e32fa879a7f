// The emulator record of an emulated step: which qemu, which version, which CPU model.
#include "runner/runner_internal.hpp"
#include "util/env.hpp"

#include <emurun/arch.hpp>
#include <emurun/sandbox.hpp>

namespace emurun::detail {
namespace {

std::optional<std::filesystem::path> emulator_path(const Step& step, const Arch& arch,
                                                   const EmulatorSearch& emulators) {
    if (step.emulation == Emulation::host) {
        return host_handler_emulator(arch);
    }
    auto found = find_emulator(arch, emulators);
    return found ? std::optional(found->path) : std::nullopt;
}

void set_cpu(const Step& step, const Arch& arch, EmulatorRecord& e) {
    if (step.cpu) {
        e.cpu = *step.cpu;
    } else if (auto it = step.env.find("QEMU_CPU"); it != step.env.end()) {
        e.cpu = it->second;
    } else if (auto inherited = util::get_env("QEMU_CPU")) {
        e.cpu = *inherited;
    } else if (auto cpu = qemu_default_cpu(arch, e.version)) {
        e.cpu = *cpu;
        e.cpu_default = true;
    }
}

} // namespace

Result<EmulatorSearch> step_search(const Step& step, const EmulatorSearch& emulators) {
    if (!step.qemu || !step.emulated() || !step.arch) {
        return emulators;
    }
    const Arch* arch = EMURUN_TRY(find_arch(*step.arch));
    return choose_emulator(*arch, *step.qemu, emulators);
}

std::optional<EmulatorRecord> step_emulator(const Step& step, const EmulatorSearch& emulators) {
    if (!step.emulated() || !step.arch) {
        return std::nullopt;
    }
    auto arch = find_arch(*step.arch);
    auto search = step_search(step, emulators);
    if (!arch || runs_natively(**arch) || !search) {
        return std::nullopt;
    }
    auto path = emulator_path(step, **arch, *search);
    if (!path) {
        return std::nullopt;
    }
    EmulatorRecord e;
    e.path = path->string();
    e.version = emulator_version(Emulator{*arch, *path, false}).value_or("");
    set_cpu(step, **arch, e);
    return e;
}

} // namespace emurun::detail
