// The runner's verdicts on a fake CommandRunner: exit codes of `emurun run`, timeouts, flags,
// the job-limit projection and the ETA in progress events.
#include "fake_command_runner.hpp"

#include <emurun/runner.hpp>

#include <doctest/doctest.h>

#include <algorithm>
#include <csignal>
#include <string>
#include <vector>

using namespace emurun;
using namespace std::chrono_literals;
using test::FakeCommandRunner;
using test::FakeOutcome;
using test::pipeline_of;
using test::runner_options;
using test::status_of;

namespace {

Report run(FakeCommandRunner& fake, const std::string& steps, const RunnerOptions& o) {
    auto r = Runner(pipeline_of(steps), o).run(fake);
    REQUIRE_MESSAGE(r.has_value(), (r ? "" : r.error().message()));
    return *r;
}

const char* const k_two = R"([{"name": "a", "argv": ["a"], "timeout": "2s", "budget": "3s"},
                              {"name": "b", "argv": ["b"]}])";

// The exit code of a run of k_two where a and b do what is scripted.
int exit_code_of(FakeOutcome a, FakeOutcome b, bool fail_on_flag = false) {
    FakeCommandRunner fake;
    fake.script("a", a);
    fake.script("b", b);
    return Runner::exit_code(run(fake, k_two, runner_options("exit")), fail_on_flag);
}

} // namespace

TEST_CASE("runner: exit codes of a run") {
    const FakeOutcome ok{.seconds = 1};
    const FakeOutcome failed{.status = ExitStatus::exited(3)};
    const FakeOutcome crashed{.status = ExitStatus::killed(SIGSEGV)};
    const FakeOutcome too_long{.seconds = 5}; // a's timeout is 2 s
    CHECK(exit_code_of(ok, ok) == 0);
    CHECK(exit_code_of(ok, failed) == 1);
    CHECK(exit_code_of(ok, crashed) == 1);
    CHECK(exit_code_of(too_long, ok) == 124); // only timeouts
    CHECK(exit_code_of(too_long, failed) == 1);
}

TEST_CASE("runner: a timeout stops the step; dependents of a timed-out step make it exit 1") {
    FakeCommandRunner fake;
    fake.script("a", {.seconds = 5});
    Report r = run(fake, R"([{"name": "a", "argv": ["a"], "timeout": "2s"},
        {"name": "b", "argv": ["b"], "needs": ["a"]}])",
                   runner_options("timeout"));
    CHECK(fake.options_of("a").timeout == 2000ms);
    CHECK(status_of(r, "a") == StepStatus::timed_out);
    CHECK(r.find("a")->message == "timed out, process group stopped");
    CHECK(r.find("a")->wall == doctest::Approx(2));
    CHECK(status_of(r, "b") == StepStatus::skipped);
    CHECK(Runner::exit_code(r, false) == 1); // a skipped step is not a pass
}

TEST_CASE("runner: a native step's timeout is not multiplied; the grace is passed on") {
    FakeCommandRunner fake;
    RunnerOptions o = runner_options("multiplier");
    o.timeout_multiplier.all = 10;
    o.grace = 1500ms;
    (void)run(fake, k_two, o);
    CHECK(fake.options_of("a").timeout == 2000ms);
    CHECK(fake.options_of("a").grace == 1500ms);
    CHECK_FALSE(fake.options_of("b").timeout.has_value());
}

TEST_CASE("runner: flags exit 3 only under fail_on_flag") {
    FakeOutcome slow{.seconds = 1.9}; // over a 1 s budget
    FakeCommandRunner fake;
    fake.script("a", slow);
    Report r =
        run(fake, R"([{"name": "a", "argv": ["a"], "budget": "1s"}])", runner_options("flags"));
    REQUIRE(r.find("a")->flags.size() == 1);
    CHECK(r.find("a")->flags[0].rule == "budget");
    CHECK(Runner::exit_code(r, false) == 0);
    CHECK(Runner::exit_code(r, true) == 3);
    // A failure outranks a flag, and an interrupt outranks both.
    r.steps[0].status = StepStatus::failed;
    CHECK(Runner::exit_code(r, true) == 1);
    r.interrupted_by = SIGINT;
    CHECK(Runner::exit_code(r, true) == 130);
}

