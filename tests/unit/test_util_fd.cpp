#include "testdir.hpp"
#include "util/fd.hpp"

#include <doctest/doctest.h>

#include <cerrno>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <sys/file.h>
#include <unistd.h>

using emurun::util::UniqueFd;

namespace {

bool is_open(int fd) {
    return ::fcntl(fd, F_GETFD) != -1;
}

std::pair<int, int> make_pipe() {
    int fds[2] = {-1, -1};
    REQUIRE(::pipe2(fds, O_CLOEXEC) == 0);
    return {fds[0], fds[1]};
}

} // namespace

TEST_CASE("util fd: the owner closes on destruction and on reset, never twice") {
    auto [r, w] = make_pipe();
    {
        UniqueFd reader(r);
        UniqueFd writer(w);
        CHECK(reader.valid());
        CHECK(reader.get() == r);
        writer.reset();
        CHECK_FALSE(writer.valid());
        CHECK_FALSE(is_open(w));
        CHECK(is_open(r));
    }
    CHECK_FALSE(is_open(r));
    CHECK_FALSE(UniqueFd().valid());
}

TEST_CASE("util fd: moving transfers ownership; release gives it up") {
    auto [r, w] = make_pipe();
    UniqueFd a(r);
    UniqueFd b(std::move(a));
    CHECK_FALSE(a.valid()); // NOLINT(bugprone-use-after-move): the moved-from state is defined
    CHECK(b.get() == r);
    UniqueFd c(w);
    c = std::move(b); // closes w, takes r
    CHECK_FALSE(is_open(w));
    CHECK(c.get() == r);
    const int raw = c.release();
    CHECK(raw == r);
    CHECK_FALSE(c.valid());
    CHECK(is_open(r)); // released, not closed
    ::close(raw);
}

TEST_CASE("util fd: reset to the descriptor already owned keeps it open") {
    auto [r, w] = make_pipe();
    UniqueFd reader(r);
    reader.reset(r);
    CHECK(is_open(r));
    ::close(w);
}

TEST_CASE("util fd: close() reports success once and leaves the owner empty") {
    auto [r, w] = make_pipe();
    UniqueFd reader(r);
    UniqueFd writer(w);
    CHECK(writer.close("pipe").has_value());
    CHECK_FALSE(writer.valid());
    CHECK_FALSE(is_open(w));
    CHECK(writer.close("pipe").has_value()); // nothing owned: nothing to report
    char c = 0;
    CHECK(::read(reader.get(), &c, 1) == 0); // the write end really is closed: EOF
}

TEST_CASE("util fd: a FileLock holds an exclusive flock until it is destroyed") {
    const auto path = emurun::test::testdir("filelock") / "the.lock";
    auto probe = [&path] { // another open file description: flock conflicts across them
        const emurun::util::UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
        REQUIRE(fd.valid());
        return ::flock(fd.get(), LOCK_EX | LOCK_NB) == 0;
    };
    {
        auto lock = emurun::util::FileLock::acquire(path, false);
        REQUIRE(lock.has_value());
        CHECK(std::filesystem::is_regular_file(path)); // created when missing
        CHECK_FALSE(probe());
    }
    CHECK(probe());
    auto dir_lock = emurun::util::FileLock::acquire(path.parent_path(), true);
    CHECK(dir_lock.has_value());
    auto missing = emurun::util::FileLock::acquire("/nonexistent/emurun-dir", true, "do this");
    REQUIRE_FALSE(missing.has_value());
    CHECK(missing.error().what == "open lock /nonexistent/emurun-dir failed");
    CHECK(missing.error().hint == "do this");
}

TEST_CASE("util fd: pipes and socket pairs come owned and close-on-exec") {
    auto pipe = emurun::util::make_pipe();
    REQUIRE(pipe.has_value());
    auto sockets = emurun::util::make_socket_pair();
    REQUIRE(sockets.has_value());
    for (const auto* fds : {&*pipe, &*sockets}) {
        CHECK((::fcntl(fds->first.get(), F_GETFD) & FD_CLOEXEC) != 0);
        CHECK((::fcntl(fds->second.get(), F_GETFD) & FD_CLOEXEC) != 0);
        REQUIRE(::write(fds->second.get(), "x", 1) == 1);
        char c = 0;
        CHECK(::read(fds->first.get(), &c, 1) == 1);
        CHECK(c == 'x');
    }
    // A socket pair also carries data the other way.
    REQUIRE(::write(sockets->first.get(), "y", 1) == 1);
    char c = 0;
    CHECK(::read(sockets->second.get(), &c, 1) == 1);
    CHECK(c == 'y');
}

TEST_CASE("util fd: without openat2 the walk keeps openat2's rules (qemu-user 7.2, Linux < 5.6)") {
    namespace fs = std::filesystem;
    const fs::path t = emurun::test::testdir("beneath");
    fs::create_directories(t / "tree/out/sub");
    fs::create_directories(t / "victim");
    { std::ofstream(t / "tree/out/sub/f") << "in"; }
    { std::ofstream(t / "victim/secret") << "out"; }
    fs::create_directory_symlink("sub", t / "tree/out/in");                 // stays inside
    fs::create_directory_symlink("..", t / "tree/out/a");                   // the tree's root
    fs::create_directory_symlink("a/out/a/../../victim", t / "tree/out/w"); // a chain out
    fs::create_directory_symlink(t / "victim", t / "tree/out/abs");         // absolute
    fs::create_symlink("/proc/self/fd/0", t / "tree/out/magic");
    fs::create_symlink("loop2", t / "tree/out/loop1");
    fs::create_symlink("loop1", t / "tree/out/loop2");
    UniqueFd root(::open((t / "tree").c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
    REQUIRE(root);
    struct Case {
        const char* path;
        bool opens;
    };
    for (const Case c :
         {Case{"out/sub/f", true}, Case{"out/in/f", true}, Case{"out/a/out/in/f", true},
          Case{"./out//sub/../sub/f", true}, Case{"out/w/secret", false},
          Case{"out/abs/secret", false}, Case{"../victim/secret", false},
          Case{"/etc/passwd", false}, Case{"out/magic", false}, Case{"out/loop1", false}}) {
        for (const bool walk : {false, true}) {
            INFO(c.path << (walk ? " (walk)" : " (openat2)"));
            const int fd = walk ? emurun::util::open_beneath_walk(root.get(), c.path, O_RDONLY, 0)
                                : emurun::util::openat2_beneath(root.get(), c.path, O_RDONLY, 0);
            UniqueFd owned(fd);
            CHECK(static_cast<bool>(owned) == c.opens);
        }
    }
    // Creating through the walk lands inside, and never through a link out.
    UniqueFd made(
        emurun::util::open_beneath_walk(root.get(), "out/in/new", O_WRONLY | O_CREAT, 0644));
    CHECK(made);
    CHECK(fs::exists(t / "tree/out/sub/new"));
    UniqueFd out(
        emurun::util::open_beneath_walk(root.get(), "out/w/planted", O_WRONLY | O_CREAT, 0644));
    CHECK_FALSE(out);
    CHECK_FALSE(fs::exists(t / "victim/planted"));
}
