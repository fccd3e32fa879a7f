#include "skip.hpp"
#include "testdir.hpp"
#include "util/fd.hpp"
#include "util/file.hpp"
#include "util/temp_dir.hpp"

#include <doctest/doctest.h>

#include <csignal>
#include <cstdint>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <sched.h>
#include <string>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

namespace fs = std::filesystem;
namespace test = emurun::test;
using emurun::test::testdir;
using emurun::test::write_file;
namespace util = emurun::util;

namespace {

/// Names in `dir` other than `keep`: temporary files a writer left behind.
std::vector<std::string> leftovers(const fs::path& dir, const std::string& keep) {
    std::vector<std::string> out;
    for (const auto& e : fs::directory_iterator(dir)) {
        if (e.path().filename() != keep) {
            out.push_back(e.path().filename().string());
        }
    }
    return out;
}

/// Fails the test run instead of hanging when a read blocks.
struct Watchdog {
    Watchdog() { ::alarm(10); }
    ~Watchdog() { ::alarm(0); }
};

} // namespace

TEST_CASE("util file: read_file returns every byte of a file, NULs and all") {
    std::string content(200000, 'x');
    content[7] = '\0';
    content.back() = '\n';
    auto text = util::read_file(write_file("big.bin", content));
    REQUIRE(text.has_value());
    CHECK(*text == content);
    CHECK(util::read_file(write_file("empty", "")).value().empty());
}

TEST_CASE("util file: read_file reads kernel files that report size 0") {
    auto status = util::read_file("/proc/self/status");
    REQUIRE(status.has_value());
    CHECK(status->find("Pid:") != std::string::npos);
}

TEST_CASE("util file: read_file names the call and the system error") {
    auto missing = util::read_file("/nonexistent/emurun-no-such-file");
    REQUIRE_FALSE(missing.has_value());
    CHECK(missing.error().message() ==
          "open /nonexistent/emurun-no-such-file failed: No such file or directory");
    auto empty = util::read_file(""); // `emurun run ''` said "open  failed: No such file…"
    REQUIRE_FALSE(empty.has_value());
    CHECK(empty.error().message() == "open '': an empty path, not a file name (name the file)");
    CHECK(empty.error().kind == emurun::ErrorKind::bad_input);
}

TEST_CASE("util file: read_file refuses what is not a regular file, without blocking") {
    Watchdog watchdog; // a FIFO without a writer would block open() and read() forever
    const fs::path fifo = testdir("fifo") / "pipe";
    REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
    for (const auto& entry : {std::pair<fs::path, std::string>{fifo, "a FIFO"},
                              {testdir("adir"), "a directory"},
                              {"/dev/null", "a character device"}}) {
        const fs::path& path = entry.first; // (no structured binding: CAPTURE's lambda takes it)
        const std::string& kind = entry.second;
        CAPTURE(path);
        auto r = util::read_file(path);
        REQUIRE_FALSE(r.has_value());
        CHECK(r.error().what == "read " + path.string());
        CHECK(r.error().why == "not a regular file");
        CHECK(r.error().hint.find(kind) != std::string::npos);
    }
    CHECK(util::read_head(fifo, 4).empty());
}

TEST_CASE("util file: read_file refuses a file over the limit") {
    auto r = util::read_file(write_file("ten", "0123456789"), 9);
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().why == "file is 10 bytes, more than the limit of 9");
    CHECK(util::read_file(write_file("ten", "0123456789"), 10).value() == "0123456789");
}

TEST_CASE("util file: read_head gives the first bytes, or nothing") {
    const auto f = write_file("head", "\x7f"
                                      "ELF and more");
    CHECK(util::read_head(f, 4) == "\x7f"
                                   "ELF");
    CHECK(util::read_head(f, 100) == "\x7f"
                                     "ELF and more");
    CHECK(util::read_head("/nonexistent/emurun-no-such-file", 4).empty());
    CHECK(util::read_head(testdir(), 4).empty());
}

TEST_CASE("util file: read_tail gives the last bytes and what it skipped, or nothing") {
    const auto f = write_file("tail", "line 1\nline 2\nline 3\n");
    std::uint64_t skipped = 0;
    CHECK(util::read_tail(f, 7, &skipped) == "line 3\n");
    CHECK(skipped == 14);
    CHECK(util::read_tail(f, 1000, &skipped) == "line 1\nline 2\nline 3\n");
    CHECK(skipped == 0);
    CHECK(util::read_tail(f, 0).empty());
    skipped = 99;
    CHECK(util::read_tail("/nonexistent/emurun-no-such-file", 4, &skipped).empty());
    CHECK(skipped == 0);
    const auto fifo = testdir("tail-fifo") / "fifo";
    REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
    const Watchdog watchdog; // a FIFO is refused, not waited on
    CHECK(util::read_tail(fifo, 4).empty());
}

TEST_CASE("util file: write_file_atomic creates and replaces, 0644, no temporary left") {
    const fs::path dir = testdir("atomic");
    const fs::path file = dir / "report.json";
    REQUIRE(util::write_file_atomic(file, "first\n").has_value());
    CHECK(util::read_file(file).value() == "first\n");
    REQUIRE(util::write_file_atomic(file, "second\n").has_value());
    CHECK(util::read_file(file).value() == "second\n");
    struct stat st {};
    REQUIRE(::stat(file.c_str(), &st) == 0);
    CHECK((st.st_mode & 0777) == 0644);
    REQUIRE(util::write_file_atomic(file, "x", 0600).has_value());
    REQUIRE(::stat(file.c_str(), &st) == 0);
    CHECK((st.st_mode & 0777) == 0600);
    CHECK(leftovers(dir, "report.json").empty());
}

