#include "fake_command_runner.hpp"

#include "testdir.hpp"

#include <doctest/doctest.h>

#include <algorithm>

namespace emurun::test {
namespace {

std::chrono::nanoseconds span(double seconds) {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
        std::chrono::duration<double>(seconds));
}

} // namespace

void FakeCommandRunner::script(const std::string& name, FakeOutcome outcome) {
    m_script[name] = std::move(outcome);
}

void FakeCommandRunner::interrupt_at(double at, int sig) {
    m_interrupt = {at, sig};
}

void FakeCommandRunner::stop_takes(double seconds, ExitStatus status) {
    m_stop_seconds = seconds;
    m_stop_status = status;
}

double FakeCommandRunner::started_at(const std::string& name) const {
    auto it = m_started_at.find(name);
    REQUIRE_MESSAGE(it != m_started_at.end(), name << " was never spawned");
    return it->second;
}

const SpawnOptions& FakeCommandRunner::options_of(const std::string& name) const {
    auto it = m_options.find(name);
    REQUIRE_MESSAGE(it != m_options.end(), name << " was never spawned");
    return it->second;
}

void FakeCommandRunner::script_attempts(const std::string& name,
                                        std::vector<FakeOutcome> outcomes) {
    m_attempts[name] = std::move(outcomes);
}

int FakeCommandRunner::spawn_count(const std::string& name) const {
    auto it = m_spawn_count.find(name);
    return it == m_spawn_count.end() ? 0 : it->second;
}

const Command& FakeCommandRunner::command_of(const std::string& name) const {
    auto it = m_commands.find(name);
    REQUIRE_MESSAGE(it != m_commands.end(), name << " was never spawned");
    return it->second;
}

double FakeCommandRunner::clock() const {
    return std::chrono::duration<double>(m_now - m_t0).count();
}

FakeCommandRunner::Time FakeCommandRunner::at(double seconds_from_start) const {
    return m_t0 + span(seconds_from_start);
}

Result<ChildId> FakeCommandRunner::spawn(const Command& cmd, const SpawnOptions& options) {
    REQUIRE_FALSE(cmd.argv.empty());
    const std::string& name = cmd.argv.front();
    const int attempt = m_spawn_count[name]++;
    const auto scripted = m_attempts.find(name);
    FakeOutcome o = m_script.contains(name) ? m_script.at(name) : FakeOutcome{};
    if (scripted != m_attempts.end() && attempt < static_cast<int>(scripted->second.size())) {
        o = scripted->second[static_cast<std::size_t>(attempt)];
    }
    if (o.spawn_error) {
        return fail("start " + name, *o.spawn_error);
    }
    m_started.push_back(name);
    m_options[name] = options;
    m_commands[name] = cmd;
    m_started_at[name] = clock();
    Child c{name, m_now, m_now + span(o.seconds), {}};
    c.result.id = m_next_id++;
    c.result.status = o.status;
    c.result.user = std::chrono::duration_cast<std::chrono::microseconds>(span(o.seconds * o.cpu));
    if (o.start_error) {
        c.end = m_now;
        c.result.start_error = Error{"start " + name, *o.start_error, ""};
    } else if (options.timeout && c.end - m_now > *options.timeout) {
        c.end = m_now + *options.timeout;
        c.result.status = ExitStatus::killed(SIGTERM);
        c.result.timed_out = true;
        c.result.snapshot = o.snapshot;
    }
    // Its only output comes as it starts: the idle limit fires that long after the start.
    if (!o.start_error && options.idle_timeout && c.end - m_now > *options.idle_timeout) {
        c.end = m_now + *options.idle_timeout;
        c.result.status = ExitStatus::killed(SIGTERM);
        c.result.timed_out = c.result.idle = true;
        c.result.snapshot = o.snapshot;
    }
    if (options.on_output && !o.stderr_output.empty()) {
        options.on_output(Stream::err, o.stderr_output);
    }
    ChildId id = c.result.id;
    m_running.emplace(id, std::move(c));
    m_max_running = std::max(m_max_running, m_running.size());
    return id;
}

// Lets a pending signal through to the runner's handler, as ppoll with the wait mask does.
void FakeCommandRunner::raise_in_wait(int sig) {
    REQUIRE_MESSAGE(m_wait_mask.has_value(),
                    "a scripted signal without the runner's handlers would kill the test");
    sigset_t old;
    ::sigprocmask(SIG_SETMASK, &*m_wait_mask, &old);
    ::raise(sig);
    ::sigprocmask(SIG_SETMASK, &old, nullptr);
}

std::vector<ChildResult> FakeCommandRunner::collect_ended() {
    std::vector<ChildResult> out;
    for (auto it = m_running.begin(); it != m_running.end();) {
        if (it->second.end <= m_now) {
            it->second.result.wall = it->second.end - it->second.start;
            out.push_back(it->second.result);
            it = m_running.erase(it);
        } else {
            ++it;
        }
    }
    return out;
}

Result<std::vector<ChildResult>> FakeCommandRunner::wait_any(std::chrono::milliseconds timeout) {
    REQUIRE_FALSE(m_running.empty()); // the runner never waits for nothing
    Time next = m_now + timeout;
    for (const auto& [id, c] : m_running) {
        next = std::min(next, c.end);
    }
    if (m_interrupt && at(m_interrupt->first) <= next) {
        m_now = std::max(m_now, at(m_interrupt->first));
        int sig = m_interrupt->second;
        m_interrupt.reset();
        raise_in_wait(sig);
        return std::vector<ChildResult>{}; // ppoll: EINTR
    }
    m_now = next;
    return collect_ended();
}

void FakeCommandRunner::stop_all() {
    ++m_stop_all_calls;
    for (auto& [id, c] : m_running) {
        if (c.end > m_now + span(m_stop_seconds)) {
            c.end = m_now + span(m_stop_seconds);
            c.result.status = m_stop_status;
            c.result.stopped = true;
        }
    }
}

Pipeline pipeline_of(const std::string& steps_json) {
    auto p =
        Pipeline::parse(R"({"name": "fake", "steps": )" + steps_json + "}", "fake.json", testdir());
    REQUIRE_MESSAGE(p.has_value(), (p ? "" : p.error().message()));
    return *p;
}

RunnerOptions runner_options(const std::string& name, int jobs) {
    RunnerOptions o;
    o.jobs = jobs;
    o.log_dir = testdir(name);
    return o;
}

Report history_of(const std::map<std::string, double>& walls) {
    Report r;
    r.pipeline = "fake";
    for (const auto& [name, wall] : walls) {
        StepResult s;
        s.name = name;
        s.status = StepStatus::passed;
        s.wall = wall;
        r.steps.push_back(s);
    }
    return r;
}

StepStatus status_of(const Report& report, const std::string& name) {
    const StepResult* s = report.find(name);
    REQUIRE_MESSAGE(s != nullptr, name << " is not in the report");
    return s->status;
}

} // namespace emurun::test
