// The step runner: schedules ready steps by priority on a CommandRunner (one Supervisor unless
// the caller brings another), measures, flags, handles SIGINT/SIGTERM by stopping every step
// and finishing the report.
#include "runner/runner_internal.hpp"

#include <emurun/arch.hpp>

#include <algorithm>
#include <cctype>
#include <csignal>
#include <ctime>
#include <system_error>

namespace emurun {
namespace {

using Clock = std::chrono::steady_clock;
volatile std::sig_atomic_t g_signal = 0;

extern "C" void note_signal(int sig) {
    g_signal = sig;
}

// Blocks SIGINT/SIGTERM outside the CommandRunner's wait (ninja's pattern: the Supervisor unblocks
// them in its ppoll); restores on exit.
class SignalScope {
  public:
    SignalScope(bool enable, CommandRunner& commands) : m_enabled(enable) {
        g_signal = 0; // a signal an earlier run in this process took is not this run's
        if (!enable) {
            return;
        }
        struct sigaction sa {};
        sa.sa_handler = note_signal;
        sigemptyset(&sa.sa_mask);
        ::sigaction(SIGINT, &sa, &m_old_int);
        ::sigaction(SIGTERM, &sa, &m_old_term);
        sigset_t block;
        sigemptyset(&block);
        sigaddset(&block, SIGINT);
        sigaddset(&block, SIGTERM);
        ::sigprocmask(SIG_BLOCK, &block, &m_old_mask);
        sigset_t wait_mask = m_old_mask;
        sigdelset(&wait_mask, SIGINT);
        sigdelset(&wait_mask, SIGTERM);
        commands.set_wait_sigmask(wait_mask);
    }
    ~SignalScope() {
        if (m_enabled) {
            ::sigprocmask(SIG_SETMASK, &m_old_mask, nullptr);
            ::sigaction(SIGINT, &m_old_int, nullptr);
            ::sigaction(SIGTERM, &m_old_term, nullptr);
        }
    }
    SignalScope(const SignalScope&) = delete;
    SignalScope& operator=(const SignalScope&) = delete;

  private:
    bool m_enabled;
    struct sigaction m_old_int {};
    struct sigaction m_old_term {};
    sigset_t m_old_mask{};
};

std::string utc_now() {
    std::time_t t = std::time(nullptr);
    std::tm tm{};
    ::gmtime_r(&t, &tm);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return buf;
}

double seconds(auto d) {
    return std::chrono::duration<double>(d).count();
}

// The real CommandRunner: one Supervisor, the steady clock.
class SupervisorRunner final : public CommandRunner {
  public:
    Result<ChildId> spawn(const Command& cmd, const SpawnOptions& options) override {
        return m_supervisor.spawn(cmd, options);
    }
    Result<std::vector<ChildResult>> wait_any(std::chrono::milliseconds timeout) override {
        return m_supervisor.wait_any(timeout);
    }
    void stop_all() override { m_supervisor.stop_all(); }
    void set_wait_sigmask(const sigset_t& mask) override { m_supervisor.set_wait_sigmask(mask); }

  private:
    Supervisor m_supervisor;
};

enum class State { pending, running, done };

class Execution {
  public:
    Execution(const Pipeline& p, const RunnerOptions& o, CommandRunner& commands)
        : m_p(p), m_o(o), m_commands(commands), m_t0(commands.now()) {
        if (o.previous) {
            m_history = o.previous->history();
        }
        m_order = priority_order(p, m_history);
        m_state.assign(p.steps.size(), State::pending);
        m_started.resize(p.steps.size());
    }
    Result<Report> run();

  private:
    StepResult blank(std::size_t i) const;
    void launch_ready();
    bool needs_state(std::size_t i, bool& blocked, std::string& why) const;
    void start(std::size_t i);
    void finish(std::size_t i, StepResult r);
    void collect(const ChildResult& c);
    void progress();
    void emit(RunEvent::Kind kind, const StepResult* step, const Flag* flag = nullptr);
    double elapsed() const { return seconds(m_commands.now() - m_t0); }
    double remaining_expected() const;

