// exec_replace: the process becomes the program (same pid), so its parent sees the program's
// exit code or fatal signal itself; failures before the exec come back as an Error.
#include <emurun/process.hpp>

#include "testdir.hpp"

#include <doctest/doctest.h>

#include <cerrno>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <sys/wait.h>
#include <unistd.h>

using emurun::Command;
using emurun::exec_replace;
using emurun::test::helper;

namespace {

/// Fork; the child calls exec_replace(cmd) (exit 126 if it returns). Returns the child's pid
/// and raw wait status.
std::pair<pid_t, int> replaced_child(const Command& cmd) {
    std::fflush(nullptr);
    const pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        (void)exec_replace(cmd);
        ::_exit(126);
    }
    int status = 0;
    REQUIRE(::waitpid(pid, &status, 0) == pid);
    return {pid, status};
}

} // namespace

TEST_CASE("process: exec_replace keeps the pid and passes exit codes and signals") {
    auto [pid, exited] = replaced_child(Command{.argv = {helper("exit_with").string(), "42"}});
    REQUIRE(WIFEXITED(exited));
    CHECK(WEXITSTATUS(exited) == 42);

    for (int sig : {SIGTERM, SIGSEGV}) {
        auto [kpid, killed] =
            replaced_child(Command{.argv = {helper("kill_self").string(), std::to_string(sig)}});
        REQUIRE(WIFSIGNALED(killed));
        CHECK(WTERMSIG(killed) == sig);
    }

    const auto out = emurun::test::testdir("replace") / "pid.txt";
    auto [spid, status] = replaced_child(
        Command{.argv = {"sh", "-c", "echo $$ > \"$0\"", out.string()}, .cwd = out.parent_path()});
    REQUIRE(WIFEXITED(status));
    std::ifstream in(out);
    pid_t seen = 0;
    in >> seen;
    CHECK(seen == spid);
}

TEST_CASE("process: exec_replace returns an Error when it cannot exec") {
    auto missing = exec_replace(Command{.argv = {"/nonexistent/emurun-nope"}});
    CHECK(missing.error.message().starts_with(
        "execve /nonexistent/emurun-nope failed: No such file or directory"));
    CHECK(missing.shell_code(125) == 127);
    auto nopath = exec_replace(Command{.argv = {"emurun-no-such-program-xyz"}});
    CHECK(nopath.error.message().find("not found") != std::string::npos);
    CHECK(nopath.err == ENOENT);
    CHECK(nopath.shell_code(125) == 127);
    auto badcwd =
        exec_replace(Command{.argv = {helper("exit_with").string()}, .cwd = "/nonexistent/dir"});
    CHECK(badcwd.error.message().starts_with("chdir /nonexistent/dir failed"));
    CHECK(badcwd.err == ENOENT);
    auto empty = exec_replace(Command{.argv = {}});
    CHECK(empty.err == EINVAL);
    CHECK(empty.shell_code(125) == 125);
}

TEST_CASE("process: exec_replace fails with 126 for a file that is not executable, and does not "
          "run a script without #! under /bin/sh (unlike execvp)") {
    const auto dir = emurun::test::testdir("replace_126");
    const auto plain = dir / "plain.txt";
    std::ofstream(plain) << "echo hi\n";
    auto refused = exec_replace(Command{.argv = {plain.string()}});
    CHECK(refused.err == EACCES);
    CHECK(refused.shell_code(125) == 126);

    const auto script = dir / "no_shebang.sh";
    std::ofstream(script) << "exit 7\n";
    std::filesystem::permissions(script, std::filesystem::perms::owner_all);
    auto [pid, status] = replaced_child(Command{.argv = {script.string()}});
    REQUIRE(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 126); // the helper's code when exec_replace returned
    auto noexec = exec_replace(Command{.argv = {script.string()}});
    CHECK(noexec.err == ENOEXEC);
    CHECK(noexec.shell_code(125) == 126);
}
