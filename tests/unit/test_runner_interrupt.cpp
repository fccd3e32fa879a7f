// Interrupts on a fake CommandRunner: the signal reaches the runner's handler inside a wait,
// every running step is stopped, the rest is reported, the exit code is 128 + the signal.
#include "fake_command_runner.hpp"

#include <emurun/runner.hpp>

#include <doctest/doctest.h>

#include <csignal>
#include <string>
#include <vector>

using namespace emurun;
using test::FakeCommandRunner;
using test::pipeline_of;
using test::runner_options;
using test::status_of;
using Names = std::vector<std::string>;

namespace {

const char* const k_steps = R"([{"name": "quick", "argv": ["quick"]},
    {"name": "long", "argv": ["long"], "needs": ["quick"]},
    {"name": "other", "argv": ["other"]},
    {"name": "later", "argv": ["later"], "needs": ["long"]}])";

Report interrupted_run(FakeCommandRunner& fake, int sig) {
    fake.script("long", {.seconds = 30});
    fake.script("other", {.seconds = 30});
    fake.interrupt_at(2.5, sig);
    fake.stop_takes(0.3);
    auto r = Runner(pipeline_of(k_steps), runner_options("interrupt", 2)).run(fake);
    REQUIRE_MESSAGE(r.has_value(), (r ? "" : r.error().message()));
    return *r;
}

} // namespace

TEST_CASE("runner: SIGINT stops every running step, reports the rest, exits 130") {
    FakeCommandRunner fake;
    Report r = interrupted_run(fake, SIGINT);
    CHECK(fake.stop_all_calls() == 1);
    CHECK(fake.started() == Names{"quick", "other", "long"}); // nothing starts after it
    CHECK(r.interrupted_by == SIGINT);
    CHECK(status_of(r, "quick") == StepStatus::passed);
    CHECK(status_of(r, "long") == StepStatus::interrupted);
    CHECK(status_of(r, "other") == StepStatus::interrupted);
    CHECK(r.find("other")->signal == SIGTERM);
    CHECK(status_of(r, "later") == StepStatus::not_run);
    CHECK(r.find("later")->message == "not started: emurun was interrupted");
    CHECK(r.find("later")->log.empty()); // never started: no log, rather than a missing one
    REQUIRE(r.steps.size() == 4);
    CHECK(r.wall == doctest::Approx(2.8)); // stopped at once, ended after their grace
    CHECK(Runner::exit_code(r, false) == 130);
}

TEST_CASE("runner: SIGTERM exits 143") {
    FakeCommandRunner fake;
    Report r = interrupted_run(fake, SIGTERM);
    CHECK(r.interrupted_by == SIGTERM);
    CHECK(status_of(r, "long") == StepStatus::interrupted);
    CHECK(Runner::exit_code(r, false) == 143);
    CHECK(Runner::exit_code(r, true) == 143);
}

TEST_CASE("runner: SIGHUP (a closed terminal or SSH session) stops the run as SIGTERM does") {
    // SIGHUP killed `emurun run` with no report. A handler of the test's own keeps the test
    // binary alive should the runner leave SIGHUP alone; the runner's replaces it for the run.
    struct sigaction noted {
    }, before{};
    noted.sa_handler = [](int) {};
    sigemptyset(&noted.sa_mask);
    ::sigaction(SIGHUP, &noted, &before);
    FakeCommandRunner fake;
    Report r = interrupted_run(fake, SIGHUP);
    struct sigaction after {};
    ::sigaction(SIGHUP, &before, &after);
    CHECK((after.sa_handler == noted.sa_handler)); // the caller's handler is back after the run
    CHECK(fake.stop_all_calls() == 1);
    CHECK(r.interrupted_by == SIGHUP);
    CHECK(status_of(r, "long") == StepStatus::interrupted);
    CHECK(status_of(r, "later") == StepStatus::not_run);
    CHECK(Runner::exit_code(r, false) == 129);
}

