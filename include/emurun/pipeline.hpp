// The step model: configure/build/test steps loaded from JSON, scheduling and sharding.
// Spawns nothing; the Runner (runner.hpp) executes a Pipeline.
// Layer: runner. Still evolving: its types may change between minor versions
// (docs/api/mainpage.md).
#pragma once

#include <emurun/arch.hpp>
#include <emurun/error.hpp>
#include <emurun/export.hpp>

#include <chrono>
#include <cstddef>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace emurun {

/// Durations in pipelines and reports, millisecond resolution.
using Duration = std::chrono::milliseconds;

/// Parse "90s", "15m", "2h", "1h30m", "250ms", "1.5h", "2d": one or more <number><unit> with
/// unit ms, s, m, h, d. Error names the text and shows an example.
[[nodiscard]] EMURUN_EXPORT Result<Duration> parse_duration(std::string_view text);

/// A short human form: "250ms", "12.3s", "4m05s", "1h02m".
[[nodiscard]] EMURUN_EXPORT std::string format_duration(Duration d);
/// The same for seconds held as a double (report figures).
[[nodiscard]] EMURUN_EXPORT std::string format_seconds(double seconds);

/// What a step does; sharding splits `test` steps only.
enum class StepKind { configure, build, test, other };

[[nodiscard]] EMURUN_EXPORT std::string_view to_string(StepKind kind);
[[nodiscard]] EMURUN_EXPORT std::optional<StepKind> step_kind_from(std::string_view text);

/// Environment variables, ordered so that output is deterministic.
using EnvMap = std::map<std::string, std::string>;

/// How often a step is run again, and after which outcomes (`"retries": {"count": 2, "on":
/// ["emulator_crash", "timed_out", "failed"]}`; `on` defaults to emulator_crash alone).
struct Retries {
    int count = 0;                         ///< attempts after the first, at most k_max_count
    bool on_emulator_crash = true;         ///< retry when QEMU itself crashed ("emulator_crash")
    bool on_timed_out = false;             ///< retry when the step timed out ("timed_out")
    bool on_failed = false;                ///< retry when the step failed otherwise ("failed")
    static constexpr int k_max_count = 10; ///< the most retries a pipeline may ask for
};

/// A step's "limits": its whole process tree's resources (docs/guides/pipelines.md "Limits").
/// Each key of a step overlays the defaults' key of that name.
struct StepLimits {
    std::optional<std::uint64_t> pids;         ///< processes and threads at once
    std::optional<std::uint64_t> memory_bytes; ///< "memory": "2G"
    std::optional<double> cpus;                ///< "cpu": 1.5 (CPUs of bandwidth)
};

/// What a step's missing test results do (the pipeline's "junit_missing"): a pattern of its
/// `junit` that gave no file written by the step and read (none matched, only older or
/// future-dated files, a malformed one). flag: the step is flagged junit_missing; fail: also,
/// a step that passed fails; ignore: only the note in its message.
enum class JunitMissing { flag, fail, ignore };

/// The name the pipeline JSON gives `mode`: "flag", "fail" or "ignore".
[[nodiscard]] EMURUN_EXPORT std::string_view to_string(JunitMissing mode);

/// Settings every step inherits unless it overrides them (the pipeline's "defaults"); each
/// field is described at the Step field of the same name, and unset means the step's default.
struct StepDefaults {
    std::optional<std::string> arch;              ///< canonical arch name (aliases resolved)
    std::optional<Emulation> emulation;           ///< how emulated steps run
    std::vector<std::filesystem::path> sysroots;  ///< sysroots of emulated steps
    std::vector<std::filesystem::path> shim_dirs; ///< shim directories put first in PATH
    EnvMap env;                                   ///< variables every step gets
    std::filesystem::path cwd;       ///< absolute (relative paths resolved against the file's dir)
    std::optional<Duration> timeout; ///< a step's wall-time limit
    std::optional<Retries> retries;  ///< when and how often a step runs again
    std::optional<std::filesystem::path> root; ///< emulation "root": the root's directory
    std::optional<bool> accelerate;            ///< emulation "root": host cross compilers
    std::optional<std::string> cpu;            ///< the CPU model QEMU emulates
    std::optional<std::string> qemu;           ///< the QEMU emulated steps run under (Step::qemu)

