// binfmt_misc: the kernel's registration syntax, the entry files it shows, and safe
// plan-then-apply registration against a binfmt_misc mount (the host's or a sandbox's).
// Layer: core. Its ABI is kept within a SOVERSION (abi/libemurun.abi; docs/api/mainpage.md).
#pragma once

#include <emurun/arch.hpp>
#include <emurun/error.hpp>
#include <emurun/export.hpp>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace emurun {

/// Where the kernel's binfmt_misc lives unless told otherwise.
inline constexpr std::string_view k_binfmt_default_mount = "/proc/sys/fs/binfmt_misc";
/// Longest registration line the kernel accepts (fs/binfmt_misc.c MAX_REGISTER_LENGTH).
inline constexpr std::size_t k_binfmt_max_line = 1920;
/// Magic bytes the kernel can look at: magic size and offset + size are limited to this.
inline constexpr std::size_t k_binfmt_buf_size = 128;

/// How the kernel recognises a file: by magic bytes at an offset, or by file-name extension.
enum class BinfmtType { magic, extension };

/// "magic" or "extension".
[[nodiscard]] EMURUN_EXPORT std::string_view to_string(BinfmtType type);

/// The kernel's special flags. `C` implies `O` in the kernel, and here: credentials without
/// open_binary compares, formats and parses exactly like credentials with it.
struct BinfmtFlags {
    bool preserve_argv0 = false; ///< P: pass the original argv[0] to the interpreter
    bool open_binary = false; ///< O: interpreter gets an fd of the binary (reads unreadable files)
    bool credentials = false; ///< C: credentials from the binary (setuid!); implies O
    bool fix_binary = false;  ///< F: interpreter opened at registration (works in chroots)

    /// Kernel order "POCF" (as the entry file shows them); C always brings its O.
    [[nodiscard]] EMURUN_EXPORT std::string to_string() const;
    /// Flags from letters P, O, C, F (any order, repeats allowed). Error on any other letter.
    [[nodiscard]] EMURUN_EXPORT static Result<BinfmtFlags> parse(std::string_view letters);
    /// Whether the interpreter gets the binary as an open fd: O, or C (which implies it).
    [[nodiscard]] bool opens_binary() const { return open_binary || credentials; }
    /// Equal as the kernel sees them: O given alone and O implied by C compare equal.
    [[nodiscard]] bool operator==(const BinfmtFlags& o) const {
        return preserve_argv0 == o.preserve_argv0 && opens_binary() == o.opens_binary() &&
               credentials == o.credentials && fix_binary == o.fix_binary;
    }
};

/// One binfmt_misc entry: what a registration line says, or what the entry file shows.
struct BinfmtEntry {
    std::string name{};                  ///< entry file name, e.g. "qemu-aarch64"
    BinfmtType type = BinfmtType::magic; ///< match by magic bytes or by file extension
    int offset = 0;                      ///< magic only
    std::string magic{};                 ///< raw bytes (magic) or the extension without '.'
    std::string mask{};                  ///< raw bytes, same length as magic; empty = none
    std::string interpreter{};           ///< absolute path of the handler
    BinfmtFlags flags{};                 ///< the kernel's special flags (P, O, C, F)
    bool enabled = true;                 ///< entry files only; registration enables

    /// Same registration (everything but `enabled`).
    [[nodiscard]] EMURUN_EXPORT bool same_registration(const BinfmtEntry& o) const;
    /// Same registration and the same enabled state.
    [[nodiscard]] bool operator==(const BinfmtEntry& o) const {
        return same_registration(o) && enabled == o.enabled;
    }
};

/// Check an entry against every rule the kernel applies when it parses a line (name not empty,
/// not "." or "..", no '/'; magic not empty; mask length; size and offset limits; extension
/// without '/'), plus emurun's own: no newline or NUL in name/interpreter, interpreter absolute.
[[nodiscard]] EMURUN_EXPORT Result<void> validate_binfmt_entry(const BinfmtEntry& entry);

