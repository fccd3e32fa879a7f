// sandbox: whether the host's binfmt_misc handlers can stand in for a sandbox (auto mode), on a
// fake binfmt_misc directory: entry files as the kernel shows them.
#include <emurun/sandbox.hpp>

#include "elf_builder.hpp"
#include "skip.hpp"
#include "testdir.hpp"

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace emurun;
namespace fs = std::filesystem;

namespace {

constexpr const char* k_aarch64 = "offset 0\nmagic 7f454c460201010000000000000000000200b700\n"
                                  "mask ffffffffffffff00fffffffffffffffffeffffff\n";

fs::path emulator(const fs::path& dir, const std::string& name, bool is_static) {
    test::ElfSpec spec;
    if (is_static) {
        spec.interp.clear();
        spec.dynamic = false;
    }
    auto b = test::build_elf(spec);
    fs::create_directories(dir);
    const fs::path p = dir / name;
    std::ofstream(p, std::ios::binary)
        .write(reinterpret_cast<const char*>(b.bytes.data()),
               static_cast<std::streamsize>(b.bytes.size()));
    ::chmod(p.c_str(), 0755);
    return p;
}

fs::path fake_mount(const std::string& name, const fs::path& interp, const std::string& flags) {
    const fs::path m = test::testdir(name);
    std::ofstream(m / "register") << "";
    std::ofstream(m / "status") << "enabled\n";
    std::ofstream(m / "qemu-aarch64")
        << "enabled\ninterpreter " << interp.string() << "\nflags: " << flags << "\n"
        << k_aarch64;
    return m;
}

} // namespace

TEST_CASE("auto mode: host handlers stand in only when sane for every arch") {
    const fs::path bin = test::testdir("auto-bin");
    const auto st = emulator(bin, "qemu-aarch64-static", true);
    const auto dyn = emulator(bin, "qemu-aarch64", false);
    const Arch* aarch64 = *find_arch("aarch64");
    const Arch* s390x = *find_arch("s390x");

    CHECK(host_binfmt_covers({aarch64}, fake_mount("auto-static", st, "OPF")).has_value());
    CHECK(host_binfmt_covers({aarch64}, fake_mount("auto-dyn-f", dyn, "POCF")).has_value());
    CHECK(host_binfmt_covers({aarch64}, fake_mount("auto-static-p", st, "P")).has_value());

    auto no_f = host_binfmt_covers({aarch64}, fake_mount("auto-dyn-p", dyn, "P"));
    REQUIRE_FALSE(no_f.has_value());
    CHECK(no_f.error().why.find("no usable handler for aarch64") != std::string::npos);
    CHECK(no_f.error().hint.find("emurun binfmt register aarch64") != std::string::npos);

    auto partial = host_binfmt_covers({aarch64, s390x}, fake_mount("auto-part", st, "PF"));
    REQUIRE_FALSE(partial.has_value());
    CHECK(partial.error().why.find("no usable handler for s390x") != std::string::npos);

    auto none = host_binfmt_covers({aarch64}, test::testdir("auto-missing") / "nothing");
    REQUIRE_FALSE(none.has_value());
    CHECK(none.error().why.find("aarch64") != std::string::npos);
}

TEST_CASE("auto mode: the host-handler fallback needs no emulator, only the sandbox's env" *
          test::may_skip()) {
    if (*find_arch("aarch64") == host_arch()) {
        EMURUN_SKIP("aarch64 is the host's arch: the sandbox runs it natively");
    }
    SandboxSpec spec;
    spec.arches = {*find_arch("aarch64")};
    spec.emulators.dirs = {test::testdir("host-env-no-qemu")}; // no emulator anywhere here
    spec.emulators.system = false;
    spec.cache_dir = test::testdir("host-env-cache");
    spec.env = {{"QEMU_STRACE", "1"}};
    CHECK_FALSE(plan_sandbox(spec).has_value()); // the sandbox registers an emulator
    auto plan = plan_host_handlers(spec);        // the host's handlers bring their own
    REQUIRE(plan.has_value());
    CHECK(plan->entries.empty());
    REQUIRE_FALSE(plan->env.empty());
    CHECK(plan->env.back() == std::pair<std::string, std::string>{"QEMU_STRACE", "1"});

    spec.sysroots = {SandboxSysroot{nullptr, test::testdir("host-env-empty-sysroot")}};
    auto bad = plan_host_handlers(spec);
    REQUIRE_FALSE(bad.has_value());
    CHECK(bad.error().why.find("holds no libc.so.6") != std::string::npos);
    CHECK_FALSE(plan_host_handlers(SandboxSpec{}).has_value());
}

TEST_CASE("auto mode: the kernel's answer is a seam; sandbox when it says yes, else the host's") {
    const fs::path bin = test::testdir("auto-seam-bin");
    const auto st = emulator(bin, "qemu-aarch64-static", true);
    const Arch* aarch64 = *find_arch("aarch64");
    const SandboxProbe yes = [] { return Result<void>{}; };
    const SandboxProbe no = [] {
        return Result<void>(fail("unshare(CLONE_NEWUSER)", "No space left on device"));
    };
    const fs::path sane = fake_mount("auto-seam-sane", st, "PF");
    const fs::path empty = test::testdir("auto-seam-empty");

    CHECK(choose_auto_mode({aarch64}, empty, yes) == AutoMode::sandbox);
    CHECK(choose_auto_mode({aarch64}, sane, no) == AutoMode::host);
    auto neither = choose_auto_mode({aarch64}, empty, no);
    REQUIRE_FALSE(neither.has_value());
    CHECK(neither.error().why.find("no private binfmt_misc here (unshare(CLONE_NEWUSER): No space "
                                   "left on device)") != std::string::npos);
    CHECK(neither.error().hint.find("Linux >= 6.7") != std::string::npos);
}

TEST_CASE("auto mode: the host fallback's warnings go to the caller's sink, nowhere else" *
          test::may_skip()) {
    if (*find_arch("aarch64") == host_arch()) {
        EMURUN_SKIP("aarch64 is the host's arch: the sandbox runs it natively");
    }
    // exec_through_host_handlers() sets the plan's env and execs: run it in a child, which
    // reports what its sink received through a pipe.
    int fds[2];
    REQUIRE(::pipe(fds) == 0);
    const pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        ::close(fds[0]);
        std::string got;
        SandboxSpec spec;
        spec.arches = {*find_arch("aarch64")};
        spec.cache_dir = test::testdir("sink-cache");
        spec.diagnostics = [&got](const Diagnostic& d) {
            got += (d.severity == Severity::warning ? "W " : "? ") + d.text + "\n";
        };
        const auto failure = exec_through_host_handlers(spec, {"/nonexistent/emurun-unit-cmd"});
        got += "exit " + std::to_string(failure.exit_code) + "\n";
        (void)!::write(fds[1], got.data(), got.size());
        ::_exit(0);
    }
    ::close(fds[1]);
    std::string got;
    char buf[4096];
    for (ssize_t n; (n = ::read(fds[0], buf, sizeof buf)) > 0;) {
        got.append(buf, static_cast<std::size_t>(n));
    }
    ::close(fds[0]);
    int status = 0;
    ::waitpid(pid, &status, 0);
    CHECK(got.starts_with("W this kernel has no private binfmt_misc for a sandbox; running "
                          "through the host's binfmt_misc handlers"));
    CHECK(got.ends_with("exit 127\n"));
}
