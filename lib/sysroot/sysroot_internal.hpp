// Private helpers shared by sysroot.cpp (library lookup) and sysroot_prefix.cpp (loader prefix).
#pragma once

#include <emurun/arch.hpp>

#include <filesystem>
#include <vector>

namespace emurun::detail {

/// True when the file at `p` starts with an ELF header of `arch` (the kernel's magic/mask rule):
/// the check a target loader makes before it accepts a candidate library.
bool is_object_of(const std::filesystem::path& p, const Arch& arch);

/// Directories a Debian-built loader of `arch` searches by default, relative to a sysroot.
std::vector<std::filesystem::path> default_lib_dirs(const Arch& arch);

} // namespace emurun::detail
