// The versions of LaunchRequest (util/versioned.hpp): every field after struct_size, in declaration
// order, with the version that added it (1 unless said). A new field goes at the struct's end
// and here, with the next version.
#pragma once

#include "util/versioned.hpp"

#include <emurun/launch.hpp>

#include <string_view>
#include <tuple>

namespace emurun::util {

template <> struct Versions<LaunchRequest> {
    static constexpr std::string_view name = "LaunchRequest";
    static constexpr auto fields =
        std::tuple{util::field(&LaunchRequest::program),  util::field(&LaunchRequest::args),
                   util::field(&LaunchRequest::argv0),    util::field(&LaunchRequest::arch),
                   util::field(&LaunchRequest::sysroots), util::field(&LaunchRequest::cpu),
                   util::field(&LaunchRequest::env),      util::field(&LaunchRequest::emulators)};
};

} // namespace emurun::util
