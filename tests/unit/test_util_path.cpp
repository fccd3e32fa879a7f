#include "scoped_env.hpp"
#include "testdir.hpp"
#include "util/file.hpp"
#include "util/path.hpp"

#include <doctest/doctest.h>

#include <sys/stat.h>
#include <unistd.h>

namespace fs = std::filesystem;
using emurun::test::ScopedEnv;
using emurun::test::testdir;
namespace util = emurun::util;

namespace {

fs::path make_file(const fs::path& dir, const std::string& name, mode_t mode) {
    const fs::path p = dir / name;
    REQUIRE(util::write_file_atomic(p, "#!/bin/sh\n", mode).has_value());
    return p;
}

/// Runs the rest of a scope in `dir`.
struct ScopedCwd {
    explicit ScopedCwd(const fs::path& dir) : old(fs::current_path()) { fs::current_path(dir); }
    ScopedCwd(const ScopedCwd&) = delete;
    ScopedCwd& operator=(const ScopedCwd&) = delete;
    ~ScopedCwd() { fs::current_path(old); }
    fs::path old;
};

} // namespace

TEST_CASE("util path: entries in order, an empty entry is the current directory") {
    CHECK(util::path_entries("/a:/b") == std::vector<fs::path>{"/a", "/b"});
    CHECK(util::path_entries(":/a::/b:") == std::vector<fs::path>{".", "/a", ".", "/b", "."});
    CHECK(util::path_entries("") == std::vector<fs::path>{"."});
}

TEST_CASE("util path: the first executable regular file wins; others are passed over") {
    const fs::path a = testdir("path-a");
    const fs::path b = testdir("path-b");
    const fs::path c = testdir("path-c");
    make_file(a, "tool", 0644);         // not executable
    fs::create_directories(b / "tool"); // a directory
    const fs::path want = make_file(c, "tool", 0755);
    const std::string list = a.string() + ":" + b.string() + ":" + c.string();
    CHECK(util::find_executable("tool", list) == want);
    CHECK_FALSE(util::find_executable("other", list).has_value());
    CHECK_FALSE(util::find_executable("", list).has_value());
    CHECK(util::is_executable_file(want));
    CHECK_FALSE(util::is_executable_file(a / "tool"));
    CHECK_FALSE(util::is_executable_file(b / "tool"));
}

TEST_CASE("util path: a name with a slash is used as it is") {
    CHECK(util::find_executable("./x/y", "/usr/bin") == fs::path("./x/y"));
    CHECK(util::find_executable("/nonexistent/tool", "/usr/bin") == fs::path("/nonexistent/tool"));
}

TEST_CASE("util path: an empty entry searches the current directory, as execvp does") {
    const fs::path here = testdir("path-cwd");
    make_file(here, "local-tool", 0755);
    ScopedCwd cwd(here);
    CHECK(util::find_executable("local-tool", "/nonexistent:") == fs::path("./local-tool"));
    CHECK_FALSE(util::find_executable("local-tool", "/nonexistent").has_value());
}

TEST_CASE("util path: PATH as set, else the one fallback list") {
    {
        ScopedEnv path("PATH", std::nullopt);
        CHECK(util::path_variable() == "/usr/local/bin:/usr/bin:/bin");
        CHECK(util::find_executable("sh").has_value());
    }
    const fs::path d = testdir("path-env");
    const fs::path want = make_file(d, "only-here", 0755);
    ScopedEnv path("PATH", d.string());
    CHECK(util::path_variable() == d.string());
    CHECK(util::find_executable("only-here") == want);
}

TEST_CASE("util path: one file of the library reads PATH") {
    std::vector<std::string> readers;
    for (const auto& e : fs::recursive_directory_iterator(emurun::test::source_dir() / "lib")) {
        if (e.is_regular_file() &&
            util::read_file(e.path()).value_or("").find("getenv(\"PATH\")") != std::string::npos) {
            readers.push_back(e.path().lexically_relative(emurun::test::source_dir()).string());
        }
    }
    CHECK(readers == std::vector<std::string>{"lib/util/path.cpp"});
}
