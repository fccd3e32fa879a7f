// Finding QEMU user-mode emulators and building their command lines. Spawns nothing.
#pragma once

#include <emurun/arch.hpp>
#include <emurun/error.hpp>
#include <emurun/export.hpp>

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace emurun {

/// One qemu-user binary found on this machine.
struct Emulator {
    const Arch* arch = nullptr;
    std::filesystem::path path; ///< absolute path, symlinks not resolved
    bool is_static = false;     ///< statically linked (no PT_INTERP): works inside chroots
};

/// Where to look. Order: `dirs`, then $EMURUN_QEMU_DIR, then $PATH, then /usr/bin (the last
/// three only when `system` is true).
struct EmulatorSearch {
    std::vector<std::filesystem::path> dirs; ///< extra directories, searched first
    bool system = true;                      ///< also search $EMURUN_QEMU_DIR, $PATH and /usr/bin
    bool prefer_static = true; ///< qemu-<cpu>-static before qemu-<cpu> within each directory
};

/// Find the emulator for `arch`. Error when none: "no emulator for ppc64le: qemu-ppc64le not
/// found in PATH or /usr/bin (apt-get install qemu-user-static)".
[[nodiscard]] EMURUN_EXPORT Result<Emulator> find_emulator(const Arch& arch,
                                                           const EmulatorSearch& search = {});

/// Every emulator found for every arch in the table (one per arch, the preferred one).
[[nodiscard]] EMURUN_EXPORT std::vector<Emulator>
find_all_emulators(const EmulatorSearch& search = {});

/// Arches by name: each of `names` an arch name or alias (find_arch), or "all": every arch in
/// the table with an emulator found by `search` that this host does not run natively (table
/// order). Error names the first unknown arch. The result may be empty ("all", none installed).
[[nodiscard]] EMURUN_EXPORT Result<std::vector<const Arch*>>
select_arches(const std::vector<std::string>& names, const EmulatorSearch& search = {});

/// The version the emulator reports ("7.2.22"), by reading its binary, not by running it;
/// nullopt when it cannot be determined.
[[nodiscard]] EMURUN_EXPORT std::optional<std::string> emulator_version(const Emulator& emu);

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
/// signatures: "qemu: uncaught target signal", "qemu: unhandled CPU exception", "qemu: fatal:",
/// "qemu:handle_cpu_signal received signal outside vCPU context", "QEMU internal SIG..." or a
/// failed assertion of a qemu-<cpu> binary.
[[nodiscard]] EMURUN_EXPORT bool is_qemu_crash_line(std::string_view line);

/// Watches an emulated program's stderr, fed in chunks of any size, for the first line with a
/// QEMU crash signature (is_qemu_crash_line).
class EMURUN_EXPORT QemuCrashScanner {
  public:
    void feed(std::string_view chunk);
    /// The first matching line (without its newline, at most 1 KiB), a last unterminated line
    /// included; nullopt when none.
    [[nodiscard]] std::optional<std::string> evidence() const;

  private:
    void end_line();
    std::string m_line;
    std::optional<std::string> m_evidence;
};

/// The evidence when a qemu-user process itself was killed by host signal `sig` without a
/// "qemu: uncaught target signal" line (which it prints when the guest dies of a signal): for
/// crash signals (SEGV, BUS, ILL, ABRT, FPE, TRAP, SYS) a sentence naming it, else nullopt.
[[nodiscard]] EMURUN_EXPORT std::optional<std::string> qemu_killed_evidence(int sig);

} // namespace emurun