TEST_CASE("runner: the job-limit projection flags a run that history says will overrun") {
    const std::string steps = R"([{"name": "a", "argv": ["a"], "timeout": "1h"},
                                  {"name": "b", "argv": ["b"]}])";
    auto flagged = [&](int jobs, double limit, std::vector<double>* flagged_at = nullptr) {
        FakeCommandRunner fake;
        fake.script("a", {.seconds = 10});
        fake.script("b", {.seconds = 10});
        RunnerOptions o = runner_options("limit", jobs);
        o.previous = test::history_of({{"a", 10}, {"b", 10}});
        o.job_limit = limit;
        o.on_event = [&](const RunEvent& e) {
            if (e.kind == RunEvent::Kind::flagged && flagged_at) {
                REQUIRE(e.flag != nullptr);
                CHECK(e.flag->rule == "job_limit");
                flagged_at->push_back(e.elapsed);
            }
        };
        Report r = run(fake, steps, o);
        return std::ranges::count_if(r.flags, [](const Flag& f) { return f.rule == "job_limit"; });
    };
    // One slot: 20 s expected; flagged over 80 % of the limit, at the first progress tick.
    std::vector<double> at;
    CHECK(flagged(1, 24, &at) == 1);
    REQUIRE(at.size() == 1);
    CHECK(at[0] == doctest::Approx(0.25));
    CHECK(flagged(1, 25.5) == 0);
    // Two slots: 10 s expected.
    CHECK(flagged(2, 24) == 0);
    CHECK(flagged(2, 12) == 1);
}

TEST_CASE("runner: a step slower than its history raises the projection while it runs") {
    FakeCommandRunner fake;
    fake.script("a", {.seconds = 30});
    RunnerOptions o = runner_options("slower");
    o.previous = test::history_of({{"a", 1}});
    o.job_limit = 20; // flagged once the projection passes 16 s
    std::vector<double> at;
    o.on_event = [&](const RunEvent& e) {
        if (e.kind == RunEvent::Kind::flagged) {
            at.push_back(e.elapsed);
        }
    };
    Report r = run(fake, R"([{"name": "a", "argv": ["a"]}])", o);
    REQUIRE(at.size() == 1);
    CHECK(at[0] > 16);
    CHECK(at[0] < 17.5);
    REQUIRE(r.flags.size() == 1);
    CHECK(r.flags[0].message.find("job limit 20.0s") != std::string::npos);
}

TEST_CASE("runner: without history a run over the limit is flagged on its total") {
    FakeCommandRunner fake;
    fake.script("a", {.seconds = 9});
    RunnerOptions o = runner_options("total");
    o.job_limit = 10;
    o.rules.job_limit_share = 0.85;
    Report r = run(fake, R"([{"name": "a", "argv": ["a"]}])", o);
    REQUIRE(r.flags.size() == 1);
    CHECK(r.flags[0].rule == "job_limit");
    CHECK(r.job_limit == 10);
}

TEST_CASE("runner: progress events every second carry the ETA from history") {
    FakeCommandRunner fake;
    fake.script("a", {.seconds = 4});
    fake.script("b", {.seconds = 4});
    fake.script("c", {.seconds = 4});
    RunnerOptions o = runner_options("eta", 2);
    o.previous = test::history_of({{"a", 4}, {"b", 4}, {"c", 4}});
    std::vector<RunEvent> progress;
    std::vector<std::string> started;
    o.on_event = [&](const RunEvent& e) {
        if (e.kind == RunEvent::Kind::progress) {
            progress.push_back(e);
        } else if (e.kind == RunEvent::Kind::started) {
            started.push_back(e.step->name);
            CHECK(e.eta.has_value());
        }
    };
    Report r = run(fake, R"([{"name": "a", "argv": ["a"]}, {"name": "b", "argv": ["b"]},
                             {"name": "c", "argv": ["c"]}])",
                   o);
    CHECK(r.wall == doctest::Approx(8));
    CHECK(started == std::vector<std::string>{"a", "b", "c"});
    REQUIRE(progress.size() >= 4);
    // At 0.25 s: a and b have 3.75 s left each, c 4 s, over two slots.
    CHECK(progress[0].elapsed == doctest::Approx(0.25));
    REQUIRE(progress[0].eta.has_value());
    CHECK(*progress[0].eta == doctest::Approx((3.75 * 2 + 4) / 2));
    CHECK(progress[0].running == std::vector<std::string>{"a", "b"});
    CHECK(progress[0].done == 0);
    CHECK(progress[0].total == 3);
    // A second apart, not every 250 ms tick.
    CHECK(progress[1].elapsed == doctest::Approx(1.25));
    CHECK(*progress[1].eta == doctest::Approx((2.75 * 2 + 4) / 2));
    for (std::size_t i = 1; i < progress.size(); ++i) {
        CHECK(progress[i].elapsed - progress[i - 1].elapsed >= 1.0 - 1e-9);
    }
}

TEST_CASE("runner: no history, no ETA") {
    FakeCommandRunner fake;
    RunnerOptions o = runner_options("noeta");
    bool any_eta = false;
    int events = 0;
    o.on_event = [&](const RunEvent& e) {
        any_eta = any_eta || e.eta.has_value();
        ++events;
    };
    (void)run(fake, R"([{"name": "a", "argv": ["a"]}])", o);
    CHECK(events > 0);
    CHECK_FALSE(any_eta);
}
