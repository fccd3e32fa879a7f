// The supervisor server (process_supervisor.hpp, SupervisorServer): from a Supervisor's second
// step on, each step's supervisor is forked by one long-lived `emurun-supervisor --serve`
// instead of being started as a program. These cases run the behaviours the first-step cases
// of test_process.cpp check through a Supervisor that has already started a step, so they
// cover the server's path; where clone3 is missing (qemu-user runs these tests emulated) the
// Supervisor starts every helper itself, and the cases that look at the server skip.
#include <emurun/process.hpp>

#include "skip.hpp"
#include "testdir.hpp"
#include "wait_all.hpp"

#include <doctest/doctest.h>

#include <cerrno>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

using namespace std::chrono_literals;
using emurun::ChildResult;
using emurun::Command;
using emurun::SpawnOptions;
using emurun::Supervisor;
using emurun::test::helper;

namespace {

/// True when this kernel (not an emulator) offers clone3, which the server forks with.
bool clone3_available() {
#ifdef SYS_clone3
    // A too-small argument: EINVAL when clone3 exists, ENOSYS when it does not.
    return ::syscall(SYS_clone3, nullptr, 0) < 0 && errno != ENOSYS;
#else
    return false;
#endif
}

/// Runs `cmd` to its end on `sup` and returns its result and its stdout.
std::pair<ChildResult, std::string> run_on(Supervisor& sup, const Command& cmd,
                                           SpawnOptions options = {}) {
    std::string out;
    options.on_output = [&out](emurun::Stream s, std::string_view chunk) {
        if (s == emurun::Stream::out) {
            out += chunk;
        }
    };
    auto id = sup.spawn(cmd, options);
    REQUIRE(id.has_value());
    auto all = emurun::test::wait_all(sup);
    REQUIRE(all.size() == 1);
    return {all[0], out};
}

/// A Supervisor that has started (and finished) one step: the next ones use the server.
void warm_up(Supervisor& sup) {
    auto [r, out] = run_on(sup, Command{.argv = {"/bin/true"}});
    REQUIRE(r.status.success());
}

Command helper_cmd(const std::string& name, std::vector<std::string> args = {}) {
    Command cmd{.argv = {helper(name).string()}};
    cmd.argv.insert(cmd.argv.end(), args.begin(), args.end());
    return cmd;
}

/// What a step tells about its parent, the step's supervisor: its command line and its ppid.
const char* const k_parent_facts = "tr '\\0' ' ' </proc/$PPID/cmdline; echo; "
                                   "sed 's/.*) . \\([0-9]*\\) .*/\\1/' /proc/$PPID/stat";

/// The server: a child of this process whose command line is `emurun-supervisor --serve`; -1
/// when there is none (no clone3, or not started yet).
pid_t find_server() {
    for (const auto& e : std::filesystem::directory_iterator("/proc")) {
        std::ifstream cmdline(e.path() / "cmdline");
        std::string text((std::istreambuf_iterator<char>(cmdline)), {});
        std::ifstream stat(e.path() / "stat");
        std::string line;
        std::getline(stat, line);
        const auto paren = line.rfind(')');
        if (text.find(std::string("--serve") + '\0') != std::string::npos &&
            paren != std::string::npos && paren + 4 < line.size() &&
            std::stol(line.substr(paren + 4)) == static_cast<long>(::getpid())) {
            return std::stoi(e.path().filename().string());
        }
    }
    return -1;
}

} // namespace

TEST_CASE("process server: later steps' supervisors are forked by one server, as this "
          "process's children" *
          emurun::test::may_skip()) {
    Supervisor sup;
    const Command facts{.argv = {"/bin/sh", "-c", k_parent_facts}};
    std::vector<std::string> lines;
    for (int i = 0; i < 3; ++i) {
        auto [r, out] = run_on(sup, facts);
        REQUIRE(r.status.success());
        lines.push_back(out);
    }
    // Under qemu-user (these tests emulated) this process may lack clone3 while the helper,
    // a host program, has it: the server exists then too. Without either, nothing to look at.
    if (!clone3_available() && find_server() <= 0) {
        EMURUN_SKIP("clone3 is not available here (qemu-user?): every supervisor is started "
                    "as a program, there is no server to look at");
    }
    const std::string me = std::to_string(::getpid());
    // The first step's supervisor was started with the step in its arguments (CWD "" = stay)
    CHECK(lines[0].find("emurun-supervisor  /bin/sh /bin/sh -c") != std::string::npos);
    CHECK(lines[0].ends_with("\n" + me + "\n"));
    // ... the later ones were forked by the server ("--serve", renamed "--step" so that ps
    // tells them from the server), yet are our children.
    for (int i = 1; i < 3; ++i) {
        INFO("step " << i << ": " << lines[i]);
        CHECK(lines[i].find("emurun-supervisor --step  \n") != std::string::npos);
        CHECK(lines[i].ends_with("\n" + me + "\n"));
    }
}

