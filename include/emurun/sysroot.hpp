// Library search for dynamic target binaries: "foreign ldd" and the QEMU_LD_PREFIX to run them.
// Layer: core. Its ABI is kept within a SOVERSION (abi/libemurun.abi; docs/api/mainpage.md).
#pragma once

#include <emurun/arch.hpp>
#include <emurun/elf.hpp>
#include <emurun/error.hpp>
#include <emurun/export.hpp>

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace emurun {

/// Sysroots used when the user names none: `/usr/<triplet>` (Debian's cross packages) when it
/// holds the arch's libc, and / when Debian multiarch dirs `/lib/<triplet>` or
/// `/usr/lib/<triplet>` exist (foreign-arch packages installed on the host).
[[nodiscard]] EMURUN_EXPORT std::vector<std::filesystem::path> default_sysroots(const Arch& arch);

/// Where one DT_NEEDED library (or the interpreter) was found, or that it is missing.
struct LibraryLookup {
    std::string name;                          ///< soname, or the PT_INTERP path
    std::string needed_by;                     ///< soname/filename of the object that needs it
    std::optional<std::filesystem::path> path; ///< host path where it resolves; empty = missing
    std::string package_hint; ///< Debian package likely to provide it, "zlib1g:arm64"

    /// package_hint is a guess by Debian's naming policy (libxml2.so.2 -> "libxml2-2"), not a
    /// library emurun knows the package of: it may not exist.
    bool package_guessed = false;
    /// The sysroot it was found in (one of LinkMap::sysroots); empty when missing or found
    /// outside every sysroot ($ORIGIN, a relative RUNPATH, an absolute one on the host).
    std::optional<std::filesystem::path> sysroot{};

    /// The files the loader's search tries before `path` (every one it tries when missing),
    /// absolute: a file put at one of them changes where the library resolves, so a cached
    /// plan is keyed on them (link_map_inputs).
    std::vector<std::filesystem::path> passed_over{};
};

/// The result of resolving a binary's interpreter and libraries, recursively.
struct LinkMap {
    std::optional<LibraryLookup> interpreter;    ///< empty for static binaries
    std::vector<LibraryLookup> libraries;        ///< breadth-first, each soname once
    std::vector<std::filesystem::path> sysroots; ///< the sysroots searched, in order

    /// Interpreter and every library resolved.
    [[nodiscard]] EMURUN_EXPORT bool complete() const;
    /// Names of what is missing (interpreter path first), in lookup order.
    [[nodiscard]] EMURUN_EXPORT std::vector<std::string> missing() const;
    /// An Error naming every missing item and how to get it; used by exec, shims and inspect.
    [[nodiscard]] EMURUN_EXPORT Error missing_error(const std::filesystem::path& binary) const;
};

/// "Foreign ldd": resolve `elf`'s PT_INTERP and DT_NEEDED (recursively, honouring
/// DT_RUNPATH/DT_RPATH and $ORIGIN) inside `sysroots`; candidates of another arch are skipped
/// as the target's loader would skip them. Never fails: what is missing is in the result.
[[nodiscard]] EMURUN_EXPORT LinkMap
resolve_libraries(const std::filesystem::path& binary, const ElfInfo& elf,
                  const std::vector<std::filesystem::path>& sysroots);

/// What `map` was resolved from, for a cache of a decision made from it (a launch record):
/// the loader and each library found, and their directories; every file a lookup tried before
/// its answer (LibraryLookup::passed_over: RUNPATH, $ORIGIN and host places too); for every
/// sysroot searched, the
/// directories a loader prefix is made from (those of make_ld_prefix's stamp, whether they
/// exist or not). A library added, removed or replaced in any of them changes the identity
/// (dev, inode, size, mtime, ctime) or the absence of one of these paths. Absolute, each once, in a
/// stable order.
[[nodiscard]] EMURUN_EXPORT std::vector<std::filesystem::path> link_map_inputs(const LinkMap& map,
                                                                               const Arch& arch);

/// One binary examined (`emurun inspect`): its ELF facts and where its libraries resolve.
struct Inspection {
    std::filesystem::path file; ///< as given
    ElfInfo elf;                ///< what its ELF header and program headers say
    LinkMap links; ///< empty for a static binary without DT_NEEDED; sysroots always set
};

/// Read `file`'s ELF header and resolve its interpreter and libraries in `sysroots` (empty =
/// default_sysroots of its arch, none for an unknown arch). Error: not a readable ELF file.
[[nodiscard]] EMURUN_EXPORT Result<Inspection>
inspect_binary(const std::filesystem::path& file,
               const std::vector<std::filesystem::path>& sysroots = {});

/// The JSON text of `emurun inspect --json` (json_text's `indent`): an array with one object
/// per inspection: file, arch (null when unknown), class, endianness, machine, type, static,
/// runpath, rpath, soname, interpreter, needed, libraries ({name, needed_by, path or null,
/// [package]}), missing, sysroots.
[[nodiscard]] EMURUN_EXPORT std::string inspection_json(std::span<const Inspection> inspections,
                                                        int indent = 2);

/// Every sysroot a caller named is a directory: a mistyped one is refused as such, not taken as
/// a sysroot without libraries (exec, inspect, sysroot check).
[[nodiscard]] EMURUN_EXPORT Result<void>
check_sysroot_dirs(const std::vector<std::filesystem::path>& sysroots);

/// The Debian package that most likely ships `soname` for `arch` ("libz.so.1" → "zlib1g:arm64"),
/// or empty if no guess.
[[nodiscard]] EMURUN_EXPORT std::string guess_package(const std::string& soname, const Arch& arch);

/// Whether guess_package's answer for `soname` is a guess by Debian's naming policy (policy
/// 8.1) rather than a package emurun knows ships it.
[[nodiscard]] EMURUN_EXPORT bool package_guessed(const std::string& soname);

/// What the emurun-sysroot tool (apt and dpkg in a private state) is asked to do.
enum class SysrootOp {
    fetch,     ///< packages and their Depends closure for `arch`, unpacked into `dir`
    source,    ///< one source package (PKG or PKG=VERSION) unpacked under `dir`
    build_dep, ///< the build-dependencies of a source package (or source dir) for `arch`
};

/// A request to make or fill a sysroot from Debian's archive (`emurun sysroot fetch|source|
/// build-dep`); empty strings mean the tool's defaults (the host's mirror and release).
struct SysrootRequest {
    /// The size of this struct as the caller was compiled with it: how libemurun tells which
    /// version of it a program passes (a versioned struct: fields are only added at its end,
    /// and a program built against an older libemurun keeps working). Leave it as it is.
    StructSize<SysrootRequest> struct_size{};
    SysrootOp op = SysrootOp::fetch;     ///< what to do
    std::string arch{};                  ///< any emurun name or alias (fetch, build_dep)
    std::filesystem::path dir{};         ///< the sysroot (or where sources are unpacked)
    std::vector<std::string> packages{}; ///< fetch: PKG...; source: PKG[=VERSION]; build_dep: one
    std::filesystem::path cache{};       ///< apt cache root (default cache_dir() / "apt")
    std::string mirror{};                ///< the Debian mirror's URL; empty = the host's
    std::string suite{};                 ///< the Debian release ("trixie"); empty = the host's
    std::string profiles{};              ///< build_dep: build profiles, "nocheck,cross"
    bool refresh = false;                ///< update the package lists even when recent
};

/// The argument vector that carries out `request` with the emurun-sysroot tool at `tool`, after
/// checking it: an arch emurun knows that Debian builds (given as its Debian name), a `dir`
/// that is not a file, the right number of packages. Errors name the culprit and the fix. The
/// tool exits 0, 2 (usage), 3 (archive unreachable or a download failed) or 1.
[[nodiscard]] EMURUN_EXPORT Result<std::vector<std::string>>
sysroot_tool_argv(const SysrootRequest& request, const std::filesystem::path& tool);

/// Sysroots for one arch, for building a loader prefix.
struct ArchSysroots {
    const Arch* arch = nullptr;                    ///< the arch whose loader the prefix must hold
    std::vector<std::filesystem::path> sysroots{}; ///< its sysroots, searched in this order
};

/// The directory to pass as QEMU_LD_PREFIX so binaries of every listed arch find their loader
/// and libraries. One arch with one sysroot: that sysroot itself. Otherwise a merged prefix of
/// symlinks is built under `cache_dir` (reused when its inputs are unchanged): each arch's
/// loader at its PT_INTERP path and each arch's libraries under `/lib/<triplet>`, where Debian's
/// loaders look first, so arches never collide.
[[nodiscard]] EMURUN_EXPORT Result<std::filesystem::path>
make_ld_prefix(const std::vector<ArchSysroots>& arches, const std::filesystem::path& cache_dir);

/// emurun's cache directory, first match: $EMURUN_CACHE_DIR; $XDG_CACHE_HOME/emurun (when
/// absolute); $HOME/.cache/emurun (when HOME is writable); /tmp/emurun-<uid>. Whatever the
/// source, it is used (make_ld_prefix, root creation, the apt cache, calibration) only when it
/// is a directory of this user that no one else can change, else that use fails naming why.
[[nodiscard]] EMURUN_EXPORT std::filesystem::path cache_dir();

/// The emurun-sysroot script that `emurun sysroot fetch` runs: the one beside this executable
/// when that file is executable, else the bare name "emurun-sysroot", which exec_replace and
/// run_foreground search in PATH (emurun's one PATH rule).
[[nodiscard]] EMURUN_EXPORT std::filesystem::path sysroot_script();

} // namespace emurun
