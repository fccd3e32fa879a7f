#include "scoped_env.hpp"
#include "testdir.hpp"
#include "util/cache.hpp"

#include <doctest/doctest.h>

#include <unistd.h>

namespace fs = std::filesystem;
using emurun::test::ScopedEnv;
using emurun::test::testdir;
namespace util = emurun::util;

TEST_CASE("util cache: one rule, first match wins") {
    const fs::path home = testdir("cache-home");
    const std::string tmp = "/tmp/emurun-" + std::to_string(::getuid());
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
