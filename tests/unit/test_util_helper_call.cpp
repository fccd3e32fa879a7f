// The "re-enter emurun with a spec" protocol (util/helper_call.hpp) the sandbox and root helper
// calls share.
#include "util/helper_call.hpp"

#include <doctest/doctest.h>

namespace util = emurun::util;

namespace {

constexpr util::HelperCall k_call{"__emurun_test_helper__", "test", "test_argv()"};

std::vector<char*> c_argv(std::vector<std::string>& args) {
    std::vector<char*> out;
    for (auto& a : args) {
        out.push_back(a.data());
    }
    out.push_back(nullptr);
    return out;
}

} // namespace

TEST_CASE("util helper call: argv round trip, other argv untouched, malformed calls named") {
    const util::Json spec{{"dir", "/r"}, {"n", 3}};
    auto args = util::helper_argv(k_call, "/usr/bin/emurun", spec, {"sh", "-c", "true"});
    REQUIRE(args.has_value());
    CHECK(*args == std::vector<std::string>{"/usr/bin/emurun", "__emurun_test_helper__",
                                            R"({"dir":"/r","n":3})", "sh", "-c", "true"});
    auto argv = c_argv(*args);
    auto call = util::read_helper_call(k_call, static_cast<int>(args->size()), argv.data());
    REQUIRE(call.has_value());
    REQUIRE(call->has_value());
    CHECK(util::Json::parse((*call)->spec) == spec);
    CHECK((*call)->command == std::vector<std::string>{"sh", "-c", "true"});

    CHECK_FALSE(util::read_helper_call(k_call, 1, argv.data()).has_value());
    std::vector<std::string> other{"emurun", "run", "p.json"};
    auto other_argv = c_argv(other);
    CHECK_FALSE(util::read_helper_call(k_call, 3, other_argv.data()).has_value());

    auto short_call = util::read_helper_call(k_call, 3, argv.data());
    REQUIRE(short_call.has_value());
    REQUIRE_FALSE(short_call->has_value());
    CHECK(short_call->error().message() ==
          "emurun test helper: no spec or no command (it runs only what test_argv() builds)");

    auto no_command = util::helper_argv(k_call, "/usr/bin/emurun", spec, {});
    REQUIRE_FALSE(no_command.has_value());
    CHECK(no_command.error().message() == "build the test command: no command");

    auto not_utf8 = util::helper_argv(k_call, "/e", util::Json{{"dir", "/r\xff"}}, {"true"});
    REQUIRE_FALSE(not_utf8.has_value());
    CHECK(not_utf8.error().message().starts_with("pass the test spec to a fresh emurun: "));
}
