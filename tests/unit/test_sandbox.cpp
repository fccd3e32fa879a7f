#include "known_arch.hpp"
#include "sandbox/sandbox_internal.hpp"
#include "scoped_env.hpp"
#include "skip.hpp"
#include "testdir.hpp"

#include <emurun/qemu.hpp>
#include <emurun/sandbox.hpp>

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sys/utsname.h>

namespace fs = std::filesystem;
using namespace emurun;

namespace {

bool have_emulator(const Arch& a) {
    return find_emulator(a).has_value();
}

} // namespace

TEST_CASE("sandbox: id map lines are what the kernel parses") {
    CHECK(detail::id_map_line(0, 1000) == "0 1000 1\n");
    CHECK(detail::id_map_line(0, 0, 4294967295UL) == "0 0 4294967295\n");
}

namespace {

SandboxSpec full_spec() {
    SandboxSpec spec;
    spec.arches = {test::known_arch("arm64"), test::known_arch("s390x")};
    spec.sysroots = {{test::known_arch("aarch64"), "/sr/a"}, {nullptr, "/sr/any"}};
    spec.env = {{"K", "v=1"}, {"A", ""}};
    spec.emulators.dirs = {"/opt/qemu", "/opt/q 2"};
    spec.emulators.system = false;
    spec.emulators.prefer_static = false;
    spec.emurun_exe = "/x/emurun";
    spec.cache_dir = "/c";
    spec.cpu = "max";
    return spec;
}

void check_same(const SandboxSpec& a, const SandboxSpec& b) {
    CHECK(a.arches == b.arches);
    REQUIRE(a.sysroots.size() == b.sysroots.size());
    for (std::size_t i = 0; i < a.sysroots.size(); ++i) {
        CHECK(a.sysroots[i].arch == b.sysroots[i].arch);
        CHECK(a.sysroots[i].dir == b.sysroots[i].dir);
    }
    CHECK(a.env == b.env);
    CHECK(a.emulators.dirs == b.emulators.dirs);
    CHECK(a.emulators.system == b.emulators.system);
    CHECK(a.emulators.prefer_static == b.emulators.prefer_static);
    CHECK(a.emurun_exe == b.emurun_exe);
    CHECK(a.cache_dir == b.cache_dir);
    CHECK(a.cpu == b.cpu);
}

} // namespace

TEST_CASE("sandbox: argv re-enters emurun as the helper with every part of the spec") {
    const SandboxSpec spec = full_spec();
    auto argv = sandbox_argv(spec, {"sh", "-c", "echo hi"});
    REQUIRE(argv.has_value());
    REQUIRE(argv->size() == 6);
    CHECK((*argv)[0] == "/x/emurun");
    CHECK((*argv)[1] == k_sandbox_helper_marker);
    CHECK(std::vector<std::string>(argv->begin() + 3, argv->end()) ==
          std::vector<std::string>{"sh", "-c", "echo hi"});
    for (const auto& a : *argv) { // no CLI syntax: the spec travels as data
        CHECK_FALSE(a.starts_with("--"));
    }
    auto back = detail::sandbox_spec_from_json((*argv)[2]);
    REQUIRE_MESSAGE(back.has_value(), back.error().message());
    check_same(*back, spec);
    check_same(*detail::sandbox_spec_from_json(*detail::sandbox_spec_to_json(SandboxSpec{})),
               SandboxSpec{});
    CHECK_FALSE(sandbox_argv(spec, {}).has_value());
    SandboxSpec no_arch = spec;
    no_arch.arches.clear();
    CHECK_FALSE(sandbox_argv(no_arch, {"true"}).has_value());
    SandboxSpec not_utf8 = spec;
    not_utf8.sysroots.push_back({nullptr, "/sr/\xff"});
    auto bad = sandbox_argv(not_utf8, {"true"});
    REQUIRE_FALSE(bad.has_value());
    CHECK(bad.error().hint.find("UTF-8") != std::string::npos);
}

