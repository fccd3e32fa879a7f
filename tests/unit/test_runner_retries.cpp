// The `retries` key: loading it, the runner running a step again after the listed outcomes,
// every attempt in the report and JUnit, and the `flaky` flag.
#include "fake_command_runner.hpp"
#include "runner/runner_internal.hpp"
#include "testdir.hpp"

#include <emurun/pipeline.hpp>
#include <emurun/report.hpp>
#include <emurun/runner.hpp>

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

using namespace emurun;
using test::FakeCommandRunner;
using test::FakeOutcome;
using test::pipeline_of;
using test::runner_options;
using test::status_of;

namespace {

const FakeOutcome k_crash{.status = ExitStatus::killed(SIGABRT),
                          .stderr_output = test::k_qemu_unhandled};
const FakeOutcome k_fail{.status = ExitStatus::exited(1)};
const FakeOutcome k_pass{};

std::string load_error(const std::string& text) {
    auto p = Pipeline::parse(text, "p.json");
    REQUIRE_FALSE(p.has_value());
    return p.error().message();
}

Report run(FakeCommandRunner& fake, const std::string& steps,
           RunnerOptions options = runner_options("retries")) {
    auto r = Runner(pipeline_of(steps), std::move(options)).run(fake);
    REQUIRE_MESSAGE(r.has_value(), (r ? "" : r.error().message()));
    return *r;
}

bool has_flag(const StepResult& s, const std::string& rule) {
    return std::ranges::any_of(s.flags, [&](const Flag& f) { return f.rule == rule; });
}

} // namespace

TEST_CASE("pipeline: retries from defaults or the step; on defaults to emulator_crash") {
    auto p = Pipeline::parse(R"({"name": "p",
        "defaults": {"retries": {"count": 2, "on": ["timed_out", "failed"]}},
        "steps": [{"name": "a", "argv": ["a"]},
                  {"name": "b", "argv": ["b"], "retries": {"count": 1}},
                  {"name": "c", "argv": ["c"], "retries": {"count": 0}}]})",
                             "p.json");
    REQUIRE(p.has_value());
    const Retries& a = p->steps[0].retries;
    CHECK(a.count == 2);
    CHECK_FALSE(a.on_emulator_crash);
    CHECK(a.on_timed_out);
    CHECK(a.on_failed);
    const Retries& b = p->steps[1].retries; // the step's replaces the defaults' whole
    CHECK(b.count == 1);
    CHECK(b.on_emulator_crash);
    CHECK_FALSE(b.on_timed_out);
    CHECK_FALSE(b.on_failed);
    CHECK(p->steps[2].retries.count == 0);
    auto none =
        Pipeline::parse(R"({"name": "p", "steps": [{"name": "a", "argv": ["a"]}]})", "p.json");
    REQUIRE(none.has_value());
    CHECK(none->steps[0].retries.count == 0);
}

TEST_CASE("pipeline: bad retries are named with the place and the fix") {
    auto step = [](const std::string& retries) {
        return R"({"name": "p", "steps": [{"name": "a", "argv": ["a"], "retries": )" + retries +
               "}]}";
    };
    CHECK(load_error(step(R"({"count": -1})"))
              .find("p.json: steps[0].retries.count: expected a "
                    "whole number from 0 to 10, got -1") != std::string::npos);
    CHECK(load_error(step(R"({"count": 11})")).find("from 0 to 10") != std::string::npos);
    CHECK(load_error(step(R"({"count": 1.5})")).find("steps[0].retries.count") !=
          std::string::npos);
    CHECK(load_error(step(R"({"on": ["failed"]})")).find("missing required key \"count\"") !=
          std::string::npos);
    CHECK(load_error(step(R"({"count": 1, "on": ["crash"]})"))
              .find("steps[0].retries.on[0]: expected emulator_crash, timed_out or failed, got "
                    "\"crash\"") != std::string::npos);
    CHECK(load_error(step(R"({"count": 1, "tries": 2})")).find("tries") != std::string::npos);
    CHECK(load_error(step("2")).find("steps[0].retries") != std::string::npos);
}

TEST_CASE("runner: an emulator crash is retried; passing later keeps both attempts, flaky") {
    FakeCommandRunner fake;
    fake.script_attempts("t", {k_crash, k_pass});
    std::vector<std::string> events; // what `emurun run` prints from: each attempt ends
    RunnerOptions o = runner_options("retries");
    o.on_event = [&](const RunEvent& e) {
        if (e.kind != RunEvent::Kind::progress && e.step && e.step->name == "t") {
            events.push_back(e.kind == RunEvent::Kind::started
                                 ? "started"
                                 : std::string(to_string(e.step->status)) + " " + e.step->message);
        }
    };
    Report r = run(fake, R"([
        {"name": "t", "argv": ["t"], "arch": "aarch64", "emulation": "host",
         "retries": {"count": 2}},
        {"name": "after", "argv": ["after"], "needs": ["t"]}])",
                   o);
    CHECK(events == std::vector<std::string>{"started", "emulator_crash retrying: attempt 2 of 3",
                                             "started", "passed "});
    CHECK(fake.spawn_count("t") == 2); // passed on the second: no third
    const StepResult& t = *r.find("t");
    CHECK(t.status == StepStatus::passed);
    REQUIRE(t.attempts.size() == 2);
    CHECK(t.attempts[0].status == StepStatus::emulator_crash);
    CHECK(t.attempts[0].evidence == test::k_qemu_unhandled);
    CHECK(t.attempts[0].signal == SIGABRT);
    // The fake writes no log, so there is nothing to move aside to t@attempt1.log and the
    // record keeps the path (integration.run_crash.retry checks the move on real logs).
    CHECK(t.attempts[0].log == t.log);
    CHECK(t.attempts[1].status == StepStatus::passed);
    CHECK(t.attempts[1].log == t.log);
    CHECK(has_flag(t, "flaky"));
    CHECK(status_of(r, "after") == StepStatus::passed); // dependents wait for the last attempt
    CHECK(Runner::exit_code(r, false) == 0);
    CHECK(Runner::exit_code(r, true) == 3); // flaky is a flag
}

