// Foreign-arch Debian roots: create one rootless (mmdebstrap in emurun's own user namespace
// with a private binfmt_misc), add packages, and run commands inside it with the target's view
// everywhere (uname -m, dpkg --print-architecture, Python's platform.machine()) — optionally
// with the root's compilers and binutils served by the host's native cross toolchain
// ("accelerated"), everything else emulated.
// Layer: runner. Still evolving: its types may change between minor versions
// (docs/api/mainpage.md).
#pragma once

#include <emurun/arch.hpp>
#include <emurun/binfmt.hpp>
#include <emurun/diagnostics.hpp>
#include <emurun/error.hpp>
#include <emurun/export.hpp>
#include <emurun/process.hpp>
#include <emurun/qemu.hpp>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace emurun {

/// One bind mount into a root: host `source` at `target` inside (target defaults to source).
struct RootBind {
    std::filesystem::path source; ///< the host's file or directory
    std::filesystem::path target; ///< where it appears inside the root; empty = `source`
    bool read_only = false;       ///< mount it read-only
};

/// What to accelerate: nothing, the default list (every compiler driver and binutil the root
/// has: group "toolchain"; and the arch-neutral tools proven to behave the same natively: group
/// "shell", dash, sed, grep, awk, m4, coreutils, find, tar, ...), or named tools and groups
/// (gcc, g++, cpp, as, ld, ar, sed, make, ...; see root_tool_names()). A native tool runs as
/// the host's own program only when the root's package and the libraries it runs with are
/// built from the same sources as the host's (else it stays emulated, recorded as a mismatch).
struct Acceleration {
    /// Nothing, the default list, or the tools in `tools`.
    enum class Mode { none, defaults, listed };
    Mode mode = Mode::none;         ///< which of the three
    std::vector<std::string> tools; ///< for Mode::listed

    /// Accelerate a tool even when the host's cross package was built from another revision
    /// of the compiler's or binutils' source than the root's package (the same upstream
    /// version only): the objects may differ (toolchain_identity); the plan records it.
    bool allow_revision_mismatch = false;
    /// Compile the probe corpus both ways the first time the compilers are accelerated with a
    /// given host cross toolchain (ProbeVerdict); false only in the probe's own runs.
    bool probe = true;
};

/// Parse "none", "" / "default" / "all", or a comma-separated list. Error: an unknown tool.
[[nodiscard]] EMURUN_EXPORT Result<Acceleration> parse_acceleration(std::string_view text);

/// The request itself, before any root is looked at. Compilers and binutils go together both
/// ways, because each compiler hands ld and ar an LTO plugin of its own arch: refused is a list
/// naming binutils (as, ld, ar, ...) without gcc (an emulated gcc's plugin cannot load into the
/// host's x86-64 binutils; plan_root also refuses them without g++ where the root has g++), and
/// a list naming gcc or g++ without ld, ar, nm and ranlib (the host's cross gcc's x86-64 plugin
/// cannot load into the emulated binutils: every link would fail). plan_root calls it first.
[[nodiscard]] EMURUN_EXPORT Result<void> check_acceleration(const Acceleration& acc);

/// The acceleration as a report records it: "none", "toolchain,shell" (the default: compilers,
/// binutils and the native tools), or the tools and groups listed, comma-separated.
[[nodiscard]] EMURUN_EXPORT std::string acceleration_name(const Acceleration& acc);

/// Every tool name --accelerate accepts (aliases cc, c++, ld included).
[[nodiscard]] EMURUN_EXPORT std::vector<std::string> root_tool_names();

/// Entering a root.
struct RootSpec {
    std::filesystem::path dir;                ///< the root (must hold var/lib/dpkg and bin/sh)
    const Arch* arch = nullptr;               ///< expected arch; nullptr = whatever the root is
    std::vector<RootBind> binds;              ///< after the root's own mounts, in order
    std::optional<std::filesystem::path> cwd; ///< inside the root; default "/"

