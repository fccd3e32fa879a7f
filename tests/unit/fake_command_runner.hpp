// A CommandRunner without processes (ninja's FakeCommandRunner): each command's outcome and
// duration is scripted by its argv[0], time is a virtual clock that wait_any() advances to the
// next event, and a scripted signal is raised inside a wait, where the real Supervisor's ppoll
// would take it. Runner tests on it are fast and exact.
#pragma once

#include <emurun/runner.hpp>

#include <chrono>
#include <csignal>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace emurun::test {

/// The line qemu-user prints when the guest program dies of SIGSEGV (then QEMU dies of SIGSEGV
/// too): the guest's own crash, not QEMU's.
inline const std::string k_qemu_uncaught =
    "qemu: uncaught target signal 11 (Segmentation fault) - core dumped";
/// The line qemu-user prints before it aborts (SIGABRT) on a CPU exception it cannot handle:
/// QEMU's own crash signature in tests.
inline const std::string k_qemu_unhandled = "qemu: unhandled CPU exception 0x8 - aborting";

/// What a scripted command does.
struct FakeOutcome {
    double seconds = 1;                       ///< how long it runs (on the fake clock)
    ExitStatus status{};                      ///< how it ends when nothing stops it
    std::optional<std::string> spawn_error{}; ///< spawn() fails with this
    std::optional<std::string> start_error{}; ///< it ends at once with this start_error
    double cpu = 0.5;                         ///< share of `seconds` spent as user CPU
    std::string stderr_output{};              ///< written to stderr (on_output) as it starts
    /// The process tree a timeout or idle timeout finds (ChildResult::snapshot).
    std::vector<ProcessSnapshot> snapshot{};
};

class FakeCommandRunner final : public CommandRunner {
  public:
    /// Script the command whose argv[0] is `name` (unscripted ones run 1 s and exit 0).
    void script(const std::string& name, FakeOutcome outcome);
    /// Script the successive runs of `name` (a retried step): the first spawn does outcomes[0],
    /// and so on; past the list, script() or the default applies.
    void script_attempts(const std::string& name, std::vector<FakeOutcome> outcomes);
    /// How often the command called `name` was spawned.
    [[nodiscard]] int spawn_count(const std::string& name) const;
    /// Raise `sig` in the first wait that reaches `at` seconds after the fake clock started.
    void interrupt_at(double at, int sig);
    /// Stopped commands end this long after stop_all(), killed by `status`.
    void stop_takes(double seconds, ExitStatus status = ExitStatus::killed(SIGTERM));
    /// ready() fails with `why`: the runner lacks something before any command starts.
    void not_ready(Error why) { m_not_ready = std::move(why); }

    /// argv[0] of every spawned command, in spawn order.
    [[nodiscard]] const std::vector<std::string>& started() const { return m_started; }
    /// When the command called `name` was spawned, in seconds on the fake clock.
    [[nodiscard]] double started_at(const std::string& name) const;
    /// The options each command was spawned with, by argv[0].
    [[nodiscard]] const SpawnOptions& options_of(const std::string& name) const;
    /// The command each was spawned as, by argv[0].
    [[nodiscard]] const Command& command_of(const std::string& name) const;
    /// The most commands that ran at once.
    [[nodiscard]] std::size_t max_running() const { return m_max_running; }
    [[nodiscard]] int stop_all_calls() const { return m_stop_all_calls; }
    /// The runner handed over a wait mask (it handles SIGINT/SIGTERM).
    [[nodiscard]] bool has_wait_sigmask() const { return m_wait_mask.has_value(); }
    /// Seconds on the fake clock since it started.
    [[nodiscard]] double clock() const;

    Result<ChildId> spawn(const Command& cmd, const SpawnOptions& options) override;
    Result<std::vector<ChildResult>> wait_any(std::chrono::milliseconds timeout) override;
    void stop_all() override;
    void set_wait_sigmask(const sigset_t& mask) override { m_wait_mask = mask; }
    [[nodiscard]] std::chrono::steady_clock::time_point now() const override { return m_now; }
    Result<void> ready() override {
        return m_not_ready ? Result<void>(std::unexpected(*m_not_ready)) : Result<void>{};
    }

  private:
    using Time = std::chrono::steady_clock::time_point;
    struct Child {
        std::string name;
        Time start;
        Time end;
        ChildResult result;
    };
    [[nodiscard]] Time at(double seconds_from_start) const;
    void raise_in_wait(int sig);
    std::vector<ChildResult> collect_ended();

    std::map<std::string, FakeOutcome> m_script;
    std::map<std::string, std::vector<FakeOutcome>> m_attempts;
    std::map<std::string, int> m_spawn_count;
    std::map<std::string, SpawnOptions> m_options;
    std::map<std::string, Command> m_commands;
    std::map<std::string, double> m_started_at;
    std::map<ChildId, Child> m_running;
    std::vector<std::string> m_started;
    std::optional<std::pair<double, int>> m_interrupt;
    double m_stop_seconds = 0;
    ExitStatus m_stop_status = ExitStatus::killed(SIGTERM);
    std::optional<sigset_t> m_wait_mask;
    std::optional<Error> m_not_ready;
    // Far from the epoch, as a steady clock is: "a second since the last progress" holds at 0.
    Time m_t0 = Time(std::chrono::hours(1000));
    Time m_now = m_t0;
    ChildId m_next_id = 1;
    std::size_t m_max_running = 0;
    int m_stop_all_calls = 0;
};

/// A pipeline from the JSON of its steps: `pipeline_of(R"([{"name": "a", "argv": ["a"]}])")`.
[[nodiscard]] Pipeline pipeline_of(const std::string& steps_json);
/// Options for a runner test: logs in a fresh testdir()/`name`, no output callbacks.
[[nodiscard]] RunnerOptions runner_options(const std::string& name, int jobs = 1);
/// A previous report whose history gives each step `name` the wall `seconds`.
[[nodiscard]] Report history_of(const std::map<std::string, double>& walls);
/// The status of step `name` in `report` (REQUIREs that it is there).
[[nodiscard]] StepStatus status_of(const Report& report, const std::string& name);

} // namespace emurun::test