TEST_CASE("util file: write_file_atomic into a missing directory names what to check") {
    auto r = util::write_file_atomic(testdir() / "no-such-dir" / "f", "x");
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().what.starts_with("create a temporary file " +
                                     (testdir() / "no-such-dir").string()));
    CHECK(r.error().why == "No such file or directory");
}

TEST_CASE("util file: a write that fails half-way leaves the old file and no temporary") {
    const fs::path dir = testdir("efbig");
    const fs::path file = dir / "out";
    REQUIRE(util::write_file_atomic(file, "old content\n").has_value());
    // A file-size limit makes write(2) fail with EFBIG part-way, as a full disk does.
    struct rlimit old_limit {};
    REQUIRE(::getrlimit(RLIMIT_FSIZE, &old_limit) == 0);
    struct rlimit small = old_limit;
    small.rlim_cur = 4096;
    auto* old_handler = std::signal(SIGXFSZ, SIG_IGN);
    REQUIRE(::setrlimit(RLIMIT_FSIZE, &small) == 0);
    auto r = util::write_file_atomic(file, std::string(100000, 'y'));
    ::setrlimit(RLIMIT_FSIZE, &old_limit);
    std::signal(SIGXFSZ, old_handler);
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().what.starts_with("write " + (dir / ".out.").string()));
    CHECK(r.error().why == std::strerror(EFBIG));
    CHECK(r.error().hint == file.string() + " was left as it was");
    CHECK(util::read_file(file).value() == "old content\n");
    CHECK(leftovers(dir, "out").empty());
}

namespace {

/// Write `text` to a /proc/self file the way the kernel wants: one write(2).
bool write_proc(const char* path, const std::string& text) {
    util::UniqueFd fd(::open(path, O_WRONLY | O_CLOEXEC));
    return fd && ::write(fd.get(), text.data(), text.size()) == static_cast<ssize_t>(text.size());
}

/// In a child: a user + mount namespace with a 64 KiB tmpfs on `dir`, then a 1 MiB atomic
/// write there. Exit 0 when it failed with ENOSPC and left the old file; 125 when this
/// kernel gives no user namespace (nothing was tested); 1 otherwise.
[[noreturn]] void full_disk_child(const fs::path& dir) {
    const uid_t uid = ::geteuid();
    const gid_t gid = ::getegid();
    if (::unshare(CLONE_NEWUSER | CLONE_NEWNS) != 0) {
        ::_exit(125);
    }
    // Both ids mapped, or creating a file fails with EOVERFLOW.
    const bool mapped = write_proc("/proc/self/setgroups", "deny") &&
                        write_proc("/proc/self/uid_map", "0 " + std::to_string(uid) + " 1\n") &&
                        write_proc("/proc/self/gid_map", "0 " + std::to_string(gid) + " 1\n");
    if (!mapped || ::mount("tmpfs", dir.c_str(), "tmpfs", 0, "size=64k") != 0) {
        ::_exit(125);
    }
    const fs::path file = dir / "report.json";
    if (!util::write_file_atomic(file, "old\n")) {
        ::_exit(1);
    }
    auto r = util::write_file_atomic(file, std::string(1 << 20, 'z'));
    const bool ok = !r && r.error().why == std::strerror(ENOSPC) &&
                    util::read_file(file).value_or("") == "old\n" &&
                    std::distance(fs::directory_iterator(dir), fs::directory_iterator()) == 1;
    ::_exit(ok ? 0 : 1);
}

} // namespace

TEST_CASE("util file: on a full disk write_file_atomic reports ENOSPC and keeps the old file" *
          test::may_skip()) {
    const fs::path dir = testdir("full-disk");
    const pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        full_disk_child(dir);
    }
    int status = 0;
    REQUIRE(::waitpid(pid, &status, 0) == pid);
    REQUIRE(WIFEXITED(status));
    if (WEXITSTATUS(status) == 125) {
        EMURUN_SKIP("no user namespace to mount a small tmpfs in (the EFBIG case covers the path)");
    }
    CHECK(WEXITSTATUS(status) == 0);
}

TEST_CASE("util temp dir: a fresh private directory each time, removed with its content") {
    const auto prefix = emurun::test::testdir("tempdir") / "calibrate-";
    std::filesystem::path first_path;
    {
        auto first = emurun::util::TempDir::make(prefix);
        auto second = emurun::util::TempDir::make(prefix);
        REQUIRE(first);
        REQUIRE(second);
        CHECK(first->path() != second->path()); // no fixed name another user could plant
        struct stat st {};
        REQUIRE(::lstat(first->path().c_str(), &st) == 0);
        CHECK(S_ISDIR(st.st_mode));
        CHECK((st.st_mode & 0777) == 0700);
        std::ofstream(first->path() / "workload.c") << "int main(void) { return 0; }\n";
        first_path = first->path();
    }
    CHECK_FALSE(std::filesystem::exists(first_path));
    auto nowhere = emurun::util::TempDir::make("/nonexistent/dir/x-");
    REQUIRE_FALSE(nowhere);
    CHECK(nowhere.error().what.find("/nonexistent/dir/x-") != std::string::npos);
}