    const Pipeline& m_p;
    const RunnerOptions& m_o;
    CommandRunner& m_commands;
    History m_history;
    std::vector<std::size_t> m_order;
    std::vector<State> m_state;
    std::vector<Clock::time_point> m_started;
    std::map<ChildId, std::size_t> m_running;
    std::map<std::size_t, StepResult> m_results;
    Report m_report;
    Clock::time_point m_t0;
    std::optional<Clock::time_point> m_last_progress; // none yet: the first one is due
    bool m_stopping = false;
};

StepResult Execution::blank(std::size_t i) const {
    const Step& s = m_p.steps[i];
    StepResult r;
    r.name = s.name;
    r.kind = s.kind;
    r.arch = s.arch.value_or("");
    r.emulation = s.emulation;
    if (s.budget) {
        r.budget = seconds(*s.budget);
    }
    r.log = m_o.log_dir / detail::log_file_name(s.name);
    return r;
}

// True when every need passed; `blocked` when one ended without passing.
bool Execution::needs_state(std::size_t i, bool& blocked, std::string& why) const {
    bool ready = true;
    for (const auto& need : m_p.steps[i].needs) {
        auto j = static_cast<std::size_t>(m_p.find(need) - m_p.steps.data());
        if (m_state[j] != State::done) {
            ready = false;
        } else if (m_results.at(j).status != StepStatus::passed) {
            blocked = true;
            why = "needs " + need + ", which " +
                  (m_results.at(j).status == StepStatus::skipped ? "was skipped" : "did not pass");
        }
    }
    return ready && !blocked;
}

void Execution::launch_ready() {
    bool changed = true;
    while (changed && !m_stopping) {
        changed = false;
        for (auto i : m_order) {
            if (m_state[i] != State::pending) {
                continue;
            }
            bool blocked = false;
            std::string why;
            bool ready = needs_state(i, blocked, why);
            if (blocked) {
                StepResult r = blank(i);
                r.status = StepStatus::skipped;
                r.message = why;
                finish(i, std::move(r));
                changed = true; // its dependents may now be skipped too
            } else if (ready && m_running.size() < static_cast<std::size_t>(m_o.jobs)) {
                start(i);
            }
        }
    }
}

void Execution::start(std::size_t i) {
    const Step& step = m_p.steps[i];
    StepResult r = blank(i);
    m_state[i] = State::running;
    m_started[i] = m_commands.now();
    std::error_code ec;
    std::filesystem::remove(r.log, ec);
    auto cmd = detail::step_command(step, m_o.emulators);
    SpawnOptions so;
    so.stdout_log = so.stderr_log = r.log;
    so.grace = m_o.grace;
    if (step.timeout) {
        double factor = step.emulated() ? m_o.timeout_multiplier.for_arch(r.arch) : 1.0;
        so.timeout = std::chrono::milliseconds(
            static_cast<long long>(static_cast<double>(step.timeout->count()) * factor));
    }
    if (m_o.on_output) {
        so.on_output = [this, name = step.name](Stream s, std::string_view chunk) {
            m_o.on_output(name, s, chunk);
        };
    }
    auto id = cmd ? m_commands.spawn(*cmd, so) : std::unexpected(cmd.error());
    if (!id) {
        r.status = StepStatus::failed;
        r.message = id.error().message();
        finish(i, std::move(r));
        return;
    }
    m_running[*id] = i;
    emit(RunEvent::Kind::started, &r);
}

void Execution::finish(std::size_t i, StepResult r) {
    m_state[i] = State::done;
    flag_step(r, m_o.rules, m_o.baseline ? &*m_o.baseline : nullptr,
              m_o.previous ? &*m_o.previous : nullptr);
    auto& stored = m_results[i] = std::move(r);
    emit(RunEvent::Kind::finished, &stored);
}

void Execution::collect(const ChildResult& c) {
    std::size_t i = m_running.at(c.id);
    m_running.erase(c.id);
    StepResult r = blank(i);
    r.wall = seconds(c.wall);
    r.user = seconds(c.user);
    r.sys = seconds(c.sys);
    r.max_rss_kib = c.max_rss_kib;
    r.exit_code = c.status.code();
    r.signal = c.status.signal();
    if (c.start_error) {
        r.status = StepStatus::failed;
        r.message = c.start_error->message();
        r.exit_code.reset();
        r.signal.reset();
    } else if (c.timed_out) {
        r.status = StepStatus::timed_out;
        r.message = "timed out, process group stopped";
    } else if (c.stopped || (m_stopping && !c.status.success())) {
        r.status = StepStatus::interrupted;
    } else {
        r.status = c.status.success() ? StepStatus::passed : StepStatus::failed;
    }
    if (c.leftovers_killed > 0) {
        r.message += (r.message.empty() ? "" : "; ") + std::to_string(c.leftovers_killed) +
                     " leftover process(es) killed";
    }
    finish(i, std::move(r));
}

// Expected seconds of work left: history of pending steps, the rest of running ones.
double Execution::remaining_expected() const {
    double remaining = 0;
    for (std::size_t i = 0; i < m_p.steps.size(); ++i) {
        auto it = m_history.find(m_p.steps[i].name);
        double expected = it == m_history.end() ? 0 : it->second;
        double so_far = m_state[i] == State::running ? seconds(m_commands.now() - m_started[i]) : 0;
        remaining += m_state[i] == State::done ? 0 : std::max(0.0, expected - so_far);
    }
    return remaining;
}

void Execution::emit(RunEvent::Kind kind, const StepResult* step, const Flag* flag) {
    if (!m_o.on_event) {
        return;
    }
    RunEvent e;
    e.kind = kind;
    e.step = step;
    e.flag = flag;
    e.elapsed = elapsed();
    for (const auto& [id, i] : m_running) {
        e.running.push_back(m_p.steps[i].name);
    }
    e.done = m_results.size();
    e.total = m_p.steps.size();
    if (!m_history.empty()) {
        e.eta = projected_total(0, remaining_expected(), m_o.jobs);
    }
    m_o.on_event(e);
}

// Rule (d) while running: elapsed plus the expected rest, spread over the job slots.
void Execution::progress() {
    if (m_last_progress && m_commands.now() - *m_last_progress < std::chrono::seconds(1)) {
        return;
    }
    m_last_progress = m_commands.now();
    double projected = projected_total(elapsed(), remaining_expected(), m_o.jobs);
    bool already =
        std::ranges::any_of(m_report.flags, [](const Flag& f) { return f.rule == "job_limit"; });
    if (m_o.job_limit && !already) {
        if (auto f = job_limit_flag(projected, *m_o.job_limit, m_o.rules)) {
            m_report.flags.push_back(*f);
            emit(RunEvent::Kind::flagged, nullptr, &m_report.flags.back());
        }
    }
    emit(RunEvent::Kind::progress, nullptr);
}

Result<Report> Execution::run() {
    std::error_code ec;
    std::filesystem::create_directories(m_o.log_dir, ec);
    if (ec) {
        return fail("create log directory " + m_o.log_dir.string(), ec.message());
    }
    m_report.pipeline = m_p.name;
    m_report.started = utc_now();
    m_report.host_arch = host_arch() ? host_arch()->name : "";
    m_report.job_limit = m_o.job_limit;
    if (m_o.shard) {
        m_report.shard_index = m_o.shard->index;
        m_report.shard_count = m_o.shard->count;
    }
    SignalScope signals(m_o.handle_signals, m_commands);
    while (true) {
        if (g_signal != 0 && !m_stopping) {
            m_stopping = true;
            m_report.interrupted_by = static_cast<int>(g_signal);
            m_commands.stop_all();
        }
        launch_ready();
        if (m_running.empty()) {
            break;
        }
        auto done = EMURUN_TRY(m_commands.wait_any(std::chrono::milliseconds(250)));
        for (const auto& c : done) {
            collect(c);
        }
        progress();
    }
    for (std::size_t i = 0; i < m_p.steps.size(); ++i) {
        if (m_state[i] == State::pending) {
            StepResult r = blank(i);
            r.message = "not started: emurun was interrupted";
            m_results[i] = std::move(r); // status not_run
        }
    }
    for (auto& [i, r] : m_results) {
        m_report.steps.push_back(std::move(r));
    }
    m_report.wall = elapsed();
    apply_flags(m_report, m_o.rules, nullptr, nullptr); // (d) on the final total
    return m_report;
}

} // namespace

double TimeoutMultiplier::for_arch(std::string_view arch) const {
    auto it = per_arch.find(arch);
    return it == per_arch.end() ? all : it->second;
}

Runner::Runner(Pipeline pipeline, RunnerOptions options)
    : m_pipeline(std::move(pipeline)), m_options(std::move(options)) {}

Result<Report> Runner::run() {
    SupervisorRunner supervisor;
    return run(supervisor);
}

Result<Report> Runner::run(CommandRunner& commands) {
    if (m_options.jobs < 1) {
        return fail("run " + m_pipeline.name, "jobs must be at least 1");
    }
    Pipeline selected = m_pipeline;
    if (m_options.shard) {
        History h = m_options.previous ? m_options.previous->history() : History{};
        selected = select_shard(m_pipeline, *m_options.shard, h);
    }
    detail::resolve_auto_emulation(selected);
    Execution e(selected, m_options, commands);
    return e.run();
}

int Runner::exit_code(const Report& report, bool fail_on_flag) {
    if (report.interrupted_by) {
        return 128 + *report.interrupted_by;
    }
    bool failed = false, timed_out = false;
    for (const auto& s : report.steps) {
        failed = failed || (s.status != StepStatus::passed && s.status != StepStatus::timed_out);
        timed_out = timed_out || s.status == StepStatus::timed_out;
    }
    if (failed) {
        return 1;
    }
    if (timed_out) {
        return 124;
    }
    return fail_on_flag && report.flagged() ? 3 : 0;
}

} // namespace emurun
