// Private: the pieces of the root module shared between its files.
#pragma once

#include <emurun/process.hpp>
#include <emurun/root.hpp>

#include <array>
#include <ctime>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace emurun::root_detail {

/// The OCI image index media type (a multi-arch image): what import reads and export writes.
inline constexpr std::string_view k_oci_index_type = "application/vnd.oci.image.index.v1+json";

/// The root's private /dev (a tmpfs): the host's device nodes bound onto files of it, and its
/// links (name, target). No bind may land on them (check_bind).
inline constexpr std::array<std::string_view, 6> k_dev_nodes{"null",   "zero",    "full",
                                                             "random", "urandom", "tty"};
inline constexpr std::array<std::pair<std::string_view, std::string_view>, 5> k_dev_links{
    {{"ptmx", "pts/ptmx"},
     {"fd", "/proc/self/fd"},
     {"stdin", "/proc/self/fd/0"},
     {"stdout", "/proc/self/fd/1"},
     {"stderr", "/proc/self/fd/2"}}};

/// The entry for `arch`'s static emulator with flags F and P. Error: no emulator.
[[nodiscard]] Result<BinfmtEntry> private_binfmt_entry(const Arch& arch,
                                                       const EmulatorSearch& search);

/// In the namespace child: mount a binfmt_misc instance on `mount_point` and register `entry`
/// there (the first call; later mounts of the same user namespace's instance pass nullptr).
[[nodiscard]] Result<void> mount_binfmt(const std::filesystem::path& mount_point,
                                        const BinfmtEntry* entry);

/// mkdir -p that reports the path and errno.
[[nodiscard]] Result<void> make_dirs(const std::filesystem::path& dir);

/// The entries of `dir` (none when it cannot be read): never throws.
[[nodiscard]] std::vector<std::filesystem::path> list_dir(const std::filesystem::path& dir);

/// "a ppc64le", "an aarch64", "an s390x": the arch's name with its article.
[[nodiscard]] std::string with_article(const std::string& arch_name);

/// Why a root of `arch` (one the host runs natively) is refused, for `what` ("create an
/// x86_64 root", "use DIR as a root").
[[nodiscard]] Error native_root_error(const std::string& what, const Arch& arch);

/// The root's own mount points (proc, dev, sys, tmp) are directories or missing, never
/// symlinks or other files: emurun mounts over them, and a symlink would lead its mounts to
/// the host's tree (or leave the root without its /proc or a private /tmp).
[[nodiscard]] Result<void> check_mount_points(const std::filesystem::path& root);

/// A user's bind checked against the root at `root` (absolute): a source that is no empty
/// path and exists; a target that is absolute, has no '..', is not '/', crosses no symlink of
/// the root on its way and, where it exists, is a directory for a directory source and no
/// directory for a file source.
[[nodiscard]] Result<void> check_bind(const std::filesystem::path& root, const RootBind& bind);

/// Bind `source` (recursively) onto `root`/`target`, creating the mount point (a directory, or
/// an empty file for a file source); optionally read-only (the whole tree). The mount point is
/// resolved by the kernel below `root` (openat2) and the tree moved onto that descriptor, so a
/// symlink swapped in later cannot redirect it: `strict` (a user's bind) refuses any symlink
/// on the way, otherwise symlinks are followed as if `root` were /.
[[nodiscard]] Result<void> bind_into(const std::filesystem::path& root,
                                     const std::filesystem::path& source,
                                     const std::filesystem::path& target, bool read_only,
                                     bool strict = false);

/// In the namespace child: the accelerated toolchain's mounts inside `plan.dir`.
[[nodiscard]] Result<void> mount_acceleration(const RootPlan& plan);

/// In the namespace child: every mount of the root, then pivot_root into it.
[[nodiscard]] Result<void> enter_root(const RootPlan& plan);

/// Run `cmd` in new namespaces on the host's file system view, with `entry` registered in a
/// private binfmt_misc (mmdebstrap, tar, rm of a root's files as the root's owners). Ctrl-C
/// stops every process in them (Interrupts::stop_all).
[[nodiscard]] Result<ExitStatus> run_with_binfmt(const BinfmtEntry& entry, const Command& cmd);

/// An arch-neutral program the host runs in place of the root's own (root_native.cpp): its
/// --accelerate name, the Debian package that ships it, its files in /usr/bin, whether the
/// "shell" group (part of the default) has it, and why its native run is the same.
struct NativeTool {
    std::string_view name;
    std::string_view package;
    std::vector<std::string_view> files;
    bool in_shell_group = true;
    std::string_view why;
};

/// Every native tool, in the order the shell group lists them.
[[nodiscard]] const std::vector<NativeTool>& native_tools();

