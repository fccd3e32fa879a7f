// Deciding how a program runs: natively, or through an explicit qemu command line with the
// sysroot environment. Spawns nothing: launch_command() makes the plan a Command for the
// process module.
#pragma once

#include <emurun/arch.hpp>
#include <emurun/error.hpp>
#include <emurun/export.hpp>
#include <emurun/process.hpp>
#include <emurun/qemu.hpp>
#include <emurun/sysroot.hpp>

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace emurun {

/// What the caller wants to run.
struct LaunchRequest {
    std::filesystem::path program{};    ///< path, or a name searched in PATH
    std::vector<std::string> args{};    ///< arguments after argv[0]
    std::optional<std::string> argv0{}; ///< argv[0] the program sees; default: `program` as given
    const Arch* arch = nullptr;         ///< expected arch; nullptr = from the ELF header
    std::vector<std::filesystem::path> sysroots{}; ///< empty = default_sysroots(arch)
    std::optional<std::string> cpu{};              ///< qemu -cpu model
    std::map<std::string, std::string> env{};      ///< variables to set for the program
    EmulatorSearch emulators{};
};

/// The decision: what to execve, with which argv and which variables added to the environment.
struct LaunchPlan {
    /// native: the host runs it (same arch, i386 on x86_64, or a #! script); exec: the
    /// emulator is exec'd with the program as its argument.
    Emulation mode = Emulation::native;
    const Arch* arch = nullptr;                 ///< the program's arch; nullptr for scripts
    std::filesystem::path program;              ///< the program, resolved through PATH
    std::filesystem::path exe;                  ///< the file to execve
    std::vector<std::string> argv;              ///< the full argv for execve (argv[0] included)
    std::map<std::string, std::string> env_set; ///< set these on top of the caller's environment
    std::optional<Emulator> emulator;           ///< for Emulation::exec
    std::optional<std::filesystem::path> ld_prefix; ///< QEMU_LD_PREFIX, dynamic programs only
    std::vector<std::string> notes;                 ///< facts worth a debug line
};

/// Plan how `request.program` runs. Errors (all actionable): program not found or not
/// executable, neither ELF nor #! script, unknown ELF machine, arch different from
/// request.arch, no emulator, libraries missing from the sysroots (each named, with the Debian
/// package where it can be guessed).
[[nodiscard]] EMURUN_EXPORT Result<LaunchPlan> plan_launch(const LaunchRequest& request);

/// The Command that carries out `plan`: its argv, its exe as the program, and `env` (the
/// environment the program would get without emurun, e.g. current_environment()) with
/// plan.env_set laid over it.
[[nodiscard]] EMURUN_EXPORT Command launch_command(const LaunchPlan& plan,
                                                   std::map<std::string, std::string> env);

} // namespace emurun