TEST_CASE("sandbox: the helper entry point acts only on its marker and names a bad spec") {
    std::vector<std::string> args{"emurun", "sandbox", "--arch", "aarch64", "--", "true"};
    std::vector<char*> argv;
    for (auto& a : args) {
        argv.push_back(a.data());
    }
    CHECK_FALSE(run_if_sandbox_helper(static_cast<int>(argv.size()), argv.data()).has_value());
    CHECK_FALSE(run_if_sandbox_helper(1, argv.data()).has_value());
    args = {"emurun", std::string(k_sandbox_helper_marker), R"({"arches":["vax"]})", "true"};
    argv.clear();
    for (auto& a : args) {
        argv.push_back(a.data());
    }
    auto unknown = run_if_sandbox_helper(4, argv.data());
    REQUIRE(unknown.has_value());
    CHECK(unknown->exit_code == 125);
    CHECK(unknown->error.message().find("vax") != std::string::npos);
    args[2] = "{not json";
    argv[2] = args[2].data();
    auto malformed = run_if_sandbox_helper(4, argv.data());
    REQUIRE(malformed.has_value());
    CHECK(malformed->error.what == "read the sandbox spec");
    auto no_command = run_if_sandbox_helper(3, argv.data());
    REQUIRE(no_command.has_value());
    CHECK(no_command->exit_code == 125);
}

TEST_CASE("sandbox: the emurun executable comes from the spec, then $EMURUN_EXE") {
    SandboxSpec spec;
    const emurun::test::ScopedEnv exe("EMURUN_EXE", "/from/env/emurun"); // main() sets it
    auto e = find_emurun_exe(spec);
    REQUIRE(e.has_value());
    CHECK(*e == "/from/env/emurun");
    spec.emurun_exe = "/from/spec/emurun";
    CHECK(find_emurun_exe(spec).value() == "/from/spec/emurun");
}

TEST_CASE("sandbox: plan registers each arch with F and P and its emulator" * test::may_skip()) {
    const Arch* a = test::known_arch("aarch64");
    if (a == host_arch()) {
        EMURUN_SKIP("aarch64 is the host's arch: the sandbox runs it natively");
    }
    if (!have_emulator(*a)) {
        EMURUN_SKIP("no qemu-aarch64 emulator installed");
    }
    SandboxSpec spec;
    spec.arches = {a};
    spec.cache_dir = test::testdir("cache");
    auto plan = plan_sandbox(spec);
    REQUIRE_MESSAGE(plan.has_value(), plan.error().message());
    REQUIRE(plan->entries.size() == 1);
    const auto& e = plan->entries[0];
    CHECK(e.name == "qemu-aarch64");
    CHECK(e.flags.fix_binary);
    CHECK(e.flags.preserve_argv0);
    CHECK_FALSE(e.flags.credentials);
    CHECK(e.interpreter == find_emulator(*a)->path.string());
    CHECK(e.magic == a->magic);
}

TEST_CASE("sandbox: several arches share one merged loader prefix" * test::may_skip()) {
    const Arch* a = test::known_arch("aarch64");
    const Arch* p = test::known_arch("ppc64le");
    if (a == host_arch() || p == host_arch()) {
        EMURUN_SKIP("aarch64 or ppc64le is the host's arch: the sandbox runs it natively");
    }
    if (!have_emulator(*a) || !have_emulator(*p) || !fs::exists("/usr/aarch64-linux-gnu/lib") ||
        !fs::exists("/usr/powerpc64le-linux-gnu/lib")) {
        EMURUN_SKIP("needs qemu-aarch64, qemu-ppc64le and both cross sysroots in /usr");
    }
    SandboxSpec spec;
    spec.arches = {a, p};
    // Bare dirs: each is matched to its arch by the libc it holds, whatever the order.
    spec.sysroots = {{nullptr, "/usr/powerpc64le-linux-gnu"}, {nullptr, "/usr/aarch64-linux-gnu"}};
    spec.cache_dir = test::testdir("cache2");
    spec.env = {{"X", "1"}};
    auto plan = plan_sandbox(spec);
    REQUIRE_MESSAGE(plan.has_value(), plan.error().message());
    REQUIRE(plan->ld_prefix.has_value());
    const fs::path prefix = *plan->ld_prefix;
    CHECK(prefix.string().starts_with(spec.cache_dir->string()));
    CHECK(fs::exists(prefix / "lib/ld-linux-aarch64.so.1"));
    CHECK(fs::exists(prefix / "lib64/ld64.so.2"));
    CHECK(fs::exists(prefix / "lib/aarch64-linux-gnu/libc.so.6"));
    CHECK(fs::exists(prefix / "lib/powerpc64le-linux-gnu/libc.so.6"));
    REQUIRE(plan->env.size() == 2);
    CHECK(plan->env[0] == std::pair<std::string, std::string>{"QEMU_LD_PREFIX", prefix.string()});
    CHECK(plan->env[1].first == "X");
}

