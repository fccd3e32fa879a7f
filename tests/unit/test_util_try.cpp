// EMURUN_TRY (include/emurun/error.hpp): value binding and propagation.
#include <emurun/error.hpp>

#include <doctest/doctest.h>

#include <memory>

using emurun::fail;
using emurun::Result;

namespace {

Result<int> number(bool ok) {
    if (!ok) {
        return fail("number", "asked to fail");
    }
    return 42;
}

Result<void> check(bool ok) {
    if (!ok) {
        return fail("check", "asked to fail", "a hint");
    }
    return {};
}

Result<std::unique_ptr<int>> owned(bool ok) {
    if (!ok) {
        return fail("owned", "asked to fail");
    }
    return std::make_unique<int>(7);
}

int g_steps = 0;

Result<std::string> chain(bool a, bool b, bool c) {
    g_steps = 0;
    auto n = EMURUN_TRY(number(a));
    ++g_steps;
    EMURUN_TRY(check(b));
    ++g_steps;
    auto p = EMURUN_TRY(owned(c));
    ++g_steps;
    return std::to_string(n + *p);
}

Result<void> void_chain(bool ok) {
    EMURUN_TRY(check(ok));
    return {};
}

} // namespace

TEST_CASE("EMURUN_TRY: yields the value, move-only ones included") {
    CHECK(chain(true, true, true).value() == "49");
    CHECK(g_steps == 3);
}

TEST_CASE("EMURUN_TRY: returns the first error unchanged and stops there") {
    auto r = chain(true, false, true);
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().message() == "check: asked to fail (a hint)");
    CHECK(g_steps == 1);
    CHECK(chain(false, true, true).error().what == "number");
    CHECK(g_steps == 0);
    CHECK(chain(true, true, false).error().what == "owned");
    CHECK(g_steps == 2);
}

TEST_CASE("EMURUN_TRY: works in a function returning Result<void>") {
    CHECK(void_chain(true).has_value());
    CHECK(void_chain(false).error().what == "check");
}
