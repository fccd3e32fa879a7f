// Private helpers of the step runner.
#pragma once

#include <emurun/process.hpp>
#include <emurun/qemu.hpp>
#include <emurun/root.hpp>
#include <emurun/runner.hpp>

#include <map>
#include <string>
#include <string_view>

namespace emurun::detail {

/// The pids limit of a step run as root that sets none: RLIMIT_NPROC binds no root, so
/// without it a fork bomb takes the machine.
inline constexpr std::uint64_t k_root_default_pids = 4096;

/// A step's "limits" for the process module, with k_root_default_pids for root.
[[nodiscard]] ResourceLimits spawn_limits(const StepLimits& limits);

/// What the root plan of a root step decided, as the report records it.
struct RootOutcome {
    std::vector<std::string> accelerated;      ///< host tools that serve it (RootPlan's)
    std::vector<ToolchainMismatch> mismatches; ///< tools whose root and host sources differ
};

/// The Command that runs `step` in its emulation mode, with EMURUN_ARCH, EMURUN_EMULATED and
/// EMURUN_TIMEOUT_MULTIPLIER (`timeout_factor` for an emulated step, 1 for a native one) in
/// its environment. Errors: unknown arch, no emulator, missing libraries (exec mode), no emurun
/// executable (sandbox mode).
/// For a root step, `root` (when given) receives what its plan accelerates and the tools
/// whose root and host sources differ.
Result<Command> step_command(const Step& step, const EmulatorSearch& emulators,
                             double timeout_factor, RootOutcome* root = nullptr);

/// Which QEMU an emulated step runs under: the emulator the search finds (exec, sandbox) or the
/// host's handler (host), its version, and its CPU model (the step's `cpu`, else QEMU_CPU of
/// its env or emurun's, else QEMU's default for the arch). nullopt for native steps and when
/// no emulator is found (the step then fails to start, saying so).
std::optional<EmulatorRecord> step_emulator(const Step& step, const EmulatorSearch& emulators);

/// The emulator search of an emulated step: the run's, narrowed to the emulator its "qemu"
/// names (choose_emulator); the run's unchanged without one.
Result<EmulatorSearch> step_search(const Step& step, const EmulatorSearch& emulators);

/// Decide every `auto` step's mode (choose_auto_mode) before the run, so that the report
/// records the mode each step really runs in. A step that cannot be decided stays `auto`:
/// step_command() then fails it with the reason and the fixes.
/// Each decision goes to `diagnostics` (RunnerOptions::diagnostics).
void resolve_auto_emulation(Pipeline& pipeline, const DiagnosticSink& diagnostics);

/// The fresh roots a run made from images (make_image_root): removed when it goes.
class ImageRoots {
  public:
    ImageRoots() = default;
    ImageRoots(const ImageRoots&) = delete;
    ImageRoots& operator=(const ImageRoots&) = delete;
    ~ImageRoots();
    std::vector<ImageRoot> made; ///< in the order the steps first named them
    /// Each fresh root's image, by the root's dir: as the steps name it ("/p/app.tar#arm64"),
    /// the platform and digest imported (the report's StepResult::image)
    std::map<std::filesystem::path, ImageRecord> images;
    /// Each root step whose image could not become a root, by name: why (the step fails with
    /// it when it would start, and the steps that need it are skipped)
    std::map<std::string, Error> failed;
};

/// `text` (a step's message) with each fresh root's path, a temporary directory removed after
/// the run, replaced by its image: "/p/app.tar#arm64 (this run's root from it)".
[[nodiscard]] std::string name_image_roots(std::string text, const ImageRoots& roots);

/// Every root step whose root is an image (is_root_image, or "root": "IMAGE#PLATFORM") gets a
/// fresh root of this run: one per image and platform (the step's "#PLATFORM", else its arch,
/// else the image's only one), shared by the steps that name it, so a build step's output is
/// there for the test step after it. Each is said to `diagnostics`. An image that cannot be
/// imported or copied fails the steps that name it (`roots.failed`), as any step that cannot
/// start: the run goes on and its report says so. Error: a "#PLATFORM" that names no Linux
/// platform emurun knows (a pipeline that cannot be run as written), named with its step.
/// Interrupted (root_interrupted_by()), the signal is raised again and the rest left
/// unprepared: the run takes it before its first step.
[[nodiscard]] Result<void> prepare_image_roots(Pipeline& pipeline, ImageRoots& roots,
                                               const DiagnosticSink& diagnostics);

/// A failed emulated step becomes emulator_crash, with the evidence, when its stderr carried
/// QEMU's crash signature (`scanner`, may be null) or, in exec mode where the step's process
/// is the emulator, QEMU died of a crash signal without reporting the guest dying of it
/// (judge_qemu_failure). A guest program's own fatal signal, or a feature QEMU reported it
/// lacks, stays `failed` with a note in its message. Any other result is left as it is.
void classify_emulator_crash(const Step& step, const QemuCrashScanner* scanner, StepResult& r);

/// Whether a step that ended as `r` after `attempts_done` attempts runs again: its `retries`
/// allow another and list r's status (`failed` only for a step that ran, not one that could
/// not start).
bool wants_retry(const Step& step, const StepResult& r, std::size_t attempts_done);
/// The record of attempt `number` (1-based) that ended as `r`; its log is moved aside to
/// <step>@attempt<number>.log ('@' is in no step log's name: no step's log can be that file),
/// so that the next attempt writes a fresh <step>.log.
Attempt set_aside_attempt(const StepResult& r, std::size_t number);
/// The last attempt `r` after `earlier` ones: r.attempts lists them all, and a pass after a
/// failed attempt is flagged `flaky`. Nothing when there were no earlier attempts.
void close_attempts(std::vector<Attempt> earlier, StepResult& r);

/// A file name for a step's log: a name of letters, digits, '-', '_' and '.' as it is; any
/// other name with unsafe characters as '_', shortened, and a hash of the name appended, so
/// "a/b", "a b" and "a_b" get three files.
std::string log_file_name(std::string_view step);
/// The file name attempt `number` (1-based) of `step` is set aside to, "<stem>@attempt<N>.log"
/// of log_file_name(step) (set_aside_attempt).
std::string attempt_log_file_name(std::string_view step, std::size_t number);

/// Calls `f(log, name)` for the log of `r` (a StepResult, const or not) and each attempt's:
/// `name` is the file name a run gives that log, computed from the step's name (the last
/// attempt's log is the step's own, the earlier ones were set aside).
template <class R, class F> void for_each_own_log(R& r, F f) {
    const std::string own = log_file_name(r.name);
    f(r.log, own);
    for (std::size_t i = 0; i < r.attempts.size(); ++i) {
        f(r.attempts[i].log,
          i + 1 == r.attempts.size() ? own : attempt_log_file_name(r.name, i + 1));
    }
}

/// The logs of `report`'s steps that carry the name a run gives them (for_each_own_log): by that
/// name, the path the report names. What a build job packs, and all a test job unpacks.
std::map<std::string, std::filesystem::path> own_logs(const Report& report);

/// Error when two steps would share a log file, or the log directory's name is not UTF-8 (the
/// report names each log in JSON text). Before anything runs.
Result<void> check_log_names(const Pipeline& pipeline, const std::filesystem::path& log_dir);

/// A step that timed out: status timed_out, timeout_reason "idle" when its idle_timeout fired
/// (no output for that long), else "timeout", and a message that says which.
void note_timeout(const Step& step, const ChildResult& c, StepResult& result);

/// The process tree taken before the step was stopped, into the result and the end of its log
/// (a table: pid, ppid, state, wchan, cpu seconds, command line). Nothing when empty.
void record_processes(const std::vector<ProcessSnapshot>& snapshot, StepResult& result);

/// Error unless emurun can write in `log_dir`: it is a directory that takes new files, or it
/// does not exist and its nearest existing ancestor is one (it will be created there). Before
/// anything runs, so that a read-only or misplaced log directory does not fail every step.
Result<void> check_log_dir(const std::filesystem::path& log_dir);

/// For a step that never ran (skipped, or its command could not be started): its log, the file
/// the report names, is one line "<status>: <message>", so that the report never links a file
/// that does not exist. When that cannot be written the log field is cleared instead.
void write_reason_log(StepResult& result);

/// After `step` ended (its last attempt started at `started`): the test cases of the JUnit files
/// its `junit` names into result.tests. A pattern that matched nothing, a file older than the
/// step (a leftover), one that cannot be read or parsed, and test cases past k_junit_max_tests
/// are each a note in result.message and at the end of its log, never a failure of the step.
void collect_tests(const Step& step, std::filesystem::file_time_type started, StepResult& result);

/// A step whose output did not all reach its log: it fails (a clean log cannot be shown), and
/// its message says why.
void note_log_error(StepResult& result, const Error& error);

} // namespace emurun::detail
