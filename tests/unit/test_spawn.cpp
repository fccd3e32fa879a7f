// The process module's one way to start a child (Boost.Process v2's launcher with our child
// set-up) and the probe runners built on it.
#include "process/spawn.hpp"

#include "testdir.hpp"

#include <doctest/doctest.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <sstream>
#include <sys/wait.h>
#include <unistd.h>

using emurun::Command;
using emurun::detail::ChildSetup;
using emurun::detail::spawn_process;
using emurun::test::helper;

namespace {

std::string read_all(int fd) {
    std::string out;
    char buf[4096];
    for (;;) {
        ssize_t n = ::read(fd, buf, sizeof buf);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            return out;
        }
        out.append(buf, static_cast<std::size_t>(n));
    }
}

/// Start `cmd` with stdout into a pipe (plus `setup`), and return its output and wait status.
std::pair<std::string, int> run_piped(const Command& cmd, ChildSetup setup = {}) {
    int p[2];
    REQUIRE(::pipe2(p, O_CLOEXEC) == 0);
    setup.stdout_fd = p[1];
    auto pid = spawn_process(cmd, setup);
    ::close(p[1]);
    std::string out = read_all(p[0]);
    ::close(p[0]);
    REQUIRE_MESSAGE(pid.has_value(), (pid ? "" : pid.error().message()));
    auto status = emurun::detail::reap(*pid);
    REQUIRE(status.has_value());
    return {out, *status};
}

/// True when this process has a child that ended and was not reaped (a zombie).
bool has_zombie_child() {
    siginfo_t info{};
    return ::waitid(P_ALL, 0, &info, WEXITED | WNOHANG | WNOWAIT) == 0 && info.si_pid != 0;
}

std::string read_text(const std::filesystem::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

} // namespace

TEST_CASE("spawn: execve and chdir failures are told apart, and leave no zombie") {
    auto missing = spawn_process(Command{.argv = {"/nonexistent/emurun-nope"}}, {});
    REQUIRE_FALSE(missing.has_value());
    CHECK(missing.error().message().starts_with(
        "execve /nonexistent/emurun-nope failed: No such file or directory"));
    CHECK_FALSE(has_zombie_child());

    auto badcwd = spawn_process(
        Command{.argv = {helper("exit_with").string()}, .cwd = "/nonexistent/dir"}, {});
    REQUIRE_FALSE(badcwd.has_value());
    CHECK(badcwd.error().message().starts_with(
        "chdir /nonexistent/dir failed: No such file or directory"));
    CHECK_FALSE(has_zombie_child());

    auto text = emurun::test::write_file("spawn-not-exec", "just text\n");
    auto denied = spawn_process(Command{.argv = {text.string()}}, {});
    REQUIRE_FALSE(denied.has_value());
    CHECK(denied.error().message().starts_with("execve " + text.string() +
                                               " failed: Permission denied"));
    CHECK_FALSE(has_zombie_child());
}

TEST_CASE("spawn: a failed child does not flush emurun's stdio buffers again") {
    // Boost's launcher ends a failed child with exit(), which would write this unflushed
    // line a second time from the child's copy of the buffer; ours _exit()s.
    auto file = emurun::test::testdir("spawn-flush") / "out.txt";
    FILE* f = std::fopen(file.c_str(), "w");
    REQUIRE(f != nullptr);
    std::fputs("once\n", f);
    auto r = spawn_process(Command{.argv = {"/nonexistent/emurun-nope"}}, {});
    CHECK_FALSE(r.has_value());
    std::fclose(f);
    CHECK(read_text(file) == "once\n");
}

TEST_CASE("spawn: argv[0] kept, environment exact, process group as asked") {
    Command named{.argv = {"my-name", "a b", ""}, .program = helper("print_args")};
    auto [out, status] = run_piped(named);
    CHECK(status == 0);
    CHECK(out.find("argv0=my-name\narg=a b\narg=\n") != std::string::npos);
    CHECK(out.find("pgid=" + std::to_string(::getpgrp()) + "\n") != std::string::npos);
    CHECK(out.find("sigign=0000000000000000\n") != std::string::npos);

    auto [grouped, gstatus] = run_piped(named, ChildSetup{.new_process_group = true});
    CHECK(gstatus == 0);
    CHECK(grouped.find("own_group=1\n") != std::string::npos);

    Command env_cmd{.argv = {helper("echo_env").string()},
                    .env = std::map<std::string, std::string>{{"ONLY", "this"}}};
    CHECK(run_piped(env_cmd).first == "ONLY=this\n");
}

TEST_CASE("spawn: no descriptor of emurun leaks into the child") {
    auto marker = emurun::test::write_file("spawn-leak-marker", "x");
    int leaked = ::open(marker.c_str(), O_RDONLY); // deliberately without O_CLOEXEC
    REQUIRE(leaked >= 0);
    int high = ::fcntl(leaked, F_DUPFD, 100); // and one far above the launcher's error pipe
    REQUIRE(high >= 100);
    const auto piped = run_piped(Command{.argv = {helper("list_fds").string()}});
    const std::string& out = piped.first; // (not a structured binding: CHECK_MESSAGE captures it)
    const int status = piped.second;
    ::close(leaked);
    ::close(high);
    CHECK(status == 0);
    CHECK(out.find("fd 1 -> pipe:") != std::string::npos);
    CHECK_MESSAGE(out.find("spawn-leak-marker") == std::string::npos, out);
}

