#include <emurun/arch.hpp>

#include <doctest/doctest.h>

TEST_CASE("arch: aarch64 resolves by alias") {
    auto a = emurun::find_arch("arm64");
    REQUIRE(a.has_value());
    CHECK((*a)->name == "aarch64");
}