TEST_CASE("process server: exit codes, signals, exec failure, argv, env, cwd, own group") {
    Supervisor sup;
    warm_up(sup);
    for (int code : {0, 3, 255}) {
        auto [r, out] = run_on(sup, helper_cmd("exit_with", {std::to_string(code)}));
        CHECK_FALSE(r.start_error.has_value());
        CHECK(r.status.code() == code);
    }
    auto [killed, ko] = run_on(sup, helper_cmd("kill_self", {std::to_string(SIGSEGV)}));
    CHECK(killed.status.signal() == SIGSEGV);
    auto [missing, mo] = run_on(sup, Command{.argv = {"/nonexistent/emurun-nope"}});
    REQUIRE(missing.start_error.has_value());
    CHECK(missing.start_error->message().starts_with(
        "execve /nonexistent/emurun-nope failed: No such file or directory"));

    const auto dir = emurun::test::testdir("server-cwd");
    Command cmd{.argv = {"zero", "", "two words"},
                .env = std::map<std::string, std::string>{{"A", "1"}},
                .cwd = dir,
                .program = helper("print_args")};
    auto [r, out] = run_on(sup, cmd);
    CHECK(r.status.success());
    CHECK(out.starts_with("cwd=" + std::filesystem::canonical(dir).string() + "\n"));
    CHECK(out.find("own_group=1\n") != std::string::npos);
    CHECK(out.find("argv0=zero\narg=\narg=two words\n") != std::string::npos);
    CHECK(out.find("sigblk=0000000000000000\n") != std::string::npos);
    CHECK(out.find("sigign=0000000000000000\n") != std::string::npos);

    auto [env, eo] = run_on(sup, Command{.argv = {"/bin/sh", "-c", "echo \"A=$A B=${B-unset}\""},
                                         .env = std::map<std::string, std::string>{{"A", "x y"}}});
    CHECK(eo == "A=x y B=unset\n");
}

TEST_CASE("process server: a step without a cwd runs in this process's cwd of the moment") {
    Supervisor sup;
    warm_up(sup);
    const auto before = std::filesystem::current_path();
    const auto dir = emurun::test::testdir("server-moved");
    std::filesystem::current_path(dir);
    auto [r, out] = run_on(sup, Command{.argv = {"/bin/pwd", "-P"}});
    std::filesystem::current_path(before);
    CHECK(r.status.success());
    CHECK(out == std::filesystem::canonical(dir).string() + "\n");
}

TEST_CASE("process server: CPU time, max RSS and stdin of a later step") {
    Supervisor sup;
    warm_up(sup);
    auto [cpu, co] = run_on(sup, helper_cmd("burn_cpu", {"0.3"}));
    CHECK(cpu.user >= 200ms);
    auto [mem, mo] = run_on(sup, helper_cmd("alloc_mib", {"64"}));
    CHECK(mem.max_rss_kib >= 60 * 1024);
    CHECK(mem.max_rss_kib < 1024 * 1024);
    auto [small, so] = run_on(sup, Command{.argv = {"/bin/true"}});
    CHECK(small.max_rss_kib < 10 * 1024); // a fork of the small server, not of this process
    // stdin_null: the step reads /dev/null, not this process's stdin.
    SpawnOptions null_in;
    null_in.stdin_null = true;
    auto [in, io] = run_on(sup, Command{.argv = {"/bin/sh", "-c", "wc -c"}}, null_in);
    CHECK(io == "0\n");
}

