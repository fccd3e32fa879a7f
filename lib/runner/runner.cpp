// The step runner: schedules ready steps by priority on a CommandRunner (one Supervisor unless
// the caller brings another), measures, flags, handles SIGINT/SIGTERM/SIGHUP by stopping every
// step and finishing the report. Scheduling is linear in steps + needs: a ready queue ordered by
// priority, a count of unfinished needs per step and reverse edges to wake or skip dependents.
#include "runner/runner_internal.hpp"
#include "util/file.hpp"

#include <emurun/arch.hpp>
#include <emurun/root.hpp>
#include <emurun/sandbox.hpp>

#include <algorithm>
#include <cctype>
#include <csignal>
#include <ctime>
#include <iterator>
#include <set>
#include <string_view>
#include <system_error>
#include <unordered_map>

namespace emurun {
namespace {

using Clock = std::chrono::steady_clock;
volatile std::sig_atomic_t g_signal = 0;

extern "C" void note_signal(int sig) {
    g_signal = sig;
}

// The signals that stop a run: Ctrl-C, kill, and a closed terminal or SSH session.
constexpr int k_stop_signals[] = {SIGINT, SIGTERM, SIGHUP};

// Blocks the stop signals outside the CommandRunner's wait (ninja's pattern: the Supervisor
// unblocks them in its ppoll); restores on exit.
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
        sigset_t block;
        sigemptyset(&block);
        for (std::size_t i = 0; i < std::size(k_stop_signals); ++i) {
            ::sigaction(k_stop_signals[i], &sa, &m_old_actions[i]);
            sigaddset(&block, k_stop_signals[i]);
        }
        ::sigprocmask(SIG_BLOCK, &block, &m_old_mask);
        sigset_t wait_mask = m_old_mask;
        for (int sig : k_stop_signals) {
            sigdelset(&wait_mask, sig);
        }
        commands.set_wait_sigmask(wait_mask);
    }
    ~SignalScope() {
        if (m_enabled) {
            ::sigprocmask(SIG_SETMASK, &m_old_mask, nullptr);
            for (std::size_t i = 0; i < std::size(k_stop_signals); ++i) {
                ::sigaction(k_stop_signals[i], &m_old_actions[i], nullptr);
            }
        }
    }
    SignalScope(const SignalScope&) = delete;
    SignalScope& operator=(const SignalScope&) = delete;

  private:
    bool m_enabled;
    struct sigaction m_old_actions[std::size(k_stop_signals)]{};
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
    Result<void> ready() override {
        EMURUN_TRY(find_supervisor_helper());
        return {};
    }

  private:
    Supervisor m_supervisor;
};

// A stop signal (SIGINT, SIGTERM, SIGHUP) taken so far. The signals are blocked outside the
// CommandRunner's wait, so one that arrived meanwhile is pending: it is taken here, so that a long
// launch loop honours it at once rather than at the next wait.
int take_signal(bool handling) {
    if (g_signal != 0 || !handling) {
        return g_signal;
    }
    sigset_t pending;
    sigemptyset(&pending);
    ::sigpending(&pending);
    for (int sig : k_stop_signals) {
        if (sigismember(&pending, sig) == 1) {
            sigset_t one;
            sigemptyset(&one);
            sigaddset(&one, sig);
            timespec now{};
            if (::sigtimedwait(&one, nullptr, &now) == sig) {
                g_signal = sig;
                break;
            }
        }
    }
    return g_signal;
}

enum class State { pending, running, done };

// Ready steps, lowest priority rank first; a (rank, step) set.
using ReadyQueue = std::set<std::pair<std::size_t, std::size_t>>;

class Execution {
  public:
    Execution(const Pipeline& p, const RunnerOptions& o, CommandRunner& commands,
              const detail::ImageRoots* images = nullptr);
    Result<Report> run();

