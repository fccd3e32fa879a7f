// The Arch of a name the tests know to exist (a failed REQUIRE otherwise).
#pragma once

#include <emurun/arch.hpp>

#include <doctest/doctest.h>

namespace emurun::test {

inline const Arch* known_arch(const char* name) {
    auto a = find_arch(name);
    REQUIRE(a.has_value());
    return *a;
}

} // namespace emurun::test
