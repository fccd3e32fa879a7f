// Finding QEMU user-mode emulators and building their command lines. Spawns nothing.
// Layer: core. Its ABI is kept within a SOVERSION (abi/libemurun.abi; docs/api/mainpage.md).
#pragma once

#include <emurun/arch.hpp>
#include <emurun/error.hpp>
#include <emurun/export.hpp>

#include <array>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace emurun {

/// One qemu-user binary found on this machine.
struct Emulator {
    const Arch* arch = nullptr; ///< the arch it emulates
    std::filesystem::path path; ///< absolute path, symlinks not resolved
    bool is_static = false;     ///< statically linked (no PT_INTERP): works inside chroots
};

/// Where to look. Order: `dirs`, then $EMURUN_QEMU_DIR, then $PATH, then /usr/bin (the last
/// three only when `system` is true).
struct EmulatorSearch {
    std::vector<std::filesystem::path> dirs{}; ///< extra directories, searched first
    bool system = true;                        ///< also search $EMURUN_QEMU_DIR, $PATH and /usr/bin
    bool prefer_static = true; ///< `qemu-<cpu>-static` before `qemu-<cpu>` within each directory
};

/// Find the emulator for `arch`. Error when none: "no emulator for ppc64le: qemu-ppc64le not
/// found in PATH or /usr/bin (apt-get install qemu-user-static)".
[[nodiscard]] EMURUN_EXPORT Result<Emulator> find_emulator(const Arch& arch,
                                                           const EmulatorSearch& search = {});

/// What find_emulator's answer `found` (for found.arch) was decided by, for the key of a cached
/// plan (a launch record): every file it tried before `found` (qemu-<cpu>-static in every
/// directory of the search, then qemu-<cpu> in those before `found`'s, when `found` is
/// dynamic), whether they exist or not (a launch record keys a missing one by its absence).
/// An emulator put where
/// the search would have taken it first changes the identity of one of them. The search list
/// itself ($EMURUN_QEMU_DIR, PATH) is the caller's to key.
[[nodiscard]] EMURUN_EXPORT std::vector<std::filesystem::path>
emulator_inputs(const Emulator& found, const EmulatorSearch& search = {});

/// Every emulator found for every arch in the table (one per arch, the preferred one).
[[nodiscard]] EMURUN_EXPORT std::vector<Emulator>
find_all_emulators(const EmulatorSearch& search = {});

/// Arches by name: each of `names` an arch name or alias (find_arch), or "all": every arch in
/// the table with an emulator found by `search` that this host does not run natively (table
/// order). Error names the first unknown arch; an empty selection (no names, or "all" with no
/// foreign emulator installed) is an error too.
[[nodiscard]] EMURUN_EXPORT Result<std::vector<const Arch*>>
select_arches(const std::vector<std::string>& names, const EmulatorSearch& search = {});

/// The version the emulator reports ("7.2.22"), by reading its binary, not by running it;
/// nullopt when it cannot be determined. Remembered per path, size and modification time, so
/// asking once per step of a run reads each binary once.
[[nodiscard]] EMURUN_EXPORT std::optional<std::string> emulator_version(const Emulator& emu);

/// Whether `emu` understands binfmt_misc's P flag (preserve argv[0]): QEMU 6.0 and later read
/// AT_FLAGS_PRESERVE_ARGV0 from the kernel (Linux >= 5.12); QEMU 5.2 (Debian 11) does not and
/// would take the extra argument for the program's first one. True when the version is unknown.
[[nodiscard]] EMURUN_EXPORT bool qemu_reads_preserve_argv0(const Emulator& emu);

/// The CPU model qemu-user picks for `arch` when none is asked for (no -cpu, no QEMU_CPU), for
/// an emulator of `version`: QEMU 7's linux-user defaults, measured with 7.2 (aarch64, arm and
/// their big-endian forms "max", ppc64/ppc64le "POWER9", riscv64 "rv64", s390x "qemu");
/// nullopt for other arches or versions.
[[nodiscard]] EMURUN_EXPORT std::optional<std::string> qemu_default_cpu(const Arch& arch,
                                                                        std::string_view version);

/// An emulator emurun can use, with its version and where it comes from (`emurun qemu list`).
struct AvailableEmulator {
    Emulator emulator;   ///< the binary and its arch
    std::string version; ///< "10.0.13"; empty when unknown

    /// "$EMURUN_QEMU_DIR", "PATH", "/usr/bin" (or a search dir), or for one `emurun qemu fetch`
    /// took from Debian's archive "trixie: qemu-user 1:10.0.13+ds-0+deb13u1"
    std::string source;
    std::string suite; ///< the Debian suite of a fetched emulator; empty for the others
};

