// The versions of SysrootRequest (util/versioned.hpp): every field after struct_size, in
// declaration order, with the version that added it (1 unless said). A new field goes at the
// struct's end and here, with the next version.
#pragma once

#include "util/versioned.hpp"

#include <emurun/sysroot.hpp>

#include <string_view>
#include <tuple>

namespace emurun::util {

template <> struct Versions<SysrootRequest> {
    static constexpr std::string_view name = "SysrootRequest";
    static constexpr auto fields =
        std::tuple{util::field(&SysrootRequest::op),     util::field(&SysrootRequest::arch),
                   util::field(&SysrootRequest::dir),    util::field(&SysrootRequest::packages),
                   util::field(&SysrootRequest::cache),  util::field(&SysrootRequest::mirror),
                   util::field(&SysrootRequest::suite),  util::field(&SysrootRequest::profiles),
                   util::field(&SysrootRequest::refresh)};
};

} // namespace emurun::util
