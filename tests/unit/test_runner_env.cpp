// What a step's programs are told about how they run: EMURUN_ARCH, EMURUN_EMULATED and
// EMURUN_TIMEOUT_MULTIPLIER in the environment of the command the runner spawns.
#include "elf_builder.hpp"
#include "fake_command_runner.hpp"
#include "scoped_env.hpp"
#include "skip.hpp"
#include "testdir.hpp"

#include <emurun/arch.hpp>
#include <emurun/runner.hpp>

#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
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

TEST_CASE("runner: a step's cpu is QEMU_CPU for emulated steps through binfmt, none for native") {
    FakeCommandRunner fake;
    auto r = Runner(pipeline_of(R"([
        {"name": "host", "argv": ["host"], "arch": "aarch64", "emulation": "host",
         "cpu": "cortex-a72", "env": {"QEMU_CPU": "max"}},
        {"name": "native", "argv": ["native"], "arch": "aarch64", "emulation": "native",
         "cpu": "cortex-a72"}])"),
                    runner_options("cpu"))
                 .run(fake);
    REQUIRE(r.has_value());
    CHECK(env_of(fake, "host", "QEMU_CPU") == "cortex-a72"); // the key wins over env
    CHECK(env_of(fake, "native", "QEMU_CPU") == "<unset>");
    CHECK_FALSE(r->find("native")->emulator.has_value());
}

TEST_CASE("runner: an exec step's cpu is qemu's -cpu, and the report records its emulator" *
          test::may_skip()) {
    test::ScopedEnv no_cpu("QEMU_CPU", std::nullopt);
    const Arch& s390x = **find_arch("s390x");
    if (runs_natively(s390x)) { // these tests themselves run on s390x (dogfood, under qemu)
        EMURUN_SKIP("s390x is this machine's own arch: no emulator is planned for it");
    }
    auto dir = test::testdir("runner-cpu");
    std::filesystem::create_directories(dir / "qemu");
    const auto qemu = dir / "qemu" / "qemu-s390x-static";
    std::ofstream(qemu, std::ios::binary) << std::string("qemu-s390x version 7.2.5 \0", 27);
    std::filesystem::permissions(qemu, std::filesystem::perms::owner_all);
    test::ElfSpec elf; // a static s390x program: plan_launch reads its header only
    elf.elf_class = s390x.elf_class;
    elf.elf_data = s390x.elf_data;
    elf.machine = s390x.e_machine;
    elf.type = 2;
    elf.dynamic = false;
    elf.interp.clear();
    elf.needed.clear();
    const auto image = test::build_elf(elf).bytes;
    const auto program =
        test::write_file("runner-cpu/prog", std::string(image.begin(), image.end()));
    std::filesystem::permissions(program, std::filesystem::perms::owner_all);
    RunnerOptions o = runner_options("cpu-exec");
    o.emulators = EmulatorSearch{{dir / "qemu"}, false, true};
    auto run = [&](FakeCommandRunner& fake, const std::string& extra) {
        auto r = Runner(pipeline_of(R"([{"name": "s", "argv": [")" + program.string() +
                                    R"("], "arch": "s390x", "emulation": "exec")" + extra + "}]"),
                        o)
                     .run(fake);
        REQUIRE(r.has_value());
        INFO(r->steps[0].message);
        CHECK(r->steps[0].status == StepStatus::passed);
        return *r;
    };
    FakeCommandRunner with_cpu, without;
    const Report r = run(with_cpu, R"(, "cpu": "z14")");
    const Report plain = run(without, "");
    const auto& argv = with_cpu.command_of(qemu.string()).argv;
    CHECK(std::vector<std::string>(argv.begin(), argv.begin() + 3) ==
          std::vector<std::string>{qemu.string(), "-cpu", "z14"});
    const auto& argv2 = without.command_of(qemu.string()).argv;
    CHECK(std::ranges::find(argv2, "-cpu") == argv2.end());
    const auto& e = r.steps[0].emulator;
    REQUIRE(e.has_value());
    CHECK(e->path == qemu.string());
    CHECK(e->version == "7.2.5");
    CHECK(e->cpu == "z14");
    CHECK_FALSE(e->cpu_default);
    const auto& d = plain.steps[0].emulator;
    REQUIRE(d.has_value());
    CHECK(d->cpu == "qemu"); // QEMU 7's default for s390x
    CHECK(d->cpu_default);
}