  private:
    StepResult blank(std::size_t i) const;
    void launch_ready();
    void skip_dependents();
    std::string blocked_by(std::size_t i) const;
    bool interrupted();
    void start(std::size_t i);
    void finish(std::size_t i, StepResult r);
    void collect(const ChildResult& c);
    void output(std::size_t i, Stream stream, std::string_view chunk);
    bool retry(std::size_t i, StepResult& r);
    void progress();
    void heartbeat();
    void emit(RunEvent::Kind kind, const StepResult* step, const Flag* flag = nullptr);
    double elapsed() const { return seconds(m_commands.now() - m_t0); }
    double remaining_expected() const;
    void leave_pending(std::size_t i);
    void take_reused();

    const Pipeline& m_p;
    const RunnerOptions& m_o;
    CommandRunner& m_commands;
    const detail::ImageRoots* m_images; // the run's roots from images, to name them
    History m_history;
    std::vector<std::size_t> m_rank;                    // position in the priority order
    std::vector<double> m_expected;                     // seconds, from history (0 if none)
    std::vector<std::vector<std::size_t>> m_needs;      // needs, as step indices
    std::vector<std::vector<std::size_t>> m_dependents; // reverse edges, one per need
    std::vector<std::size_t> m_unfinished;              // needs not done yet
    ReadyQueue m_ready;                                 // pending steps whose needs are done
    std::vector<std::size_t> m_unpassed; // done without passing, dependents not yet skipped
    double m_pending_expected = 0;       // sum of m_expected over pending steps
    std::vector<State> m_state;
    std::vector<Clock::time_point> m_started;
    std::vector<std::filesystem::file_time_type> m_started_file; // for JUnit files' times
    std::map<ChildId, std::size_t> m_running;
    std::map<std::size_t, StepResult> m_results;
    std::map<std::size_t, QemuCrashScanner> m_scanners;     // running emulated steps' stderr
    std::map<std::size_t, std::vector<Attempt>> m_attempts; // earlier attempts of retried steps
    std::map<std::size_t, detail::RootOutcome> m_root;      // root steps' plans, as reported
    Report m_report;
    Clock::time_point m_t0;
    std::optional<Clock::time_point> m_last_progress;       // none yet: the first one is due
    std::map<std::size_t, Clock::time_point> m_last_output; // running steps: their last output
    Clock::time_point m_last_heartbeat = m_t0;
    bool m_stopping = false;
};

// The graph is built once: names to indices, reverse edges, counts of unfinished needs.
Execution::Execution(const Pipeline& p, const RunnerOptions& o, CommandRunner& commands,
                     const detail::ImageRoots* images)
    : m_p(p), m_o(o), m_commands(commands), m_images(images), m_t0(commands.now()) {
    m_history = o.previous ? o.previous->history() : o.history;
    std::size_t n = p.steps.size();
    m_rank.resize(n);
    auto order = priority_order(p, m_history);
    for (std::size_t r = 0; r < n; ++r) {
        m_rank[order[r]] = r;
    }
    std::unordered_map<std::string_view, std::size_t> index;
    index.reserve(n);
    m_expected.resize(n);
    for (std::size_t i = 0; i < n; ++i) {
        index.emplace(p.steps[i].name, i);
        auto it = m_history.find(p.steps[i].name);
        m_expected[i] = it == m_history.end() ? 0 : it->second;
        m_pending_expected += m_expected[i];
    }
    m_needs.resize(n);
    m_dependents.resize(n);
    m_unfinished.assign(n, 0);
    for (std::size_t i = 0; i < n; ++i) {
        for (const auto& need : p.steps[i].needs) {
            if (auto it = index.find(need); it != index.end()) { // loading checked the names
                m_needs[i].push_back(it->second);
                m_dependents[it->second].push_back(i);
                ++m_unfinished[i];
            }
        }
        if (m_unfinished[i] == 0) {
            m_ready.emplace(m_rank[i], i);
        }
    }
    m_state.assign(n, State::pending);
    m_started.resize(n);
    m_started_file.resize(n);
}

