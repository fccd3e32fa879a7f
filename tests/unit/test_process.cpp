#include <emurun/process.hpp>

#include "process/process_supervisor.hpp"
#include "scoped_env.hpp"
#include "skip.hpp"
#include "testdir.hpp"
#include "wait_all.hpp"

#include <doctest/doctest.h>

#include <csignal>
#include <fcntl.h>
#include <fstream>
#include <sstream>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

using emurun::Command;
using emurun::ExitStatus;
using emurun::run_foreground;
using emurun::test::helper;

namespace {

std::string read_text(const std::filesystem::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

/// Run `cmd` in the foreground with this process's stdout redirected to a file (the child
/// inherits it), and return what the child printed.
std::string foreground_output(const Command& cmd, const std::string& name) {
    auto file = emurun::test::testdir("fg") / name;
    std::fflush(stdout);
    int saved = ::dup(1);
    int fd = ::open(file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ::dup2(fd, 1);
    ::close(fd);
    auto r = run_foreground(cmd);
    ::dup2(saved, 1);
    ::close(saved);
    REQUIRE(r.has_value());
    CHECK(r->success());
    return read_text(file);
}

Command helper_cmd(const std::string& name, std::vector<std::string> args = {}) {
    Command cmd;
    cmd.argv.push_back(helper(name).string());
    cmd.argv.insert(cmd.argv.end(), args.begin(), args.end());
    return cmd;
}

} // namespace

TEST_CASE("process: ExitStatus classifies and describes") {
    CHECK(ExitStatus::exited(3).describe() == "exited with 3");
    CHECK(ExitStatus::exited(3).shell_code() == 3);
    auto segv = ExitStatus::killed(SIGSEGV);
    CHECK(segv.describe() == "killed by signal 11 (Segmentation fault)");
    CHECK(segv.shell_code() == 128 + SIGSEGV);
    CHECK_FALSE(segv.code().has_value());
    CHECK(ExitStatus::killed(SIGABRT, true).describe().ends_with(", core dumped"));
}

TEST_CASE("process: foreground exit codes pass through") {
    for (int code : {0, 1, 42, 255}) {
        auto r = run_foreground(helper_cmd("exit_with", {std::to_string(code)}));
        REQUIRE(r.has_value());
        CHECK(r->code() == code);
        CHECK_FALSE(r->signal().has_value());
        CHECK(r->shell_code() == code);
    }
}

TEST_CASE("process: foreground death by signal") {
    for (int sig : {SIGTERM, SIGKILL, SIGSEGV}) {
        auto r = run_foreground(helper_cmd("kill_self", {std::to_string(sig)}));
        REQUIRE(r.has_value());
        CHECK(r->signal() == sig);
        CHECK_FALSE(r->code().has_value());
        CHECK(r->shell_code() == 128 + sig);
    }
}

TEST_CASE("process: failed exec is an Error naming the program and errno") {
    Command missing{.argv = {"/nonexistent/emurun-nope"}};
    auto r = run_foreground(missing);
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().message().starts_with(
        "execve /nonexistent/emurun-nope failed: No such file or directory"));

    auto text = emurun::test::write_file("not-exec", "just text\n");
    auto denied = run_foreground(Command{.argv = {text.string()}});
    REQUIRE_FALSE(denied.has_value());
    CHECK(denied.error().message().find("Permission denied") != std::string::npos);

    auto noexec = emurun::test::write_file("garbage", "no magic here\n");
    std::filesystem::permissions(noexec, std::filesystem::perms::owner_all);
    auto bad = run_foreground(Command{.argv = {noexec.string()}});
    REQUIRE_FALSE(bad.has_value());
    CHECK(bad.error().message().find("Exec format error") != std::string::npos);

    auto nopath = run_foreground(Command{.argv = {"emurun-no-such-program-xyz"}});
    REQUIRE_FALSE(nopath.has_value());
    CHECK(nopath.error().message().find("not found") != std::string::npos);

    auto badcwd =
        run_foreground(Command{.argv = {helper("exit_with").string()}, .cwd = "/nonexistent/dir"});
    REQUIRE_FALSE(badcwd.has_value());
    CHECK(badcwd.error().message().starts_with("chdir /nonexistent/dir failed"));
}

TEST_CASE("process: foreground child stays in our group, with default signals") {
    // Make the test process block and ignore something the child must not inherit.
    sigset_t usr1;
    sigemptyset(&usr1);
    sigaddset(&usr1, SIGUSR1);
    sigset_t old_mask;
    ::pthread_sigmask(SIG_BLOCK, &usr1, &old_mask);
    auto old_usr2 = ::signal(SIGUSR2, SIG_IGN);
    // Signal 32, which glibc refuses to sigaction(): ignored through the kernel, the child's
    // set-up (child_setup.c) must set it back the same way.
    const unsigned long ignore_32[8] = {reinterpret_cast<unsigned long>(SIG_IGN)};
    unsigned long old_32[8] = {};
    const bool set_32 = ::syscall(SYS_rt_sigaction, 32, ignore_32, old_32, _NSIG / 8) == 0;
    auto out = foreground_output(helper_cmd("print_args"), "group.txt");
    if (set_32) {
        ::syscall(SYS_rt_sigaction, 32, old_32, nullptr, _NSIG / 8);
    }
    ::signal(SIGUSR2, old_usr2);
    ::pthread_sigmask(SIG_SETMASK, &old_mask, nullptr);
    CHECK(out.find("pgid=" + std::to_string(::getpgrp()) + "\n") != std::string::npos);
    CHECK(out.find("sigblk=0000000000000000\n") != std::string::npos);
    CHECK(out.find("sigign=0000000000000000\n") != std::string::npos);
}

TEST_CASE("process: argv[0] is preserved with a program override; PATH search") {
    Command cmd{.argv = {"my-name", "a b", ""}, .program = helper("print_args")};
    auto out = foreground_output(cmd, "argv0.txt");
    CHECK(out.find("argv0=my-name\narg=a b\narg=\n") != std::string::npos);

    Command by_path{.argv = {"print_args"},
                    .env = std::map<std::string, std::string>{{"PATH", helper("").string()}}};
    CHECK(foreground_output(by_path, "path.txt").find("argv0=print_args\n") != std::string::npos);
}

TEST_CASE("process: environment replaced or inherited; cwd") {
    ::setenv("EMURUN_TEST_INHERITED", "yes", 1);
    auto inherited = foreground_output(helper_cmd("echo_env", {"EMURUN_TEST_INHERITED"}), "i.txt");
    CHECK(inherited == "EMURUN_TEST_INHERITED=yes\n");

    Command replaced = helper_cmd("echo_env");
    replaced.env = std::map<std::string, std::string>{{"ONLY", "this"}, {"EMPTY", ""}};
    // Exactly these two; their order is the kernel's or emulator's (qemu-user reverses it).
    auto only = foreground_output(replaced, "r.txt");
    CHECK((only == "EMPTY=\nONLY=this\n" || only == "ONLY=this\nEMPTY=\n"));

    auto env = emurun::current_environment();
    CHECK(env.at("EMURUN_TEST_INHERITED") == "yes");
    ::unsetenv("EMURUN_TEST_INHERITED");

    auto dir = emurun::test::testdir("cwd-here");
    Command in_dir = helper_cmd("print_args");
    in_dir.cwd = dir;
    auto out = foreground_output(in_dir, "cwd.txt");
    CHECK(out.starts_with("cwd=" + std::filesystem::canonical(dir).string() + "\n"));
}

// ---------------------------------------------------------------------------------------------
// Supervisor

namespace {

using namespace std::chrono_literals;
using emurun::ChildResult;
using emurun::SpawnOptions;
using emurun::Supervisor;

using emurun::test::wait_all;

ChildResult run_one(const Command& cmd, const SpawnOptions& options = {}) {
    Supervisor sup;
    auto id = sup.spawn(cmd, options);
    REQUIRE(id.has_value());
    auto all = wait_all(sup);
    REQUIRE(all.size() == 1);
    CHECK(all[0].id == *id);
    return all[0];
}

bool pid_alive(pid_t pid) {
    return std::filesystem::exists("/proc/" + std::to_string(pid));
}

pid_t read_pid(const std::filesystem::path& file) {
    return static_cast<pid_t>(std::stol(read_text(file)));
}

} // namespace

TEST_CASE("process: supervised exit codes, signals, exec failure") {
    for (int code : {0, 1, 42, 255}) {
        auto r = run_one(helper_cmd("exit_with", {std::to_string(code)}));
        CHECK_FALSE(r.start_error.has_value());
        CHECK(r.status.code() == code);
        CHECK_FALSE(r.timed_out);
    }
    auto killed = run_one(helper_cmd("kill_self", {std::to_string(SIGSEGV)}));
    CHECK(killed.status.signal() == SIGSEGV);
    CHECK(killed.status.shell_code() == 128 + SIGSEGV);

    auto missing = run_one(Command{.argv = {"/nonexistent/emurun-nope"}});
    REQUIRE(missing.start_error.has_value());
    CHECK(missing.start_error->message().starts_with(
        "execve /nonexistent/emurun-nope failed: No such file or directory"));
}

TEST_CASE("process: supervised child output, own process group, argv and env") {
    std::string out;
    SpawnOptions options;
    options.on_output = [&](emurun::Stream s, std::string_view chunk) {
        if (s == emurun::Stream::out) {
            out += chunk;
        }
    };
    Command cmd{.argv = {"zero", "one"},
                .env = std::map<std::string, std::string>{{"A", "1"}},
                .cwd = emurun::test::testdir("sup-cwd"),
                .program = helper("print_args")};
    auto r = run_one(cmd, options);
    CHECK(r.status.success());
    CHECK(out.find("own_group=1\n") != std::string::npos);
    CHECK(out.find("argv0=zero\narg=one\n") != std::string::npos);
    CHECK(out.find("sigblk=0000000000000000\n") != std::string::npos);
    CHECK(r.stdout_bytes == out.size());
}

TEST_CASE("process: CPU time and max RSS of the child") {
    auto cpu = run_one(helper_cmd("burn_cpu", {"0.3"}));
    CHECK(cpu.user >= 200ms);
    CHECK(cpu.wall >= cpu.user / 2); // steady clock, loosely: the machine may be busy
    auto mem = run_one(helper_cmd("alloc_mib", {"64"}));
    CHECK(mem.max_rss_kib >= 60 * 1024);
    CHECK(mem.max_rss_kib < 1024 * 1024);
}

TEST_CASE("process: a child's max RSS is its own tree's, not emurun's image") {
    // Make this process big (every page touched): a supervisor or command forked from it
    // would start with all of it resident, and RUSAGE_CHILDREN's max RSS would report it.
    constexpr std::size_t k_big = 192u << 20;
    std::vector<char> ballast(k_big);
    for (std::size_t i = 0; i < ballast.size(); i += 4096) {
        ballast[i] = static_cast<char>(i);
    }
    // The host's /bin/true, native even when these tests run emulated (dogfood): a helper
    // built for the target arch would count qemu's own ~12 MiB.
    auto r = run_one(Command{.argv = {"/bin/true"}});
    CHECK(r.status.success());
    CHECK(ballast[4096] == static_cast<char>(4096));
    CHECK(r.max_rss_kib > 0);
    CHECK(r.max_rss_kib < 10 * 1024); // the helper alone: well under 10 MiB
}

TEST_CASE("process: a missing step supervisor is a clear error, not a failed step") {
    const auto dir = emurun::test::testdir("no-supervisor");
    emurun::test::write_file("no-supervisor/emurun", "#!/bin/sh\n");
    const emurun::test::ScopedEnv exe("EMURUN_EXE", (dir / "emurun").string());
    Supervisor sup;
    auto id = sup.spawn(helper_cmd("exit_with", {"0"}));
    REQUIRE_FALSE(id.has_value());
    const std::string msg = id.error().message();
    CHECK(msg.find("emurun-supervisor is neither beside " + (dir / "emurun").string()) !=
          std::string::npos);
    CHECK(msg.find("reinstall emurun") != std::string::npos);
}

TEST_CASE("process: the supervisor's report lines") {
    using emurun::detail::parse_report;
    using emurun::detail::ReportKind;
    auto started = parse_report("S 1234");
    REQUIRE(started.has_value());
    CHECK(started->kind == ReportKind::started);
    CHECK(started->pid == 1234);
    auto failed = parse_report("E 3 2");
    REQUIRE(failed.has_value());
    CHECK(failed->kind == ReportKind::exec_failed);
    CHECK(failed->failure.stage == emurun::detail::ExecStage::chdir);
    CHECK(failed->failure.err == 2);
    auto done = parse_report("F 256 2 1 500000 0 250 4096 1");
    REQUIRE(done.has_value());
    CHECK(done->kind == ReportKind::finished);
    CHECK(done->wait_status == 256);
    CHECK(done->leftovers == 2);
    CHECK(done->user.tv_sec == 1);
    CHECK(done->user.tv_usec == 500000);
    CHECK(done->sys.tv_usec == 250);
    CHECK(done->max_rss_kib == 4096);
    CHECK(done->signalled);
    CHECK_FALSE(parse_report("F 0 0 0 0 0 0 1 0")->signalled);
    for (const char* bad : {"", "S", "S ", "S x", "S 1 2", "F 1 2 3", "X 1", "S1", "E 1 2 3",
                            "F 256 2 1 500000 0 250 4096"}) {
        CHECK_MESSAGE(!parse_report(bad).has_value(), bad);
    }
}

TEST_CASE("process: 64 MiB on both streams without deadlock, exact log counts") {
    constexpr long long k_size = 64LL << 20;
    auto log = emurun::test::testdir("logs") / "both.log";
    SpawnOptions options{.stdout_log = log, .stderr_log = log};
    auto r = run_one(
        helper_cmd("print_bytes", {std::to_string(k_size), std::to_string(k_size + 7)}), options);
    CHECK(r.status.success());
    CHECK(r.stdout_bytes == static_cast<std::uint64_t>(k_size));
    CHECK(r.stderr_bytes == static_cast<std::uint64_t>(k_size + 7));
    CHECK(std::filesystem::file_size(log) == static_cast<std::uintmax_t>(2 * k_size + 7));
}

// Whether a process can become a child subreaper (qemu-user 7.2 says EINVAL), asked in a child
// so that this process's orphans stay init's.
bool subreaper_supported() {
    pid_t pid = ::fork();
    if (pid == 0) {
        ::_exit(::prctl(PR_SET_CHILD_SUBREAPER, 1) == 0 ? 0 : 1);
    }
    int status = 0;
    return pid > 0 && ::waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
           WEXITSTATUS(status) == 0;
}

TEST_CASE("process: timeout kills a SIGTERM-ignoring grandchild and a setsid daemon" *
          emurun::test::may_skip()) {
    if (!subreaper_supported()) {
        EMURUN_SKIP("PR_SET_CHILD_SUBREAPER is not supported here (qemu-user?): leftovers that "
                    "left the process group cannot be caught");
    }
    auto dir = emurun::test::testdir("timeout");
    Supervisor sup;
    SpawnOptions options{.timeout = 300ms, .grace = 300ms};
    auto a =
        sup.spawn(helper_cmd("fork_grandchild", {"--wait", (dir / "gc.pid").string()}), options);
    auto b = sup.spawn(helper_cmd("ignore_term"), options);
    // The daemon's parent exits at once: the step ends, and its leftover must be killed.
    auto c = sup.spawn(helper_cmd("daemonize", {(dir / "daemon.pid").string()}));
    REQUIRE((a && b && c));
    auto all = wait_all(sup);
    REQUIRE(all.size() == 3);
    for (const auto& r : all) {
        if (r.id == *a) {
            CHECK(r.timed_out);
            CHECK(r.status.signal() == SIGTERM);
            CHECK(r.leftovers_killed == 1);
        } else if (r.id == *b) {
            CHECK(r.timed_out);
            CHECK(r.status.signal() == SIGKILL);
        } else {
            CHECK_FALSE(r.timed_out);
            CHECK(r.status.code() == 0);
            CHECK(r.leftovers_killed == 1);
        }
    }
    CHECK_FALSE(pid_alive(read_pid(dir / "gc.pid")));
    CHECK_FALSE(pid_alive(read_pid(dir / "daemon.pid")));
}

TEST_CASE("process: parallel children finish in any order; stop_all") {
    Supervisor sup;
    std::vector<emurun::ChildId> ids;
    // Half a second apart: under emulation a start takes a varying 0.1-0.3 s.
    for (const char* s : {"1.2", "0.1", "0.6"}) {
        auto id = sup.spawn(helper_cmd("sleep_for", {s}));
        REQUIRE(id.has_value());
        ids.push_back(*id);
    }
    auto all = wait_all(sup);
    REQUIRE(all.size() == 3);
    CHECK(all[0].id == ids[1]); // 0.1 s finishes well before 1.2 s
    CHECK(all.back().id == ids[0]);

    auto x = sup.spawn(helper_cmd("sleep_for", {"30"}));
    bool ready = false;
    auto y = sup.spawn(helper_cmd("ignore_term"),
                       SpawnOptions{.on_output =
                                        [&ready](emurun::Stream, std::string_view s) {
                                            ready = ready || s.find("ready") != s.npos;
                                        },
                                    .grace = 200ms});
    REQUIRE((x && y));
    // SIGTERM must find ignore_term's SIG_IGN in place; under emulation it starts slowly.
    for (int i = 0; i < 100 && !ready; ++i) {
        auto early = sup.wait_any(100ms);
        REQUIRE(early.has_value());
        CHECK(early->empty());
    }
    CHECK(ready);
    CHECK(sup.running() == 2);
    sup.stop_all();
    for (const auto& r : wait_all(sup)) {
        CHECK(r.stopped);
        CHECK_FALSE(r.timed_out);
        CHECK(r.status.signal() == (r.id == *x ? SIGTERM : SIGKILL));
    }
}

TEST_CASE("process: 1 GiB on both streams" * emurun::test::stress()) {
    constexpr long long k_size = 1LL << 30;
    std::uint64_t seen = 0;
    SpawnOptions options{
        .on_output = [&](emurun::Stream, std::string_view c) { seen += c.size(); }};
    auto r = run_one(helper_cmd("print_bytes", {std::to_string(k_size), std::to_string(k_size)}),
                     options);
    CHECK(r.status.success());
    CHECK(r.stdout_bytes == static_cast<std::uint64_t>(k_size));
    CHECK(r.stderr_bytes == static_cast<std::uint64_t>(k_size));
    CHECK(seen == static_cast<std::uint64_t>(2 * k_size));
    MESSAGE("2 GiB streamed in " << std::chrono::duration<double>(r.wall).count() << " s");
}

namespace {
volatile std::sig_atomic_t g_usr1_seen = 0;
extern "C" void on_usr1(int) {
    g_usr1_seen = 1;
}
} // namespace

TEST_CASE("process: a signal pending before wait_any interrupts it (ppoll sigmask)") {
    sigset_t usr1;
    sigemptyset(&usr1);
    sigaddset(&usr1, SIGUSR1);
    sigset_t old_mask;
    ::pthread_sigmask(SIG_BLOCK, &usr1, &old_mask);
    struct sigaction sa {};
    sa.sa_handler = on_usr1;
    struct sigaction old_sa {};
    ::sigaction(SIGUSR1, &sa, &old_sa);
    g_usr1_seen = 0;
    ::raise(SIGUSR1); // stays pending: blocked outside the wait
    Supervisor sup;
    sigset_t during = old_mask;
    sigdelset(&during, SIGUSR1);
    sup.set_wait_sigmask(during);
    REQUIRE(sup.spawn(helper_cmd("sleep_for", {"20"})).has_value());
    auto got = sup.wait_any(); // would block 20 s if the pending signal were lost
    REQUIRE(got.has_value());
    CHECK(got->empty());
    CHECK(g_usr1_seen == 1);
    CHECK(sup.running() == 1);
    ::sigaction(SIGUSR1, &old_sa, nullptr);
    ::pthread_sigmask(SIG_SETMASK, &old_mask, nullptr);
} // ~Supervisor kills the sleeper