TEST_CASE("runner: only the listed outcomes are retried, at most count times") {
    FakeCommandRunner fake;
    fake.script("plain", k_fail);   // on defaults to emulator_crash: not retried
    fake.script("always", k_fail);  // on failed, count 2: three attempts, then failed
    fake.script("native", k_crash); // a native step is never an emulator crash
    fake.script_attempts("slow", {{.seconds = 5}, {.seconds = 1}}); // timed out, then passed
    Report r = run(fake, R"([
        {"name": "plain", "argv": ["plain"], "arch": "aarch64", "emulation": "host",
         "retries": {"count": 3}},
        {"name": "always", "argv": ["always"], "retries": {"count": 2, "on": ["failed"]}},
        {"name": "native", "argv": ["native"], "retries": {"count": 2}},
        {"name": "slow", "argv": ["slow"], "timeout": "2s",
         "retries": {"count": 1, "on": ["timed_out"]}}])");
    CHECK(fake.spawn_count("plain") == 1);
    CHECK(r.find("plain")->attempts.empty());
    CHECK(fake.spawn_count("always") == 3);
    const StepResult& always = *r.find("always");
    CHECK(always.status == StepStatus::failed);
    CHECK(always.attempts.size() == 3);
    CHECK_FALSE(has_flag(always, "flaky"));
    CHECK(fake.spawn_count("native") == 1);
    CHECK(status_of(r, "native") == StepStatus::failed);
    CHECK(fake.spawn_count("slow") == 2);
    CHECK(status_of(r, "slow") == StepStatus::passed);
    CHECK(r.find("slow")->attempts[0].status == StepStatus::timed_out);
    CHECK(has_flag(*r.find("slow"), "flaky"));
}

TEST_CASE("runner: a step that cannot start is not retried even with on failed") {
    FakeCommandRunner fake;
    fake.script("gone", {.start_error = "No such file or directory"});
    Report r = run(fake, R"([{"name": "gone", "argv": ["gone"],
        "retries": {"count": 3, "on": ["failed"]}}])");
    CHECK(fake.spawn_count("gone") == 1);
    CHECK(status_of(r, "gone") == StepStatus::failed);
}

TEST_CASE("report: attempts in JSON and JUnit (flakyFailure, rerunFailure)") {
    Report r;
    r.pipeline = "p";
    StepResult flaky;
    flaky.name = "flaky";
    flaky.status = StepStatus::passed;
    flaky.attempts = {
        Attempt{StepStatus::emulator_crash, std::nullopt, SIGSEGV, 1.5, test::k_qemu_unhandled, "",
                "logs/flaky@attempt1.log"},
        Attempt{StepStatus::passed, 0, std::nullopt, 1.0, std::nullopt, "", "logs/flaky.log"}};
    flaky.flags = {{"flaky", "passed on attempt 2 of 2 after emulator_crash"}};
    StepResult broken;
    broken.name = "broken";
    broken.status = StepStatus::failed;
    broken.exit_code = 1;
    broken.attempts = {
        Attempt{StepStatus::timed_out, std::nullopt, SIGTERM, 2, std::nullopt, "timed out",
                "logs/broken@attempt1.log"},
        Attempt{StepStatus::failed, 1, std::nullopt, 1, std::nullopt, "", "logs/broken.log"}};
    r.steps = {flaky, broken};
    auto back = Report::from_json(r.to_json(), "r.json");
    REQUIRE(back.has_value());
    CHECK(*back == r);
    CHECK(r.to_json()["steps"][0]["attempts"][0]["evidence"] == test::k_qemu_unhandled);
    const std::string xml = to_junit(r);
    CHECK(xml.find("<flakyFailure type=\"emulator_crash\" message=\"attempt 1 of 2: "
                   "emulator_crash, killed by signal 11: " +
                   test::k_qemu_unhandled) != std::string::npos);
    CHECK(xml.find("<rerunFailure type=\"timed_out\"") != std::string::npos);
    CHECK(xml.find("<flakyFailure type=\"passed\"") == std::string::npos);
    CHECK(xml.find("failures=\"1\"") != std::string::npos);         // the flaky step passed
    CHECK(xml.find("attempt 2 of 2: passed") != std::string::npos); // system-out lists all
    CHECK(to_table(r).find("flag flaky: flaky: passed on attempt 2") != std::string::npos);
}

TEST_CASE("retries: an attempt's log cannot be the log of another step") {
    // "a.attempt1.log" was also the log of a step named "a.attempt1", which overwrote it.
    const auto dir = test::testdir("attempt-logs");
    StepResult r;
    r.name = "a";
    r.status = StepStatus::failed;
    r.exit_code = 1;
    r.log = dir / detail::log_file_name("a");
    std::ofstream(r.log) << "attempt 1\n";
    const Attempt a = detail::set_aside_attempt(r, 1);
    CHECK(a.log.filename() == "a@attempt1.log");
    CHECK(std::filesystem::exists(a.log));
    CHECK_FALSE(std::filesystem::exists(r.log)); // free for the next attempt
    for (const char* step : {"a.attempt1", "a@attempt1", "a_attempt1"}) {
        INFO(step);
        CHECK(detail::log_file_name(step) != a.log.filename().string());
        CHECK(detail::log_file_name(step).find('@') == std::string::npos);
    }
}