TEST_CASE("spawn: run_captured captures stdout, kills at the time limit, names exec errors") {
    using namespace std::chrono_literals;
    auto ok = emurun::detail::run_captured(Command{.argv = {helper("print_args").string(), "x"}},
                                           {.timeout = 20s});
    REQUIRE(ok.has_value());
    CHECK_FALSE(ok->start_error.has_value());
    CHECK(ok->status.success());
    CHECK(ok->out.find("own_group=1\n") != std::string::npos);
    CHECK(ok->out.find("arg=x\n") != std::string::npos);

    auto start = std::chrono::steady_clock::now();
    auto slow = emurun::detail::run_captured(Command{.argv = {helper("sleep_for").string(), "20"}},
                                             {.timeout = 300ms});
    REQUIRE(slow.has_value());
    CHECK(slow->timed_out);
    CHECK(slow->status.signal() == SIGKILL);
    CHECK(std::chrono::steady_clock::now() - start < 10s);

    auto garbage = emurun::test::write_file("spawn-garbage", "no magic here\n");
    std::filesystem::permissions(garbage, std::filesystem::perms::owner_all);
    auto bad = emurun::detail::run_captured(Command{.argv = {garbage.string()}}, {});
    REQUIRE(bad.has_value());
    REQUIRE(bad->start_error.has_value());
    CHECK(bad->start_errno == ENOEXEC);
    CHECK(bad->start_error->message().find("Exec format error") != std::string::npos);
    CHECK_FALSE(has_zombie_child());
}

TEST_CASE("spawn: run_captured merges stderr into the capture only when asked") {
    using namespace std::chrono_literals;
    const Command both{.argv = {helper("print_bytes").string(), "3", "5"}};
    auto merged = emurun::detail::run_captured(both, {.timeout = 20s, .merge_stderr = true});
    REQUIRE(merged.has_value());
    CHECK(merged->status.success());
    CHECK(merged->out.size() == 8);
    auto apart = emurun::detail::run_captured(both, {.timeout = 20s});
    REQUIRE(apart.has_value());
    CHECK(apart->out.size() == 3);
}

TEST_CASE("spawn: run_tar runs tar from PATH, its output and status the caller's to tell") {
    using namespace std::chrono_literals;
    auto dir = emurun::test::testdir("run-tar");
    auto version = emurun::detail::run_tar({"--version"}, {.timeout = 20s});
    REQUIRE_MESSAGE(version.has_value(), (version ? "" : version.error().message()));
    CHECK(version->status.success());
    CHECK(version->out.find("tar") != std::string::npos);
    const std::string missing = (dir / "missing.tar").string();
    auto failed = emurun::detail::run_tar({"-t", "-f", missing}, {.timeout = 20s});
    REQUIRE(failed.has_value());
    CHECK_FALSE(failed->status.success());
    CHECK(failed->out.empty()); // its message went to stderr, inherited
    auto said =
        emurun::detail::run_tar({"-t", "-f", missing}, {.timeout = 20s, .merge_stderr = true});
    REQUIRE(said.has_value());
    CHECK(said->out.find("missing.tar") != std::string::npos);
}

TEST_CASE("spawn: run_captured with stop_on_interrupt stops the child on SIGTERM, pending too") {
    // `emurun run --pack` went on packing for 44 s after SIGTERM and exited 0.
    using namespace std::chrono_literals;
    sigset_t term, old;
    sigemptyset(&term);
    sigaddset(&term, SIGTERM);
    REQUIRE(::pthread_sigmask(SIG_BLOCK, &term, &old) == 0);
    ::raise(SIGTERM); // pending in this thread, as emurun run keeps it while loading
    const auto start = std::chrono::steady_clock::now();
    auto run = emurun::detail::run_captured(Command{.argv = {helper("sleep_for").string(), "20"}},
                                            {.timeout = 20s, .stop_on_interrupt = true});
    sigset_t pending;
    sigemptyset(&pending);
    ::sigpending(&pending);
    const bool still_pending = sigismember(&pending, SIGTERM) == 1;
    if (still_pending) {
        timespec now{};
        ::sigtimedwait(&term, nullptr, &now);
    }
    ::pthread_sigmask(SIG_SETMASK, &old, nullptr);
    REQUIRE(run.has_value());
    CHECK(run->interrupted_by == SIGTERM);
    CHECK_FALSE(run->timed_out);
    CHECK(run->status.signal() == SIGTERM);
    CHECK(std::chrono::steady_clock::now() - start < 10s);
    CHECK_FALSE(still_pending); // taken: the caller knows it from interrupted_by
    CHECK_FALSE(has_zombie_child());
}

TEST_CASE("spawn: run_forked returns the report and the exit status") {
    auto r = emurun::detail::run_forked([](int fd) {
        const char text[] = "hello";
        [[maybe_unused]] auto n = ::write(fd, text, 5);
        return 7;
    });
    REQUIRE(r.has_value());
    CHECK(r->report == "hello");
    CHECK(r->status.code() == 7);
}

TEST_CASE("spawn: the supervisor reports a chdir failure as such") {
    emurun::Supervisor sup;
    auto id = sup.spawn(Command{.argv = {helper("exit_with").string()}, .cwd = "/nonexistent/dir"});
    REQUIRE(id.has_value());
    std::vector<emurun::ChildResult> done;
    for (int i = 0; i < 300 && done.empty(); ++i) {
        auto got = sup.wait_any(std::chrono::milliseconds(100));
        REQUIRE(got.has_value());
        done = *got;
    }
    REQUIRE(done.size() == 1);
    REQUIRE(done[0].start_error.has_value());
    CHECK(done[0].start_error->message().starts_with(
        "chdir /nonexistent/dir failed: No such file or directory"));
}