TEST_CASE("process server: a killed server costs nothing: the next step starts its helper") {
    Supervisor sup;
    warm_up(sup);
    auto [r1, o1] = run_on(sup, Command{.argv = {"/bin/sh", "-c", "echo $PPID"}});
    REQUIRE(r1.status.success());
    const pid_t server = find_server();
    CHECK((server > 0 || !clone3_available())); // none without clone3: nothing to kill then
    if (server > 0) {
        REQUIRE(::kill(server, SIGKILL) == 0);
        ::usleep(50'000);
    }
    for (int i = 0; i < 3; ++i) {
        auto [r, out] = run_on(sup, helper_cmd("exit_with", {"7"}));
        CHECK_FALSE(r.start_error.has_value());
        CHECK(r.status.code() == 7);
    }
}

TEST_CASE("process server: a stopped server is woken for the next step, without a wait") {
    Supervisor sup;
    warm_up(sup);
    warm_up(sup); // the server now exists
    const pid_t server = find_server();
    CHECK((server > 0 || !clone3_available()));
    if (server > 0) {
        REQUIRE(::kill(server, SIGSTOP) == 0); // what `kill -STOP` from a step does
    }
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < 3; ++i) {
        auto [r, out] = run_on(sup, helper_cmd("exit_with", {"5"}));
        CHECK_FALSE(r.start_error.has_value());
        CHECK(r.status.code() == 5);
    }
    CHECK(std::chrono::steady_clock::now() - start < 1500ms);
}

TEST_CASE("process server: a server kept stopped costs one step at most, never a hang" *
          emurun::test::may_skip()) {
    Supervisor sup;
    warm_up(sup);
    warm_up(sup);
    const pid_t server = find_server();
    CHECK((server > 0 || !clone3_available()));
    if (server <= 0) {
        EMURUN_SKIP("no supervisor server here (clone3 is not available: qemu-user?): every "
                    "supervisor is started as a program, there is no server to stop");
    }
    // Stop the server again and again while the next steps are asked for.
    std::jthread stopper([server](const std::stop_token& token) { // joined on every exit
        while (!token.stop_requested()) {
            ::kill(server, SIGSTOP);
            std::this_thread::sleep_for(100us);
        }
    });
    int started = 0;
    std::string refused;
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < 4; ++i) {
        auto id = sup.spawn(helper_cmd("exit_with", {"0"}));
        if (!id) {
            refused = id.error().message();
            continue;
        }
        for (const auto& r : emurun::test::wait_all(sup)) {
            started += !r.start_error && r.status.code() == 0 ? 1 : 0;
        }
    }
    stopper.request_stop();
    stopper.join();
    CHECK(started >= 3); // at most the one step that was asked when the server stalled
    if (!refused.empty()) {
        CHECK(refused.find("emurun-supervisor --serve) did not answer within 2 s") !=
              std::string::npos);
    }
    CHECK(std::chrono::steady_clock::now() - start < 6s);
    // A supervisor the stalled server may have forked is not left behind, not even a zombie.
    siginfo_t info{};
    CHECK_FALSE((::waitid(P_ALL, 0, &info, WEXITED | WNOHANG | WNOWAIT) == 0 && info.si_pid != 0));
}

TEST_CASE("process: a stop that comes after a step ended on its own stops nothing") {
    // stop_all while the step's final record is still unread: the supervisor has reaped the
    // command (or reaps it when the request comes), so the step ended on its own, stopped is
    // false and its exit code stands (a run interrupted then reports it passed, not
    // interrupted). Through the first step's helper and through the server alike.
    Supervisor sup;
    for (int i = 0; i < 2; ++i) {
        auto id = sup.spawn(helper_cmd("exit_with", {"0"}));
        REQUIRE(id.has_value());
        ::usleep(300'000); // not polling: the record waits in its pipe
        sup.stop_all();
        auto all = emurun::test::wait_all(sup);
        REQUIRE(all.size() == 1);
        CHECK_FALSE(all[0].stopped);
        CHECK(all[0].status.code() == 0);
    }
    // A step still running when the stop comes is stopped, as before.
    auto id = sup.spawn(helper_cmd("sleep_for", {"30"}));
    REQUIRE(id.has_value());
    ::usleep(200'000);
    sup.stop_all();
    auto all = emurun::test::wait_all(sup);
    REQUIRE(all.size() == 1);
    CHECK(all[0].stopped);
    CHECK(all[0].status.signal() == SIGTERM);
}