    /// Added to the clean environment (PATH, HOME=/root, TERM, LANG); later ones win.
    std::vector<std::pair<std::string, std::string>> env;
    Acceleration accelerate;    ///< which tools run as the host's own (none by default)
    bool network_config = true; ///< bind the host's /etc/resolv.conf (apt inside)
    EmulatorSearch emulators;   ///< static emulators preferred: F pins them at registration

    /// Where exec_in_root() and install_in_root() send notes and warnings; none by default.
    /// Not carried by root_argv(): the helper uses the sink given to run_if_root_helper().
    DiagnosticSink diagnostics;
};

/// One host file bound over (or into) the root when accelerating.
struct RootToolBind {
    std::filesystem::path host;   ///< e.g. /usr/bin/aarch64-linux-gnu-gcc-12
    std::filesystem::path target; ///< same path inside the root
};

/// The source a compiler or binutils package was built from: "gcc-12" "12.2.0-14+deb12u1".
struct ToolSource {
    std::string package; ///< the binary package whose dpkg record says it
    std::string source;  ///< the source package's name; empty: the package is not installed
    std::string version; ///< the source's version, Debian revision included
    /// Every field equal.
    friend bool operator==(const ToolSource&, const ToolSource&) = default;
};

/// One accelerable tool (a driver, or the binutils as one), the root's and the host's sources
/// of it, and whether they are the same source at the same version.
struct ToolIdentity {
    std::string tool; ///< "gcc", "g++", "cpp", "binutils"
    ToolSource root;  ///< e.g. gcc-12 (package gcc-12 of the root)
    ToolSource host;  ///< e.g. gcc-12 (Built-Using of the host's gcc-12-aarch64-linux-gnu)
    /// The root's package is installed and built from the same source at the same version as
    /// the host's.
    [[nodiscard]] bool same() const {
        return !root.source.empty() && root.source == host.source && root.version == host.version;
    }
    /// Why they differ, for reports: "the root's gcc-12 is built from gcc-12 12.2.0-14+deb12u1,
    /// the host's gcc-12-aarch64-linux-gnu from gcc-12 12.2.0-14: ...". Empty when same().
    [[nodiscard]] EMURUN_EXPORT std::string why() const;
    /// Every field equal.
    friend bool operator==(const ToolIdentity&, const ToolIdentity&) = default;
};

/// The source (name, version) the installed `package` was built from, read from dpkg status
/// text: the entry of its Built-Using that names `source_hint` (a Debian cross compiler,
/// gcc-12-aarch64-linux-gnu, is built from gcc-12-cross but records "Built-Using: gcc-12 (=
/// 12.2.0-14)"), else its Source field ("binutils", "gcc-12 (12.2.0-14+deb12u1)") with the
/// package's Version when the field gives none, else the package itself and its Version.
/// `source` is empty when the package is not installed.
[[nodiscard]] EMURUN_EXPORT ToolSource dpkg_tool_source(std::string_view status_text,
                                                        std::string_view package,
                                                        std::string_view source_hint = {});

/// For each tool group of `tools` (user-facing names: gcc, g++, cpp, as, ld, ...; binutils'
/// names make one group "binutils"), the root's and the host's sources, compared exactly:
/// gcc is gcc-N and cpp-N (cc1 is in cpp-N) against gcc-N-TRIPLET and cpp-N-TRIPLET, g++ is
/// g++-N, cpp is cpp-N, binutils is binutils-TRIPLET on both sides. One entry per package
/// pair: the first that differs, else the last. Pure: the status files are given as text.
[[nodiscard]] EMURUN_EXPORT std::vector<ToolIdentity>
toolchain_identity(std::string_view root_status, std::string_view host_status,
                   const std::string& triplet, const std::string& gcc_major,
                   const std::vector<std::string>& tools);

