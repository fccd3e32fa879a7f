// Hang diagnosis in the runner: the idle timeout (scaled like timeouts, reason idle), the process
// tree of a stopped step in the report and its log, and heartbeat events.
#include "fake_command_runner.hpp"

#include <emurun/runner.hpp>

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <csignal>
#include <string>

using namespace emurun;
using test::FakeCommandRunner;
using test::pipeline_of;
using test::runner_options;
using test::status_of;

namespace {

const std::vector<ProcessSnapshot> k_tree = {
    {4242, 4241, 'S', "do_wait", 0.01, "sh -c sleep 600"},
    {4243, 4242, 'S', "hrtimer_nanosleep", 0, "sleep 600"}};

} // namespace

TEST_CASE("runner: a silent step is stopped by its idle timeout, reason idle, with its tree") {
    FakeCommandRunner fake;
    fake.script("hang", {.seconds = 600, .snapshot = k_tree});
    fake.script("emu", {.seconds = 600});
    fake.script("slow", {.seconds = 600, .snapshot = k_tree});
    fake.script("quick", {.seconds = 2});
    RunnerOptions o = runner_options("idle");
    o.timeout_multiplier.all = 3;
    auto r = Runner(pipeline_of(R"([
        {"name": "hang", "argv": ["hang"], "idle_timeout": "10s", "timeout": "1h"},
        {"name": "emu", "argv": ["emu"], "arch": "aarch64", "emulation": "host",
         "idle_timeout": "10s"},
        {"name": "slow", "argv": ["slow"], "timeout": "30s"},
        {"name": "quick", "argv": ["quick"], "idle_timeout": "10s"}])"),
                    o)
                 .run(fake);
    REQUIRE(r.has_value());
    const StepResult& hang = *r->find("hang");
    CHECK(hang.status == StepStatus::timed_out);
    CHECK(hang.timeout_reason == "idle");
    CHECK(hang.message.find("no output for 10.0s (idle_timeout") != std::string::npos);
    CHECK(hang.wall == doctest::Approx(10));
    REQUIRE(hang.processes.size() == 2);
    CHECK(hang.processes[1] == ProcessRecord{4243, 4242, "S", "hrtimer_nanosleep", 0, "sleep 600"});
    // An emulated step's idle timeout is scaled as its timeout is.
    CHECK(fake.options_of("emu").idle_timeout == std::chrono::seconds(30));
    CHECK(r->find("emu")->timeout_reason == "idle");
    CHECK(r->find("slow")->timeout_reason == "timeout");
    CHECK(r->find("slow")->processes.size() == 2);
    CHECK(status_of(*r, "quick") == StepStatus::passed);
    CHECK_FALSE(r->find("quick")->timeout_reason.has_value());
    CHECK(Runner::exit_code(*r, false) == 124);
    auto back = Report::from_json(r->to_json(), "r.json");
    REQUIRE_MESSAGE(back.has_value(), back.error().message());
    CHECK(*back == *r);
    auto j = r->to_json();
    CHECK(j["steps"][0]["timeout_reason"] == "idle");
    CHECK(j["steps"][0]["processes"][1]["cmdline"] == "sleep 600");
    CHECK(j["steps"][3]["timeout_reason"].is_null());
    j["steps"][0]["timeout_reason"] = "sleepy";
    CHECK_FALSE(Report::from_json(j, "r.json").has_value());
}

TEST_CASE("runner: heartbeats name each running step, its time and its last output's age") {
    FakeCommandRunner fake;
    fake.script("long", {.seconds = 35, .stderr_output = "started\n"});
    fake.script("short", {.seconds = 12});
    RunnerOptions o = runner_options("heartbeat");
    o.jobs = 2;
    o.heartbeat = std::chrono::seconds(10);
    std::vector<RunEvent> beats;
    o.on_event = [&](const RunEvent& e) {
        if (e.kind == RunEvent::Kind::heartbeat) {
            beats.push_back(e);
        }
    };
    auto r = Runner(pipeline_of(R"([
        {"name": "long", "argv": ["long"]}, {"name": "short", "argv": ["short"]}])"),
                    o)
                 .run(fake);
    REQUIRE(r.has_value());
    REQUIRE(beats.size() == 3); // at 10 s, 20 s and 30 s of a 35 s run
    REQUIRE(beats[0].activity.size() == 2);
    CHECK(beats[0].activity[0].step == "long");
    CHECK(beats[0].activity[0].running == doctest::Approx(10).epsilon(0.05));
    CHECK(beats[0].activity[0].since_output == doctest::Approx(10).epsilon(0.05));
    REQUIRE(beats[1].activity.size() == 1); // short ended at 12 s
    CHECK(beats[2].activity[0].running == doctest::Approx(30).epsilon(0.05));
    o.heartbeat.reset();
    beats.clear();
    FakeCommandRunner quiet;
    REQUIRE(
        Runner(pipeline_of(R"([{"name": "long", "argv": ["long"]}])"), o).run(quiet).has_value());
    CHECK(beats.empty());
}