StepResult Execution::blank(std::size_t i) const {
    const Step& s = m_p.steps[i];
    StepResult r;
    r.name = s.name;
    r.kind = s.kind;
    r.arch = s.arch.value_or("");
    r.template_name = s.template_name;
    r.emulation = s.emulation;
    if (auto it = m_root.find(i); s.emulation == Emulation::root && s.accelerate &&
                                  it != m_root.end()) { // planned: what really runs
        r.accelerated_tools = it->second.accelerated;
        r.toolchain_mismatches = it->second.mismatches;
        r.accelerated = !r.accelerated_tools.empty();
    }
    if (r.accelerated) { // an unknown tool stopped the run before (check_root_steps)
        const auto acc = parse_acceleration(s.accelerate_tools);
        r.acceleration = acc ? acceleration_name(*acc) : s.accelerate_tools;
    }
    if (s.budget) {
        r.budget = seconds(*s.budget);
    }
    if (m_images != nullptr && s.emulation == Emulation::root && s.root) {
        if (auto it = m_images->images.find(*s.root); it != m_images->images.end()) {
            r.image = it->second;
        }
    }
    r.log = m_o.log_dir / detail::log_file_name(s.name);
    return r;
}

// Why pending step `i` cannot run: its last need that ended without passing.
std::string Execution::blocked_by(std::size_t i) const {
    std::string why;
    for (std::size_t k = 0; k < m_needs[i].size(); ++k) {
        std::size_t j = m_needs[i][k];
        if (m_state[j] == State::done && !counts_as_passed(m_results.at(j).status)) {
            why = "needs " + m_p.steps[i].needs[k] + ", which " +
                  (m_results.at(j).status == StepStatus::skipped ? "was skipped" : "did not pass");
        }
    }
    return why;
}

// Takes a signal that arrived outside the wait: stop every step, start nothing more.
bool Execution::interrupted() {
    if (!m_stopping && take_signal(m_o.handle_signals) != 0) {
        m_stopping = true;
        m_report.interrupted_by = static_cast<int>(g_signal);
        m_commands.stop_all();
    }
    return m_stopping;
}

// Steps a build job ran: done before the first launch, with the build job's figures; the steps
// that need them become ready.
void Execution::take_reused() {
    if (!m_o.reused) {
        return;
    }
    m_report.artifacts = ArtifactLink{m_o.reused->artifacts_id, false};
    for (const auto& built : m_o.reused->steps) {
        auto it = std::ranges::find(m_p.steps, built.name, &Step::name);
        if (it == m_p.steps.end()) {
            continue; // another shard's step (select_shard dropped it)
        }
        const auto i = static_cast<std::size_t>(it - m_p.steps.begin());
        StepResult r = built;
        r.status = StepStatus::reused;
        r.message = "reused: passed in the build job (artifacts " + m_o.reused->artifacts_id + ")";
        if (r.log.empty()) { // the archive held no log of it: say so where the log would be
            r.log = blank(i).log;
            r.message += "; its log is not in the archive";
            if (!util::write_file_atomic(r.log, r.message + "\n")) {
                r.log.clear(); // the report names no log rather than a missing one
            }
        }
        leave_pending(i);
        finish(i, std::move(r));
    }
}

void Execution::leave_pending(std::size_t i) {
    m_pending_expected -= m_expected[i];
}

// Skips the pending dependents of every step that ended without passing, transitively.
void Execution::skip_dependents() {
    while (!m_unpassed.empty() && !interrupted()) {
        std::size_t j = m_unpassed.back();
        m_unpassed.pop_back();
        for (std::size_t d : m_dependents[j]) {
            if (m_state[d] != State::pending) {
                continue;
            }
            StepResult r = blank(d);
            r.status = StepStatus::skipped;
            r.message = blocked_by(d);
            detail::write_reason_log(r);
            leave_pending(d);
            finish(d, std::move(r)); // queues d in m_unpassed: its dependents follow
        }
    }
}