/// What the probe corpus found: the same objects from the root's emulated compiler and from
/// the accelerated one (beyond .comment), or the first corpus file that differed and how.
struct ProbeVerdict {
    bool identical = false; ///< every corpus file gave the same objects both ways
    std::string file;       ///< "stack.c.dpkg-buildflags": the file and the flag set; "" when none
    std::string why;        ///< for reports: which file, which sections; or why it could not run
    /// Every field equal.
    friend bool operator==(const ProbeVerdict&, const ProbeVerdict&) = default;
};

/// A tool whose root and host sources differ, or whose probe corpus compiled differently: kept
/// emulated, or accelerated anyway when the acceleration allows a revision mismatch.
struct ToolMismatch {
    ToolIdentity identity;    ///< same() when only the probe differed
    bool accelerated = false; ///< true: allow_revision_mismatch, accelerated anyway

    /// Asked-for tools kept emulated with it although their own sources match: the binutils
    /// with an emulated gcc or g++ (that gcc hands ld and ar its LTO plugin, a library of the
    /// root's arch, which the host's x86-64 ld and ar cannot load), and gcc and g++ with
    /// emulated binutils (the host's cross gcc's plugin is an x86-64 library)
    bool company_follows = false;
    /// The probe's verdict when it ran for this tool (gcc): a difference refuses acceleration
    /// like a differing source; with allow_revision_mismatch it is recorded only
    std::optional<ProbeVerdict> probe = std::nullopt;
    /// "gcc kept emulated: ..." / "gcc accelerated although ...", for reports and warnings;
    /// the field that would accelerate it anyway (allow_revision_mismatch) spelled by `spell`.
    [[nodiscard]] EMURUN_EXPORT std::string text(FieldSpelling spell = option_spelling) const;
};

/// Everything decided before entering: pure data, nothing mounted yet.
struct RootPlan {
    std::filesystem::path dir;      ///< absolute
    const Arch* arch = nullptr;     ///< the root's arch (from its dpkg, checked against the spec)
    BinfmtEntry entry;              ///< the arch's emulator, flags "FP"
    std::vector<RootBind> binds;    ///< the spec's binds, targets filled in, in order
    std::filesystem::path cwd{"/"}; ///< the command's working directory inside the root
    std::vector<std::pair<std::string, std::string>> env; ///< the command's whole environment
    std::vector<RootToolBind> tools;      ///< accelerated tools (empty: full emulation)
    std::string gcc_major;                ///< "12": `/usr/lib/gcc-cross/<triplet>/<major>`
    std::vector<std::string> accelerated; ///< names, for reports: "gcc-12", "as", ...
    std::vector<std::string> notes;       ///< facts worth a debug line
    /// Acceleration asked for that nothing could prove safe, for a reason other than a tool's
    /// source (an image without dpkg's status): said as a warning whenever the root is entered
    std::vector<std::string> unproven;

    /// Tools asked for whose root and host sources differ (toolchain_identity), each kept
    /// emulated or, with allow_revision_mismatch, accelerated anyway
    std::vector<ToolMismatch> mismatches;
    /// The probe corpus' verdict (fresh or cached) when the compilers were to be accelerated
    std::optional<ProbeVerdict> probe = std::nullopt;
};

/// The arch of the root at `dir`: its var/lib/dpkg/arch (first line), else the ELF of bin/sh.
/// Errors: `dir` is not a Debian root (no var/lib/dpkg or bin/sh); an arch not in the table.
[[nodiscard]] EMURUN_EXPORT Result<const Arch*> root_arch(const std::filesystem::path& dir);

/// Check the root, its arch (against spec.arch), the emulator, and for acceleration the host's
/// cross toolchain: a tool is accelerated only when the host's package was built from the
/// same source at the same version, Debian revision included, as the root's
/// (toolchain_identity); any other asked-for tool stays emulated and is listed in
/// `mismatches` (with allow_revision_mismatch: accelerated anyway and listed, unless the GCC
/// versions themselves differ (-dumpfullversion), an error naming both). Errors name the fix
/// (the Debian package of a missing cross compiler, 'emurun root install DIR gcc' for a root
/// without gcc).
[[nodiscard]] EMURUN_EXPORT Result<RootPlan> plan_root(const RootSpec& spec);