/// Parse a registration line `:name:type:offset:magic:mask:interpreter:flags` exactly as the
/// kernel does (first byte is the delimiter, `\xHH` escapes in magic/mask, one optional trailing
/// newline, length 11..1920). Errors name the field and the rule it breaks.
[[nodiscard]] EMURUN_EXPORT Result<BinfmtEntry> parse_binfmt_line(std::string_view line);

/// Format a registration line (no trailing newline) that the kernel parses back to `entry`.
/// `delimiter` defaults to ':' or, if a field that cannot be escaped contains ':', the first of
/// ",;|#%@!~" that none contains. Error when the entry is invalid or the delimiter is unusable.
[[nodiscard]] EMURUN_EXPORT Result<std::string>
format_binfmt_line(const BinfmtEntry& entry, std::optional<char> delimiter = std::nullopt);

/// Parse the text of /proc/sys/fs/binfmt_misc/<name> ("enabled", "interpreter X", "flags: PF",
/// "offset N", "magic 7f45...", "mask ff..." or "extension .ext").
[[nodiscard]] EMURUN_EXPORT Result<BinfmtEntry> parse_binfmt_entry_file(std::string_view name,
                                                                        std::string_view text);

/// The entry emurun registers for `arch`: name "qemu-<arch.qemu>", the table's magic and mask.
[[nodiscard]] EMURUN_EXPORT BinfmtEntry binfmt_entry_for(const Arch& arch,
                                                         const std::filesystem::path& interpreter,
                                                         BinfmtFlags flags);

/// emurun's default flags for `interpreter`, as Debian and tonistiigi/binfmt decide: P always
/// (argv[0] reaches the program), F when the interpreter is a static ELF (pinned at
/// registration, so it works in chroots and containers). C and O are never default.
[[nodiscard]] EMURUN_EXPORT BinfmtFlags
default_binfmt_flags(const std::filesystem::path& interpreter);

/// The arch whose table entry (magic, mask, offset 0) this entry is, or nullptr.
[[nodiscard]] EMURUN_EXPORT const Arch* binfmt_entry_arch(const BinfmtEntry& entry);

/// Whether two magic entries match exactly the same files: equal offset, equal mask at every
/// byte, equal magic under the mask (bytes past the end, or masked to 0, do not matter).
[[nodiscard]] EMURUN_EXPORT bool binfmt_magic_equivalent(const BinfmtEntry& a,
                                                         const BinfmtEntry& b);

/// An entry another tool registered that already does emurun's job for an arch.
struct BinfmtProvider {
    const Arch* arch = nullptr; ///< the arch the entry runs (never null in a provider found)

    /// "qemu-user-static" (Debian's `/usr/libexec/qemu-binfmt/<cpu>-binfmt-P`, *-static) or
    /// "another tool (tonistiigi/binfmt or docker/setup-qemu-action)".
    std::string owner;
    std::filesystem::path emulator; ///< the interpreter, symlinks resolved
    bool static_emulator = false;   ///< the emulator is a static ELF
    bool fix_binary = false;        ///< flag F: the kernel pinned the emulator

    /// Usable for running steps on the host: F or a static emulator.
    [[nodiscard]] EMURUN_EXPORT bool sane() const;
};

/// When `entry` (enabled, magic equivalent to the table's for an arch) has an interpreter that
/// resolves (symlinks followed) to `qemu-<cpu>` or `qemu-<cpu>-static` of that same arch: who
/// provides it. A missing interpreter is accepted only with F (the kernel holds it open).
/// Reads the file system; nullopt for anything else.
[[nodiscard]] EMURUN_EXPORT std::optional<BinfmtProvider>
binfmt_entry_provider(const BinfmtEntry& entry);

/// The qemu CPU name the entry's interpreter resolves to, symlinks followed ("aarch64" for
/// /usr/libexec/qemu-binfmt/aarch64-binfmt-P -> qemu-aarch64-static), or "" when it is no
/// `qemu-<cpu>[-static]` (or a missing file's name is not one). Reads the file system.
[[nodiscard]] EMURUN_EXPORT std::string binfmt_interpreter_qemu_cpu(const BinfmtEntry& entry);

