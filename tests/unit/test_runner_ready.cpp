// A Runner says up front what it lacks: a missing helper program is one error from run(), before
// any step starts, not a failure of every step.
#include "fake_command_runner.hpp"
#include "known_arch.hpp"
#include "scoped_env.hpp"
#include "skip.hpp"
#include "testdir.hpp"

#include <emurun/runner.hpp>

#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <sys/stat.h>
#include <vector>

using namespace emurun;
using test::FakeCommandRunner;
using test::pipeline_of;
using test::runner_options;
namespace fs = std::filesystem;

namespace {

/// Three native steps, each of which would leave a file in `dir` if it ran.
std::string three_steps(const fs::path& dir) {
    std::string steps = "[";
    for (const char* name : {"a", "b", "c"}) {
        steps += std::string(steps.size() > 1 ? ", " : "") + R"({"name": ")" + name +
                 R"(", "argv": ["touch", ")" + (dir / name).string() + R"("]})";
    }
    return steps + "]";
}

} // namespace

TEST_CASE("runner ready: a missing step supervisor is one error, and no step starts") {
    // An emurun without its helper programs beside it or in ../libexec/emurun.
    const fs::path bin = test::testdir("ready-bin");
    std::ofstream(bin / "emurun") << "#!/bin/sh\nexit 0\n";
    REQUIRE(::chmod((bin / "emurun").c_str(), 0755) == 0);
    const test::ScopedEnv exe("EMURUN_EXE", (bin / "emurun").string());
    const fs::path marks = test::testdir("ready-marks");

    auto report = Runner(pipeline_of(three_steps(marks)), runner_options("ready-logs")).run();
    REQUIRE_FALSE(report.has_value());
    CHECK(report.error().kind == ErrorKind::not_found);
    CHECK(report.error().what == "run fake: find emurun-supervisor");
    CHECK(report.error().why.find("is neither beside " + (bin / "emurun").string()) !=
          std::string::npos);
    for (const char* name : {"a", "b", "c"}) {
        CHECK_FALSE(fs::exists(marks / name));
    }
}

TEST_CASE("runner ready: the command runner's own lack ends the run before any spawn") {
    FakeCommandRunner fake;
    fake.not_ready(Error{"find the build farm", "no agent answered", "start one"});
    const Runner runner(pipeline_of(three_steps(test::testdir("ready-fake"))),
                        runner_options("ready-fake-logs"));
    auto ready = runner.ready(fake);
    REQUIRE_FALSE(ready.has_value());
    CHECK(ready.error().message() ==
          "run fake: find the build farm: no agent answered (start one)");
    Runner again(pipeline_of(three_steps(test::testdir("ready-fake"))),
                 runner_options("ready-fake-logs"));
    CHECK_FALSE(again.run(fake).has_value());
    CHECK(fake.started().empty());

    FakeCommandRunner fine;
    CHECK(runner.ready(fine).has_value());
    RunnerOptions none = runner_options("ready-jobs");
    none.jobs = 0;
    auto jobs = Runner(pipeline_of(three_steps(test::testdir("ready-fake"))), none).ready(fine);
    REQUIRE_FALSE(jobs.has_value());
    CHECK(jobs.error().kind == ErrorKind::bad_input);
    CHECK(jobs.error().field == "jobs");
}

TEST_CASE("runner ready: an auto step's mode goes to the caller's diagnostics before the run" *
          test::may_skip()) {
    FakeCommandRunner fake;
    auto options = runner_options("ready-auto-logs");
    std::vector<Diagnostic> said;
    options.diagnostics = [&said](const Diagnostic& d) { said.push_back(d); };
    const auto pipeline =
        pipeline_of(R"([{"name": "t", "arch": ")" + std::string(test::foreign_arch_name()) +
                    R"(", "argv": ["./t"]}])");
    REQUIRE(pipeline.steps[0].emulation == Emulation::automatic);
    auto report = Runner(pipeline, options).run(fake);
    REQUIRE_MESSAGE(report.has_value(), report.error().message());
    const auto mode = report->steps.at(0).emulation;
    if (mode == Emulation::automatic) {
        CHECK(said.empty()); // undecided: the step fails, saying why
        EMURUN_SKIP("no sandbox and no sane host handlers here: auto stays undecided");
    }
    REQUIRE(said.size() == 1);
    if (mode == Emulation::sandbox) {
        CHECK(said[0].severity == Severity::debug);
        CHECK(said[0].text ==
              "step \"t\": emulation auto runs in a sandbox (a private binfmt_misc)");
    } else {
        CHECK(mode == Emulation::host);
        CHECK(said[0].severity == Severity::warning);
        CHECK(said[0].text.starts_with("step \"t\": emulation auto runs through the host's "
                                       "binfmt_misc handlers: no sandbox can be set up here"));
    }
}

TEST_CASE("runner ready: an image that cannot be imported fails its steps, and the run reports") {
    const fs::path bin = test::testdir("image-bin");
    std::ofstream(bin / "emurun") << "#!/bin/sh\nexit 0\n";
    REQUIRE(::chmod((bin / "emurun").c_str(), 0755) == 0);
    const test::ScopedEnv exe("EMURUN_EXE", (bin / "emurun").string());
    const test::ScopedEnv cache("EMURUN_CACHE_DIR", test::testdir("image-cache").string());
    const fs::path missing = test::testdir("image-src") / "app.tar";
    FakeCommandRunner fake;
    auto report = Runner(pipeline_of(R"([
        {"name": "build", "emulation": "root", "root": ")" +
                                     missing.string() + R"(#arm64",
         "argv": ["make"]},
        {"name": "test", "emulation": "root", "root": ")" +
                                     missing.string() + R"(#arm64",
         "argv": ["make", "check"], "needs": ["build"]},
        {"name": "native", "argv": ["true"]}])"),
                         runner_options("image-logs"))
                      .run(fake);
    REQUIRE_MESSAGE(report.has_value(), (report ? "" : report.error().message()));
    REQUIRE(report->steps.size() == 3);
    const auto step = [&](const std::string& name) {
        return *std::ranges::find(report->steps, name, &StepResult::name);
    };
    CHECK(step("build").status == StepStatus::failed);
    CHECK(step("build").message ==
          "root " + missing.string() + "#arm64: use " + missing.string() +
              " as an image root: it does not exist (name an OCI image layout, an image "
              "tarball, or a root directory)");
    CHECK(step("test").status == StepStatus::skipped);
    CHECK(step("test").message == "needs build, which did not pass");
    CHECK(step("native").status == StepStatus::passed);
    CHECK(fake.started().size() == 1); // only the native step
    CHECK(Runner::exit_code(*report, false) == 1);
}
