// PipelineBuilder: a pipeline written in C++ gets the defaults and the checks of a loaded file.
#include "known_arch.hpp"

#include <emurun/arch.hpp>
#include <emurun/pipeline.hpp>

#include <doctest/doctest.h>

#include <string>

using namespace std::chrono_literals;
using emurun::Pipeline;
using emurun::PipelineBuilder;
using emurun::StepKind;
using emurun::StepSpec;

namespace {

// The builder's three steps as a pipeline file would write them.
constexpr const char* k_same_as_file = R"({
  "name": "demo",
  "defaults": {"arch": "arm64", "env": {"A": "1", "B": "2"}, "cwd": "build", "timeout": "10m",
               "sysroots": ["/sr"], "retries": {"count": 2}, "limits": {"pids": 64}},
  "steps": [
    {"name": "configure", "kind": "configure", "argv": ["cmake", ".."], "emulation": "native"},
    {"name": "build", "kind": "build", "argv": ["make"], "needs": ["configure"],
     "env": {"B": "3"}, "limits": {"memory": "1G"}},
    {"name": "test", "kind": "test", "argv": "ctest --output-on-failure", "shell": true,
     "needs": ["build"], "timeout": "90s", "cwd": "/elsewhere", "junit": ["Testing/*.xml"]}]})";

PipelineBuilder demo_builder() {
    emurun::StepDefaults defaults;
    defaults.arch = "arm64"; // an alias, resolved as in a file
    defaults.env = {{"A", "1"}, {"B", "2"}};
    defaults.cwd = "build";
    defaults.timeout = 10min;
    defaults.sysroots = {"/sr"};
    defaults.retries = emurun::Retries{.count = 2};
    defaults.limits.pids = 64;
    StepSpec configure{.name = "configure", .kind = StepKind::configure, .argv = {"cmake", ".."}};
    configure.settings.emulation = emurun::Emulation::native;
    StepSpec build{
        .name = "build", .kind = StepKind::build, .argv = {"make"}, .needs = {"configure"}};
    build.settings.env = {{"B", "3"}};
    build.settings.limits.memory_bytes = 1ULL << 30;
    StepSpec test{.name = "test",
                  .kind = StepKind::test,
                  .argv = {"ctest --output-on-failure"},
                  .shell = true,
                  .needs = {"build"},
                  .junit = {"Testing/*.xml"}};
    test.settings.timeout = 90s;
    test.settings.cwd = "/elsewhere";
    PipelineBuilder b("demo");
    b.defaults(defaults).step(configure).step(build).step(test).base_dir("/base");
    return b;
}

void check_same_step(const emurun::Step& a, const emurun::Step& b) {
    INFO(a.name);
    CHECK(a.name == b.name);
    CHECK(a.kind == b.kind);
    CHECK(a.argv == b.argv);
    CHECK(a.shell == b.shell);
    CHECK(a.cwd == b.cwd);
    CHECK(a.env == b.env);
    CHECK(a.arch == b.arch);
    CHECK(a.emulation == b.emulation);
    CHECK(a.sysroots == b.sysroots);
    CHECK(a.timeout == b.timeout);
    CHECK(a.needs == b.needs);
    CHECK(a.junit == b.junit);
    CHECK(a.retries.count == b.retries.count);
    CHECK(a.retries.on_emulator_crash == b.retries.on_emulator_crash);
    CHECK(a.limits.pids == b.limits.pids);
    CHECK(a.limits.memory_bytes == b.limits.memory_bytes);
}

// The error of a one-step pipeline "p" whose step is changed by `change`.
template <class F> emurun::Error error_of(F change) {
    StepSpec step{.name = "a", .argv = {"true"}};
    change(step);
    auto p = PipelineBuilder("p").step(step).base_dir("/base").build();
    REQUIRE_FALSE(p.has_value());
    return p.error();
}

} // namespace

TEST_CASE("pipeline builder: defaults applied as a file applies them") {
    auto built = demo_builder().build();
    REQUIRE_MESSAGE(built.has_value(), built.error().message());
    auto file = Pipeline::parse(k_same_as_file, "pipeline.json", "/base");
    REQUIRE(file.has_value());
    REQUIRE(built->steps.size() == 3);
    for (std::size_t i = 0; i < 3; ++i) {
        check_same_step(built->steps[i], file->steps[i]);
    }
    // What the rules gave, spelled out once: the step's env overlays the defaults', its limits
    // key overlays the defaults' limits, an alias is resolved, a foreign arch without a mode is
    // auto, relative paths resolve against the base directory.
    const auto& build = built->steps[1];
    CHECK(build.env == emurun::EnvMap{{"A", "1"}, {"B", "3"}});
    CHECK(build.limits.pids == 64);
    CHECK(build.limits.memory_bytes == (1ULL << 30));
    CHECK(build.arch == "aarch64");
    // (native where aarch64 is: the dogfood runs these tests on aarch64)
    const emurun::Arch* host = emurun::host_arch();
    const bool native_here =
        host != nullptr && runs_natively_on(*host, *emurun::test::known_arch("aarch64"));
    CHECK(build.emulation ==
          (native_here ? emurun::Emulation::native : emurun::Emulation::automatic));
    CHECK(build.cwd == "/base/build");
    CHECK(build.timeout == 10min);
    CHECK(build.retries.count == 2);
    CHECK(built->steps[0].emulation == emurun::Emulation::native);
    CHECK(built->steps[2].argv ==
          std::vector<std::string>{"/bin/sh", "-c", "ctest --output-on-failure"});
    CHECK(built->steps[2].timeout == 90s);
    CHECK(built->steps[2].cwd == "/elsewhere");
    CHECK(built->defaults.cwd == "/base/build");
    CHECK(built->name == "demo");
    CHECK(built->dir == "/base");
}

