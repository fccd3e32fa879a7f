// Test helper: wait for every child of a Supervisor (test_process*.cpp).
#pragma once

#include <emurun/process.hpp>

#include <doctest/doctest.h>

#include <chrono>
#include <vector>

namespace emurun::test {

/// Wait (max 30 s) until every child of `sup` finished; results in finishing order.
inline std::vector<ChildResult> wait_all(Supervisor& sup) {
    using namespace std::chrono_literals;
    std::vector<ChildResult> all;
    auto give_up = std::chrono::steady_clock::now() + 30s;
    while (sup.running() > 0 && std::chrono::steady_clock::now() < give_up) {
        auto got = sup.wait_any(1s);
        REQUIRE(got.has_value());
        all.insert(all.end(), got->begin(), got->end());
    }
    REQUIRE(sup.running() == 0);
    return all;
}

} // namespace emurun::test