// Starts ready steps by priority while slots are free; a step that cannot start fails at once
// and its dependents are skipped before the next one starts.
void Execution::launch_ready() {
    skip_dependents();
    while (!m_ready.empty() && !interrupted() &&
           m_running.size() < static_cast<std::size_t>(m_o.jobs)) {
        std::size_t i = m_ready.begin()->second;
        m_ready.erase(m_ready.begin());
        if (m_state[i] == State::pending) {
            start(i);
            skip_dependents();
        }
    }
}

void Execution::start(std::size_t i) {
    const Step& step = m_p.steps[i];
    StepResult r = blank(i);
    if (m_state[i] == State::pending) {
        leave_pending(i); // a retry starts a running step again: it left already
    }
    m_state[i] = State::running;
    m_started[i] = m_commands.now();
    m_started_file[i] = std::filesystem::file_time_type::clock::now();
    std::error_code ec;
    std::filesystem::remove(r.log, ec);
    double factor = step.emulated() ? m_o.timeout_multiplier.for_arch(r.arch) : 1.0;
    m_root[i] = {};                 // a retry plans again
    const Error* no_root = nullptr; // its image could not become a root
    if (m_images != nullptr && m_images->failed.contains(step.name)) {
        no_root = &m_images->failed.at(step.name);
    }
    auto cmd = no_root != nullptr ? Result<Command>(std::unexpected(*no_root))
                                  : detail::step_command(step, m_o.emulators, factor, &m_root[i]);
    r = blank(i); // now with what the root plan really accelerates
    SpawnOptions so;
    so.stdout_log = so.stderr_log = r.log;
    so.grace = m_o.grace;
    if (step.timeout) {
        so.timeout = scaled_timeout(*step.timeout, factor);
    }
    if (step.idle_timeout) {
        so.idle_timeout = scaled_timeout(*step.idle_timeout, factor);
    }
    so.limits = detail::spawn_limits(step.limits);
    m_last_output[i] = m_commands.now();
    if (step.emulated()) {
        m_scanners[i] = {};
    }
    if (m_o.on_output || step.emulated() || m_o.heartbeat) {
        so.on_output = [this, i](Stream s, std::string_view chunk) { output(i, s, chunk); };
    }
    auto id = cmd ? m_commands.spawn(*cmd, so) : std::unexpected(cmd.error());
    if (!id) {
        m_scanners.erase(i);
        r.status = StepStatus::failed;
        r.message = m_images != nullptr ? detail::name_image_roots(id.error().message(), *m_images)
                                        : id.error().message();
        detail::write_reason_log(r);
        detail::close_attempts(std::move(m_attempts[i]), r); // a retry that could not start
        m_attempts.erase(i);
        finish(i, std::move(r));
        return;
    }
    m_running[*id] = i;
    emit(RunEvent::Kind::started, &r);
}

void Execution::finish(std::size_t i, StepResult r) {
    m_state[i] = State::done;
    if (r.status != StepStatus::reused) { // flagged in the build job, if at all
        flag_step(r, m_o.rules, m_o.baseline ? &*m_o.baseline : nullptr,
                  m_o.previous ? &*m_o.previous : nullptr);
    }
    auto& stored = m_results[i] = std::move(r);
    bool passed = counts_as_passed(stored.status);
    if (!passed) {
        m_unpassed.push_back(i);
    }
    for (std::size_t d : m_dependents[i]) {
        if (--m_unfinished[d] == 0 && passed && m_state[d] == State::pending) {
            m_ready.emplace(m_rank[d], d);
        }
    }
    emit(RunEvent::Kind::finished, &stored);
}

