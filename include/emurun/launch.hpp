// Deciding how a program runs: natively, through a registered binfmt handler, or through an
// explicit qemu command line with the sysroot environment. Spawns nothing: the caller hands
// the plan to the process module.
#pragma once

#include <emurun/arch.hpp>
#include <emurun/error.hpp>
#include <emurun/export.hpp>
#include <emurun/qemu.hpp>
#include <emurun/sysroot.hpp>

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace emurun {

/// How a planned program runs.
enum class LaunchMode {
    native, ///< the host runs it (same arch, i386 on x86_64, or a #! script)
    binfmt, ///< execve the program itself; a registered binfmt_misc handler emulates it
    qemu,   ///< execve the emulator with the program as its argument
};

/// "native", "binfmt" or "qemu".
[[nodiscard]] EMURUN_EXPORT std::string_view to_string(LaunchMode mode);

/// What the caller wants to run.
struct LaunchRequest {
    std::filesystem::path program;    ///< path, or a name searched in PATH
    std::vector<std::string> args;    ///< arguments after argv[0]
    std::optional<std::string> argv0; ///< argv[0] the program sees; default: `program` as given
    const Arch* arch = nullptr;       ///< expected arch; nullptr = from the ELF header
    std::vector<std::filesystem::path> sysroots; ///< empty = default_sysroots(arch)
    std::optional<std::string> cpu;              ///< qemu -cpu model
    std::map<std::string, std::string> env;      ///< variables to set for the program
    EmulatorSearch emulators;
    bool use_binfmt = false; ///< rely on a registered handler (sandbox/host mode), no qemu argv
};

/// The decision: what to execve, with which argv and which variables added to the environment.
struct LaunchPlan {
    LaunchMode mode = LaunchMode::native;
    const Arch* arch = nullptr;                 ///< the program's arch; nullptr for scripts
    std::filesystem::path program;              ///< the program, resolved through PATH
    std::filesystem::path exe;                  ///< the file to execve
    std::vector<std::string> argv;              ///< the full argv for execve (argv[0] included)
    std::map<std::string, std::string> env_set; ///< set these on top of the caller's environment
    std::optional<Emulator> emulator;           ///< for LaunchMode::qemu
    std::optional<std::filesystem::path> ld_prefix; ///< QEMU_LD_PREFIX, dynamic programs only
    std::vector<std::string> notes;                 ///< facts worth a debug line
};

/// Plan how `request.program` runs. Errors (all actionable): program not found or not
/// executable, neither ELF nor #! script, unknown ELF machine, arch different from
/// request.arch, no emulator, libraries missing from the sysroots (each named, with the Debian
/// package where it can be guessed).
[[nodiscard]] EMURUN_EXPORT Result<LaunchPlan> plan_launch(const LaunchRequest& request);

} // namespace emurun
