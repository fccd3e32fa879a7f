// What a step's programs are told about how they run: EMURUN_ARCH, EMURUN_EMULATED and
// EMURUN_TIMEOUT_MULTIPLIER in the environment of the command the runner spawns.
#include "fake_command_runner.hpp"
#include "scoped_env.hpp"

#include <emurun/arch.hpp>
#include <emurun/runner.hpp>

#include <doctest/doctest.h>

#include <string>

using namespace emurun;
using test::FakeCommandRunner;
using test::pipeline_of;
using test::runner_options;

namespace {

// The value of `name` in the environment step `argv0` was spawned with ("<unset>" if none).
std::string env_of(const FakeCommandRunner& fake, const std::string& argv0,
                   const std::string& name) {
    const Command& cmd = fake.command_of(argv0);
    REQUIRE(cmd.env.has_value());
    auto it = cmd.env->find(name);
    return it == cmd.env->end() ? "<unset>" : it->second;
}

} // namespace

TEST_CASE("runner: emulated steps are told their arch, that they are emulated and the "
          "timeout multiplier; native steps get EMURUN_EMULATED=0 and a multiplier of 1") {
    // An outer emurun's variables are not this step's: they are always overwritten.
    test::ScopedEnv outer("EMURUN_EMULATED", "1");
    FakeCommandRunner fake;
    RunnerOptions o = runner_options("env");
    o.timeout_multiplier.all = 2.5;
    o.timeout_multiplier.per_arch["aarch64"] = 8;
    auto r = Runner(pipeline_of(R"([
        {"name": "arm", "argv": ["arm"], "arch": "arm64", "emulation": "host"},
        {"name": "ppc", "argv": ["ppc"], "arch": "ppc64el", "emulation": "host"},
        {"name": "native", "argv": ["native"]},
        {"name": "cross", "argv": ["cross"], "arch": "aarch64", "emulation": "native"},
        {"name": "own", "argv": ["own"], "arch": "aarch64", "emulation": "host",
         "env": {"EMURUN_TIMEOUT_MULTIPLIER": "100"}}])"),
                    o)
                 .run(fake);
    REQUIRE(r.has_value());
    CHECK(env_of(fake, "arm", "EMURUN_ARCH") == "aarch64"); // canonical, not the alias
    CHECK(env_of(fake, "arm", "EMURUN_EMULATED") == "1");
    CHECK(env_of(fake, "arm", "EMURUN_TIMEOUT_MULTIPLIER") == "8");
    CHECK(env_of(fake, "ppc", "EMURUN_ARCH") == "ppc64le");
    CHECK(env_of(fake, "ppc", "EMURUN_TIMEOUT_MULTIPLIER") == "2.5");
    REQUIRE(host_arch() != nullptr);
    CHECK(env_of(fake, "native", "EMURUN_ARCH") == host_arch()->name);
    CHECK(env_of(fake, "native", "EMURUN_EMULATED") == "0");
    CHECK(env_of(fake, "native", "EMURUN_TIMEOUT_MULTIPLIER") == "1");
    // A native step of a cross build keeps its target arch in EMURUN_ARCH.
    CHECK(env_of(fake, "cross", "EMURUN_ARCH") == "aarch64");
    CHECK(env_of(fake, "cross", "EMURUN_EMULATED") == "0");
    // The step's own env wins over emurun's.
    CHECK(env_of(fake, "own", "EMURUN_TIMEOUT_MULTIPLIER") == "100");
    CHECK(env_of(fake, "own", "EMURUN_EMULATED") == "1");
}