/// Every emulator found for `arch` (every arch when null): each directory of `search` in order
/// (its `qemu-<cpu>-static` and `qemu-<cpu>`, one entry per file however many names reach it),
/// then the fetched ones of every suite in emurun's cache (`qemu/SUITE/`).
[[nodiscard]] EMURUN_EXPORT std::vector<AvailableEmulator>
list_emulators(const Arch* arch = nullptr, const EmulatorSearch& search = {});

/// `search` narrowed to the one emulator `choice` names for `arch` (a pipeline's or step's
/// "qemu"): a version ("10.0" matches 10.0.x, "7.2.22" only itself; the first in
/// list_emulators' order), a Debian suite fetched with `emurun qemu fetch --suite SUITE`
/// ("trixie"), or a path (a `qemu-<cpu>[-static]` file or a directory holding one). The result
/// searches that emulator's directory only, so every module that takes an EmulatorSearch (exec,
/// sandbox, root) finds it. Error when none matches, naming what there is and the fetch
/// command that gets it.
[[nodiscard]] EMURUN_EXPORT Result<EmulatorSearch>
choose_emulator(const Arch& arch, std::string_view choice, const EmulatorSearch& search = {});

/// Where `emurun qemu fetch` keeps the emulators of `suite`: `qemu/SUITE/` in emurun's cache
/// (the cache dir checked as every cache is; the suite dir is not created). Error for a suite
/// name that is no Debian suite name (lower-case letters, digits, '-', '.'; no "..").
[[nodiscard]] EMURUN_EXPORT Result<std::filesystem::path>
fetched_emulator_dir(std::string_view suite);

/// `emurun qemu fetch`: Debian's static user-mode emulators of one suite into emurun's cache,
/// without installing anything. begin() makes a private staging dir in the cache; the caller
/// has the emurun-sysroot tool unpack `package()` of `suite()` for this host's arch into
/// `tree()` (sysroot_tool_argv: the one apt/dpkg downloader); adopt() then moves the static
/// emulator of each arch into fetched_emulator_dir(suite) as `qemu-<cpu>-static`, beside a
/// `.source` file naming the package and version. All or nothing: the suite's dir is replaced
/// in one rename (the emulators fetched before for other arches are kept). The staging dir
/// goes with the object.
class EMURUN_EXPORT QemuFetch {
  public:
    /// `suite` empty: this host's Debian release (VERSION_CODENAME of /etc/os-release).
    [[nodiscard]] static Result<QemuFetch> begin(std::string suite);
    /// Moves the staging dir along: only the moved-to object removes it.
    QemuFetch(QemuFetch&&) noexcept;
    /// Removes this object's staging dir, then takes `other`'s.
    QemuFetch& operator=(QemuFetch&&) noexcept;
    ~QemuFetch();
    /// The Debian suite fetched from ("trixie"), the host's when begin() was given none.
    [[nodiscard]] const std::string& suite() const;
    /// The staging dir the package is to be unpacked into (private, inside emurun's cache).
    [[nodiscard]] const std::filesystem::path& tree() const;
    /// The package that carries the static emulators (from trixie on, a transitional one that
    /// depends on qemu-user, which then holds them): "qemu-user-static".
    [[nodiscard]] static std::string package() { return "qemu-user-static"; }
    /// Error when the tree has no static emulator for one of `arches` (nothing is changed).
    [[nodiscard]] Result<std::vector<AvailableEmulator>>
    adopt(const std::vector<const Arch*>& arches);

  private:
    struct Impl;
    explicit QemuFetch(std::unique_ptr<Impl> impl);
    std::unique_ptr<Impl> m_impl;
};

/// Options for one emulated run. Runs planned by emurun pass the library prefix as
/// QEMU_LD_PREFIX in the environment (see sysroot.hpp), so that programs the guest starts
/// inherit it; shims pass it as -L, so that the tool's environment stays the caller's.
struct QemuOptions {
    std::optional<std::string> cpu{};                 ///< -cpu
    std::optional<std::string> argv0{};               ///< -0: argv[0] the guest sees
    std::optional<std::filesystem::path> ld_prefix{}; ///< -L: the guest's library prefix
};

/// The argument vector that runs `program args...` under `emu` (only emu.path is used):
/// {emu.path, [-cpu C], [-0 argv0], [-L prefix], program, args...}.
[[nodiscard]] EMURUN_EXPORT std::vector<std::string>
qemu_command(const Emulator& emu, const std::filesystem::path& program,
             const std::vector<std::string>& args, const QemuOptions& options = {});

/// Whether `line` (one line of an emulated program's stderr) carries one of QEMU's own crash
/// signatures: "qemu: unhandled CPU exception", "qemu: fatal:", "...: tcg fatal error",
/// "qemu:handle_cpu_signal received signal outside vCPU context", "QEMU internal SIG...",
/// "Unhandled trap:"/"Unhandled program exception:" (a CPU loop giving up) or a failed
/// assertion of a `qemu-<cpu>` binary. Not "qemu: uncaught target signal": QEMU prints that
/// when the guest program itself dies of a signal (qemu_guest_signal).
[[nodiscard]] EMURUN_EXPORT bool is_qemu_crash_line(std::string_view line);

