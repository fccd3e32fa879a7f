#include "scoped_env.hpp"
#include "util/env.hpp"

#include <doctest/doctest.h>

#include <cstring>

using emurun::test::ScopedEnv;
namespace util = emurun::util;

TEST_CASE("util env: the current environment as a map, and single values") {
    ScopedEnv set("EMURUN_TEST_ENV_VALUE", "a=b c");
    ScopedEnv empty("EMURUN_TEST_ENV_EMPTY", "");
    ScopedEnv unset("EMURUN_TEST_ENV_UNSET", std::nullopt);
    const auto env = util::current_environment();
    CHECK(env.at("EMURUN_TEST_ENV_VALUE") == "a=b c");
    CHECK(env.at("EMURUN_TEST_ENV_EMPTY").empty());
    CHECK_FALSE(env.contains("EMURUN_TEST_ENV_UNSET"));
    CHECK(util::get_env("EMURUN_TEST_ENV_VALUE") == "a=b c");
    CHECK_FALSE(util::get_env("EMURUN_TEST_ENV_EMPTY").has_value());
    CHECK_FALSE(util::get_env("EMURUN_TEST_ENV_UNSET").has_value());
    CHECK(util::get_env(env, "EMURUN_TEST_ENV_EMPTY") == "");
    CHECK_FALSE(util::get_env(env, "EMURUN_TEST_ENV_UNSET").has_value());
}

TEST_CASE("util env: overrides are set on top") {
    auto env = util::with_overrides({{"A", "1"}, {"B", "2"}}, {{"B", "3"}, {"C", "4"}});
    CHECK(env == util::EnvMap{{"A", "1"}, {"B", "3"}, {"C", "4"}});
}

TEST_CASE("util env: directories go first in PATH, in order") {
    CHECK(util::with_path_prefix({{"PATH", "/usr/bin"}}, {"/x", "/y"}).at("PATH") ==
          "/x:/y:/usr/bin");
    CHECK(util::with_path_prefix({}, {"/x"}).at("PATH") == "/x:/usr/local/bin:/usr/bin:/bin");
    // An empty PATH stays without a trailing ':' (which would add the current directory).
    CHECK(util::with_path_prefix({{"PATH", ""}}, {"/x"}).at("PATH") == "/x");
    CHECK(util::with_path_prefix({{"PATH", "/bin"}}, {}).at("PATH") == "/bin");
}

TEST_CASE("util env: envp strings and null-terminated pointers for execve") {
    auto strings = util::to_envp({{"A", "1"}, {"B", "x=y"}});
    CHECK(strings == std::vector<std::string>{"A=1", "B=x=y"});
    auto ptrs = util::c_pointers(strings);
    REQUIRE(ptrs.size() == 3);
    CHECK(std::strcmp(ptrs[1], "B=x=y") == 0);
    CHECK(ptrs[2] == nullptr);
}