// Every chunk of a step's output: QEMU's crash messages are looked for in its stderr.
void Execution::output(std::size_t i, Stream stream, std::string_view chunk) {
    m_last_output[i] = m_commands.now();
    if (auto it = m_scanners.find(i); it != m_scanners.end() && stream == Stream::err) {
        it->second.feed(chunk);
    }
    if (m_o.on_output) {
        m_o.on_output(m_p.steps[i].name, stream, chunk);
    }
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
    r.emulator = detail::step_emulator(m_p.steps[i], m_o.emulators);
    if (!c.limit_gap.empty()) {
        r.limit_gap = c.limit_gap;
    }
    if (c.start_error) {
        r.status = StepStatus::failed;
        r.message = c.start_error->message();
        r.exit_code.reset();
        r.signal.reset();
    } else if (c.limit_hit) {
        r.status = StepStatus::resource_limit;
        r.message = "resource limit: " + *c.limit_hit + "; the step was ended";
    } else if (c.timed_out) {
        detail::note_timeout(m_p.steps[i], c, r);
    } else if (c.stopped || (m_stopping && !c.status.success())) {
        r.status = StepStatus::interrupted;
    } else {
        r.status = c.status.success() ? StepStatus::passed : StepStatus::failed;
    }
    auto scanner = m_scanners.find(i);
    detail::classify_emulator_crash(m_p.steps[i],
                                    scanner == m_scanners.end() ? nullptr : &scanner->second, r);
    if (scanner != m_scanners.end()) {
        m_scanners.erase(scanner);
    }
    detail::record_processes(c.snapshot, r);
    if (c.log_error) {
        detail::note_log_error(r, *c.log_error);
    }
    if (c.leftovers_killed > 0) {
        r.message += (r.message.empty() ? "" : "; ") + std::to_string(c.leftovers_killed) +
                     " leftover process(es) killed";
    }
    detail::collect_tests(m_p.steps[i], m_started_file[i], r);
    if (!retry(i, r)) {
        finish(i, std::move(r));
    }
}

// Runs step `i` again when its retries say so (not once emurun is stopping); else the step's
// attempts are closed into `r`.
bool Execution::retry(std::size_t i, StepResult& r) {
    auto& earlier = m_attempts[i];
    if (!m_stopping && detail::wants_retry(m_p.steps[i], r, earlier.size() + 1)) {
        earlier.push_back(detail::set_aside_attempt(r, earlier.size() + 1));
        // The attempt ends as a step would (a CI log group closes), then the next one starts.
        r.message += (r.message.empty() ? "" : "; ") + std::string("retrying: attempt ") +
                     std::to_string(earlier.size() + 1) + " of " +
                     std::to_string(m_p.steps[i].retries.count + 1);
        emit(RunEvent::Kind::finished, &r);
        start(i);
        return true;
    }
    detail::close_attempts(std::move(earlier), r);
    m_attempts.erase(i);
    return false;
}