TEST_CASE("pipeline builder: json() is a pipeline file that loads to the same pipeline") {
    auto b = demo_builder();
    auto again = Pipeline::parse(b.json(), "built.json", "/base");
    REQUIRE_MESSAGE(again.has_value(), again.error().message());
    auto built = b.build();
    REQUIRE(built.has_value());
    CHECK(again->digest == built->digest);
    REQUIRE(again->steps.size() == built->steps.size());
    for (std::size_t i = 0; i < again->steps.size(); ++i) {
        check_same_step(again->steps[i], built->steps[i]);
    }
}

TEST_CASE("pipeline builder: accelerate and retries spelled as the file spells them") {
    emurun::StepDefaults d;
    d.emulation = emurun::Emulation::root;
    d.root = "roots/arm64";
    d.accelerate_tools = "toolchain,shell";
    d.allow_revision_mismatch = true;
    d.retries = emurun::Retries{.count = 1, .on_emulator_crash = false, .on_timed_out = true};
    d.junit_missing = emurun::JunitMissing::fail;
    d.idle_timeout = 250ms;
    auto p = PipelineBuilder("r")
                 .defaults(d)
                 .step({.name = "a", .argv = {"true"}})
                 .base_dir("/b")
                 .build();
    REQUIRE_MESSAGE(p.has_value(), p.error().message());
    const auto& s = p->steps[0];
    CHECK(s.root == "/b/roots/arm64");
    CHECK(s.accelerate);
    CHECK(s.accelerate_tools == "toolchain,shell");
    CHECK(s.allow_revision_mismatch);
    CHECK(s.retries.count == 1);
    CHECK_FALSE(s.retries.on_emulator_crash);
    CHECK(s.retries.on_timed_out);
    CHECK(s.junit_missing == emurun::JunitMissing::fail);
    CHECK(s.idle_timeout == 250ms);
    CHECK_FALSE(s.root_platform);
    d.root = "images/app.tar";
    d.root_platform = "linux/arm/v7";
    auto image = PipelineBuilder("i")
                     .defaults(d)
                     .step({.name = "a", .argv = {"true"}})
                     .base_dir("/b")
                     .build();
    REQUIRE_MESSAGE(image.has_value(), image.error().message());
    CHECK(image->steps[0].root == "/b/images/app.tar");
    CHECK(image->steps[0].root_platform == "linux/arm/v7");
}

TEST_CASE("pipeline builder: errors are the loader's, bad_input naming the field") {
    auto timeout = error_of([](StepSpec& s) { s.settings.timeout = 0ms; });
    CHECK(timeout.kind == emurun::ErrorKind::bad_input);
    CHECK(timeout.what == "p: steps[0].timeout");
    CHECK(timeout.why.find("must be longer than 0") != std::string::npos);

    auto arch = error_of([](StepSpec& s) { s.settings.arch = "vax"; });
    CHECK(arch.kind == emurun::ErrorKind::bad_input);
    CHECK(arch.what == "p: steps[0].arch");

    auto argv = error_of([](StepSpec& s) { s.argv.clear(); });
    CHECK(argv.what == "p: steps[0].argv");
    auto shell = error_of([](StepSpec& s) {
        s.shell = true;
        s.argv = {"echo", "two"};
    });
    CHECK(shell.what == "p: steps[0].argv");
    auto need = error_of([](StepSpec& s) { s.needs = {"b"}; });
    CHECK(need.kind == emurun::ErrorKind::bad_input);
    CHECK(need.what == "p: steps[0].needs[0]");
    CHECK(need.why == "unknown step \"b\"");
    auto env = error_of([](StepSpec& s) { s.settings.env = {{"A=B", "1"}}; });
    CHECK(env.what == "p: steps[0].env");
    auto output = error_of([](StepSpec& s) { s.outputs = {"../x"}; });
    CHECK(output.what == "p: steps[0].outputs[0]");
    auto exec = error_of([](StepSpec& s) { s.settings.emulation = emurun::Emulation::exec; });
    CHECK(exec.why.find("needs an arch") != std::string::npos);

    auto empty = PipelineBuilder("p").build();
    REQUIRE_FALSE(empty.has_value());
    CHECK(empty.error().what == "p: steps");
    auto twice = PipelineBuilder("p")
                     .step({.name = "a", .argv = {"true"}})
                     .step({.name = "a", .argv = {"true"}})
                     .build();
    REQUIRE_FALSE(twice.has_value());
    CHECK(twice.error().what == "p: steps[1].name");
    CHECK(twice.error().kind == emurun::ErrorKind::bad_input);
}

TEST_CASE("pipeline builder: text JSON cannot hold is refused, not replaced") {
    auto bad = error_of([](StepSpec& s) { s.settings.env = {{"A", "caf\xe9"}}; });
    CHECK(bad.kind == emurun::ErrorKind::bad_input);
    CHECK(bad.what == "p: steps[0].env.A");
    CHECK(bad.why == "is not UTF-8 text");
    auto path = error_of([](StepSpec& s) { s.settings.sysroots = {"/sr/\xff"}; });
    CHECK(path.what == "p: steps[0].sysroots[0]");
}
