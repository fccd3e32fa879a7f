// The runner's scheduling on a fake CommandRunner: -j N, longest first, needs and skipping.
#include "fake_command_runner.hpp"

#include <emurun/runner.hpp>

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <unistd.h>
#include <vector>

using namespace emurun;
using test::FakeCommandRunner;
using test::pipeline_of;
using test::runner_options;
using test::status_of;
using Names = std::vector<std::string>;

namespace {

const char* const k_four = R"([{"name": "a", "argv": ["a"]}, {"name": "b", "argv": ["b"]},
                               {"name": "c", "argv": ["c"]}, {"name": "d", "argv": ["d"]}])";

std::string file_text(const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    REQUIRE_MESSAGE(in.good(), path << " does not exist");
    return {std::istreambuf_iterator<char>(in), {}};
}

Report run(FakeCommandRunner& fake, const std::string& steps, const RunnerOptions& o) {
    auto r = Runner(pipeline_of(steps), o).run(fake);
    REQUIRE_MESSAGE(r.has_value(), (r ? "" : r.error().message()));
    return *r;
}

} // namespace

TEST_CASE("runner: -j N runs at most N steps at once") {
    for (int jobs : {1, 2, 3, 8}) {
        CAPTURE(jobs);
        FakeCommandRunner fake;
        Report r = run(fake, k_four, runner_options("jobs", jobs));
        CHECK(fake.max_running() == static_cast<std::size_t>(std::min(jobs, 4)));
        CHECK(fake.started() == Names{"a", "b", "c", "d"});
        // Four 1 s steps in waves of `jobs`.
        CHECK(r.wall == doctest::Approx((4 + jobs - 1) / jobs));
        CHECK(Runner::exit_code(r, false) == 0);
    }
}

TEST_CASE("runner: a free slot is filled as soon as a step ends, not at the next tick") {
    FakeCommandRunner fake;
    fake.script("a", {.seconds = 3});
    fake.script("b", {.seconds = 1.1});
    fake.script("c", {.seconds = 0.7});
    Report r = run(fake, k_four, runner_options("slots", 2));
    CHECK(fake.started_at("c") == doctest::Approx(1.1));
    CHECK(fake.started_at("d") == doctest::Approx(1.8));
    CHECK(r.wall == doctest::Approx(3));
    CHECK(r.find("a")->wall == doctest::Approx(3));
    CHECK(r.find("c")->wall == doctest::Approx(0.7));
}

TEST_CASE("runner: ready steps start longest first by the previous run's walls") {
    const std::string steps = R"([{"name": "a", "argv": ["a"]}, {"name": "b", "argv": ["b"]},
        {"name": "c", "argv": ["c"]}, {"name": "x", "argv": ["x"], "needs": ["a"]},
        {"name": "d", "argv": ["d"]}])";
    SUBCASE("without history: file order") {
        FakeCommandRunner fake;
        (void)run(fake, steps, runner_options("order1"));
        CHECK(fake.started() == Names{"a", "b", "c", "x", "d"});
    }
    SUBCASE("with history: longest first among the steps whose needs passed") {
        FakeCommandRunner fake;
        RunnerOptions o = runner_options("order2");
        o.previous = test::history_of({{"a", 1}, {"b", 5}, {"c", 3}, {"x", 10}});
        (void)run(fake, steps, o);
        // x is the longest but waits for a; d has no history and comes last.
        CHECK(fake.started() == Names{"b", "c", "a", "x", "d"});
    }
}

TEST_CASE("runner: its own timing history schedules like --previous, which wins") {
    const std::string steps = R"([{"name": "a", "argv": ["a"]}, {"name": "b", "argv": ["b"]},
        {"name": "c", "argv": ["c"]}])";
    FakeCommandRunner fake;
    RunnerOptions o = runner_options("own-history");
    o.history = {{"a", 1}, {"b", 5}, {"c", 3}};
    (void)run(fake, steps, o);
    CHECK(fake.started() == Names{"b", "c", "a"});
    FakeCommandRunner again;
    o.previous = test::history_of({{"a", 9}, {"b", 1}, {"c", 2}});
    (void)run(again, steps, o);
    CHECK(again.started() == Names{"a", "c", "b"});
}