TEST_CASE("runner: a step that ends badly while the run stops counts as interrupted") {
    FakeCommandRunner fake;
    // Ends by itself, failing, just after the interrupt: before its stop took effect.
    fake.script("other", {.seconds = 2.6, .status = ExitStatus::exited(1)});
    fake.script("long", {.seconds = 30});
    fake.interrupt_at(2.5, SIGINT);
    fake.stop_takes(0.3);
    auto r = Runner(pipeline_of(k_steps), runner_options("interrupt2", 2)).run(fake);
    REQUIRE(r.has_value());
    CHECK(status_of(*r, "other") == StepStatus::interrupted);
    CHECK(r->find("other")->exit_code == 1);
}

TEST_CASE("runner: signal handlers and mask are the caller's again after the run") {
    struct sigaction before_int {};
    struct sigaction before_term {};
    struct sigaction before_hup {};
    ::sigaction(SIGINT, nullptr, &before_int);
    ::sigaction(SIGTERM, nullptr, &before_term);
    ::sigaction(SIGHUP, nullptr, &before_hup);
    sigset_t before_mask;
    ::sigprocmask(SIG_SETMASK, nullptr, &before_mask);

    FakeCommandRunner fake;
    (void)interrupted_run(fake, SIGINT);
    CHECK(fake.has_wait_sigmask());

    struct sigaction after {};
    ::sigaction(SIGINT, nullptr, &after);
    CHECK((after.sa_handler == before_int.sa_handler));
    ::sigaction(SIGTERM, nullptr, &after);
    CHECK((after.sa_handler == before_term.sa_handler));
    ::sigaction(SIGHUP, nullptr, &after);
    CHECK((after.sa_handler == before_hup.sa_handler));
    sigset_t mask;
    ::sigprocmask(SIG_SETMASK, nullptr, &mask);
    CHECK(sigismember(&mask, SIGINT) == sigismember(&before_mask, SIGINT));
    CHECK(sigismember(&mask, SIGTERM) == sigismember(&before_mask, SIGTERM));
    CHECK(sigismember(&mask, SIGHUP) == sigismember(&before_mask, SIGHUP));
}

TEST_CASE("runner: without handle_signals the run leaves signals alone") {
    FakeCommandRunner fake;
    RunnerOptions o = runner_options("nosignals");
    o.handle_signals = false;
    auto r = Runner(pipeline_of(k_steps), o).run(fake);
    REQUIRE(r.has_value());
    CHECK_FALSE(fake.has_wait_sigmask());
    CHECK_FALSE(r->interrupted_by.has_value());
    CHECK(fake.stop_all_calls() == 0);
}

TEST_CASE("runner: a signal that arrives while steps are being started stops the launch loop") {
    FakeCommandRunner fake;
    RunnerOptions o = runner_options("interrupt_launch", 8);
    // Raised outside the wait, where the runner blocks it: pending until the runner takes it.
    o.on_event = [](const RunEvent& e) {
        if (e.kind == RunEvent::Kind::started && e.step->name == "a") {
            ::raise(SIGTERM);
        }
    };
    fake.stop_takes(0.3);
    const char* const steps = R"([{"name": "a", "argv": ["a"]}, {"name": "b", "argv": ["b"]},
                                  {"name": "c", "argv": ["c"]}, {"name": "d", "argv": ["d"]}])";
    auto r = Runner(pipeline_of(steps), o).run(fake);
    REQUIRE(r.has_value());
    CHECK(fake.started() == Names{"a"}); // -j 8 had room for all four: none started after it
    CHECK(r->interrupted_by == SIGTERM);
    CHECK(fake.stop_all_calls() == 1);
    CHECK(status_of(*r, "a") == StepStatus::interrupted);
    CHECK(status_of(*r, "d") == StepStatus::not_run);
    CHECK(Runner::exit_code(*r, false) == 143);
}
