// The rootless sandbox: a private binfmt_misc in a new user + mount namespace (Linux >= 6.7)
// where the requested arches are registered, and a command run inside it. Nothing on the host
// changes: no host registration, no host mount.
// Layer: core. Its ABI is kept within a SOVERSION (abi/libemurun.abi; docs/api/mainpage.md).
#pragma once

#include <emurun/arch.hpp>
#include <emurun/binfmt.hpp>
#include <emurun/diagnostics.hpp>
#include <emurun/error.hpp>
#include <emurun/export.hpp>
#include <emurun/qemu.hpp>

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace emurun {

/// A sysroot for the sandbox: for `arch`, or (arch == nullptr) for whichever requested arch's
/// dynamic loader it holds.
struct SandboxSysroot {
    const Arch* arch = nullptr;  ///< the arch it is for; nullptr = found from the loader it holds
    std::filesystem::path dir{}; ///< the sysroot's directory
};

/// What to set up. Only `arches` is required.
struct SandboxSpec {
    /// The size of this struct as the caller was compiled with it: how libemurun tells which
    /// version of it a program passes (a versioned struct: fields are only added at its end,
    /// and a program built against an older libemurun keeps working). Leave it as it is.
    StructSize<SandboxSpec> struct_size{};
    std::vector<const Arch*> arches{};      ///< registered inside, each with flags F and P
    std::vector<SandboxSysroot> sysroots{}; ///< none for an arch: default_sysroots(arch)

    /// Set inside the sandbox after QEMU_LD_PREFIX, so a QEMU_LD_PREFIX here wins.
    std::vector<std::pair<std::string, std::string>> env{};
    /// The CPU model QEMU emulates, set as QEMU_CPU before `env` (so env's QEMU_CPU wins); a
    /// model belongs to one arch, so only with a single arch.
    std::optional<std::string> cpu{};
    EmulatorSearch emulators{}; ///< static emulators preferred: F pins them at registration

    /// The executable sandbox_argv() starts (see find_emurun_exe): emurun, or any program whose
    /// main() calls run_if_sandbox_helper() first.
    std::optional<std::filesystem::path> emurun_exe{};
    /// Where the merged loader prefix is cached; nullopt = cache_dir() (sysroot.hpp).
    std::optional<std::filesystem::path> cache_dir{};
    /// Where exec_in_sandbox() and exec_through_host_handlers() send the plan's notes and
    /// warnings before the command replaces this process; none by default. Not carried by
    /// sandbox_argv(): the helper process uses the sink given to run_if_sandbox_helper().
    DiagnosticSink diagnostics{};
};

/// Everything decided outside the namespace; pure data, nothing is mounted yet.
struct SandboxPlan {
    std::vector<BinfmtEntry> entries;                     ///< one per arch, flags "PF"
    std::optional<std::filesystem::path> ld_prefix;       ///< QEMU_LD_PREFIX, if any sysroot
    std::vector<std::pair<std::string, std::string>> env; ///< QEMU_LD_PREFIX, then spec.env
    std::vector<std::string> notes; ///< e.g. "no sysroot for s390x: only static binaries run"
};

/// Find an emulator per arch, the sysroots and the loader prefix, and the entries to register.
/// Errors: no emulator for an arch; a --sysroot that holds no requested arch's loader; the
/// prefix cannot be built.
[[nodiscard]] EMURUN_EXPORT Result<SandboxPlan> plan_sandbox(const SandboxSpec& spec);

/// What running through the host's own binfmt_misc handlers needs instead of a sandbox (the
/// `auto` fallback): the same environment (QEMU_LD_PREFIX, the merged loader prefix of the
/// sysroots or their defaults, which the host's qemu reads too; then spec.env) and notes as
/// plan_sandbox(), but no entries and no emulator search (the host's handlers bring theirs).
/// Errors: a --sysroot that holds no requested arch's loader; the prefix cannot be built.
[[nodiscard]] EMURUN_EXPORT Result<SandboxPlan> plan_host_handlers(const SandboxSpec& spec);

/// A failure to run the command in the sandbox, with the exit code the CLI should use:
/// 127 command not found, 126 not executable, 125 emurun's own failure.
struct SandboxFailure {
    Error error;         ///< what failed
    int exit_code = 125; ///< 127, 126 or 125, as above
};

/// Set up the sandbox in this process and exec `argv` (searched in PATH) inside it: new user +
/// mount namespace (own uid mapped to 0), mounts made private, binfmt_misc mounted on
/// /proc/sys/fs/binfmt_misc, the plan's entries registered, the plan's env set. On success it
/// does not return: the command replaces this process (same pid, exit status and signals are
/// the command's). A multithreaded caller (unshare(CLONE_NEWUSER) refuses those) is replaced
/// by a fresh emurun running sandbox_argv(spec, argv) instead. Kernels without sandboxed
/// binfmt_misc
/// (< 6.7, or user namespaces disabled) get an error naming the requirement and the
/// alternatives.
[[nodiscard]] EMURUN_EXPORT SandboxFailure exec_in_sandbox(const SandboxSpec& spec,
                                                           const std::vector<std::string>& argv);

/// `emurun sandbox` where choose_auto_mode() says host: exec `argv` (searched in PATH) in place,
/// through the host's own binfmt_misc handlers, with plan_host_handlers()' environment set, after
/// a warning saying so. Returns only on failure, with the same exit codes as exec_in_sandbox().
[[nodiscard]] EMURUN_EXPORT SandboxFailure
exec_through_host_handlers(const SandboxSpec& spec, const std::vector<std::string>& argv);

/// The emurun executable used to re-enter the sandbox, in this order (the same rule as
/// find_launcher() in shim.hpp and the Runner's step supervisor use): spec.emurun_exe; this
/// executable when its file name is "emurun"; $EMURUN_EXE; emurun in the install's bindir
/// (e.g. /usr/bin); "emurun" in PATH. Error when none is found.
[[nodiscard]] EMURUN_EXPORT Result<std::filesystem::path> find_emurun_exe(const SandboxSpec& spec);

/// argv[1] of a process that sandbox_argv() starts: marks it as the sandbox helper.
inline constexpr std::string_view k_sandbox_helper_marker = "__emurun_sandbox_helper__";

/// The argument vector that runs `inner` inside a sandbox built from `spec`, in a fresh
/// (single-threaded) process: {emurun, k_sandbox_helper_marker, <every field of spec as JSON>,
/// inner...}. This is the sandbox launch mode for the step runner: spawn it like any command;
/// its exit status is inner's (128+N when inner dies of signal N, as a shell says). Errors: no
/// arch, no command, no emurun executable, a path or variable that is not UTF-8.
[[nodiscard]] EMURUN_EXPORT Result<std::vector<std::string>>
sandbox_argv(const SandboxSpec& spec, const std::vector<std::string>& inner);

/// The other end of sandbox_argv(): call it first thing in main() (emurun does). When argv[1]
/// is k_sandbox_helper_marker, it reads the spec and runs exec_in_sandbox(spec, argv[3...]),
/// returning only its failure (print it, exit with its exit_code); a malformed call is a
/// failure with exit code 125. Any other argv: nullopt, nothing done. The sandbox's
/// diagnostics go to `diagnostics`.
[[nodiscard]] EMURUN_EXPORT std::optional<SandboxFailure>
run_if_sandbox_helper(int argc, char** argv, const DiagnosticSink& diagnostics = {});

/// Whether a sandbox can be set up here: forks a child that creates a user + mount namespace
/// and mounts binfmt_misc in it (nothing else). Error names the step that failed and why.
/// Safe to call from a multithreaded process.
[[nodiscard]] EMURUN_EXPORT Result<void> probe_sandbox();

/// Where `auto` emulation runs foreign programs here.
enum class AutoMode {
    sandbox, ///< a private binfmt_misc (Linux >= 6.7, user namespaces allowed)
    host,    ///< the host's own binfmt_misc handlers, which are sane for every arch
};

/// "sandbox" or "host".
[[nodiscard]] EMURUN_EXPORT std::string_view to_string(AutoMode mode);

/// Whether the binfmt_misc at `mount` has, for every arch, an enabled entry that is sane to run
/// through: QEMU's magic/mask, a qemu of that arch, F or a static emulator
/// (binfmt_entry_provider() and BinfmtProvider::sane()). The error names the arches without
/// one and the fix (emurun binfmt register as root).
[[nodiscard]] EMURUN_EXPORT Result<void>
host_binfmt_covers(const std::vector<const Arch*>& arches,
                   const std::filesystem::path& mount = "/proc/sys/fs/binfmt_misc");

/// The emulator the host's binfmt_misc at `mount` runs `arch`'s programs with: the interpreter
/// of an enabled, sane entry for it (symlinks resolved), else nullopt.
[[nodiscard]] EMURUN_EXPORT std::optional<std::filesystem::path>
host_handler_emulator(const Arch& arch,
                      const std::filesystem::path& mount = "/proc/sys/fs/binfmt_misc");

/// The kernel's answer to "can a sandbox be set up here?", as probe_sandbox() gives it: the seam
/// choose_auto_mode() asks. A test (or a tool that already knows) passes its own.
using SandboxProbe = std::function<Result<void>()>;

/// The `auto` emulation mode: sandbox when the kernel can give one (`probe`; empty =
/// probe_sandbox(), asked once per process), else host when host_binfmt_covers(); else an error
/// naming both reasons and the fixes (register the handlers as root, a Linux >= 6.7 kernel, or
/// exec mode).
[[nodiscard]] EMURUN_EXPORT Result<AutoMode>
choose_auto_mode(const std::vector<const Arch*>& arches,
                 const std::filesystem::path& mount = "/proc/sys/fs/binfmt_misc",
                 const SandboxProbe& probe = {});

} // namespace emurun