/// Enter the root (user + mount + pid namespaces, private binfmt_misc with F, pivot_root,
/// fresh /proc, /dev, /sys read-only, tmpfs /tmp, the accelerated toolchain, the binds) and
/// run `argv` there with the plan's environment. Returns its exit status (a signal N is
/// 128+N, command not found 127). Must be called from a single-threaded process; the step
/// runner spawns root_argv() instead. Errors: plan_root's, and the set-up's (no user
/// namespaces, no id range for an unprivileged user, a kernel without sandboxed binfmt_misc).
[[nodiscard]] EMURUN_EXPORT Result<ExitStatus> exec_in_root(const RootSpec& spec,
                                                            const std::vector<std::string>& argv);

/// argv[1] of a process that root_argv() starts: marks it as the root helper.
inline constexpr std::string_view k_root_helper_marker = "__emurun_root_helper__";

/// The argument vector that runs `inner` inside the root of `spec` in a fresh process:
/// {emurun_exe, k_root_helper_marker, <every field of spec as JSON>, inner...}. The root launch
/// mode of the step runner: spawn it like any command; its exit status is inner's (as
/// exec_in_root's). Errors: no command, a path or variable that is not UTF-8.
[[nodiscard]] EMURUN_EXPORT Result<std::vector<std::string>>
root_argv(const std::filesystem::path& emurun_exe, const RootSpec& spec,
          const std::vector<std::string>& inner);

/// The other end of root_argv(): call it first thing in main() (emurun does). When argv[1] is
/// k_root_helper_marker, it reads the spec and runs exec_in_root(spec, argv[3...]), returning
/// its result (print an error and exit 125; else exit with the status's shell code). Any other
/// argv: nullopt, nothing done. The root's diagnostics go to `diagnostics`.
[[nodiscard]] EMURUN_EXPORT std::optional<Result<ExitStatus>>
run_if_root_helper(int argc, char** argv, const DiagnosticSink& diagnostics = {});

/// Creating a root.
struct RootCreateSpec {
    const Arch* arch = nullptr;        ///< the root's arch (required)
    std::string suite = "bookworm";    ///< the Debian release to install
    std::vector<std::string> include;  ///< extra packages (gcc, g++, libc6-dev, make by default)
    std::filesystem::path dir;         ///< must not exist, or be empty
    std::optional<std::string> mirror; ///< nullopt = the mirror this machine's apt uses
    std::optional<std::filesystem::path> cache_dir; ///< nullopt = cache_dir() (sysroot.hpp)
    EmulatorSearch emulators; ///< where to find the arch's emulator, used while creating it
    /// Pin the root's compiler and binutils packages to the sources and revisions the host's
    /// cross toolchain was built from (toolchain_pins), so that acceleration serves them; the
    /// create fails as soon as apt has the mirror's index when the mirror does not have those
    /// revisions (apt would ignore the pin), naming the ones it has; the installed versions are
    /// checked again after the install. The root then lacks the fixes of later revisions
    /// (bookworm: gcc-12 12.2.0-14 without 12.2.0-14+deb12u1's fix of CVE-2023-4039,
    /// -fstack-protector on aarch64).
    bool pin_toolchain = false;
    /// Where create_root() sends warnings (a retry, a leftover it could not remove); none by
    /// default.
    DiagnosticSink diagnostics;
};

/// The source versions the host's cross toolchain for `triplet` was built from, as apt pins
/// them: {"gcc-12", "12.2.0-14"} (from gcc-12-TRIPLET's Built-Using), {"binutils", "2.40-2"}.
/// From dpkg status text; empty when no cross toolchain is installed.
[[nodiscard]] EMURUN_EXPORT std::vector<std::pair<std::string, std::string>>
toolchain_pins(std::string_view host_status, const std::string& triplet);