/// The guest's signal in QEMU's report of a guest program killed by one, "qemu: uncaught target
/// signal 11 (Segmentation fault) - core dumped" gives 11; nullopt for any other line. QEMU
/// then re-raises that signal on itself, so the emulator dies of the guest's signal.
[[nodiscard]] EMURUN_EXPORT std::optional<int> qemu_guest_signal(std::string_view line);

/// Whether `line` is QEMU saying the guest used something it does not emulate ("Unsupported
/// syscall: 1000", "Unsupported ioctl: ...", "unimplemented opcode ..."; printed with
/// `-d unimp`/QEMU_LOG=unimp). Not a crash: glibc probes syscalls QEMU lacks (rseq) at every
/// start-up and goes on; a note on a failure.
[[nodiscard]] EMURUN_EXPORT bool is_qemu_unsupported_line(std::string_view line);

/// Watches an emulated program's stderr, fed in chunks of any size, for the first line of each
/// kind: a QEMU crash signature (is_qemu_crash_line), a guest killed by a signal
/// (qemu_guest_signal), a feature QEMU lacks (is_qemu_unsupported_line). Lines are kept
/// without their line end, at most 1 KiB; a last unterminated line counts.
class EMURUN_EXPORT QemuCrashScanner {
  public:
    /// The next bytes of stderr, cut anywhere (lines may span chunks).
    void feed(std::string_view chunk);
    /// The first line with a QEMU crash signature; nullopt when none.
    [[nodiscard]] std::optional<std::string> evidence() const;
    /// The first "qemu: uncaught target signal N" line; nullopt when none.
    [[nodiscard]] std::optional<std::string> guest_signal_line() const;
    /// The first line naming a feature QEMU lacks; nullopt when none.
    [[nodiscard]] std::optional<std::string> unsupported_line() const;

  private:
    enum Kind : std::size_t { k_crash, k_guest_signal, k_unsupported, k_kinds };
    void end_line();
    [[nodiscard]] std::optional<std::string> first(Kind kind) const;
    std::string m_line;
    std::array<std::optional<std::string>, k_kinds> m_found;
};

/// The evidence when a qemu-user process itself was killed by host signal `sig` without a
/// "qemu: uncaught target signal" line (which it prints when the guest dies of a signal): for
/// crash signals (SEGV, BUS, ILL, ABRT, FPE, TRAP, SYS) a sentence naming it, else nullopt.
[[nodiscard]] EMURUN_EXPORT std::optional<std::string> qemu_killed_evidence(int sig);

/// The guest's real-time signal behind host signal `host_signal` of a qemu-user process:
/// QEMU's linux-user maps the guest's real-time signals 32, 33, ... onto the host's from
/// glibc's SIGRTMIN (34), so a guest that dies of its signal N >= 32 kills QEMU with host
/// signal N + 2 (guest 34 shows as host 36, exit 164 in a shell). The guest's top signals have
/// no host signal left: QEMU refuses to send them (kill returns EINVAL; QEMU 7.2: guest 63
/// and 64). nullopt for a host signal below 34 (the same number in the guest).
[[nodiscard]] EMURUN_EXPORT std::optional<int> guest_rt_signal(int host_signal);

/// What a failed emulated program's failure says about QEMU (judge_qemu_failure).
struct QemuVerdict {
    /// Whose failure it is.
    enum class Kind {
        none,           ///< nothing of QEMU's: an ordinary failure
        emulator_crash, ///< QEMU itself crashed or gave up: `text` is the evidence
        guest_signal,   ///< the guest program died of a signal: `text` says so (a failure)
        unsupported,    ///< QEMU reported a feature it lacks: `text` names it (a failure)
    };
    Kind kind = Kind::none; ///< what QEMU had to do with the failure
    std::string text;       ///< the evidence or explanation; empty for Kind::none
};

/// The verdict on a failed emulated program from what `seen` found on its stderr and, when the
/// failed process is the emulator itself (exec mode), the host signal that killed it
/// (`emulator_signal`). In order: a QEMU crash signature is an emulator crash; an emulator killed
/// by a crash signal is one unless QEMU reported the guest dying of that same signal (QEMU
/// re-raises the guest's signal); a guest killed by a signal is the program's own failure, and
/// so is a feature QEMU lacks (a note: the program may depend on it).
[[nodiscard]] EMURUN_EXPORT QemuVerdict judge_qemu_failure(const QemuCrashScanner& seen,
                                                           std::optional<int> emulator_signal);

} // namespace emurun