    /// emulation "root": which host tools ("toolchain,shell", a tool list); "" = the default
    std::optional<std::string> accelerate_tools;
    std::optional<bool> allow_revision_mismatch; ///< "accelerate": {"allow_revision_mismatch"}
    std::optional<Duration> idle_timeout;        ///< the longest a step may print nothing
    std::optional<JunitMissing> junit_missing;   ///< what missing test results do
    StepLimits limits;                           ///< a step's resource limits
    /// emulation "root": the platform of an image root ("root": "IMAGE#PLATFORM"); "" = none
    std::optional<std::string> root_platform;
};

/// One step, with the defaults already applied.
struct Step {
    std::string name;                ///< unique in the pipeline ("test[aarch64]" per arch)
    StepKind kind = StepKind::other; ///< configure, build, test or other
    std::vector<std::string> argv;   ///< the command; with `shell`, {"/bin/sh", "-c", script}
    bool shell = false;              ///< the user asked for a shell explicitly
    std::filesystem::path cwd;       ///< absolute
    EnvMap env;                      ///< defaults.env overlaid with the step's env
    std::optional<std::string> arch; ///< canonical arch name; nullopt = the host's
    Emulation emulation = Emulation::native;      ///< native, or how it is emulated
    std::vector<std::filesystem::path> sysroots;  ///< where emulated programs find libraries
    std::vector<std::filesystem::path> shim_dirs; ///< put first in the step's PATH
    std::optional<Duration> timeout;              ///< before any multiplier

    /// No output on either stream for this long (before any multiplier): the step's process
    /// tree is recorded and the step stopped, timed_out with reason idle
    std::optional<Duration> idle_timeout;
    std::optional<Duration> budget; ///< over it, the step is flagged (not failed)
    std::vector<std::string> needs; ///< names of steps that must pass first
    std::vector<std::string> tags;  ///< free labels the pipeline gives the step
    Retries retries;                ///< the step's own, else the defaults', else none
    /// emulation "root": the root's directory, or a container image (an OCI layout, a
    /// `docker save` archive, a rootfs tarball) the run imports into a fresh root of its own
    std::optional<std::filesystem::path> root;
    /// With an image root: the platform to take from it ("arm64", "linux/arm/v7"); unset: the
    /// step's arch, else the image's only platform
    std::optional<std::string> root_platform;
    bool accelerate = false; ///< emulation "root": compilers/binutils run as host cross tools

    /// The CPU model QEMU emulates (exec: -cpu; sandbox, host: QEMU_CPU); emulated steps only
    std::optional<std::string> cpu;
    /// The QEMU emulated steps run under: a version ("10.0"), a Debian suite fetched with
    /// `emurun qemu fetch` ("trixie") or a path (choose_emulator); unset = the first found
    std::optional<std::string> qemu;
    /// With accelerate: the --accelerate list ("toolchain,shell", tool names); "" = the default.
    std::string accelerate_tools;
    /// With accelerate: serve a tool by the host's cross package even when it was built from
    /// another revision of the source than the root's ("accelerate": {"allow_revision_mismatch":
    /// true}); the report records each such tool
    bool allow_revision_mismatch = false;
    /// JUnit XML files the step writes, as paths or glob patterns ("Testing/*.xml") relative
    /// to cwd: after the step their test cases go into its report (StepResult::tests)
    std::vector<std::string> junit;
    /// What a pattern of `junit` that gave no test results does (JunitMissing)
    JunitMissing junit_missing = JunitMissing::flag;
    /// What the step produces, as written: paths or glob patterns relative to `cwd`, each
    /// inside the pipeline's directory (checked on load). A build job packs them for test jobs
    /// (pack_artifacts, artifacts.hpp).
    std::vector<std::string> outputs;
    /// A per-arch step (one of the pipeline's "arches"): the step's name as written, the same
    /// for every arch's instance ("build" for "build[aarch64]", "test-${arch}" for
    /// "test-s390x"); empty for a step that runs once. Reports keep it, so a native baseline
    /// and per-arch reports are matched by it.
    std::string template_name;
    /// Resource limits; steps run as root get a pids limit by default (the runner's).
    StepLimits limits;