/// The apt preferences file that pins those sources (Package: src:NAME, Pin: version V,
/// Pin-Priority: 1001).
[[nodiscard]] EMURUN_EXPORT std::string
toolchain_preferences(const std::vector<std::pair<std::string, std::string>>& pins);

/// The packages every created root gets (the build essentials acceleration serves).
[[nodiscard]] EMURUN_EXPORT std::vector<std::string> root_default_packages();

/// The mirror this machine's apt uses (deb822 .sources first, then sources.list), without the
/// security archive; http://deb.debian.org/debian when none is configured.
[[nodiscard]] EMURUN_EXPORT std::string
host_mirror(const std::filesystem::path& etc_apt = "/etc/apt");

/// Spec key for the tarball cache: sha256-free, stable hex of arch, suite, packages, mirror.
[[nodiscard]] EMURUN_EXPORT std::string root_cache_key(const RootCreateSpec& spec,
                                                       const std::string& mirror);

/// What create_root did.
struct RootCreated {
    std::filesystem::path tarball; ///< the cached root
    bool from_cache = false;       ///< only unpacked

    /// With pin_toolchain: the sources pinned, {"gcc-12", "12.2.0-14"}, ...
    std::vector<std::pair<std::string, std::string>> pinned;
};

/// Create the root: from the spec-keyed tarball in the cache when there (an untar), else
/// mmdebstrap --mode=root inside emurun's namespaces (retried once when it failed early: a
/// mirror may be mid-sync), writing the tarball first. A failure removes what it made (dir,
/// temp files). Errors: dir not empty; mmdebstrap missing (apt-get install mmdebstrap); no
/// mirror reachable; id maps; a suite the mirror lacks or packages apt cannot install (found
/// as soon as apt has the mirror's index, before any package is installed; not retried).
[[nodiscard]] EMURUN_EXPORT Result<RootCreated> create_root(const RootCreateSpec& spec);

/// The signal (SIGINT, SIGTERM or SIGHUP) that interrupted the last create_root,
/// install_in_root, import_root or make_image_root of this process (its error then says
/// "interrupted by ..."), else 0: a command line exits 128 + it, as a shell does.
[[nodiscard]] EMURUN_EXPORT int root_interrupted_by();

/// apt-get update (when the lists are missing) and apt-get install -y PKGS inside the root.
[[nodiscard]] EMURUN_EXPORT Result<void> install_in_root(const RootSpec& spec,
                                                         const std::vector<std::string>& packages);

/// The file of an imported root (in its top directory) that keeps the image's run defaults.
inline constexpr std::string_view k_root_image_file = ".emurun-image.json";

/// Importing a container image as a root (root_import.cpp).
struct RootImportSpec {
    /// An OCI image layout directory (oci-layout, index.json, blobs/), a tarball of one, a
    /// `docker save`/`podman save` archive (manifest.json and layer tars), or a rootfs tarball
    std::filesystem::path source;
    std::filesystem::path dir; ///< the new root: absent or an empty directory

    /// The platform to take from a multi-arch index, and the arch the root must be; nullptr:
    /// the image's only one (an index of several is an error listing them)
    const Arch* arch = nullptr;
    std::string variant; ///< e.g. "v8" of linux/arm64/v8; empty: any

    /// Go through emurun's cache of imports (`images/` of the cache dir, the one make_image_root
    /// keeps: one import per image and platform, keyed by the sha256 of the tarball or of the
    /// layout's index.json): an image and platform imported before is copied from there
    /// (`cp -a --reflink=auto`) instead of extracted again; a first import fills it. false:
    /// extract, and keep nothing in the cache.
    bool cache = false;
    /// With `cache`: emurun's cache dir; unset: cache_dir() (sysroot.hpp)
    std::optional<std::filesystem::path> cache_dir;
};

