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

/// A name of an arch this host does not run natively (the dogfood runs the unit tests on
/// aarch64, ppc64le and s390x): s390x, else aarch64.
inline const char* foreign_arch_name() {
    const Arch* host = host_arch();
    for (const char* name : {"s390x", "aarch64"}) {
        if (host == nullptr || !runs_natively_on(*host, *known_arch(name))) {
            return name;
        }
    }
    return "riscv64";
}

} // namespace emurun::test