// Expected seconds of work left: history of pending steps, the rest of running ones.
double Execution::remaining_expected() const {
    double remaining = std::max(0.0, m_pending_expected);
    for (const auto& [id, i] : m_running) {
        remaining += std::max(0.0, m_expected[i] - seconds(m_commands.now() - m_started[i]));
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

// Every RunnerOptions::heartbeat: what runs, how long, how long since its last output.
void Execution::heartbeat() {
    if (!m_o.heartbeat || m_running.empty() ||
        m_commands.now() - m_last_heartbeat < *m_o.heartbeat) {
        return;
    }
    m_last_heartbeat = m_commands.now();
    std::vector<RunEvent::Activity> activity;
    for (const auto& [id, i] : m_running) {
        activity.push_back({m_p.steps[i].name, seconds(m_commands.now() - m_started[i]),
                            seconds(m_commands.now() - m_last_output[i])});
    }
    if (m_o.on_event) {
        RunEvent e;
        e.kind = RunEvent::Kind::heartbeat;
        e.elapsed = elapsed();
        e.activity = std::move(activity);
        m_o.on_event(e);
    }
}

Result<Report> Execution::run() {
    std::error_code ec;
    std::filesystem::create_directories(m_o.log_dir, ec);
    if (ec) {
        return fail("create log directory " + m_o.log_dir.string(), ec.message());
    }
    m_report.pipeline = m_p.name;
    m_report.pipeline_digest = m_p.digest;
    m_report.native_baseline = m_p.native;
    m_report.started = utc_now();
    m_report.host_arch = host_arch() ? host_arch()->name : "";
    m_report.job_limit = m_o.job_limit;
    if (m_o.shard) {
        m_report.shard_index = m_o.shard->index;
        m_report.shard_count = m_o.shard->count;
    }
    SignalScope signals(m_o.handle_signals, m_commands);
    take_reused();
    while (true) {
        interrupted();
        launch_ready();
        if (m_running.empty()) {
            break;
        }
        auto done = EMURUN_TRY(m_commands.wait_any(std::chrono::milliseconds(250)));
        for (const auto& c : done) {
            collect(c);
        }
        progress();
        heartbeat();
    }
    interrupted(); // one that came after the last step ended: the report says so
    for (std::size_t i = 0; i < m_p.steps.size(); ++i) {
        if (m_state[i] == State::pending) {
            StepResult r = blank(i);
            r.message = "not started: emurun was interrupted";
            // No log: emurun is stopping, and thousands of files written now would hold it up.
            r.log.clear();
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

namespace {

// Sandbox and root steps start the emurun executable (sandbox_argv, root_argv): find it once.
// An "auto" step counts once resolve_auto_emulation() made it a sandbox step.
Result<void> check_emurun_exe(const Pipeline& pipeline) {
    const auto enters = [](const Step& s) {
        return s.emulation == Emulation::sandbox || s.emulation == Emulation::root;
    };
    const auto step = std::ranges::find_if(pipeline.steps, enters);
    if (step == pipeline.steps.end()) {
        return {};
    }
    auto exe = find_emurun_exe(SandboxSpec{});
    if (!exe) {
        Error e = exe.error();
        e.what = "run " + pipeline.name + ": step \"" + step->name + "\" (" +
                 std::string(to_string(step->emulation)) +
                 ") needs the emurun executable: " + e.what;
        return std::unexpected(std::move(e));
    }
    return {};
}

} // namespace

Result<void> Runner::ready(CommandRunner& commands) const {
    if (m_options.jobs < 1) {
        return fail(ErrorKind::bad_input, "run " + m_pipeline.name, "jobs must be at least 1", "",
                    "jobs");
    }
    EMURUN_TRY(detail::check_log_names(m_pipeline, m_options.log_dir));
    EMURUN_TRY(detail::check_log_dir(m_options.log_dir));
    if (auto r = commands.ready(); !r) {
        Error e = r.error();
        e.what = "run " + m_pipeline.name + ": " + e.what;
        return std::unexpected(std::move(e));
    }
    return check_emurun_exe(m_pipeline);
}

Result<Report> Runner::run(CommandRunner& commands) {
    EMURUN_TRY(ready(commands));
    Pipeline selected = m_pipeline;
    if (m_options.shard) {
        History h = m_options.previous ? m_options.previous->history() : m_options.history;
        selected = select_shard(m_pipeline, *m_options.shard, h);
    }
    detail::resolve_auto_emulation(selected, m_options.diagnostics);
    EMURUN_TRY(check_emurun_exe(selected));
    detail::ImageRoots images; // the run's own roots from images, removed after it
    EMURUN_TRY(detail::prepare_image_roots(selected, images, m_options.diagnostics));
    Execution e(selected, m_options, commands, &images);
    return e.run();
}

int Runner::exit_code(const Report& report, bool fail_on_flag) {
    if (report.interrupted_by) {
        return 128 + *report.interrupted_by;
    }
    bool failed = false, timed_out = false;
    for (const auto& s : report.steps) {
        failed = failed || (!counts_as_passed(s.status) && s.status != StepStatus::timed_out);
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