/// An image's run defaults and where the root came from: DIR/k_root_image_file.
struct RootImage {
    std::string source_kind;      ///< "oci", "docker-archive" or "rootfs"
    std::string architecture;     ///< the OCI name: "arm64", "ppc64le", ...
    std::string variant;          ///< the OCI variant: "v8", "v7"; empty when the image has none
    std::vector<std::string> env; ///< "K=V", in order
    std::string working_dir;      ///< empty: "/"
    std::string user;             ///< recorded; root run runs as root (uid 0 of its namespace)
    std::vector<std::string> entrypoint; ///< the image's Entrypoint; empty for a rootfs
    std::vector<std::string> cmd;        ///< the image's Cmd, its arguments by default
    std::vector<std::string> layers;     ///< the layers' digests, applied bottom to top

    /// What identifies the image imported ("sha256:HEX"): the digest of an OCI image's
    /// manifest taken (from an index: the chosen platform's), of a docker archive's config (its
    /// image ID: the archive holds no manifest blob), of a rootfs tarball itself. Empty in roots
    /// imported before emurun recorded it.
    std::string digest;
    std::string imported; ///< when the import was made, UTC ISO 8601; empty in older roots
    std::vector<std::string> notes; ///< the import's notes (RootImported::notes), kept for copies

    /// The platform taken, as the image offers it ("linux/arm64/v8": the index's entry chosen;
    /// without an index, the config's or, for a rootfs tarball, bin/sh's); empty in older roots
    std::string platform;
    /// Every Linux platform the image offers ("linux/arm64", "linux/arm/v7"; one for a docker
    /// archive or a rootfs tarball): what a request without a platform would have to choose
    /// from. The cache of imports resolves a request against it (import_root)
    std::vector<std::string> platforms;
    /// What names the image's content in the cache of imports ("sha256:HEX" of the tarball or
    /// of the layout's index.json); empty for an import that did not go through the cache
    std::string source_digest;
};

/// "linux/ARCHITECTURE[/VARIANT]" of an imported image: "linux/arm64", "linux/arm/v7".
[[nodiscard]] EMURUN_EXPORT std::string oci_platform_text(const RootImage& image);

/// The arch an OCI platform's architecture and variant name ("arm64", "arm" + "v7" is armhf,
/// "ppc64le", "386", ...). Error: an arch emurun does not know.
[[nodiscard]] EMURUN_EXPORT Result<const Arch*> oci_platform_arch(const std::string& architecture,
                                                                  const std::string& variant);

/// The OCI platform (architecture, variant) of `arch`: {"arm64", ""}, {"arm", "v7"},
/// {"ppc64le", ""}, {"amd64", ""}; oci_platform_arch's inverse.
[[nodiscard]] EMURUN_EXPORT std::pair<std::string, std::string> oci_platform_of(const Arch& arch);

/// An OCI platform as users write it, "linux/arm64", "linux/arm/v7" or "arm64": its arch and
/// variant. Error: another OS, a malformed text, an arch emurun does not know.
struct OciPlatform {
    const Arch* arch = nullptr; ///< the arch it names

    std::string variant; ///< its variant ("v7"), or empty
};
[[nodiscard]] EMURUN_EXPORT Result<OciPlatform> parse_oci_platform(std::string_view text);

/// What import_root made.
struct RootImported {
    const Arch* arch = nullptr;     ///< the root's arch
    RootImage image;                ///< also written to DIR/k_root_image_file
    std::vector<std::string> notes; ///< facts for the user (e.g. setuid bits cleared: N files)
    /// With RootImportSpec::cache: the root is a copy of an import made before (its time is
    /// image.imported), nothing was extracted; notes are that import's
    bool from_cache = false;
};