/// Files under `root` that register entry `name` again at boot or on a restart of
/// systemd-binfmt / binfmt-support: {etc,run,usr/lib}/binfmt.d/*.conf lines naming it and
/// usr/share/binfmts/<name>.
[[nodiscard]] EMURUN_EXPORT std::vector<std::filesystem::path>
binfmt_restore_files(std::string_view name, const std::filesystem::path& root = "/");

// ---- plan ---------------------------------------------------------------------------------

/// What registration or removal will do with one entry.
enum class BinfmtAction {
    add,      ///< not there: register
    keep,     ///< identical entry there: nothing to do
    enable,   ///< identical entry there but disabled: enable it
    replace,  ///< different entry under the name, `replace` set: remove, then register
    conflict, ///< different entry under the name, `replace` not set: error, nothing touched
    remove,   ///< unregister: entry there
    absent,   ///< unregister: entry not there, nothing to do
};

/// "add", "keep", "enable", "replace", "conflict", "remove", "absent".
[[nodiscard]] EMURUN_EXPORT std::string_view to_string(BinfmtAction action);

/// One step of a plan.
struct BinfmtPlanItem {
    BinfmtAction action = BinfmtAction::add; ///< what will be done with the entry
    BinfmtEntry wanted;                      ///< for remove/absent: only `name` is meaningful
    std::optional<BinfmtEntry> current;      ///< what is registered under that name now
    std::string detail;                      ///< for conflict/replace: which fields differ
};

/// The difference between what is wanted and what is there; pure, no I/O.
struct BinfmtPlan {
    std::vector<BinfmtPlanItem> items; ///< one per entry named, in the order they were given

    /// Whether an item is a conflict: applying the plan would be refused, nothing touched.
    [[nodiscard]] EMURUN_EXPORT bool has_conflict() const;
    /// Whether an item adds, enables, replaces or removes an entry (not only keep/absent).
    [[nodiscard]] EMURUN_EXPORT bool changes_anything() const;
    /// One line per item: "add qemu-aarch64: :qemu-aarch64:M::...:P".
    [[nodiscard]] EMURUN_EXPORT std::string describe() const;
};

/// Plan registering `wanted` against the `current` table. Never plans to touch an entry whose
/// name is not in `wanted`.
[[nodiscard]] EMURUN_EXPORT BinfmtPlan plan_binfmt_register(const std::vector<BinfmtEntry>& wanted,
                                                            const std::vector<BinfmtEntry>& current,
                                                            bool replace);

/// Plan removing the entries named `names`.
[[nodiscard]] EMURUN_EXPORT BinfmtPlan plan_binfmt_unregister(
    const std::vector<std::string>& names, const std::vector<BinfmtEntry>& current);

// ---- the mount ----------------------------------------------------------------------------

/// One write to a binfmt_misc control file: `text` to `file` (the mount's `register`, or an
/// entry's file: "-1" removes it, "0"/"1" disables/enables it). Every change register_binfmt()
/// and its siblings make, their rollback included, is one call of it.
using BinfmtWriter =
    std::function<Result<void>(const std::filesystem::path& file, std::string_view text)>;

/// The kernel's writer, the default of BinfmtOptions::writer: open `file` write-only, one
/// write(2) of `text` (the kernel takes each write as one command), close; errors name the
/// call and errno.
[[nodiscard]] EMURUN_EXPORT Result<void> write_binfmt_control(const std::filesystem::path& file,
                                                              std::string_view text);

