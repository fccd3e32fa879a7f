// The Supervisor's idle timeout on real processes: a silent child is stopped and its tree
// pictured first; a child that keeps printing is left alone. snapshot_process_tree on its own.
#include "testdir.hpp"

#include <emurun/process.hpp>

#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <unistd.h>

using namespace emurun;
using namespace std::chrono_literals;

namespace {

ChildResult run_one(const Command& cmd, const SpawnOptions& options) {
    Supervisor s;
    auto id = s.spawn(cmd, options);
    REQUIRE_MESSAGE(id.has_value(), id.error().message());
    for (;;) {
        auto done = s.wait_any(10s);
        REQUIRE(done.has_value());
        if (!done->empty()) {
            return done->front();
        }
    }
}

} // namespace

TEST_CASE("process: a child silent for its idle timeout is pictured, then stopped") {
    SpawnOptions o;
    o.idle_timeout = 500ms;
    o.timeout = 60s;
    o.grace = 2s;
    const auto t0 = std::chrono::steady_clock::now();
    auto r = run_one({.argv = {"sh", "-c", "echo start; sleep 30 & wait"}}, o);
    CHECK(std::chrono::steady_clock::now() - t0 < 10s);
    CHECK(r.timed_out);
    CHECK(r.idle);
    CHECK(r.status.signal() == SIGTERM);
    auto sleeper = std::ranges::find_if(
        r.snapshot, [](const ProcessSnapshot& p) { return p.cmdline == "sleep 30"; });
    REQUIRE_MESSAGE(sleeper != r.snapshot.end(), r.snapshot.size() << " processes");
    CHECK(sleeper->state == 'S');
    auto shell = std::ranges::find_if(
        r.snapshot, [&](const ProcessSnapshot& p) { return p.pid == sleeper->ppid; });
    REQUIRE(shell != r.snapshot.end()); // the parent comes first
    CHECK(shell->cmdline.starts_with("sh -c echo start"));
    CHECK(shell < sleeper);
}

TEST_CASE("process: output resets the idle clock; a wall timeout is no idle timeout") {
    SpawnOptions o;
    o.idle_timeout = 1500ms;
    auto r =
        run_one({.argv = {"sh", "-c", "for i in 1 2 3 4 5 6; do echo $i; sleep 0.4; done"}}, o);
    CHECK_FALSE(r.timed_out);
    CHECK(r.status.success());
    CHECK(r.snapshot.empty());
    SpawnOptions wall;
    wall.timeout = 300ms;
    wall.idle_timeout = 60s;
    r = run_one({.argv = {"sleep", "30"}}, wall);
    CHECK(r.timed_out);
    CHECK_FALSE(r.idle);
    CHECK(std::ranges::any_of(r.snapshot,
                              [](const ProcessSnapshot& p) { return p.cmdline == "sleep 30"; }));
}

TEST_CASE("process: the tree snapshot of this process lists it with its command line") {
    auto tree = snapshot_process_tree(static_cast<int>(::getpid()), true);
    REQUIRE_FALSE(tree.empty());
    CHECK(tree[0].pid == ::getpid());
    CHECK(tree[0].ppid == ::getppid());
    // Under qemu-user (the dogfood runs these tests emulated, EMURUN_EMULATED=1) a process's
    // own /proc/self/stat is QEMU's synthetic one, whose state field is not the kernel's.
    if (std::getenv("EMURUN_EMULATED") == nullptr) {
        CHECK(tree[0].state == 'R');
    }
    CHECK(tree[0].cmdline.find("emurun_unit_tests") != std::string::npos);
    CHECK(snapshot_process_tree(0x7ffffff0, true).empty()); // no such process
}
