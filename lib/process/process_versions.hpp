// The versions of SpawnOptions (util/versioned.hpp): every field after struct_size, in declaration
// order, with the version that added it (1 unless said). A new field goes at the struct's end
// and here, with the next version.
#pragma once

#include "util/versioned.hpp"

#include <emurun/process.hpp>

#include <string_view>
#include <tuple>

namespace emurun::util {

template <> struct Versions<SpawnOptions> {
    static constexpr std::string_view name = "SpawnOptions";
    static constexpr auto fields =
        std::tuple{util::field(&SpawnOptions::stdout_log), util::field(&SpawnOptions::stderr_log),
                   util::field(&SpawnOptions::on_output),  util::field(&SpawnOptions::stdin_null),
                   util::field(&SpawnOptions::timeout),    util::field(&SpawnOptions::idle_timeout),
                   util::field(&SpawnOptions::grace),      util::field(&SpawnOptions::limits)};
};

} // namespace emurun::util