    /// True when the step's programs run under emulation (exec, sandbox or host mode).
    [[nodiscard]] bool emulated() const { return emulation != Emulation::native; }
};

/// Which per-arch steps to load (docs/guides/pipelines.md).
struct ArchSelection {
    /// Some of the pipeline's "arches" (names or aliases); empty: all of them.
    std::vector<std::string> arches;
    /// The native baseline: each per-arch step once, for `native_arch`, without emulation and
    /// with its "native" overrides; steps with "native": false are left out (and needs on them).
    bool native = false;
    std::string native_arch; ///< usually host_arch()->name; empty: unknown host (an error)
};

/// The largest pipeline file Pipeline::load reads: 64 MiB.
inline constexpr std::size_t k_pipeline_max_bytes = std::size_t{64} << 20;

/// A pipeline: a name, defaults and steps whose `needs` form a DAG (checked on load).
struct Pipeline {
    std::string name;   ///< the pipeline's "name"; reports carry it
    std::string source; ///< the file name used in error messages ("pipeline.json")

    /// The directory relative paths resolve against (the file's own); absolute.
    std::filesystem::path dir;
    /// A hash of the whole document (keys sorted, whitespace ignored): the same file gives the
    /// same digest on every machine, so an artifact archive is matched to its pipeline.
    std::string digest;
    StepDefaults defaults;   ///< as written in the file (already applied to `steps`)
    std::vector<Step> steps; ///< in file order, per-arch steps expanded
    /// The arches its per-arch steps were expanded for (canonical, in the file's order, as
    /// selected); {host} for the native baseline; empty without "arches".
    std::vector<std::string> arches;
    /// Loaded as the native baseline (ArchSelection::native): its reports say so, and a merge
    /// or an artifact archive does not take it for one arch's run.
    bool native = false;

    /// Load and validate a pipeline file (a regular file of at most k_pipeline_max_bytes; a
    /// bigger one is refused before it is read). Errors name the place and the problem:
    /// `pipeline.json: steps[3].timeout: expected a duration like "90s", got "abc"`.
    /// `arches` picks the per-arch steps to load, or asks for the native baseline.
    [[nodiscard]] EMURUN_EXPORT static Result<Pipeline> load(const std::filesystem::path& file,
                                                             const ArchSelection& arches = {});
    /// Parse from text; `source` names it in errors, relative cwds resolve against `base_dir`.
    [[nodiscard]] EMURUN_EXPORT static Result<Pipeline>
    parse(std::string_view text, std::string source = "pipeline.json",
          const std::filesystem::path& base_dir = std::filesystem::current_path(),
          const ArchSelection& arches = {});

    /// The step called `name`, or nullptr.
    [[nodiscard]] EMURUN_EXPORT const Step* find(std::string_view step_name) const;
};

/// One step of a PipelineBuilder: a step object of the pipeline JSON, typed
/// (docs/reference/pipeline-json.md). The fields a step shares with "defaults" are `settings`.
struct StepSpec {
    std::string name = {};           ///< "name": unique in the pipeline, required
    StepKind kind = StepKind::other; ///< "kind": configure, build, test or other
    /// "argv": the command, program first; with `shell`, one element: the script
    std::vector<std::string> argv = {};
    bool shell = false;                    ///< "shell": argv[0] is a script for /bin/sh -c
    std::optional<Duration> budget = {};   ///< "budget": over it, the step is flagged
    std::vector<std::string> needs = {};   ///< "needs": names of steps that must pass first
    std::vector<std::string> tags = {};    ///< "tags": free labels
    std::vector<std::string> junit = {};   ///< "junit": JUnit XML files or patterns it writes
    std::vector<std::string> outputs = {}; ///< "outputs": what it produces, below its cwd
    /// The step's own values of the keys "defaults" also has. What is unset here (nullopt, an
    /// empty list, path or map) comes from the pipeline's defaults; `env` and each of `limits`
    /// overlay the defaults' ones, as in the JSON.
    StepDefaults settings = {};
};

