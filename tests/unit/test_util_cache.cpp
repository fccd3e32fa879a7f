#include "scoped_env.hpp"
#include "testdir.hpp"
#include "util/cache.hpp"

#include <doctest/doctest.h>

#include <sys/stat.h>
#include <unistd.h>

namespace fs = std::filesystem;
using emurun::test::ScopedEnv;
using emurun::test::testdir;
namespace util = emurun::util;

TEST_CASE("util cache: one rule, first match wins") {
    const fs::path home = testdir("cache-home");
    const std::string tmp = "/tmp/emurun-" + std::to_string(::geteuid());
    ScopedEnv h("HOME", home.string());
    ScopedEnv x("XDG_CACHE_HOME", "/xdg/cache");
    {
        ScopedEnv e("EMURUN_CACHE_DIR", "/explicit/cache");
        CHECK(util::cache_dir() == "/explicit/cache");
    }
    {
        ScopedEnv e("EMURUN_CACHE_DIR", "relative/cache");
        CHECK(util::cache_dir() == fs::current_path() / "relative/cache");
    }
    ScopedEnv e("EMURUN_CACHE_DIR", std::nullopt);
    CHECK(util::cache_dir() == "/xdg/cache/emurun");
    {
        ScopedEnv rel("XDG_CACHE_HOME", "not/absolute"); // ignored, as the XDG spec says
        CHECK(util::cache_dir() == home / ".cache/emurun");
    }
    ScopedEnv no_xdg("XDG_CACHE_HOME", std::nullopt);
    CHECK(util::cache_dir() == home / ".cache/emurun");
    {
        ScopedEnv nobody("HOME", "/nonexistent"); // cannot be written: no cache there
        CHECK(util::cache_dir() == tmp);
    }
    ScopedEnv no_home("HOME", std::nullopt);
    CHECK(util::cache_dir() == tmp);
}

TEST_CASE("util cache: a shared place's directory is used only when it is ours and closed") {
    const fs::path base = testdir("cache-private");
    auto mode = [](const fs::path& p) {
        struct stat st {};
        REQUIRE(::lstat(p.c_str(), &st) == 0);
        return st.st_mode & 07777;
    };
    const fs::path made = base / "made";
    CHECK(util::private_dir(made) == made); // created 0700
    CHECK(mode(made) == 0700);
    const fs::path open_ro = base / "open-ro";
    fs::create_directory(open_ro);
    ::chmod(open_ro.c_str(), 0755);
    CHECK(util::private_dir(open_ro) == open_ro); // ours, nobody else writes: closed to 0700
    CHECK(mode(open_ro) == 0700);
    auto refused = [&](const fs::path& p) {
        const fs::path got = util::private_dir(p);
        CHECK(got != p);
        CHECK(got.string().starts_with(p.string() + "-"));
        CHECK(mode(got) == 0700);
    };
    const fs::path writable = base / "world-writable";
    fs::create_directory(writable);
    ::chmod(writable.c_str(), 0777);
    refused(writable);
    const fs::path theirs = base / "theirs"; // another user made the name first
    fs::create_directory(theirs);
    if (::chown(theirs.c_str(), ::geteuid() + 4242, static_cast<gid_t>(-1)) == 0) {
        refused(theirs); // (not as a user, nor where that uid is unmapped: the rest still runs)
    }
    const fs::path link = base / "link";
    fs::create_directory_symlink(made, link);
    refused(link);
}
