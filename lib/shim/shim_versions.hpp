// The versions of ShimSpec (util/versioned.hpp): every field after struct_size, in declaration
// order, with the version that added it (1 unless said). A new field goes at the struct's end
// and here, with the next version.
#pragma once

#include "util/versioned.hpp"

#include <emurun/shim.hpp>

#include <string_view>
#include <tuple>

namespace emurun::util {

template <> struct Versions<ShimSpec> {
    static constexpr std::string_view name = "ShimSpec";
    static constexpr auto fields =
        std::tuple{util::field(&ShimSpec::name),     util::field(&ShimSpec::target),
                   util::field(&ShimSpec::arch),     util::field(&ShimSpec::sysroots),
                   util::field(&ShimSpec::env),      util::field(&ShimSpec::cpu),
                   util::field(&ShimSpec::emulators)};
};

} // namespace emurun::util
