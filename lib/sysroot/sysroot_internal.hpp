// Private helpers shared by sysroot.cpp (library lookup) and sysroot_prefix.cpp (loader prefix).
#pragma once

#include <emurun/arch.hpp>

#include <chrono>
#include <cstddef>
#include <filesystem>
#include <vector>

namespace emurun::detail {

/// True when the file at `p` starts with an ELF header of `arch` (the kernel's magic/mask rule):
/// the check a target loader makes before it accepts a candidate library.
bool is_object_of(const std::filesystem::path& p, const Arch& arch);

/// Directories a Debian-built loader of `arch` searches by default, relative to a sysroot.
std::vector<std::filesystem::path> default_lib_dirs(const Arch& arch);

} // namespace emurun::detail

namespace emurun::detail {

/// The file in each merged-prefix version that lists its sysroots (one a line), for pruning.
inline constexpr const char* k_prefix_sources = ".emurun-sources";

/// Remove from the merged-prefix cache dir `base` what no one can use any more: versions that
/// are not current and older than `grace` (a process started on one may still open libraries),
/// prefixes whose sysroots no longer exist, dangling names, leftovers of interrupted builds
/// (older than an hour), and prefix dirs of older emurun versions not used for 30 days.
/// Returns how many entries were removed; never fails (what cannot be removed stays).
std::size_t prune_ld_prefixes(const std::filesystem::path& base, std::chrono::seconds grace);

} // namespace emurun::detail
