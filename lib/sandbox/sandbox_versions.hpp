// The versions of SandboxSpec (util/versioned.hpp): every field after struct_size, in declaration
// order, with the version that added it (1 unless said). A new field goes at the struct's end
// and here, with the next version.
#pragma once

#include "util/versioned.hpp"

#include <emurun/sandbox.hpp>

#include <string_view>
#include <tuple>

namespace emurun::util {

template <> struct Versions<SandboxSpec> {
    static constexpr std::string_view name = "SandboxSpec";
    static constexpr auto fields =
        std::tuple{util::field(&SandboxSpec::arches),    util::field(&SandboxSpec::sysroots),
                   util::field(&SandboxSpec::env),       util::field(&SandboxSpec::cpu),
                   util::field(&SandboxSpec::emulators), util::field(&SandboxSpec::emurun_exe),
                   util::field(&SandboxSpec::cache_dir), util::field(&SandboxSpec::diagnostics)};
};

} // namespace emurun::util
