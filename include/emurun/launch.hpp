// Deciding how a program runs: natively, or through an explicit qemu command line with the
// sysroot environment. Spawns nothing: launch_command() makes the plan a Command for the
// process module.
// Layer: core. Its ABI is kept within a SOVERSION (abi/libemurun.abi; docs/api/mainpage.md).
#pragma once

#include <emurun/arch.hpp>
#include <emurun/error.hpp>
#include <emurun/export.hpp>
#include <emurun/process.hpp>
#include <emurun/qemu.hpp>
#include <emurun/sysroot.hpp>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace emurun {

/// What the caller wants to run.
struct LaunchRequest {
    /// The size of this struct as the caller was compiled with it: how libemurun tells which
    /// version of it a program passes (a versioned struct: fields are only added at its end,
    /// and a program built against an older libemurun keeps working). Leave it as it is.
    StructSize<LaunchRequest> struct_size{};
    std::filesystem::path program{};    ///< path, or a name searched in PATH
    std::vector<std::string> args{};    ///< arguments after argv[0]
    std::optional<std::string> argv0{}; ///< argv[0] the program sees; default: `program` as given
    const Arch* arch = nullptr;         ///< expected arch; nullptr = from the ELF header
    std::vector<std::filesystem::path> sysroots{}; ///< empty = default_sysroots(arch)
    std::optional<std::string> cpu{};              ///< qemu -cpu model
    std::map<std::string, std::string> env{};      ///< variables to set for the program
    EmulatorSearch emulators{};                    ///< where to look for the emulator
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

    /// argv[args_at..] are the request's args; argv[..args_at) depends on the plan alone.
    std::size_t args_at = 0;
    /// What the plan was decided from (emulated plans): the program, the emulator, the loader
    /// and each library found and their directories, every directory searched in each
    /// sysroot, the loader prefix, and what the emulator search and (for a program named
    /// without '/') the PATH search tried before their answers (emulator_inputs,
    /// util::search_inputs). While each keeps its identity the plan stays the same (given the
    /// same request, PATH and $EMURUN_QEMU_DIR).
    std::vector<std::filesystem::path> inputs;
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

/// A plan as the launcher replays it (launch_record.h: the format, written only here): execve
/// `exe` with `argv` (the caller's argv[0] inserted at argv0_at when set, the caller's
/// arguments appended) and `env` laid over the caller's environment, while every `key` path
/// keeps the identity it has when the record is encoded.
struct LaunchRecord {
    std::filesystem::path exe{};              ///< the file to execve (the emulator or the program)
    std::vector<std::string> argv{};          ///< its argv (argv[0] included unless argv0_at)
    std::optional<std::size_t> argv0_at{};    ///< where the caller's argv[0] goes into `argv`
    std::map<std::string, std::string> env{}; ///< variables laid over the caller's environment
    std::vector<std::filesystem::path> key{}; ///< paths whose identity the plan depends on

    /// The request it answers, as the launcher hashes it (launch_record.h): replayed only for
    /// that request.
    std::uint64_t request = 0;
};

/// The record that replays an emulated plan's argv prefix and variables, keyed on its inputs;
/// nullopt for a native plan (the launcher hands those to the CLI).
[[nodiscard]] EMURUN_EXPORT std::optional<LaunchRecord> exec_record(const LaunchPlan& plan);

/// The bytes of `record`, each key path's identity (dev, inode, size, mtime, ctime) taken now,
/// or its absence when it does not exist, with the checksum of its body. Error: a key path
/// that cannot be stat'ed for another reason, a string with a NUL, a count or size over the
/// format's limits.
[[nodiscard]] EMURUN_EXPORT Result<std::string> encode_launch_record(const LaunchRecord& record);

/// Where `emurun exec`'s records live: `launch/` in emurun's cache dir, checked to be this
/// user's alone (util::own_cache_subdir), made when missing.
[[nodiscard]] EMURUN_EXPORT Result<std::filesystem::path> launch_record_dir();

/// Write `plan`'s record to `file` (by the launcher's name for the request: the file it looked
/// for) when `file` is a plain record name ("<16 hex digits>.rec") in launch_record_dir() and the
/// plan is emulated, for the request the name holds (the launcher names a record by the
/// request's hash); replaced atomically, readable by this user only. Once a day it also
/// removes the records not written for 30 days (a request still in use is planned once more).
/// Returns whether it wrote. Error: a key path outside the cache dir changed since
/// take_record_request() (the plan may have read it before).
[[nodiscard]] EMURUN_EXPORT Result<bool> save_exec_record(const LaunchPlan& plan,
                                                          const std::filesystem::path& file);

/// The record file the launcher asked `emurun exec` to write (it found none valid for the
/// request), taken out of this process's environment so the program never inherits the
/// request; nullopt when the launcher asked for none.
[[nodiscard]] EMURUN_EXPORT std::optional<std::filesystem::path> take_record_request();

/// Whether the launcher read `emurun exec WORDS...` as the CLI did: the launcher takes the word
/// after the first `--` as the program, so a record is written only when `command` (the
/// program and its arguments as the CLI parsed them) is exactly what follows that `--`.
[[nodiscard]] EMURUN_EXPORT bool launcher_reads_alike(const std::vector<std::string>& words,
                                                      const std::vector<std::string>& command);

} // namespace emurun
