// Results of a pipeline run: JSON (schema-versioned), JUnit XML, Markdown, CI annotations,
// the terminal table; flagging rules; comparing and merging reports. Spawns nothing.
// Layer: runner. Still evolving: its types may change between minor versions
// (docs/api/mainpage.md).
#pragma once

#include <emurun/error.hpp>
#include <emurun/export.hpp>
#include <emurun/pipeline.hpp>

#include <nlohmann/json_fwd.hpp>

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace emurun {

/// What became of a step.
enum class StepStatus {
    passed, ///< exited 0
    failed, ///< non-zero exit, killed by a signal, or could not start

    /// an emulated step that failed with QEMU's own crash signature (StepResult::evidence)
    emulator_crash,
    timed_out,   ///< its timeout fired and the process group was stopped
    skipped,     ///< not started because a step it needs did not pass
    interrupted, ///< running when emurun was interrupted; stopped
    not_run,     ///< never started because emurun was interrupted first

    /// not run here: it passed in the build job whose artifacts this run unpacked; its figures
    /// are the build job's (RunnerOptions::reused)
    reused,
    /// a limit of its "limits" (pids, memory) was hit: a fork failed, or the kernel's
    /// out-of-memory killer ended it; StepResult::message says which
    resource_limit,
};
[[nodiscard]] EMURUN_EXPORT std::string_view to_string(StepStatus status);
[[nodiscard]] EMURUN_EXPORT std::optional<StepStatus> step_status_from(std::string_view text);
/// passed, or reused (it passed in the build job): what a step that `needs` it waits for.
[[nodiscard]] inline bool counts_as_passed(StepStatus status) {
    return status == StepStatus::passed || status == StepStatus::reused;
}
/// failed, emulator_crash, timed_out, interrupted or resource_limit: the step ran and did not
/// pass (JUnit's <failure>); skipped, not_run and the passing statuses are not failures.
[[nodiscard]] inline bool counts_as_failure(StepStatus status) {
    return status == StepStatus::failed || status == StepStatus::emulator_crash ||
           status == StepStatus::timed_out || status == StepStatus::interrupted ||
           status == StepStatus::resource_limit;
}

/// A slow-step flag: which rule fired and a sentence for humans.
struct Flag {
    /// "budget", "baseline", "regression", "job_limit", "flaky" or "junit_missing"
    std::string rule;
    std::string message; ///< e.g. "wall 12.0s is over the budget 10.0s"
    /// Every field equal.
    friend bool operator==(const Flag&, const Flag&) = default;
};

/// An accelerated root step's tool whose root package and host cross package were built from
/// different sources or revisions (emurun root's toolchain identity): kept emulated, or
/// accelerated anyway when the step allowed a revision mismatch.
struct ToolchainMismatch {
    std::string tool;         ///< "gcc", "g++", "cpp", "binutils"
    std::string root_package; ///< "gcc-12"
    std::string root_source;  ///< "gcc-12 12.2.0-14+deb12u1"; "" when not installed
    std::string host_package; ///< "gcc-12-aarch64-linux-gnu"
    std::string host_source;  ///< "gcc-12 12.2.0-14"; "" when not installed
    bool accelerated = false; ///< true: accelerated anyway (allow_revision_mismatch)
    std::string message;      ///< the whole sentence: which tool, both versions, why

    /// The probe corpus' verdict: nullopt when it did not run for this tool (it runs for gcc, or
    /// g++ without gcc), "identical", or what differed ("stack.c (dpkg-buildflags): ...
    /// sections .text differ ...") or why it could not run. JSON: null, or the string.
    std::optional<std::string> probe;
    /// Every field equal.
    friend bool operator==(const ToolchainMismatch&, const ToolchainMismatch&) = default;
};

/// One run of a step that was run more than once (`retries`).
struct Attempt {
    StepStatus status = StepStatus::not_run; ///< how this attempt ended
    std::optional<int> exit_code;            ///< its exit code, when it exited
    std::optional<int> signal;               ///< the signal that killed it, when one did
    double wall = 0;                         ///< its wall time, seconds
    std::optional<std::string> evidence;     ///< emulator_crash: as StepResult::evidence
    std::string message;                     ///< as StepResult::message, for this attempt
    std::filesystem::path log; ///< its own log: `<step>.attempt<N>.log`, the last one `<step>.log`
    /// Every field equal.
    friend bool operator==(const Attempt&, const Attempt&) = default;
};

/// The emulator an emulated step ran under.
struct EmulatorRecord {
    std::string path;    ///< the qemu-user binary (for host mode, the host's handler)
    std::string version; ///< as emulator_version() reads it, "7.2.22"; empty when unknown

    /// The CPU model: the step's `cpu`, else QEMU_CPU from its environment, else QEMU's default
    /// for the arch (cpu_default); empty when that default is not known for this version.
    std::string cpu;
    bool cpu_default = false; ///< `cpu` is QEMU's default for the arch, not one the step chose
    /// Every field equal.
    friend bool operator==(const EmulatorRecord&, const EmulatorRecord&) = default;
};

/// The container image a root step's root was made from (the step's "root" named an image:
/// the run imported it and gave the step a fresh root of it).
struct ImageRecord {
    /// The image as the step names it: its path (resolved against the pipeline file's
    /// directory), then "#PLATFORM" as written when the step gives one: "/src/app.tar#arm64"
    std::string reference;
    std::string platform; ///< the platform taken: "linux/arm64", "linux/arm/v7"
    /// The digest of what was imported ("sha256:HEX"): the OCI manifest of that platform, a
    /// docker archive's config (its image ID), a rootfs tarball's own; empty when unknown
    std::string digest;
    /// Every field equal.
    friend bool operator==(const ImageRecord&, const ImageRecord&) = default;
};

/// What an emulation factor divides: wall time, or CPU time (user + sys of the step's tree,
/// steadier on a shared machine where other jobs stretch the wall clock).
enum class FactorBasis { wall, cpu };
[[nodiscard]] EMURUN_EXPORT std::string_view to_string(FactorBasis basis);
[[nodiscard]] EMURUN_EXPORT std::optional<FactorBasis> factor_basis_from(std::string_view text);

/// One process of a step's tree when the step was stopped (a timeout, the idle timeout or an
/// interrupt), as /proc showed it.
struct ProcessRecord {
    int pid = 0;         ///< its process id
    int ppid = 0;        ///< its parent's process id
    std::string state;   ///< "R", "S", "D", "T", "Z"...
    std::string wchan;   ///< the kernel function it slept in; empty when running or unknown
    double cpu = 0;      ///< user + system seconds
    std::string cmdline; ///< arguments joined by spaces

    /// "   4242    4241 S do_wait       0.01 sh -c sleep 600" (the log's table)
    [[nodiscard]] EMURUN_EXPORT std::string describe() const;
    /// Every field equal.
    friend bool operator==(const ProcessRecord&, const ProcessRecord&) = default;
};

/// What became of one test case inside a step, as its JUnit file says.
enum class TestStatus {
    passed,
    failed,  ///< <failure>: an assertion did not hold
    error,   ///< <error>: the test could not run to its end (a crash, a timeout in ctest)
    skipped, ///< <skipped> (or ctest's status="notrun"/"disabled")
};
[[nodiscard]] EMURUN_EXPORT std::string_view to_string(TestStatus status);
[[nodiscard]] EMURUN_EXPORT std::optional<TestStatus> test_status_from(std::string_view text);

/// One test case of a step, read from the JUnit XML files the step wrote (Step::junit).
struct TestResult {
    std::string name;      ///< the test case's name attribute
    std::string classname; ///< the class or suite attribute; empty when the file gives none
    double time = 0;       ///< seconds, as the file gives it
    TestStatus status = TestStatus::passed; ///< what became of it

    /// failed, error, skipped: the element's message (or its text's first line; for an empty
    /// failure, ctest's, the first lines of the test's <system-out>), at most
    /// k_test_message_max bytes and "…"; empty otherwise
    std::string message;
    std::optional<double> baseline_time; ///< the same test's time in the --baseline report

    /// "slow", "emulation_only_failure", "native_only_failure" (docs/guides/pipelines.md)
    std::vector<Flag> flags;

    /// time / baseline time, when a baseline time is known and non-zero.
    [[nodiscard]] EMURUN_EXPORT std::optional<double> baseline_factor() const;
    /// Failed or error: the test did not pass and was not skipped.
    [[nodiscard]] bool failing() const {
        return status == TestStatus::failed || status == TestStatus::error;
    }
    /// Every field equal.
    friend bool operator==(const TestResult&, const TestResult&) = default;
};
inline constexpr std::size_t k_test_message_max = 512;
/// A test's name and classname as read from JUnit keep at most this many bytes (then "…").
inline constexpr std::size_t k_test_name_max = 2048;
/// ... so a report holds at most this many bytes in one (k_test_name_max and the "…").
inline constexpr std::size_t k_test_name_stored = k_test_name_max + 3;
/// The longest pipeline, step, template or arch name a report may hold (a pipeline allows 200
/// bytes, a per-arch step adds its arch): a longer one is an error naming its place.
inline constexpr std::size_t k_report_name_max = 1024;

/// One step's measurements. Times are seconds; CPU and RSS cover the whole waited tree.
struct StepResult {
    std::string name;                ///< the step's name (Step::name)
    StepKind kind = StepKind::other; ///< the step's kind (Step::kind)
    std::string arch;                ///< empty for native steps without an arch

    /// A per-arch step's template (Step::template_name, JSON "template"): "build" for
    /// "build[aarch64]"; empty for a step that runs once. Baselines and merges match by it.
    std::string template_name;
    Emulation emulation = Emulation::native; ///< how it ran (auto resolved to the mode used)

    /// Emulation "root" and some host tool really served the step (accelerated_tools is not
    /// empty); false when every tool asked for stayed emulated (toolchain_mismatches say why)
    bool accelerated = false;
    /// With accelerated: the acceleration the step asked for ("toolchain", "toolchain,shell",
    /// "gcc,as", ...; accelerated_tools says which of it ran); nullopt otherwise.
    std::optional<std::string> acceleration;
    /// The host tools that really ran in the root's place (RootPlan::accelerated: "gcc-12",
    /// "as", "dash", ...); empty when none did
    std::vector<std::string> accelerated_tools;
    /// With acceleration asked for: the tools whose root and host sources differ
    std::vector<ToolchainMismatch> toolchain_mismatches;
    StepStatus status = StepStatus::not_run; ///< how it ended (the last attempt's outcome)
    std::optional<int> exit_code;            ///< its exit code, when it exited
    std::optional<int> signal;               ///< the signal that killed it, when one did
    double wall = 0;                         ///< wall time, seconds
    double user = 0;                         ///< user CPU time of the tree, seconds
    double sys = 0;                          ///< system CPU time of the tree, seconds
    std::int64_t max_rss_kib = 0;            ///< largest resident set of a process of the tree
    std::optional<double> budget;            ///< seconds, from the pipeline

    /// The same step's wall and CPU seconds in the --baseline report; null for a step that ran
    /// natively (a native step has no emulation factor) or had no measured baseline
    std::optional<double> baseline_wall;
    std::optional<double> baseline_cpu; ///< as baseline_wall, CPU seconds (user + sys)
    std::filesystem::path log;          ///< the complete output, both streams
    std::string message;                ///< why it failed or was skipped, for humans

    /// emulator_crash: the line of stderr with QEMU's crash message, or why the emulator
    /// itself is taken to have crashed (qemu_killed_evidence)
    std::optional<std::string> evidence;
    std::optional<EmulatorRecord> emulator; ///< emulated steps that ran: which QEMU
    std::optional<ImageRecord> image;       ///< root steps on an image root: which image

    /// timed_out: "timeout" (the step's wall-time limit) or "idle" (its idle_timeout)
    std::optional<std::string> timeout_reason;
    /// The step's "limits" that could not be enforced as asked, and why (nullopt: all were)
    std::optional<std::string> limit_gap;
    /// The step's process tree just before it was stopped (timed_out, interrupted), parents
    /// first; empty otherwise
    std::vector<ProcessRecord> processes;
    std::vector<Flag> flags; ///< the step's flags (budget, baseline, regression, flaky, ...)
    /// Every attempt, in order, when the step was retried (the step's own fields are the last
    /// one's); empty when it ran once. A step that passed after a failed attempt is flagged
    /// `flaky`.
    std::vector<Attempt> attempts;
    /// The test cases of the JUnit files the step names (Step::junit), in file order; why some
    /// are missing (no file matched, a file older than the step or dated in the future, a
    /// malformed one) is said in `message` (10 such notes at most, then "… N more"; the log has
    /// them all), and a pattern that gave none flags the step junit_missing
    /// (Step::junit_missing).
    std::vector<TestResult> tests;

    /// CPU seconds of the tree: user + sys.
    [[nodiscard]] double cpu() const { return user + sys; }
    /// wall / baseline wall, when a baseline is known and non-zero.
    [[nodiscard]] EMURUN_EXPORT std::optional<double> baseline_factor() const;
    /// The emulation factor on `basis`: baseline_factor(), or cpu() / baseline CPU.
    [[nodiscard]] EMURUN_EXPORT std::optional<double> factor(FactorBasis basis) const;
    /// Every field equal.
    friend bool operator==(const StepResult&, const StepResult&) = default;
};

/// The artifact archive a run packed (the build job) or unpacked (a test job), by its id.
struct ArtifactLink {
    std::string id;      ///< the archive's id (its manifest's), 16 hex digits
    bool packed = false; ///< true: this run packed it; false: this run reused its steps
    /// Every field equal.
    friend bool operator==(const ArtifactLink&, const ArtifactLink&) = default;
};

/// The largest report file Report::load reads: 256 MiB (a 100,000-step report is ~100 MiB).
inline constexpr std::size_t k_report_max_bytes = std::size_t{256} << 20;

/// A pipeline run. JSON field names and meanings: docs/reference/report-json.md (schema_version
/// 1, generated from cmake/schema/report.schema.json).
struct Report {
    static constexpr int k_schema_version = 1; ///< the report format this version writes
    std::string pipeline;                      ///< Pipeline::name
    /// Pipeline::digest of the pipeline that ran (16 hex digits): merge refuses reports of two
    /// versions of a pipeline. Empty in reports written before emurun recorded it.
    std::string pipeline_digest;
    std::string started;                   ///< UTC, ISO 8601
    double wall = 0;                       ///< whole run, seconds
    std::string host_arch;                 ///< the arch of the machine that ran it
    int shard_index = 1;                   ///< which shard this run was (Shard::index)
    int shard_count = 1;                   ///< of how many (Shard::count)
    std::optional<double> job_limit;       ///< seconds, from --job-limit
    std::optional<int> interrupted_by;     ///< the signal that stopped the run
    std::optional<ArtifactLink> artifacts; ///< --pack / --unpack: which archive

    /// What the steps' factors against the baseline divide (FlagRules::basis of the run): the
    /// table's and Markdown's "x baseline" column and the baseline flag use it.
    FactorBasis factor_basis = FactorBasis::wall;
    /// The factor over which the run flagged a step or test against its baseline
    /// (FlagRules::baseline_factor, `--threshold`): a baseline joined later (join_baseline,
    /// `report show --baseline`) flags with it unless told another. 10 in older reports.
    double threshold = 10;
    /// A run of the native baseline (Pipeline::native): the other runs' baseline, never merged
    /// with them as one more arch. False in reports written before emurun recorded it.
    bool native_baseline = false;
    std::vector<StepResult> steps; ///< one per step run (of the shard), in pipeline order
    std::vector<Flag> flags;       ///< pipeline-wide (job_limit)

    /// The step called `step`, or nullptr.
    [[nodiscard]] EMURUN_EXPORT const StepResult* find(std::string_view step) const;
    /// The step of `step`'s template (the first with that template name, as a native baseline
    /// has one per template), else the step of the same name, else nullptr.
    [[nodiscard]] EMURUN_EXPORT const StepResult* find_like(const StepResult& step) const;
    /// The arches of its per-arch steps, in order of first appearance.
    [[nodiscard]] EMURUN_EXPORT std::vector<std::string> arches() const;
    /// Every step passed (skipped steps count as not passing, flags do not count).
    [[nodiscard]] EMURUN_EXPORT bool succeeded() const;
    /// Any flag on the run, a step or a step's test.
    [[nodiscard]] EMURUN_EXPORT bool flagged() const;
    /// Expected durations for scheduling and sharding: each finished step's wall.
    [[nodiscard]] EMURUN_EXPORT History history() const;

    /// The report as JSON (docs/reference/report-json.md); save() writes it.
    [[nodiscard]] EMURUN_EXPORT nlohmann::json to_json() const;
    /// Errors name the place, as pipeline errors do: "r.json: steps[2].wall: expected a number".
    [[nodiscard]] EMURUN_EXPORT static Result<Report> from_json(const nlohmann::json& j,
                                                                const std::string& source);
    /// from_json() on JSON text; `source` names it in errors.
    [[nodiscard]] EMURUN_EXPORT static Result<Report> parse(std::string_view text,
                                                            const std::string& source);
    /// parse() on a file: a regular file of at most k_report_max_bytes (a bigger one is refused
    /// before it is read, the error naming its size and the limit).
    [[nodiscard]] EMURUN_EXPORT static Result<Report> load(const std::filesystem::path& file);
    /// Write as JSON atomically.
    [[nodiscard]] EMURUN_EXPORT Result<void> save(const std::filesystem::path& file) const;

    /// Every field equal.
    bool operator==(const Report&) const = default;
};

/// Thresholds of the flagging rules (docs/guides/pipelines.md).
struct FlagRules {
    /// (b) emulated/native ratio above this, of wall or CPU time (`basis`), for emulated steps
    /// that passed (docs/guides/pipelines.md: the default against measured suites)
    double baseline_factor = 10;
    FactorBasis basis = FactorBasis::wall; ///< whether (b) compares wall or CPU time
    double regression_relative = 0.2;      ///< (c) slower than previous by more than 20 % ...
    double regression_absolute = 5;        ///< ... and by more than 5 s
    double job_limit_share = 0.8;          ///< (d) projected total over 80 % of the job limit

    /// (b), (e): a step or test is flagged over baseline_factor x its baseline time, unless
    /// that baseline time (wall, CPU for a step on the CPU basis) is below this many seconds
    /// (timer noise)
    double test_min_baseline = 0.05;
};

/// Error unless `baseline` (read from `name`) can serve as a native baseline: some step of it
/// ran natively. A report whose steps all ran emulated would give factors near 1 that mean
/// nothing.
[[nodiscard]] EMURUN_EXPORT Result<void> check_baseline(const Report& baseline,
                                                        const std::string& name);

/// What to say when `baseline` (read from `name`) is a run of another pipeline than `pipeline`
/// (a native pipeline of its own, as the demo's, or a mistake): its steps are matched by
/// template, then name, so they had better run the same tests natively. nullopt when the names
/// agree or either is unknown.
[[nodiscard]] EMURUN_EXPORT std::optional<std::string>
other_pipeline_note(const Report& baseline, const std::string& name, std::string_view pipeline);

/// Error unless every threshold is a finite number in its range: baseline_factor > 0,
/// regression margins >= 0, 0 < job_limit_share <= 1 (NaN and -1 would silence a rule).
[[nodiscard]] EMURUN_EXPORT Result<void> check_rules(const FlagRules& rules);

/// Rules (a)-(c) for one step, and (e) for its tests (flag_tests); `baseline`/`previous` may
/// be null. Appends to result.flags and sets result.baseline_wall.
EMURUN_EXPORT void flag_step(StepResult& result, const FlagRules& rules, const Report* baseline,
                             const Report* previous);

/// Rule (e), per test: each test of `result` is matched with the test of the same classname and
/// name in `baseline` (the same step of the baseline report; may be null), gets its
/// baseline_time, and is flagged "slow" (over rules.baseline_factor x a baseline time of at
/// least rules.test_min_baseline), "emulation_only_failure" (failing here, passed there) or
/// "native_only_failure" (passed here, failing there).
EMURUN_EXPORT void flag_tests(StepResult& result, const FlagRules& rules,
                              const StepResult* baseline);

/// Rule (d): the projected total of a run at `elapsed` seconds, with `remaining` expected
/// seconds of work not yet done, spread over `jobs` parallel slots.
[[nodiscard]] EMURUN_EXPORT double projected_total(double elapsed, double remaining, int jobs);
/// The job-limit flag when `projected` passes rules.job_limit_share of `limit`, else nullopt.
[[nodiscard]] EMURUN_EXPORT std::optional<Flag> job_limit_flag(double projected, double limit,
                                                               const FlagRules& rules);

/// A native baseline joined after the run (`emurun report show|compare --baseline`): the
/// emulated and native runs happened in separate jobs. Each step's baseline figures and
/// baseline-derived flags (the step's "baseline", its tests' "slow", "emulation_only_failure",
/// "native_only_failure") are replaced by those against `baseline`, with flag_step's rules;
/// the run's other flags stay. Returns baseline_misses (some steps got no factor: the caller
/// says so, as a run with a baseline does; other_pipeline_note too). Errors: check_baseline's
/// (the baseline ran nothing natively); no emulated step of
/// the report matches a step of the baseline (joining would only wipe the factors the run
/// recorded; a run with such a baseline has none to wipe and warns instead).
[[nodiscard]] EMURUN_EXPORT Result<std::vector<std::string>>
join_baseline(Report& report, const Report& baseline, const std::string& baseline_name,
              const FlagRules& rules);

/// The steps of `report` that ran emulated (reused ones aside) and find no step of the same
/// template or name in `baseline` (Report::find_like) that ran natively: they get no factor and
/// no baseline flag (an emulated step of the baseline is no baseline).
[[nodiscard]] EMURUN_EXPORT std::vector<std::string> baseline_misses(const Report& report,
                                                                     const Report& baseline);

/// Apply rules (a)-(c) to every step and (d) to the finished run.
EMURUN_EXPORT void apply_flags(Report& report, const FlagRules& rules, const Report* baseline,
                               const Report* previous);

/// Bounds of the JUnit reader: a larger file is refused, and a step keeps at most this many
/// test cases (the rest are counted in its message).
inline constexpr std::size_t k_junit_max_bytes = std::size_t{64} << 20;
inline constexpr std::size_t k_junit_max_tests = 20000;

/// The test cases of a JUnit XML document as ctest --output-junit, meson test, pytest
/// --junitxml and doctest -r=junit write it: <testcase name classname time> inside
/// <testsuite>/<testsuites>, with <failure>, <error> or <skipped> (ctest also status="fail" /
/// "notrun"). Names and classnames keep k_test_name_max bytes, messages k_test_message_max
/// (then "…"). Output elements are ignored, but for the first lines of <system-out> as the
/// message of a failure without one (ctest writes <failure message=""/>); no DTD or entity
/// other than XML's own is expanded.
/// Errors name `source`, the line and the problem ("t.xml: line 4: <testcase> is not closed").
[[nodiscard]] EMURUN_EXPORT Result<std::vector<TestResult>> parse_junit(std::string_view xml,
                                                                        const std::string& source);
/// parse_junit on a file: a regular file of at most k_junit_max_bytes.
[[nodiscard]] EMURUN_EXPORT Result<std::vector<TestResult>>
read_junit(const std::filesystem::path& file);

/// Which logs to_junit may read. A report names its logs by path, and a report read from a file
/// names whatever its writer put there ("/proc/self/environ", "/etc/shadow"): a log is read
/// only when `log_dir` is given and the log lies beneath it, opened relative to it with openat2
/// RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS (no "..", symlink or /proc link leads out); else
/// system-out says the log was left out and why.
struct JunitLogs {
    /// The log dir of the run that wrote the report (the runner's own, or one the caller
    /// vouches for); nullopt: no log is read.
    std::optional<std::filesystem::path> log_dir;
};

/// JUnit XML: one testsuite per pipeline, one testcase per step, failure/skipped elements,
/// times. A failure's body says why (exit code, signal, timeout, message, flags); system-out
/// holds the log path and the log's tail (log_tail), read by the rule of JunitLogs. Special
/// characters are escaped; bytes XML cannot hold (control characters, ANSI escapes, invalid
/// UTF-8) are dropped.
[[nodiscard]] EMURUN_EXPORT std::string to_junit(const Report& report, const JunitLogs& logs = {});
/// The end of a log for CI pages: at most `max_lines` lines and `max_bytes` bytes, with a first
/// line saying how much was left out. Empty when the file cannot be read.
[[nodiscard]] EMURUN_EXPORT std::string log_tail(const std::filesystem::path& log,
                                                 std::size_t max_lines = 100,
                                                 std::size_t max_bytes = 64 * 1024);
/// A Markdown summary (for $GITHUB_STEP_SUMMARY).
[[nodiscard]] EMURUN_EXPORT std::string to_markdown(const Report& report);
/// GitHub shows at most this many ::error and ::warning annotations per step.
inline constexpr std::size_t k_github_max_errors = 10;
inline constexpr std::size_t k_github_max_warnings = 10;
/// GitHub Actions workflow commands: ::error for failed steps, then ::warning for flags, each
/// capped at GitHub's per-step limit; when some are left out, one ::notice counts them.
[[nodiscard]] EMURUN_EXPORT std::vector<std::string> annotations(const Report& report);
/// How to_table shows a step's status cell: given the status and its plain text ("passed"),
/// the cell's text. A terminal's caller wraps the text in ANSI SGR codes (ESC [ ... m), which
/// take no column in the layout; colour is the caller's choice, not the library's.
using StatusStyle = std::function<std::string(StepStatus status, std::string_view text)>;
/// The report as plain text, as a log shows it: a table of step, status, wall, CPU, max RSS,
/// x baseline, flags; then crashes, toolchain mismatches, flags, the per-arch table and the
/// steps' own tests. Text from the report is made printable (no control characters). `style`
/// (none: the plain text) decorates the status cells.
[[nodiscard]] EMURUN_EXPORT std::string to_table(const Report& report,
                                                 const StatusStyle& style = {});
/// A table of two reports side by side: wall before, after, change.
[[nodiscard]] EMURUN_EXPORT std::string compare_table(const Report& before, const Report& after);
/// The same comparison as JSON: {"steps": [{name, before, after, change, before_status,
/// after_status}], "total": {before, after, change}, "emulator_changes": [{name, before,
/// after}], "image_changes": [{name, before, after}]}; missing values are null, change is a
/// fraction (0.25 = 25 % slower).
[[nodiscard]] EMURUN_EXPORT nlohmann::json compare_json(const Report& before, const Report& after);

/// A step in both reports whose emulator changed (path, version or CPU model) between them.
struct EmulatorChange {
    std::string step;                     ///< the step's name
    std::optional<EmulatorRecord> before; ///< its emulator in `before`; nullopt: it ran native
    std::optional<EmulatorRecord> after;  ///< its emulator in `after`; nullopt: it ran native
    /// "unit: qemu-aarch64-static 7.2.21 (cpu max) -> qemu-aarch64-static 7.2.22 (cpu max)"
    [[nodiscard]] EMURUN_EXPORT std::string describe() const;
};
/// Every such step, in `after`'s order (a step emulated in one run and native in the other
/// counts: its record appears or vanishes).
[[nodiscard]] EMURUN_EXPORT std::vector<EmulatorChange> emulator_changes(const Report& before,
                                                                         const Report& after);

/// A step in both reports whose image changed: its platform or digest (the same image at another
/// path is no change); without both digests, any field of its ImageRecord.
struct ImageChange {
    std::string step;                  ///< the step's name
    std::optional<ImageRecord> before; ///< its image in `before`; nullopt: no image root
    std::optional<ImageRecord> after;  ///< its image in `after`; nullopt: no image root
    /// "test: app.tar#arm64 (linux/arm64, sha256:1a2b3c4d5e6f) -> app.tar#arm64 (linux/arm64,
    /// sha256:9f8e7d6c5b4a)"
    [[nodiscard]] EMURUN_EXPORT std::string describe() const;
};
/// Every such step that ran in both, in `after`'s order.
[[nodiscard]] EMURUN_EXPORT std::vector<ImageChange> image_changes(const Report& before,
                                                                   const Report& after);

/// Join shard reports into one: steps in order of first appearance; a step in several reports
/// (non-test steps run in every shard) keeps its worst result. Errors on different pipelines
/// or pipeline digests (two versions of one pipeline; a report without a digest, written by an
/// older emurun, is not checked), on steps run in two images (the same step, or the same image
/// reference, with another digest), a test step in two shards, and unless every shard 1/N..N/N
/// is there exactly once. A report that packed artifacts (the
/// build job's) may join them: it is not a shard, its steps come first and stand for the
/// shards' `reused` ones, its wall adds to theirs; then every shard must have reused that very
/// archive, and a shard that reused one needs its build report. A native baseline's report
/// (Report::native_baseline) merges only with reports of the same native run. `names` (the
/// files, in the same order; may be empty) name the reports in errors.
[[nodiscard]] EMURUN_EXPORT Result<Report> merge_reports(std::span<const Report> reports,
                                                         std::span<const std::string> names = {});

/// Write to_junit(report) to `file` atomically, as Report::save does: a temporary file in the
/// same directory, fsync, rename; on failure (full disk) the old file is left whole.
[[nodiscard]] EMURUN_EXPORT Result<void>
save_junit(const Report& report, const std::filesystem::path& file, const JunitLogs& logs = {});
/// A limit on the file append_markdown() appends to (a CI's job summary has one): the file
/// stays within `max_bytes`; a longer Markdown is cut at a line and `note` follows it.
struct MarkdownCap {
    std::size_t max_bytes = 0; ///< the most the file may hold, in bytes
    std::string note;          ///< said after a cut Markdown (e.g. where the whole report is)
};

/// Append to_markdown(report) to `file` (a CI's job summary): a regular file, created if
/// missing; a FIFO or device there is an error, not a hang. With `cap`, the file stays within
/// cap->max_bytes (what is there counts), the Markdown cut at a line with cap->note after it.
[[nodiscard]] EMURUN_EXPORT Result<void>
append_markdown(const Report& report, const std::filesystem::path& file,
                const std::optional<MarkdownCap>& cap = std::nullopt);
/// Write to_markdown(report) to `file` atomically, likewise.
[[nodiscard]] EMURUN_EXPORT Result<void> save_markdown(const Report& report,
                                                       const std::filesystem::path& file);

} // namespace emurun
