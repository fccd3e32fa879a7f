// Transparent launchers for target-arch tools (a foreign `protoc` a build runs by name).
//
// A shim SHIMDIR/NAME is a hard link (or, across file systems, a copy) of the shim launcher
// `emurun-shim`, a small static program installed with emurun (libexec/emurun/emurun-shim);
// its settings live beside it in SHIMDIR/.emurun-shims/NAME.json (for humans and `shim list`)
// and, planned, in NAME.rec, a launch record (launch.hpp). The launcher reads /proc/self/exe —
// the path it was executed by, even through a hard link — then the record, checks its key and
// execve()s the emulator at once (a stale record: run_if_shim_replan plans again): same pid,
// argv[0] as invoked (qemu -0), environment, stdio, cwd, exit code and signals untouched. Nothing
// is read from environment variables, so `env -i` children work, and relative paths in the
// sidecar are resolved against the shim dir, so a dir that holds its own sysroots can be moved
// (its records are stale then: planned again).
// Layer: core. Its ABI is kept within a SOVERSION (abi/libemurun.abi; docs/api/mainpage.md).
#pragma once

#include <emurun/arch.hpp>
#include <emurun/error.hpp>
#include <emurun/export.hpp>
#include <emurun/qemu.hpp>

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace emurun {

/// The directory inside a shim dir that holds the sidecar configs.
inline constexpr const char* k_shim_config_dir = ".emurun-shims";

/// What to create: a shim called `name` that runs `target` under emulation.
struct ShimSpec {
    /// The size of this struct as the caller was compiled with it: how libemurun tells which
    /// version of it a program passes (a versioned struct: fields are only added at its end,
    /// and a program built against an older libemurun keeps working). Leave it as it is.
    StructSize<ShimSpec> struct_size{};
    // Default member initializers let callers use designated initializers under -Wextra.
    std::string name{};                            ///< file name in the shim dir, e.g. "protoc"
    std::filesystem::path target{};                ///< the foreign program (made absolute)
    const Arch* arch = nullptr;                    ///< expected arch; nullptr = from the ELF
    std::vector<std::filesystem::path> sysroots{}; ///< empty = the arch's default sysroots
    std::map<std::string, std::string> env{};      ///< set for the tool (and the emulator)
    std::optional<std::string> cpu{};              ///< qemu -cpu model
    EmulatorSearch emulators{};                    ///< where to find qemu at creation time
};

/// One shim as recorded in its sidecar. Paths are absolute (resolved against the shim dir).
struct ShimInfo {
    std::string name;               ///< the shim's file name: the name the tool is run by
    std::filesystem::path path;     ///< the shim executable
    std::filesystem::path target;   ///< the program it runs
    std::string arch;               ///< canonical arch name of the target
    bool native = false;            ///< the host runs the target itself (no emulator)
    std::filesystem::path emulator; ///< qemu binary (empty when native)
    std::optional<std::filesystem::path> ld_prefix; ///< passed to qemu as -L
    std::map<std::string, std::string> env;         ///< variables set for the target
    std::optional<std::string> cpu;                 ///< qemu -cpu model; nullopt = QEMU's default

    /// The sysroots given at creation (empty: the arch's default ones), for planning again.
    std::vector<std::filesystem::path> sysroots{};
};

/// Create (or replace) shim `spec.name` in `dir`, linking `launcher` (see find_launcher()).
/// The target is checked now, not at run time: it must exist and be an ELF program of
/// `spec.arch` (when given) with an emulator available and every library it needs present in
/// the sysroots — the missing libraries are named in the error.
/// Errors also for a bad name (empty, '/', leading '.') and a non-shim file named `name`.
[[nodiscard]] EMURUN_EXPORT Result<ShimInfo> add_shim(const std::filesystem::path& dir,
                                                      const ShimSpec& spec,
                                                      const std::filesystem::path& launcher);

/// Every shim in `dir`, sorted by name. A dir without shims gives an empty list; a `dir` that
/// does not exist or is no directory is an error.
[[nodiscard]] EMURUN_EXPORT Result<std::vector<ShimInfo>>
list_shims(const std::filesystem::path& dir);

/// The JSON text of `emurun shim list --json` (json_text's `indent`): an array of {name, path,
/// target, arch, native, emulator, env, ld_prefix (null when none)}.
[[nodiscard]] EMURUN_EXPORT std::string shim_list_json(const std::vector<ShimInfo>& shims,
                                                       int indent = 2);

/// Remove shim `name` from `dir` (the executable and its sidecar). Error if it is not a shim.
[[nodiscard]] EMURUN_EXPORT Result<void> remove_shim(const std::filesystem::path& dir,
                                                     const std::string& name);

/// Read the shim whose executable is `shim_path`. Error if it has no (valid) sidecar.
[[nodiscard]] EMURUN_EXPORT Result<ShimInfo> read_shim(const std::filesystem::path& shim_path);

/// The argument vector a shim execs for `args` (args[0] = argv[0] as invoked):
/// {qemu, [-cpu C], -0, argv0, [-L prefix], target, args[1...]}, or {argv0, args...} (native,
/// execve'd as `target`).
[[nodiscard]] EMURUN_EXPORT std::vector<std::string>
shim_command(const ShimInfo& shim, const std::vector<std::string>& args);

/// Call first thing in main(): when the shim launcher handed a shim over because its launch
/// record is stale (argv: emurun ELR_SHIM_REPLAN SHIM ARGV0 ARGS...), plan the shim again from
/// its sidecar, refresh its record and sidecar (when the shim dir is writable) and exec its
/// tool; never returns then. nullopt when this is no such hand-over; an Error when the shim can
/// no longer run (its target or emulator gone, a library missing).
[[nodiscard]] EMURUN_EXPORT std::optional<Error> run_if_shim_replan(int argc, char** argv);

/// File name of the shim launcher.
inline constexpr const char* k_launcher_name = "emurun-shim";

/// The launcher to link shims to: `hint` if given, else the `emurun-shim` of the emurun binary
/// (found by the rule of find_emurun_exe() in sandbox.hpp): beside it (a build tree), else
/// ../libexec/emurun/emurun-shim (an install). Error naming both places when neither has it.
[[nodiscard]] EMURUN_EXPORT Result<std::filesystem::path>
find_launcher(const std::optional<std::filesystem::path>& hint = std::nullopt);

/// `env` with `dir` put first in PATH, so children find the shims by name (PATH is added when
/// absent). Pass emurun::current_environment() (process.hpp) and hand the result to a Command.
[[nodiscard]] EMURUN_EXPORT std::map<std::string, std::string>
shim_environment(const std::filesystem::path& dir, std::map<std::string, std::string> env);

} // namespace emurun
