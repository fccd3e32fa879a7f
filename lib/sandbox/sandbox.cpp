// The sandbox's plan (emulators, sysroots, loader prefix, entries).
#include "sandbox/sandbox_internal.hpp"
#include "sandbox/sandbox_versions.hpp"
#include "util/file.hpp"
#include "util/self.hpp"

#include <emurun/sandbox.hpp>
#include <emurun/sysroot.hpp>

#include <algorithm>

namespace emurun {
namespace fs = std::filesystem;

namespace {

bool file_matches_arch(const fs::path& p, const Arch& arch) {
    const std::string hdr = util::read_head(p, 64);
    return !hdr.empty() && arch.matches(std::span<const unsigned char>(
                               reinterpret_cast<const unsigned char*>(hdr.data()), hdr.size()));
}

/// A sysroot belongs to `arch` when its libc is an ELF object of that arch, in any of the
/// layouts Debian uses: cross sysroot (/usr/<triplet>/lib) or multiarch (lib/<triplet>).
bool sysroot_holds(const fs::path& dir, const Arch& arch) {
    for (const auto& sub : {std::string("lib"), std::string("lib64"), "lib/" + arch.triplet,
                            "usr/lib/" + arch.triplet}) {
        if (file_matches_arch(dir / sub / "libc.so.6", arch)) {
            return true;
        }
    }
    return false;
}

std::string arch_list(const std::vector<const Arch*>& arches) {
    std::string out;
    for (const auto* a : arches) {
        out += (out.empty() ? "" : ",") + a->name;
    }
    return out;
}

/// Sysroots per requested arch: explicit ones (by arch, or detected), else the defaults.
Result<std::vector<ArchSysroots>> sysroots_per_arch(const SandboxSpec& spec) {
    std::vector<ArchSysroots> out;
    for (const auto* a : spec.arches) {
        if (!runs_natively(*a)) { // native programs use the host's own libraries
            out.push_back(ArchSysroots{a, {}});
        }
    }
    for (const auto& s : spec.sysroots) {
        bool used = false;
        for (auto& as : out) {
            if (s.arch != nullptr ? s.arch == as.arch : sysroot_holds(s.dir, *as.arch)) {
                as.sysroots.push_back(s.dir);
                used = true;
            }
        }
        if (!used) {
            return fail("sysroot " + s.dir.string(),
                        "holds no libc.so.6 of " + arch_list(spec.arches),
                        "name its arch with it, or give the sysroot of a requested arch");
        }
    }
    for (auto& as : out) {
        if (as.sysroots.empty()) {
            as.sysroots = default_sysroots(*as.arch);
        }
    }
    return out;
}

/// The loader prefix for every arch that has a sysroot; notes for those that have none.
Result<void> plan_prefix(const SandboxSpec& spec, SandboxPlan& plan) {
    auto per_arch = EMURUN_TRY(sysroots_per_arch(spec));
    std::vector<ArchSysroots> with;
    for (auto& as : per_arch) {
        if (as.sysroots.empty()) {
            plan.notes.push_back("no sysroot for " + as.arch->name + ": only static " +
                                 as.arch->name + " binaries run (apt-get install libc6-" +
                                 as.arch->debian + "-cross, or give a sysroot for " +
                                 as.arch->name + ")");
        } else {
            with.push_back(std::move(as));
        }
    }
    if (with.empty()) {
        return {};
    }
    auto prefix = EMURUN_TRY(make_ld_prefix(with, spec.cache_dir.value_or(cache_dir())));
    plan.ld_prefix = prefix;
    plan.env.emplace_back("QEMU_LD_PREFIX", prefix.string());
    return {};
}

// QEMU_CPU for spec.cpu, before spec.env. A model is one arch's: refused with several.
Result<void> plan_cpu(const SandboxSpec& spec, SandboxPlan& plan) {
    if (!spec.cpu) {
        return {};
    }
    if (spec.arches.size() != 1) {
        return fail(ErrorKind::bad_input, "emurun sandbox",
                    "the CPU model " + *spec.cpu + " is given for " +
                        std::to_string(spec.arches.size()) +
                        " arches, and a model belongs to one arch",
                    "set QEMU_CPU in the environment of the programs of one arch, or request one "
                    "arch with a CPU model",
                    "cpu");
    }
    plan.env.emplace_back("QEMU_CPU", *spec.cpu);
    return {};
}

} // namespace

Result<SandboxPlan> plan_sandbox(const SandboxSpec& given) {
    std::optional<SandboxSpec> upgraded;
    const SandboxSpec* ours = EMURUN_TRY(util::caller_form(given, upgraded));
    const SandboxSpec& spec = *ours;
    if (spec.arches.empty()) {
        return fail("emurun sandbox", "no arch requested",
                    "name one or more, e.g. aarch64 and s390x");
    }
    SandboxPlan plan;
    BinfmtFlags flags;
    flags.fix_binary = true; // opened now: works whatever mount view the command has
    for (auto it = spec.arches.begin(); it != spec.arches.end(); ++it) {
        if (std::find(spec.arches.begin(), it, *it) != it) {
            return fail("emurun sandbox", "the arch " + (*it)->name + " is requested twice",
                        "name each arch once (aliases count: arm64 is aarch64)");
        }
    }
    for (const auto* a : spec.arches) {
        if (runs_natively(*a)) {
            // A handler for the host's own binaries would catch the emulator and every native
            // program too (the kernel gave "Too many levels of symbolic links").
            plan.notes.push_back(a->name + " runs natively here: no emulator registered for it");
            continue;
        }
        auto emu = EMURUN_TRY(find_emulator(*a, spec.emulators));
        if (!emu.is_static) {
            plan.notes.push_back(emu.path.string() +
                                 " is dynamically linked: foreign programs "
                                 "fail after a chroot (apt-get install qemu-user-static)");
        }
        // P where the emulator reads AT_FLAGS_PRESERVE_ARGV0 (QEMU >= 6.0): argv[0] kept.
        flags.preserve_argv0 = qemu_reads_preserve_argv0(emu);
        plan.entries.push_back(binfmt_entry_for(*a, emu.path, flags));
    }
    EMURUN_TRY(plan_prefix(spec, plan));
    EMURUN_TRY(plan_cpu(spec, plan));
    plan.env.insert(plan.env.end(), spec.env.begin(), spec.env.end());
    return plan;
}

Result<SandboxPlan> plan_host_handlers(const SandboxSpec& given) {
    std::optional<SandboxSpec> upgraded;
    const SandboxSpec* ours = EMURUN_TRY(util::caller_form(given, upgraded));
    const SandboxSpec& spec = *ours;
    if (spec.arches.empty()) {
        return fail("emurun sandbox", "no arch requested",
                    "name one or more, e.g. aarch64 and s390x");
    }
    SandboxPlan plan;
    EMURUN_TRY(plan_prefix(spec, plan));
    EMURUN_TRY(plan_cpu(spec, plan));
    plan.env.insert(plan.env.end(), spec.env.begin(), spec.env.end());
    return plan;
}

Result<fs::path> find_emurun_exe(const SandboxSpec& given) {
    std::optional<SandboxSpec> upgraded;
    const SandboxSpec* ours = EMURUN_TRY(util::caller_form(given, upgraded));
    const SandboxSpec& spec = *ours;
    return util::find_emurun(spec.emurun_exe);
}

std::string detail::id_map_line(unsigned long inside, unsigned long outside, unsigned long count) {
    return std::to_string(inside) + " " + std::to_string(outside) + " " + std::to_string(count) +
           "\n";
}

} // namespace emurun
