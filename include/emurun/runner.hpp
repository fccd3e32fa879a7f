// Running a pipeline: the top of the module stack (pipeline + report + process + launch +
// sandbox). Steps run in parallel under one Supervisor (or any CommandRunner); the result is a
// Report.
// Layer: runner. Still evolving: its types may change between minor versions
// (docs/api/mainpage.md).
#pragma once

#include <emurun/calibrate.hpp>
#include <emurun/diagnostics.hpp>
#include <emurun/error.hpp>
#include <emurun/export.hpp>
#include <emurun/pipeline.hpp>
#include <emurun/process.hpp>
#include <emurun/qemu.hpp>
#include <emurun/report.hpp>

#include <chrono>
#include <csignal>
#include <filesystem>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace emurun {

/// What the Runner tells its caller while it runs.
struct RunEvent {
    /// When it is sent: a step started or finished, the progress after a step, a
    /// pipeline-wide flag raised, or a heartbeat while steps run.
    enum class Kind { started, finished, progress, flagged, heartbeat };
    Kind kind = Kind::progress; ///< which event this is
    /// heartbeat: a running step, how long it has run and how long since its last output
    struct Activity {
        std::string step;        ///< the step's name
        double running = 0;      ///< seconds
        double since_output = 0; ///< seconds (since its start when it printed nothing yet)
    };
    std::vector<Activity> activity; ///< heartbeat: every running step

    /// finished: the result (also of each attempt of a step that runs again, its message
    /// ending "retrying: attempt N of M"); started: partial (name, log)
    const StepResult* step = nullptr;
    const Flag* flag = nullptr;       ///< flagged: the pipeline-wide flag
    double elapsed = 0;               ///< seconds since the run started
    std::optional<double> eta;        ///< seconds left, when history allows an estimate
    std::vector<std::string> running; ///< names of running steps
    std::size_t done = 0;             ///< steps finished so far
    std::size_t total = 0;            ///< steps this run will run
};

/// Steps a build job ran and packed (unpack_artifacts, artifacts.hpp): this run does not run
/// them again.
struct ReusedSteps {
    std::string artifacts_id;      ///< the archive's id: the report's `artifacts`
    std::vector<StepResult> steps; ///< the build job's results of the packed steps
};

/// Everything a run can be told. Defaults suit a CI job.
struct RunnerOptions {
    int jobs = 1;                   ///< steps run at once (at least 1)
    std::optional<Shard> shard;     ///< run only this shard's steps; nullopt = all of them
    std::optional<Report> baseline; ///< a native run's report: rule (b)
    std::optional<Report> previous; ///< history for scheduling, ETA, sharding and rule (c)

