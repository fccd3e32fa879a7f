// Private: file and kernel I/O shared by the binfmt operations.
#pragma once

#include "util/fd.hpp"

#include <emurun/binfmt.hpp>

#include <filesystem>
#include <string>
#include <string_view>

namespace emurun::detail {

/// write(2) `data` to an existing file in one call, as the kernel's binfmt files require.
Result<void> write_control(const std::filesystem::path& path, std::string_view data,
                           std::string_view hint = {});

/// The lock guarding `options.mount`: `options.lock_file`, or the mount directory itself.
Result<util::FileLock> lock_binfmt(const BinfmtOptions& options);

/// Kernel major/minor from uname, {0, 0} when unknown.
std::pair<int, int> kernel_version();

} // namespace emurun::detail