/// The entry named `name` ("sed", "coreutils", "make"), or nullptr.
[[nodiscard]] const NativeTool* find_native_tool(std::string_view name);

/// The root's and the host's sources of what a native tool's run depends on: its package and
/// every library package of its Depends and Pre-Depends (the host's copies serve it), compared
/// as toolchain_identity compares a compiler's. `tool` names the entry ("coreutils"); the
/// first package pair that differs, else the tool's own. Pure: the status files as text.
[[nodiscard]] ToolIdentity native_tool_identity(std::string_view root_status,
                                                std::string_view host_status,
                                                const NativeTool& tool);

/// The group of toolchain_identity a tool belongs to: gcc (and cc), g++ (and c++), cpp, else
/// binutils.
[[nodiscard]] std::string toolchain_group(const std::string& tool);

/// mmdebstrap's output lines that are known to be harmless here and only go to the create's
/// log: "mount: .../sys: permission denied" (it tries to mount sysfs, which a user namespace
/// may not; the root gets /sys bound when entered).
[[nodiscard]] bool harmless_create_noise(std::string_view line);

/// The line of a failed create's log (mmdebstrap's and apt's output) that says this machine ran
/// out of something (no process could be forked, no memory, no space, too many open files): such
/// a failure is reported as what it is and not retried as a mirror mid-sync. Empty: none.
[[nodiscard]] std::string resource_failure_line(std::string_view log);

/// What a failed create's log says is wrong with the request itself, so that no retry could
/// help (why and what to do): the suite is not on the mirror (apt: "The repository 'URI SUITE
/// Release' does not have a Release file"), a package asked for cannot be installed, or the
/// toolchain cannot be pinned (the "E: emurun: include: ..." and "E: emurun: pin: ..." lines of
/// create's own hooks). nullopt: none of these (a mirror mid-sync, say).
[[nodiscard]] std::optional<Error> request_failure(std::string_view log, const std::string& suite);

/// The PREFIX-PID directories under `tmp` left by processes that are gone (`alive` says
/// whether a pid runs), e.g. a create or a run SIGKILLed: a later one removes them.
[[nodiscard]] std::vector<std::filesystem::path>
stale_pid_dirs(const std::filesystem::path& tmp, std::string_view prefix,
               const std::function<bool(long)>& alive);

/// Whether process `pid` may still run (kill(pid, 0) does not say ESRCH).
[[nodiscard]] bool pid_alive(long pid);

/// The first "Version:" of package `name` in a dpkg status file, or "" when not installed.
[[nodiscard]] std::string dpkg_version(const std::filesystem::path& status,
                                       const std::string& name);

/// Run a tool (`argv`, from PATH) with its stderr captured with its stdout: that output, or an
/// error naming `what`, the tool and what it said. A SIGINT, SIGTERM or SIGHUP meanwhile stops
/// it (an error; root_interrupted_by() names the signal).
[[nodiscard]] Result<std::string> run_tool(const std::vector<std::string>& argv,
                                           const std::string& what);

/// "sha256:HEX" of `file` (sha256sum, coreutils; run_tool's rules).
[[nodiscard]] Result<std::string> sha256_of(const std::filesystem::path& file);

/// The command's stdout (stderr is passed through); error when it cannot run or fails.
[[nodiscard]] Result<std::string> capture_stdout(const Command& cmd);

/// A TCP connection to the mirror's host succeeds within a few seconds (file:// URLs: the
/// directory exists). Error: "no mirror reachable", naming the URL and --mirror.
[[nodiscard]] Result<void> check_mirror(const std::string& url);

/// `p` is an x86-64 little-endian ELF file (a host program or object).
[[nodiscard]] bool is_host_elf(const std::filesystem::path& p);

/// The clean environment of a root's commands, plus `extra` (later wins).
[[nodiscard]] std::vector<std::pair<std::string, std::string>>
root_environment(const std::vector<std::pair<std::string, std::string>>& extra);

/// The spec as the JSON text root_argv() passes (error: a string that is not UTF-8), and back
/// (error: a malformed document or an unknown arch).
[[nodiscard]] Result<std::string> root_spec_to_json(const RootSpec& spec);
[[nodiscard]] Result<RootSpec> root_spec_from_json(std::string_view text);

/// The first "Version:" of installed `package` in dpkg status text, or "" when not installed.
[[nodiscard]] std::string dpkg_version_of(std::string_view status_text, std::string_view package);

/// The probe cache's key: the corpus' version, the triplet, and the root's and the host's
/// toolchain packages (source and version: gcc-N, cpp-N, g++-N, binutils, libc6-dev, dpkg-dev,
/// python3-minimal in the root; the cross gcc, cpp, g++ and binutils on the host) as hex.
[[nodiscard]] std::string probe_key(std::string_view root_status, std::string_view host_status,
                                    const std::string& triplet, const std::string& gcc_major);

