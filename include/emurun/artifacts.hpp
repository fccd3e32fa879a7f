// Build once, test in many jobs: a build job packs what its steps produced (their `outputs`)
// with a manifest into one archive; each test job unpacks it, checked, and runs only what is
// left (RunnerOptions::reused). Owned by the runner module; tar and its compressor (Debian's
// tar, gzip, zstd, xz) do the archiving, started through the process module.
// Layer: runner. Still evolving: its types may change between minor versions
// (docs/api/mainpage.md).
#pragma once

#include <emurun/error.hpp>
#include <emurun/export.hpp>
#include <emurun/pipeline.hpp>
#include <emurun/report.hpp>
#include <emurun/runner.hpp>

#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace emurun {

/// The archive member that holds the manifest, at the archive's root.
inline constexpr std::string_view k_manifest_member = ".emurun-artifacts.json";
/// An archive's members may hold at most k_unpack_max_ratio times the archive's own size in
/// bytes (as `tar -tv` lists them: a sparse file counts at its full size), and never less than
/// k_unpack_min_cap is allowed: a 10 KB archive cannot fill a disk.
inline constexpr std::uint64_t k_unpack_max_ratio = 1000;
inline constexpr std::uint64_t k_unpack_min_cap = std::uint64_t{1} << 30;
/// The archive's directory of the packed steps' logs (ArtifactManifest::logs), at its root.
inline constexpr std::string_view k_logs_member = ".emurun-logs";

/// What an artifact archive holds, written into it as k_manifest_member.
struct ArtifactManifest {
    static constexpr int k_format = 1; ///< the manifest format this version writes
    std::string pipeline;              ///< Pipeline::name
    std::string digest;                ///< Pipeline::digest of the pipeline that packed it
    std::string id;                    ///< artifact_id() of the rest: names the archive in reports

    /// Every packed path, relative to the pipeline's directory, lexically normal, none below
    /// another (a directory holds what is under it)
    std::vector<std::string> paths;
    /// The file names of the packed steps' logs (their `log` and each attempt's), in the
    /// archive under k_logs_member/: a test job puts them in its own log directory
    std::vector<std::string> logs;
    /// The build job's report, reduced to the packed steps (all passed)
    Report report;
};

/// The id of a manifest, 16 hex digits: a hash of all a test job takes from it (the pipeline's
/// name and digest, the paths, the logs and the whole report, every step's entry included), so
/// that an edit of any of it is refused (check_manifest). An unkeyed hash (FNV-1a): it detects
/// accidents (a truncated or hand-edited archive, another emurun version), not forgery; anyone
/// who can write the archive can write a matching id. What keeps a forged archive harmless is
/// the unpack rules alone (unpack_artifacts), not the id.
[[nodiscard]] EMURUN_EXPORT std::string artifact_id(const ArtifactManifest& manifest);
/// The manifest as JSON text: {"format", "pipeline", "digest", "id", "paths", "logs", "report"}.
[[nodiscard]] EMURUN_EXPORT std::string manifest_json(const ArtifactManifest& manifest);
/// Read a manifest (from an archive: untrusted). Errors name the place, as report errors do;
/// unsafe paths (absolute, "..", control characters, one below another) and logs that are not
/// plain file names, or are listed twice, are errors; "logs" may be absent (none packed).
[[nodiscard]] EMURUN_EXPORT Result<ArtifactManifest> parse_manifest(std::string_view text,
                                                                    const std::string& source);
/// Error unless `manifest` was packed by this very pipeline (name and digest) as loaded here:
/// by a native baseline's run exactly when `pipeline` is one (Pipeline::native), with per-arch
/// steps of no arch `pipeline` did not select (an aarch64 build job's archive in a ppc64le test
/// job is refused, naming both); its id is its own (else the error says the archive was edited
/// or written by another emurun version), it names only passed, non-test steps of the pipeline,
/// each once, and each of its logs is the own log of one of them (the name a run gives that
/// step's log or an attempt's, computed from the step's name). `archive` names it in errors.
[[nodiscard]] EMURUN_EXPORT Result<void> check_manifest(const ArtifactManifest& manifest,
                                                        const Pipeline& pipeline,
                                                        const std::string& archive);

/// The paths to pack: the `outputs` of every step that passed in `report`, globs expanded,
/// relative to the pipeline's directory, sorted, those below another dropped. Error naming the
/// step and the path when one does not exist (or a glob matches nothing).
[[nodiscard]] EMURUN_EXPORT Result<std::vector<std::string>>
collect_outputs(const Pipeline& pipeline, const Report& report);
/// Error unless every archive member (as `tar -t` lists them) is the manifest, one of its paths
/// or below one, or one of its logs under k_logs_member/, relative, without "..".
[[nodiscard]] EMURUN_EXPORT Result<void> check_archive_members(std::span<const std::string> members,
                                                               const ArtifactManifest& manifest,
                                                               const std::string& archive);
/// Error unless the tree under `root` holds only directories, regular files (no hard link to
/// a file outside it) and relative symlinks that stay inside it. Setuid, setgid and sticky bits
/// are cleared on the way (an archive packed as anyone, unpacked as root, makes no setuid file).
[[nodiscard]] EMURUN_EXPORT Result<void> check_unpacked_tree(const std::filesystem::path& root);

/// Pack the outputs of the steps that passed in `report` (a run of `pipeline`), their logs
/// (those of the files their `log` and attempts name that exist) and a manifest
/// into `archive` (.tar, .tar.gz/.tgz, .tar.zst/.tzst or .tar.xz), atomically: a temporary
/// file beside it, renamed over it once complete; on any error nothing is written. On success
/// `report.artifacts` names the archive (packed) and the manifest is returned. A SIGINT, SIGTERM
/// or SIGHUP while tar runs stops tar (its process group): the error says so, nothing is
/// written, `report.interrupted_by` is set and the signal is raised again once the temporary
/// files are gone (pending if the caller blocks it, as `emurun run` does).
[[nodiscard]] EMURUN_EXPORT Result<ArtifactManifest>
pack_artifacts(const Pipeline& pipeline, Report& report, const std::filesystem::path& archive);

/// Check `archive` against `pipeline` (check_manifest, check_archive_members, the size cap
/// k_unpack_max_ratio), extract it into a fresh directory in the pipeline's directory (holes
/// of sparse files kept), check that (check_unpacked_tree), put the
/// packed logs into `log_dir` (the run's RunnerOptions::log_dir, created if missing) under the
/// names computed from their steps: each written as a new temporary file there and renamed over
/// whatever has the name (a symlink is replaced, never followed; an empty directory removed; a
/// directory that is not empty is an error before anything is written), as a run replaces its
/// steps' logs; then move the packed paths into place, each opened beneath the pipeline's
/// directory (openat2 RESOLVE_BENEATH: a symlink in the checkout that leads out of it is an
/// error, never followed; these rules alone, not the manifest's id, keep a forged archive
/// inside). A packed path that already exists is an error (nothing is overwritten); on any error (a
/// full disk: the errno, and what to do) nothing is left behind: no log, no temporary file, no
/// `log_dir` it made. Returns the steps to reuse, each `log` (and attempt's) naming its file in
/// `log_dir`, or empty when the archive holds none for it. A SIGINT, SIGTERM or SIGHUP while tar
/// runs stops it as for pack_artifacts: an error, nothing left behind, and the signal raised again.
[[nodiscard]] EMURUN_EXPORT Result<ReusedSteps>
unpack_artifacts(const Pipeline& pipeline, const std::filesystem::path& archive,
                 const std::filesystem::path& log_dir = "emurun-logs");

} // namespace emurun