/// Import `spec.source` into `spec.dir`: the manifest of the chosen platform, its config and
/// its layers checked against their sha256 digests, the layers applied bottom to top in
/// DIR's sibling `.DIR.emurun-partial-PID` (whiteouts `.wh.NAME` remove NAME of the layers
/// below, an opaque `.wh..wh..opq` empties its directory), then renamed to DIR: on any error
/// nothing is left. Hostile layers are refused before they are extracted, naming the member:
/// a name that is absolute, holds "..", a control character or a backslash; a member, hard link
/// target or whiteout whose directory passes through a symlink (of a lower layer or its own);
/// a directory over a symlink; a device node outside dev/ (those in dev/ are skipped: a root
/// gets a private /dev); members that hold more bytes than DIR's file system has free. Run as
/// root, the layers' numeric owners are kept (ids 0-65535 are themselves in emurun's
/// namespaces); otherwise files belong to the calling user (root inside the root). Setuid and
/// setgid bits of files are cleared. The arch is the config's `architecture` (for a rootfs tarball:
/// spec.arch, else that of bin/sh), checked against bin/sh's ELF when there is one. A SIGINT,
/// SIGTERM or SIGHUP while tar or sha256sum runs stops it: an error, nothing left, and
/// root_interrupted_by() names the signal. With spec.cache, through the cache of imports
/// (make_image_root's, under its lock; the cache dir and `images/` checked as ours): an
/// import of the same image and platform there is copied into DIR (beside it, then renamed:
/// all or nothing); else the image is imported into the cache first, then copied. An entry is
/// named by the image's digest and the platform the import took (RootImage::platform); a
/// request resolves to it through the platforms the image offers (RootImage::platforms), so
/// one with and one without a platform find the same entry. An entry is used only when it is a
/// real directory of this user that no one else can write, its k_root_image_file a regular file
/// of this user (opened O_NOFOLLOW, checked by fstat) recording the image's digest
/// (RootImage::source_digest) and the platform its name says, and no file in it is setuid or
/// setgid; any other entry is removed, said in the notes, and the image imported again.
/// Errors then also: the cache dir is not ours; the image's lock path is a directory.
[[nodiscard]] EMURUN_EXPORT Result<RootImported> import_root(const RootImportSpec& spec);

/// DIR/k_root_image_file of an imported root; std::nullopt for a root without one (created by
/// create_root). Error: the file is there but is not what import_root writes.
[[nodiscard]] EMURUN_EXPORT Result<std::optional<RootImage>>
read_root_image(const std::filesystem::path& dir);

/// The image's run defaults applied to a run of `spec` (nothing for a root without image):
/// its Env before spec.env (which wins), its WorkingDir when spec.cwd is unset, and, when
/// `argv` is empty, Entrypoint followed by Cmd. Error: no command given and the image has none.
[[nodiscard]] EMURUN_EXPORT Result<void> apply_root_image(RootSpec& spec,
                                                          std::vector<std::string>& argv);

/// A root of its own made from a container image, for one run or one step
/// (root_image_root.cpp).
struct ImageRootSpec {
    std::filesystem::path source; ///< an image, as RootImportSpec::source takes it
    const Arch* arch = nullptr;   ///< the platform to take; nullptr: the image's only one
    std::string variant;          ///< e.g. "v8"; empty: any
    /// emurun's cache dir (the imports and the fresh roots are kept in its `images/`); unset:
    /// cache_dir() (sysroot.hpp)
    std::optional<std::filesystem::path> cache_dir;
};

/// A fresh root made by make_image_root; remove it with remove_image_root.
struct ImageRoot {
    std::filesystem::path dir;      ///< the fresh root, a copy of the cached import
    const Arch* arch = nullptr;     ///< its arch
    bool from_cache = false;        ///< the image was imported before: only copied
    std::string key;                ///< the import's name in the cache: digest and platform
    std::vector<std::string> notes; ///< the import's notes (setuid bits cleared, ...)
    RootImage image; ///< the import's k_root_image_file: its digest, platform, run defaults
};

