// Pre-flight diagnosis: kernel, binfmt_misc mount and entries, user namespaces, emulators,
// systemd-binfmt. Facts are gathered first, then judged by pure rules (testable on fake facts).
// Layer: runner. Still evolving: its types may change between minor versions
// (docs/api/mainpage.md).
#pragma once

#include <emurun/binfmt.hpp>
#include <emurun/error.hpp>
#include <emurun/export.hpp>
#include <emurun/qemu.hpp>

#include <nlohmann/json_fwd.hpp>

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace emurun {

/// Linux version numbers from a release string such as "6.1.0-18-amd64".
struct KernelVersion {
    int major = 0; ///< X of X.Y.Z
    int minor = 0; ///< Y of X.Y.Z
    int patch = 0; ///< Z of X.Y.Z; 0 when the release has none
    /// Whether this is version `ma`.`mi` or later (the patch level not compared).
    [[nodiscard]] bool at_least(int ma, int mi) const {
        return major > ma || (major == ma && minor >= mi);
    }
};

/// Parse the leading "X.Y[.Z]" of a kernel release; nullopt when it does not start that way.
[[nodiscard]] EMURUN_EXPORT std::optional<KernelVersion>
parse_kernel_version(std::string_view release);

/// One emulator as doctor saw it.
struct EmulatorFact {
    std::string arch;                   ///< the arch's canonical name
    std::filesystem::path path;         ///< the emulator found (emurun's search order)
    std::optional<std::string> version; ///< its QEMU version; nullopt when it could not be read
    bool is_static = false;             ///< statically linked: works inside chroots
};

/// Everything doctor looked at. Optional sysctls are nullopt when the file does not exist.
struct DoctorFacts {
    std::string kernel_release;                    ///< uname's release, e.g. "6.1.0-18-amd64"
    std::filesystem::path mount;                   ///< binfmt_misc directory examined
    bool mounted = false;                          ///< it has "register" and "status"
    std::optional<bool> binfmt_enabled;            ///< the "status" file: enabled/disabled
    std::vector<BinfmtEntry> entries;              ///< registered entries, sorted by name
    std::optional<std::string> entries_error;      ///< reading the table failed
    std::optional<long> max_user_namespaces;       ///< user.max_user_namespaces (0 forbids them)
    std::optional<long> unprivileged_userns_clone; ///< Debian's kernel.unprivileged_userns_clone
    std::optional<long> apparmor_restrict_userns;  ///< kernel.apparmor_restrict_unprivileged_userns
    std::optional<std::string> sandbox_probe_error; ///< nullopt = the probe succeeded
    bool sandbox_probed = false;         ///< the sandbox probe ran (DoctorOptions::probe_sandbox)
    bool is_root = false;                ///< doctor ran as root (effective uid 0)
    std::vector<EmulatorFact> emulators; ///< one per arch of the table that has one
    std::vector<std::string> arches_without_emulator; ///< arches of the table without one
    std::vector<std::string> systemd_binfmt; ///< binfmt_environment_warnings(), empty = none
};

/// How one check came out.
enum class CheckStatus { ok, warn, fail };

/// "OK", "WARN", "FAIL".
[[nodiscard]] EMURUN_EXPORT std::string_view to_string(CheckStatus status);

/// One line of doctor's output. `fix` is set for every WARN and FAIL.
struct DoctorCheck {
    std::string id; ///< stable: "kernel", "binfmt.mount", "userns.probe", "emulator.aarch64", ...
    CheckStatus status = CheckStatus::ok; ///< OK, WARN or FAIL
    std::string summary;                  ///< what was found, one sentence
    std::string fix;                      ///< what to do about a WARN or FAIL; empty for OK
    /// The request field the fix concerns, as Error::field ("replace": BinfmtOptions::replace);
    /// empty when none. A tool spells it its own way (emurun's CLI: a flag).
    std::string field = {};
    /// `fix` with `field` spelled by `spell` (hint_text): "... 'emurun binfmt register
    /// aarch64' (option replace)" with option_spelling.
    [[nodiscard]] EMURUN_EXPORT std::string fix_text(FieldSpelling spell = option_spelling) const;
};

/// Facts and the checks judged from them.
struct DoctorReport {
    DoctorFacts facts;               ///< what was looked at
    std::vector<DoctorCheck> checks; ///< the judgements, in doctor's order
    /// Any check is FAIL (emurun's exit code is then non-zero).
    [[nodiscard]] EMURUN_EXPORT bool has_failure() const;
};

/// Where to look; the defaults examine this machine.
struct DoctorOptions {
    std::filesystem::path mount{k_binfmt_default_mount}; ///< the binfmt_misc mount to examine
    std::filesystem::path proc_sys{"/proc/sys"};         ///< for the user-namespace sysctls
    std::optional<std::string> kernel_release;           ///< nullopt = uname
    EmulatorSearch emulators;                            ///< where to look for emulators
    bool probe_sandbox = true; ///< fork a child that tries the sandbox (see probe_sandbox)
};

/// Gather the facts (reads files, forks the sandbox probe; never changes anything).
[[nodiscard]] EMURUN_EXPORT DoctorFacts gather_doctor_facts(const DoctorOptions& options);

/// Judge facts: pure, no I/O except checking that entry interpreters exist.
[[nodiscard]] EMURUN_EXPORT std::vector<DoctorCheck> judge_doctor_facts(const DoctorFacts& facts);

/// gather + judge.
[[nodiscard]] EMURUN_EXPORT DoctorReport diagnose(const DoctorOptions& options = {});

/// The JSON form of "emurun doctor --json" (docs/reference/doctor-json.md), schema 1; each
/// check's "fix" is fix_text(spell).
[[nodiscard]] EMURUN_EXPORT nlohmann::json doctor_json(const DoctorReport& report,
                                                       FieldSpelling spell = option_spelling);

} // namespace emurun