    /// Step durations of earlier runs (load_run_history) for scheduling (longest first), ETA
    /// and sharding when there is no `previous` report; never for rule (c).
    History history;
    std::optional<double> job_limit;         ///< seconds: rule (d)
    FlagRules rules;                         ///< when a step is flagged (report.hpp)
    TimeoutMultiplier timeout_multiplier;    ///< scales emulated steps' timeouts
    std::chrono::milliseconds grace{10'000}; ///< between SIGTERM and SIGKILL

    /// Emit a RunEvent::Kind::heartbeat this often while steps run (for CIs that kill jobs
    /// that print nothing for a while); nullopt = never.
    std::optional<std::chrono::milliseconds> heartbeat;
    /// Whether a flagged run should fail. run() does not read it: a caller passes it to
    /// Runner::exit_code().
    bool fail_on_flag = false;
    /// Steps done in a build job: each is `reused` (not run; the build job's figures), steps
    /// that need it go ahead; the report's `artifacts` names the archive.
    std::optional<ReusedSteps> reused;
    std::filesystem::path log_dir = "emurun-logs"; ///< where each step's log is written
    EmulatorSearch emulators;                      ///< where to look for emulators
    /// Install SIGINT/SIGTERM/SIGHUP handlers for the run: stop every step, finish the report.
    bool handle_signals = true;
    std::function<void(const RunEvent&)> on_event; ///< called with every RunEvent; may be empty
    /// Every chunk of every step's output (the log already has it).
    std::function<void(const std::string& step, Stream, std::string_view)> on_output;
    /// What the run notices without failing (diagnostics.hpp), before its first step: the mode
    /// each "auto" step was given, a sandbox (debug) or the host's binfmt_misc handlers because
    /// no sandbox can be set up here (warning). Empty drops them.
    DiagnosticSink diagnostics;
};

/// The seam under the Runner (ninja's CommandRunner): how step commands are started, waited
/// for and stopped, and the clock the run is timed with. Runner::run() uses one that serves a
/// Supervisor (real processes, process.hpp); a library user may plug in another (to run steps
/// elsewhere, or to dry-run a pipeline), and emurun's unit tests plug in a fake with scripted
/// results on a virtual clock, so the scheduling rules are tested without processes. Public
/// because it is made of public types only (Command, SpawnOptions, ChildResult). The Runner
/// calls it from one thread.
class EMURUN_EXPORT CommandRunner {
  public:
    virtual ~CommandRunner() = default;
    /// Start `cmd` (as Supervisor::spawn). An error means it never started: the step fails
    /// with the error's message.
    [[nodiscard]] virtual Result<ChildId> spawn(const Command& cmd,
                                                const SpawnOptions& options) = 0;
    /// Wait until at least one command ended or `timeout` passed (as Supervisor::wait_any);
    /// the ended ones, maybe none. An error ends the run.
    [[nodiscard]] virtual Result<std::vector<ChildResult>>
    wait_any(std::chrono::milliseconds timeout) = 0;
    /// The run was interrupted: stop every running command. wait_any() still reports them,
    /// with ChildResult::stopped set.
    virtual void stop_all() = 0;
    /// With RunnerOptions::handle_signals, SIGINT, SIGTERM and SIGHUP are blocked while the run
    /// goes on, and wait_any() must wait with this mask installed (as ppoll does) for a signal to
    /// reach the run's handler.
    virtual void set_wait_sigmask(const sigset_t& mask) = 0;
    /// The clock of the run: elapsed time, ETA, the progress interval, the report's wall.
    [[nodiscard]] virtual std::chrono::steady_clock::time_point now() const {
        return std::chrono::steady_clock::now();
    }
    /// What this runner needs before it can start any command (the real one: the step
    /// supervisor helper program), checked once before the first step: an error ends the run
    /// before anything started, instead of failing every step with it.
    [[nodiscard]] virtual Result<void> ready() { return {}; }
};

/// Before a run: an error when a file the caller will write afterwards (`outputs`: the report,
/// JUnit, Markdown) is the pipeline file, a step's log, or another of `outputs` (symlinks and
/// hard links count); when an output's directory is missing or cannot be written in; when two
/// steps would share a log file; when the log directory cannot be written in or created; or
/// when its name is not UTF-8 (the report could not name the logs). Nothing is written.
[[nodiscard]] EMURUN_EXPORT Result<void>
check_run_outputs(const Pipeline& pipeline, const RunnerOptions& options,
                  std::span<const std::filesystem::path> outputs);

/// Before a run: an error naming the step when a step's "accelerate" list names a tool or
/// group the root module does not know (parse_acceleration) or that it refuses
/// (check_acceleration: binutils without gcc), or its image root's "#PLATFORM" is no platform
/// (parse_oci_platform) or not of the step's arch. A step whose root is an image gets a fresh root
/// of the run's own (make_image_root), shared by the steps naming the same image and platform and
/// removed after the run.
[[nodiscard]] EMURUN_EXPORT Result<void> check_root_steps(const Pipeline& pipeline);

/// What `--matrix auto` asks of a CI matrix.
struct MatrixRequest {
    double job_limit = 0;    ///< seconds a CI job may take
    double share = 0.8;      ///< of job_limit a shard's projected time may use
    int jobs = 1;            ///< steps each job runs at once (-j)
    bool build_once = false; ///< the shards reuse a build job's archive: they run tests only
};

/// The matrix `choose_matrix` picked, and why.
struct MatrixChoice {
    int count = 0;                 ///< shards
    ShardPlan plan;                ///< the test steps of each
    double common = 0;             ///< seconds of the build part (select_build's steps)
    std::vector<double> projected; ///< seconds, per shard
    std::size_t unknown = 0;       ///< steps without history (tests weigh the mean, others 0)
};

/// Expected step durations for a projection: each step's wall in `previous` where it has one,
/// else its wall in `baseline` (a native run) times the step's timeout multiplier when it runs
/// emulated (calibrated slowdowns: parse_timeout_multiplier "auto"). Either report may be null.
[[nodiscard]] EMURUN_EXPORT History projected_history(const Pipeline& pipeline,
                                                      const Report* previous,
                                                      const Report* baseline,
                                                      const TimeoutMultiplier& multiplier);

/// The fewest shards whose projected times (projected_total of the build part, unless
/// build_once, plus the shard's tests, over `jobs`) all stay under share × job_limit. Errors:
/// no history for any step of the pipeline; no count fits (the longest test group alone is
/// over); with build_once, the build part alone is over.
[[nodiscard]] EMURUN_EXPORT Result<MatrixChoice>
choose_matrix(const Pipeline& pipeline, const History& history, const MatrixRequest& request);

/// The file that keeps the timing history of the pipeline read from `pipeline_file` (made
/// absolute) named `pipeline_name` in `dir`: DIR/NAME-HEX.json, HEX a stable hash of the path,
/// the name and `variant` (what changes the steps' times: "native", the arches chosen).
[[nodiscard]] EMURUN_EXPORT std::filesystem::path
run_history_file(const std::filesystem::path& dir, const std::filesystem::path& pipeline_file,
                 std::string_view pipeline_name, std::string_view variant);

/// Where `emurun run` keeps the histories unless told: run-history/ in emurun's cache dir
/// (cache_dir(), sysroot.hpp). Errors: that dir is not this user's alone.
[[nodiscard]] EMURUN_EXPORT Result<std::filesystem::path> default_run_history_dir();

/// The step durations in a history file; empty when there is none, or it is damaged or of
/// another schema (the run then schedules as the first one did).
[[nodiscard]] EMURUN_EXPORT History load_run_history(const std::filesystem::path& file);

/// The report's measured steps (Report::history) merged into the history file, written
/// atomically: a step's latest wall replaces the earlier one; steps this run did not run (a
/// shard's others) keep theirs. Errors: the directory or the file cannot be written.
[[nodiscard]] EMURUN_EXPORT Result<void> save_run_history(const std::filesystem::path& file,
                                                          const Report& report);

/// Runs a Pipeline and produces its Report.
class Runner {
  public:
    /// A runner of `pipeline` with `options`; nothing is checked or started until ready() or
    /// run().
    EMURUN_EXPORT Runner(Pipeline pipeline, RunnerOptions options);

    /// Run every step (of the shard) as real processes, under one Supervisor. Errors only for
    /// emurun's own failures (log dir cannot be created, poll fails, a helper program missing:
    /// see ready()); steps that fail are results in the report.
    [[nodiscard]] EMURUN_EXPORT Result<Report> run();
    /// The same with the step commands started by `commands`.
    [[nodiscard]] EMURUN_EXPORT Result<Report> run(CommandRunner& commands);
    /// What run() checks before starting any step, as one error naming what is missing: the
    /// options (jobs), the log directory, `commands.ready()` (run(): the step supervisor
    /// emurun-supervisor), and when a step runs in a sandbox or a root, the emurun executable
    /// that enters them (find_emurun_exe). Nothing is started.
    [[nodiscard]] EMURUN_EXPORT Result<void> ready(CommandRunner& commands) const;
    /// The exit code for a finished run: 0; 1 if a step failed; 124 if the only failures are
    /// timeouts; 3 if flagged under fail_on_flag; 128+N when interrupted by signal N.
    [[nodiscard]] EMURUN_EXPORT static int exit_code(const Report& report, bool fail_on_flag);

  private:
    Pipeline m_pipeline;
    RunnerOptions m_options;
};

} // namespace emurun