/// Whether `path` names an image rather than a root directory: a regular file (a tarball), or
/// a directory with an `oci-layout` file.
[[nodiscard]] EMURUN_EXPORT bool is_root_image(const std::filesystem::path& path);

/// A fresh root from `spec.source`: the image's platform is imported once into the cache (by
/// import_root, under a lock; keyed by the sha256 of the tarball or of the layout's
/// index.json, and the platform taken; the cache import_root's RootImportSpec::cache uses, its
/// entries checked as import_root checks them), then copied
/// (`cp -a --reflink=auto`) into a directory of this process (`images/run-PID/N`), so what a run
/// changes never reaches the next. Fresh roots left by a process that is gone (SIGKILL) are removed
/// by the next call (not while a process of any PID namespace holds their dir: a shared flock while
/// it has roots), and what an import killed outright left by the next import of that image. Errors:
/// those of import_root; the copy failing (nothing is left); a SIGINT, SIGTERM or SIGHUP while a
/// tool runs (root_interrupted_by() names it).
[[nodiscard]] EMURUN_EXPORT Result<ImageRoot> make_image_root(const ImageRootSpec& spec);

/// Remove a fresh root make_image_root made (and this process's run dir once it is empty).
EMURUN_EXPORT void remove_image_root(const ImageRoot& root);

/// Exporting roots as a container image (root_export.cpp).
struct RootExportSpec {
    /// The roots, one per platform (created or imported, each of another arch)
    std::vector<std::filesystem::path> roots;
    std::filesystem::path out; ///< the image to write: must not exist
    /// "oci" (an OCI image layout directory), "oci-archive" (a tarball of one) or
    /// "docker-archive" (what `docker save` writes, loadable by `docker load`/`podman load`;
    /// one root only)
    std::string format = "oci";
    std::string tag; ///< "NAME[:TAG]" (TAG default "latest"); empty: the image is untagged
};

/// One platform of an exported image.
struct RootExportedPlatform {
    const Arch* arch = nullptr;    ///< the root's arch
    std::string architecture;      ///< its OCI architecture: "arm64", "ppc64le", ...
    std::string variant;           ///< its OCI variant: "v8"; empty when it has none
    std::string manifest;          ///< the manifest's digest, "sha256:HEX"
    std::string layer;             ///< the layer blob's digest
    std::uint64_t layer_bytes = 0; ///< the layer blob's size
};

/// What export_root wrote.
struct RootExported {
    std::vector<RootExportedPlatform> platforms; ///< in the order of spec.roots
    std::vector<std::string> notes;              ///< facts for the user
};

/// Write the roots as one image at `spec.out`: per root one layer (its whole tree, but not
/// emurun's own files at its top, `.emurun-*`, nor what is inside dev, proc and sys, which a
/// container gets at run time), a config (an imported root's Env, WorkingDir, User,
/// Entrypoint and Cmd; else PATH and `/bin/sh`) and a manifest for its platform; several roots
/// make a multi-arch index. OCI layers are gzip-compressed, a docker archive's are plain tar.
/// Owners: as root, the files' own (numeric); otherwise every file is uid and gid 0 (they
/// are the caller's, root inside the root). `created` is SOURCE_DATE_EPOCH when set, else
/// now; the same root and SOURCE_DATE_EPOCH give the same layer and config digests. Built in
/// OUT's sibling `.OUT.emurun-export-XXXXXX` and renamed to OUT at the end: on any error
/// (a full disk, tar failing, a signal while tar, gzip or sha256sum runs: root_interrupted_by()
/// names it) nothing is left. Errors: OUT exists, a root is not one, two roots of one
/// platform, several roots for a docker archive, a bad tag.
[[nodiscard]] EMURUN_EXPORT Result<RootExported> export_root(const RootExportSpec& spec);

} // namespace emurun