/// Options shared by every operation on a mount.
struct BinfmtOptions {
    /// The size of this struct as the caller was compiled with it: how libemurun tells which
    /// version of it a program passes (a versioned struct: fields are only added at its end,
    /// and a program built against an older libemurun keeps working). Leave it as it is.
    StructSize<BinfmtOptions> struct_size{};
    std::filesystem::path mount{k_binfmt_default_mount}; ///< binfmt_misc directory
    std::optional<std::filesystem::path>
        lock_file{};              ///< default: /run/lock/emurun-binfmt.lock for
                                  ///< the default mount, else `<mount>/../.emurun-binfmt.lock`
    bool mount_if_missing = true; ///< root + default mount path only: mount binfmt_misc there
    bool dry_run = false;         ///< plan only, change nothing
    bool replace = false;         ///< replace entries of the same name with other content

    /// Opt-in for flag C (setuid binaries run with raised privileges): without it,
    /// register_binfmt refuses every entry with C.
    bool allow_credentials = false;
    /// Opt-in for flag O (the emulator gets binaries users cannot read): without it,
    /// register_binfmt refuses every entry with O (C brings its own O: allow_credentials).
    bool allow_open_binary = false;
    /// Where the changes go; empty = write_binfmt_control (the kernel). A seam: a test passes a
    /// writer that fails after N writes to prove the rollback, an embedding tool one that
    /// records what was written.
    BinfmtWriter writer{};
};

/// A kernel flag that registration accepts only with an explicit opt-in in BinfmtOptions.
enum class BinfmtOptIn {
    credentials, ///< flag C: BinfmtOptions::allow_credentials
    open_binary, ///< flag O without C: BinfmtOptions::allow_open_binary
};

/// The opt-in that `flags` need and `options` do not give (C checked first), or nullopt.
[[nodiscard]] EMURUN_EXPORT std::optional<BinfmtOptIn>
missing_binfmt_opt_in(const BinfmtFlags& flags, const BinfmtOptions& options);

/// Why the flag needs the opt-in: "C runs setuid binaries with raised privileges".
[[nodiscard]] EMURUN_EXPORT std::string_view opt_in_reason(BinfmtOptIn opt_in);

/// Warnings for the user (printed by the CLI, one per line).
using BinfmtWarnings = std::vector<std::string>;

/// Check that `options.mount` is a binfmt_misc mount (has "register" and "status"); when it is
/// the default path, absent, and we are root, mount it. Error says how to mount it otherwise.
[[nodiscard]] EMURUN_EXPORT Result<void> ensure_binfmt_mount(const BinfmtOptions& options);

/// Every entry in the mount, sorted by name; plus whether binfmt_misc as a whole is enabled.
struct BinfmtTable {
    bool enabled = true;              ///< the mount's `status` says "enabled"
    std::vector<BinfmtEntry> entries; ///< every entry file, parsed, sorted by name
};
[[nodiscard]] EMURUN_EXPORT Result<BinfmtTable>
read_binfmt_table(const std::filesystem::path& mount);

/// The JSON text of `emurun binfmt status --json` (json_text: pretty with `indent` >= 0,
/// compact with -1): {"mount", "enabled", "entries": [{"name", "enabled", "type", "arch" (null
/// for others), "interpreter", "flags", "offset", "magic" and "mask" (\xHH-escaped), "line"
/// (null when it cannot be formatted)}]}.
[[nodiscard]] EMURUN_EXPORT std::string
binfmt_status_json(const std::filesystem::path& mount, const BinfmtTable& table, int indent = 2);

/// One entry by name. Error when it does not exist or cannot be parsed.
[[nodiscard]] EMURUN_EXPORT Result<BinfmtEntry>
read_binfmt_entry(const std::filesystem::path& mount, std::string_view name);

/// What an apply did.
struct BinfmtApplyResult {
    BinfmtPlan plan;         ///< the plan computed under the lock
    BinfmtWarnings warnings; ///< e.g. systemd-binfmt present, dynamic interpreter with F
    bool applied = false;    ///< false for dry runs
};

