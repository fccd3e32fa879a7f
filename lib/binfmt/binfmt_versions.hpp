// The versions of BinfmtOptions (util/versioned.hpp): every field after struct_size, in declaration
// order, with the version that added it (1 unless said). A new field goes at the struct's end
// and here, with the next version.
#pragma once

#include "util/versioned.hpp"

#include <emurun/binfmt.hpp>

#include <string_view>
#include <tuple>

namespace emurun::util {

template <> struct Versions<BinfmtOptions> {
    static constexpr std::string_view name = "BinfmtOptions";
    static constexpr auto fields = std::tuple{util::field(&BinfmtOptions::mount),
                                              util::field(&BinfmtOptions::lock_file),
                                              util::field(&BinfmtOptions::mount_if_missing),
                                              util::field(&BinfmtOptions::dry_run),
                                              util::field(&BinfmtOptions::replace),
                                              util::field(&BinfmtOptions::allow_credentials),
                                              util::field(&BinfmtOptions::allow_open_binary),
                                              util::field(&BinfmtOptions::writer)};
};

} // namespace emurun::util