/// One probe object, "stack.c.dpkg-buildflags", as each compiler made it (.comment removed;
/// empty: not made).
struct ProbeObject {
    std::string name;
    std::string emulated;
    std::string accelerated;
};

/// Identical when every object is the same bytes both ways; else the first that is not, with
/// the sections that differ.
[[nodiscard]] ProbeVerdict judge_probe(const std::vector<ProbeObject>& objects);

/// The cache file's text and back (nullopt: not a verdict, e.g. a truncated file).
[[nodiscard]] std::string probe_verdict_json(const ProbeVerdict& v);
[[nodiscard]] std::optional<ProbeVerdict> probe_verdict_from_json(std::string_view text);

/// DIR/KEY.json: the cached verdict, or nullopt (none, or unreadable: the probe runs again).
[[nodiscard]] std::optional<ProbeVerdict> read_probe_cache(const std::filesystem::path& dir,
                                                           const std::string& key);
[[nodiscard]] Result<void> write_probe_cache(const std::filesystem::path& dir,
                                             const std::string& key, const ProbeVerdict& v);

/// The verdict for the plan's root and host toolchain: cached in emurun's cache dir
/// (toolchain-probe/KEY.json, own_cache_dir), else the corpus compiled in the root both ways
/// (two root helpers: emulated, accelerated) and the verdict cached. A probe that cannot run
/// is a verdict "not identical" saying why, not cached.
[[nodiscard]] ProbeVerdict probe_toolchain(const RootSpec& spec, const RootPlan& plan,
                                           std::string_view root_status,
                                           std::string_view host_status);

/// A new root's directory (create_root's and import_root's rule): a path, absent (and
/// creatable) or an empty directory that can be written.
[[nodiscard]] Result<void> check_new_root_dir(const std::filesystem::path& dir);

/// `t` as RFC 3339 in UTC: "2026-12-03T16:10:55Z".
[[nodiscard]] std::string utc_text(std::time_t t);

/// import_root without the cache: the image extracted into spec.dir (root_import.cpp).
[[nodiscard]] Result<RootImported> import_fresh(const RootImportSpec& spec);

/// `image` written as DIR/k_root_image_file (atomically).
[[nodiscard]] Result<void> write_root_image(const std::filesystem::path& dir,
                                            const RootImage& image);

/// A k_root_image_file's content (`file` names it in errors). Error: not JSON, or not what
/// import_root writes.
[[nodiscard]] Result<RootImage> root_image_from_text(const std::string& text,
                                                     const std::filesystem::path& file);

/// The first regular file below `dir` (symlinks not followed) with a setuid or setgid bit,
/// relative to `dir`; nullopt when there is none (root_layers.cpp). Error: a directory below
/// `dir` cannot be read.
[[nodiscard]] Result<std::optional<std::filesystem::path>>
find_setid(const std::filesystem::path& dir);

/// import_root through the cache of imports (RootImportSpec::cache; root_image_root.cpp).
[[nodiscard]] Result<RootImported> import_through_cache(const RootImportSpec& spec);

/// Record `sig` (0: none) as what root_interrupted_by() says about the last create, install
/// or import.
void note_interrupted(int sig);

/// The arch of the root's bin/sh (its symlinks followed inside `dir`), from its ELF header.
[[nodiscard]] Result<const Arch*> shell_arch(const std::filesystem::path& dir);

/// The names of a tarball's members (tar -t -P: as stored), without "./" in front or "/"
/// behind. Error: tar cannot list it (`what` names the request).
[[nodiscard]] Result<std::vector<std::string>>
tar_member_names(const std::filesystem::path& archive, const std::string& what);

/// `file` (read as `name` in messages) has the sha256 `digest` ("sha256:HEX"; "" checks nothing).
[[nodiscard]] Result<void> check_digest(const std::filesystem::path& file, const std::string& name,
                                        const std::string& digest, const std::string& what);

/// A layer tarball and the digest it must have ("sha256:HEX"; "" when the image names none).
using LayerFile = std::pair<std::filesystem::path, std::string>;

/// Apply the layer tarballs `layers` (bottom to top) to the empty directory `dir` (import_root's
/// rules); `notes` gets what the user should know. Each layer is opened once, and its digest
/// check, its listings and its extraction all read that open file (/proc/PID/fd/N): a file
/// replaced at its path meanwhile changes none of them.
[[nodiscard]] Result<void> apply_layers(const std::vector<LayerFile>& layers,
                                        const std::filesystem::path& dir,
                                        std::vector<std::string>& notes);

} // namespace emurun::root_detail