TEST_CASE("sandbox: a sysroot of no requested arch is a named error" * test::may_skip()) {
    const Arch* a = test::known_arch("aarch64");
    if (!have_emulator(*a) || !fs::exists("/usr/s390x-linux-gnu/lib/libc.so.6")) {
        EMURUN_SKIP("needs qemu-aarch64 and the s390x cross libc");
    }
    SandboxSpec spec;
    spec.arches = {a};
    spec.sysroots = {{nullptr, "/usr/s390x-linux-gnu"}};
    spec.cache_dir = test::testdir("cache3");
    auto plan = plan_sandbox(spec);
    REQUIRE_FALSE(plan.has_value());
    CHECK(plan.error().what.find("/usr/s390x-linux-gnu") != std::string::npos);
    CHECK(plan.error().why.find("aarch64") != std::string::npos);
    CHECK_FALSE(plan.error().hint.empty());
}

TEST_CASE("sandbox: no arch is an error, not an empty sandbox") {
    auto plan = plan_sandbox(SandboxSpec{});
    REQUIRE_FALSE(plan.has_value());
    CHECK(plan.error().why == "no arch requested");
}

TEST_CASE("sandbox: the probe agrees with the kernel" * test::may_skip()) {
    struct utsname u {};
    REQUIRE(::uname(&u) == 0);
    int major = 0;
    int minor = 0;
    std::sscanf(u.release, "%d.%d", &major, &minor);
    long max_ns = 0;
    std::ifstream("/proc/sys/user/max_user_namespaces") >> max_ns;
    // unshare(CLONE_NEWUSER) refuses multithreaded processes, and under qemu-user (the dogfood
    // run) the emulator's own threads make every process so, its forked children too.
    auto threads = std::distance(fs::directory_iterator("/proc/self/task"), {});
    if (threads > 1) {
        EMURUN_SKIP(threads << " threads here (qemu-user's own?): no user namespace");
    }
    auto r = probe_sandbox();
    if (major > 6 || (major == 6 && minor >= 7)) {
        if (max_ns > 0) {
            CHECK_MESSAGE(r.has_value(), (r ? "" : r.error().message()));
        }
    } else {
        REQUIRE_FALSE(r.has_value());
    }
    if (!r) {
        // The error names the requirement and the alternatives.
        CHECK(r.error().why.find("6.7") != std::string::npos);
        CHECK(r.error().hint.find("emurun exec") != std::string::npos);
    }
}

TEST_CASE("sandbox: a CPU model becomes QEMU_CPU before the spec's env, for one arch only") {
    SandboxSpec spec;
    spec.arches = {test::known_arch("aarch64")};
    spec.sysroots = {};
    spec.cache_dir = test::testdir("sandbox-cpu");
    spec.env = {{"QEMU_CPU", "cortex-a53"}};
    spec.cpu = "cortex-a72";
    auto plan = plan_host_handlers(spec);
    REQUIRE_MESSAGE(plan.has_value(), plan.error().message());
    auto at =
        std::ranges::find(plan->env, std::pair<std::string, std::string>{"QEMU_CPU", "cortex-a72"});
    REQUIRE(at != plan->env.end());
    CHECK(plan->env.back() == std::pair<std::string, std::string>{"QEMU_CPU", "cortex-a53"});
    spec.arches.push_back(test::known_arch("s390x"));
    auto two = plan_host_handlers(spec);
    REQUIRE_FALSE(two.has_value());
    CHECK(two.error().why.find("a model belongs to one arch") != std::string::npos);
    CHECK(two.error().field == "cpu");
    CHECK(two.error().message().ends_with("request one arch with a CPU model (option cpu))"));
}