TEST_CASE("runner: the history file keeps the latest walls, merges shards, ignores damage") {
    const std::filesystem::path dir =
        std::filesystem::temp_directory_path() / ("emurun-history-" + std::to_string(::getpid()));
    const auto file = run_history_file(dir, "ci/p.json", "my pipeline", "emulated");
    CHECK(file.parent_path() == dir);
    CHECK(file.filename().string().starts_with("my_pipeline-"));
    CHECK(file != run_history_file(dir, "ci/p.json", "my pipeline", "native"));
    CHECK(file != run_history_file(dir, "other/p.json", "my pipeline", "emulated"));
    CHECK(load_run_history(file).empty()); // none yet
    REQUIRE(save_run_history(file, test::history_of({{"a", 1}, {"b", 2}})).has_value());
    REQUIRE(save_run_history(file, test::history_of({{"b", 4}, {"c", 3}})).has_value()); // a shard
    CHECK(load_run_history(file) == History{{"a", 1}, {"b", 4}, {"c", 3}});
    std::ofstream(file) << R"({"schema": 1, "steps": [)"; // torn
    CHECK(load_run_history(file).empty());
    std::ofstream(file) << R"({"schema": 2, "steps": {"a": 1}})"; // a later format
    CHECK(load_run_history(file).empty());
    std::filesystem::remove_all(dir);
}

TEST_CASE("runner: a step whose need did not pass is skipped with the reason") {
    FakeCommandRunner fake;
    fake.script("a", {.status = ExitStatus::exited(2)});
    Report r = run(fake, R"([{"name": "a", "argv": ["a"]},
        {"name": "b", "argv": ["b"], "needs": ["a"]},
        {"name": "c", "argv": ["c"], "needs": ["b"]},
        {"name": "d", "argv": ["d"]},
        {"name": "e", "argv": ["e"], "needs": ["d"]}])",
                   runner_options("needs", 4));
    CHECK(fake.started() == Names{"a", "d", "e"});
    CHECK(status_of(r, "a") == StepStatus::failed);
    CHECK(r.find("a")->exit_code == 2);
    CHECK(status_of(r, "b") == StepStatus::skipped);
    CHECK(r.find("b")->message == "needs a, which did not pass");
    CHECK(status_of(r, "c") == StepStatus::skipped);
    CHECK(r.find("c")->message == "needs b, which was skipped");
    CHECK(status_of(r, "e") == StepStatus::passed);
    CHECK(Runner::exit_code(r, false) == 1);
    // Skipped steps never ran: no times, no exit status.
    CHECK(r.find("c")->wall == 0);
    CHECK_FALSE(r.find("c")->exit_code.has_value());
    // The log the report names exists and says why (it named a file never created).
    CHECK(file_text(r.find("b")->log) == "skipped: needs a, which did not pass\n");
    CHECK(file_text(r.find("c")->log) == "skipped: needs b, which was skipped\n");
}

TEST_CASE("runner: a step that cannot start fails with why, and its dependents are skipped") {
    FakeCommandRunner fake;
    fake.script("a", {.spawn_error = "no such program"});
    fake.script("b", {.start_error = "execve b failed: Permission denied"});
    Report r = run(fake, R"([{"name": "a", "argv": ["a"]}, {"name": "b", "argv": ["b"]},
        {"name": "after", "argv": ["after"], "needs": ["a"]}])",
                   runner_options("nostart", 2));
    CHECK(status_of(r, "a") == StepStatus::failed);
    CHECK(r.find("a")->message == "start a: no such program");
    CHECK(status_of(r, "b") == StepStatus::failed);
    CHECK(r.find("b")->message == "start b: execve b failed: Permission denied");
    CHECK_FALSE(r.find("b")->exit_code.has_value());
    CHECK(status_of(r, "after") == StepStatus::skipped);
    CHECK(fake.started() == Names{"b"});
    CHECK(file_text(r.find("a")->log) == "failed: start a: no such program\n");
}

TEST_CASE("runner: steps are reported in file order with their logs and measurements") {
    FakeCommandRunner fake;
    fake.script("b", {.seconds = 2, .cpu = 0.25});
    RunnerOptions o = runner_options("results", 2);
    o.previous = test::history_of({{"b", 9}});
    Report r = run(fake, k_four, o);
    REQUIRE(r.steps.size() == 4);
    CHECK(r.steps[0].name == "a");
    CHECK(r.steps[1].name == "b");
    CHECK(r.steps[1].wall == doctest::Approx(2));
    CHECK(r.steps[1].user == doctest::Approx(0.5));
    CHECK(r.steps[1].log == o.log_dir / "b.log");
    CHECK(fake.options_of("b").stdout_log == o.log_dir / "b.log");
    CHECK(fake.options_of("b").stderr_log == o.log_dir / "b.log");
    CHECK(r.pipeline == "fake");
}
