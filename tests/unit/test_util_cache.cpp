#include "scoped_env.hpp"
#include "testdir.hpp"
#include "util/cache.hpp"

#include <doctest/doctest.h>

#include <fstream>
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

TEST_CASE("trust 1: a cache dir from any source is used only when no one else can change it") {
    const fs::path base = testdir("cache-trust");
    auto refused = [](const fs::path& dir, const std::string& why) {
        auto r = util::own_cache_dir(dir);
        REQUIRE_FALSE(r.has_value());
        CHECK(r.error().what == "cache directory " + dir.string());
        CHECK(r.error().why.find(why) != std::string::npos);
        CHECK(r.error().hint.find("EMURUN_CACHE_DIR") != std::string::npos);
    };
    const fs::path fresh = base / "made/below/emurun"; // made, 0700, parents with them
    REQUIRE(util::own_cache_dir(fresh).has_value());
    struct stat st {};
    REQUIRE(::lstat(fresh.c_str(), &st) == 0);
    CHECK((st.st_mode & 07777) == 0700);
    const fs::path readable = base / "readable";
    fs::create_directory(readable);
    ::chmod(readable.c_str(), 0755); // others read, nobody else writes: fine, left as it is
    CHECK(util::own_cache_dir(readable).has_value());
    const fs::path open = base / "world-writable";
    fs::create_directory(open);
    ::chmod(open.c_str(), 0777);
    refused(open, "is writable by others");
    const fs::path group = base / "group-writable";
    fs::create_directory(group);
    ::chmod(group.c_str(), 0770);
    refused(group, "is writable by its group");
    // Ours and closed, but in a parent anyone can write without the sticky bit: renamed away
    // and replaced by another user's at will.
    const fs::path shared = base / "shared";
    fs::create_directories(shared / "emurun");
    ::chmod(shared.c_str(), 0777);
    ::chmod((shared / "emurun").c_str(), 0700);
    refused(shared / "emurun", "its parent " + shared.string() + " is writable by others");
    ::chmod(shared.c_str(), 01777); // sticky, as /tmp: others cannot rename our entry
    CHECK(util::own_cache_dir(shared / "emurun").has_value());
    const fs::path link = base / "link";
    fs::create_directory_symlink(fresh, link);
    refused(link, "is a symlink");
    const fs::path theirs = base / "theirs"; // XDG_CACHE_HOME/emurun made first by nobody
    fs::create_directory(theirs);
    ::chmod(theirs.c_str(), 0755);
    if (::chown(theirs.c_str(), 65534, static_cast<gid_t>(-1)) == 0) { // (root only)
        refused(theirs, "owned by uid 65534, not by this user");
    }
    // Every source takes the same check: the environment's dirs are no exception.
    {
        ScopedEnv e("EMURUN_CACHE_DIR", open.string());
        CHECK_FALSE(util::checked_cache_dir().has_value());
    }
    ScopedEnv e("EMURUN_CACHE_DIR", std::nullopt);
    {
        ScopedEnv x("XDG_CACHE_HOME", shared.string());
        ::chmod(shared.c_str(), 0777);
        CHECK_FALSE(util::checked_cache_dir().has_value());
    }
    ScopedEnv x("XDG_CACHE_HOME", base.string());
    CHECK(util::checked_cache_dir() == base / "emurun");
}

TEST_CASE("trust 10: a squatted private dir costs one dir of ours, not a new one per run") {
    const fs::path base = testdir("cache-squat");
    const fs::path wanted = base / "emurun-0";
    fs::create_directory(wanted);
    ::chmod(wanted.c_str(), 0777); // another user's, or open to all: never ours
    const fs::path first = util::private_dir(wanted);
    CHECK(first == base / "emurun-0-1");
    CHECK(util::private_dir(wanted) == first); // the next run takes the same one
    CHECK(util::private_dir(wanted) == first);
    std::size_t dirs = 0;
    for ([[maybe_unused]] const auto& e : fs::directory_iterator(base)) {
        ++dirs;
    }
    CHECK(dirs == 2); // the squatted name and ours: the old code made a new mkdtemp dir per call
    ::chmod(first.c_str(), 0777); // squatted too: the next name
    CHECK(util::private_dir(wanted) == base / "emurun-0-2");
}

TEST_CASE("trust review 2: every subdirectory of the cache dir takes the cache dir's rule") {
    // The old code checked the cache dir alone: its prefix/ a symlink to another user's dir,
    // or such a dir, was where root's merged loader prefix was built and swapped.
    const fs::path base = testdir("cache-subdirs");
    const fs::path cache = base / "emurun";
    REQUIRE(util::own_cache_dir(cache).has_value());
    auto refused = [&](const fs::path& sub, const std::string& why) {
        auto r = util::own_cache_subdir(cache, sub);
        REQUIRE_FALSE(r.has_value());
        CHECK(r.error().what == "cache directory " + (cache / sub).string());
        CHECK_MESSAGE(r.error().why.starts_with(why), r.error().why);
        CHECK(r.error().hint.find("EMURUN_CACHE_DIR") != std::string::npos);
    };
    // Made when missing (nested too), 0755 at most, and accepted again.
    CHECK(util::own_cache_subdir(cache, "debs/arm64") == cache / "debs/arm64");
    struct stat st {};
    REQUIRE(::lstat((cache / "debs/arm64").c_str(), &st) == 0);
    CHECK((st.st_mode & 022) == 0);
    CHECK(util::own_cache_subdir(cache, "debs/arm64").has_value());
    // A symlink, even to a dir of ours: refused, never followed.
    const fs::path elsewhere = base / "elsewhere";
    fs::create_directory(elsewhere);
    fs::create_directory_symlink(elsewhere, cache / "prefix");
    refused("prefix", "is a symlink");
    CHECK_FALSE(util::own_cache_subdir(cache, "prefix/x").has_value());
    CHECK_FALSE(fs::exists(elsewhere / "x"));
    fs::remove(cache / "prefix");
    // Open to others: world or group writable (root's 0777 one included).
    fs::create_directory(cache / "prefix");
    ::chmod((cache / "prefix").c_str(), 0777);
    refused("prefix", "writable by others");
    ::chmod((cache / "prefix").c_str(), 0775);
    refused("prefix", "writable by its group");
    ::chmod((cache / "prefix").c_str(), 0755);
    CHECK(util::own_cache_subdir(cache, "prefix").has_value());
    fs::create_directory(cache / "roots");
    if (::chown((cache / "roots").c_str(), 65534, static_cast<gid_t>(-1)) == 0) { // (root only)
        refused("roots", "owned by uid 65534, not by this user");
    }
    std::ofstream(cache / "apt") << "x";
    refused("apt", "is not a directory");
}
