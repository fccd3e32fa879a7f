// Private: the sidecar file format of the shim module (SHIMDIR/.emurun-shims/NAME.json).
#pragma once

#include <emurun/shim.hpp>

#include <filesystem>
#include <string>

namespace emurun::shim_detail {

/// Version written to and required in every sidecar.
inline constexpr int k_format = 1;

/// SHIMDIR/.emurun-shims/NAME.json for the shim executable `shim_path`.
std::filesystem::path sidecar_path(const std::filesystem::path& shim_path);

/// The sidecar text for `info`; paths inside the shim dir are stored relative to it.
Result<std::string> to_sidecar(const ShimInfo& info);

/// Parse a sidecar read from `file` for the shim at `shim_path`; relative paths are resolved
/// against the shim's directory.
Result<ShimInfo> from_sidecar(const std::string& text, const std::filesystem::path& shim_path,
                              const std::filesystem::path& file);

} // namespace emurun::shim_detail