/// Plan-then-apply under the lock: read the table, plan, refuse conflicts, register, read each
/// written entry back and compare; on any failure remove what this run added (and restore
/// what it replaced). Checks every interpreter (exists for F, not writable by others) and
/// refuses flags C and O without their opt-in (missing_binfmt_opt_in) before touching anything.
[[nodiscard]] EMURUN_EXPORT Result<BinfmtApplyResult>
register_binfmt(const std::vector<BinfmtEntry>& wanted, const BinfmtOptions& options);

/// The JSON text of register/unregister/import --json: {"applied", "conflict", "warnings",
/// "plan": [{"action", "name", "wanted" (null for removals), "current" (null when none),
/// "detail"}]}, entries as in binfmt_status_json.
[[nodiscard]] EMURUN_EXPORT std::string binfmt_apply_json(const BinfmtApplyResult& result,
                                                          int indent = 2);

/// Remove the named entries under the lock; names not registered are reported as Absent.
[[nodiscard]] EMURUN_EXPORT Result<BinfmtApplyResult>
unregister_binfmt(const std::vector<std::string>& names, const BinfmtOptions& options);

/// Enable or disable the named entries (error if one is missing; nothing changed then).
[[nodiscard]] EMURUN_EXPORT Result<void> set_binfmt_enabled(const std::vector<std::string>& names,
                                                            bool enabled,
                                                            const BinfmtOptions& options);

/// Safety checks on an interpreter for `flags`: exists and is a regular file (required for F),
/// not writable by group/others, its directory not writable by others unless sticky. Warnings
/// (dynamic interpreter with F, C/O setuid risk) are appended to `warnings`.
[[nodiscard]] EMURUN_EXPORT Result<void>
check_binfmt_interpreter(const std::filesystem::path& interp, const BinfmtFlags& flags,
                         BinfmtWarnings& warnings);

/// Warnings about the environment: systemd-binfmt present (restarting it flushes every entry).
/// None inside a user namespace, whose binfmt_misc table is private.
[[nodiscard]] EMURUN_EXPORT BinfmtWarnings binfmt_environment_warnings();

/// Result of running one arch's probe through the kernel path.
struct BinfmtVerifyResult {
    std::string arch;   ///< the arch's name, e.g. "aarch64"
    bool ok = false;    ///< the probe ran through the kernel and exited 0
    std::string detail; ///< "exit 0, printed aarch64" or why it failed
};

/// Exec `probe` directly (no explicit qemu: the kernel must pick the handler) with argument
/// "uname" and check that it exits 0. A probe that fails with ENOEXEC means no handler.
[[nodiscard]] EMURUN_EXPORT BinfmtVerifyResult verify_binfmt(const Arch& arch,
                                                             const std::filesystem::path& probe);

/// The JSON text of `binfmt verify --json`: {"ok" (every arch ok), "arches": [{"arch", "ok",
/// "detail"}]}.
[[nodiscard]] EMURUN_EXPORT std::string
binfmt_verify_json(const std::vector<BinfmtVerifyResult>& results, int indent = 2);

// ---- persistence --------------------------------------------------------------------------

/// systemd binfmt.d: one registration line per entry ("# comment" lines allowed in input).
[[nodiscard]] EMURUN_EXPORT Result<std::string>
format_binfmt_d(const std::vector<BinfmtEntry>& entries);
/// Parse a binfmt.d file: lines starting with '#' or ';' and blank lines are ignored; errors
/// carry the line number.
[[nodiscard]] EMURUN_EXPORT Result<std::vector<BinfmtEntry>> parse_binfmt_d(std::string_view text);

/// Debian update-binfmts format (/usr/share/binfmts/<name>): "package", "interpreter", "magic",
/// "offset", "mask" or "extension", "credentials", "fix_binary", "preserve" lines.
[[nodiscard]] EMURUN_EXPORT Result<std::string>
format_update_binfmts(const BinfmtEntry& entry, std::string_view package = "emurun");
/// Parse one update-binfmts file; `name` is its file name.
[[nodiscard]] EMURUN_EXPORT Result<BinfmtEntry> parse_update_binfmts(std::string_view name,
                                                                     std::string_view text);

} // namespace emurun