/// Builds a Pipeline in C++ with the rules of a pipeline file, because it is one: build() writes
/// the pipeline JSON (json()) and loads it with Pipeline::parse. Defaults are applied and every
/// field is checked exactly as for a loaded file, and an error is the one the file would give:
/// ErrorKind::bad_input, its `what` naming the pipeline and the field ("demo: steps[1].timeout").
/// Relative paths (cwd, sysroots, root, ...) resolve against base_dir().
class PipelineBuilder {
  public:
    /// A pipeline called `name` (its "name"; errors name it too), no step yet.
    EMURUN_EXPORT explicit PipelineBuilder(std::string name);
    /// Sets "defaults": what every step inherits unless its own `settings` say otherwise.
    EMURUN_EXPORT PipelineBuilder& defaults(StepDefaults defaults);
    /// Appends a step; steps run in the order `needs` allows, listed in this order.
    EMURUN_EXPORT PipelineBuilder& step(StepSpec step);
    /// The directory relative paths resolve against; unset: the current directory at build().
    EMURUN_EXPORT PipelineBuilder& base_dir(std::filesystem::path dir);
    /// The pipeline, loaded and checked as Pipeline::parse loads the text of json(). Errors:
    /// the loader's; a string that is not UTF-8, which JSON cannot hold (bad_input, naming it).
    [[nodiscard]] EMURUN_EXPORT Result<Pipeline> build() const;
    /// The pipeline JSON build() loads: a file `emurun run` takes as it is (with relative paths
    /// as given, resolved against the file's directory there).
    [[nodiscard]] EMURUN_EXPORT std::string json() const;

  private:
    std::string m_name;
    StepDefaults m_defaults;
    std::vector<StepSpec> m_steps;
    std::optional<std::filesystem::path> m_base_dir;
};

/// Expected step durations in seconds by step name (usually a previous report's walls).
using History = std::map<std::string, double, std::less<>>;

/// Step indices in the order a scheduler prefers them when several are ready: longest
/// expected duration first (steps without history count as 0), ties in file order.
[[nodiscard]] EMURUN_EXPORT std::vector<std::size_t> priority_order(const Pipeline& pipeline,
                                                                    const History& history);

/// Which shard of how many ("2/4" means index 2 of 4, 1-based).
struct Shard {
    int index = 1; ///< which shard, 1-based
    int count = 1; ///< how many shards in all
};

/// Parse "K/N" with 1 <= K <= N.
[[nodiscard]] EMURUN_EXPORT Result<Shard> parse_shard(std::string_view text);

/// A partition of a pipeline's test steps over N shards.
struct ShardPlan {
    std::vector<std::vector<std::string>> tests; ///< per shard, test step names in file order
    std::vector<double> load;                    ///< per shard, the expected seconds
};

/// Split the test steps over `count` shards by longest-processing-time greedy on `history`
/// (steps without history weigh the mean of the known ones, or 1 s): each test step is in
/// exactly one shard; test steps linked by `needs` stay together; ties break by name, so the
/// plan is the same on every machine. Non-test steps are not in the plan: every shard runs them.
[[nodiscard]] EMURUN_EXPORT ShardPlan plan_shards(const Pipeline& pipeline, int count,
                                                  const History& history);

/// The pipeline reduced to one shard: its test steps plus every non-test step, except those
/// that need (directly or not) a test step of another shard.
[[nodiscard]] EMURUN_EXPORT Pipeline select_shard(const Pipeline& pipeline, Shard shard,
                                                  const History& history);

/// The pipeline reduced to its build job's part: every step but the test steps and those that
/// need one (directly or not). What `emurun run --pack` runs before it packs the outputs.
[[nodiscard]] EMURUN_EXPORT Pipeline select_build(const Pipeline& pipeline);

/// A CI matrix for `count` shards as JSON text: {"include":[{"shard":"1/4","steps":[...],
/// "expected_seconds":...},...]}, ready for GitHub Actions' `fromJSON`. Error when `count` is
/// below 1 or some shard would get no test step (more shards than test steps or their groups).
[[nodiscard]] EMURUN_EXPORT Result<std::string> ci_matrix_json(const Pipeline& pipeline, int count,
                                                               const History& history);

} // namespace emurun
