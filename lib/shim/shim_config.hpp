// Private: the sidecar file format of the shim module (SHIMDIR/.emurun-shims/NAME.json).
#pragma once

#include <emurun/launch.hpp>
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

/// SHIMDIR/.emurun-shims/NAME.rec, the shim's launch record.
std::filesystem::path record_path(const std::filesystem::path& shim_path);

/// SHIMDIR/.emurun-shims/NAME.emurun, the symlink to the emurun that plans the shim again.
std::filesystem::path emurun_link_path(const std::filesystem::path& shim_path);

/// Whether the shim `shim_path`'s .emurun-shims is a directory (not a symlink) of this user:
/// the launcher replays its files only while one owner has them all, and the owner of the
/// directory can replace any file in it.
bool shim_files_ours(const std::filesystem::path& shim_path);

/// A shim planned: what its sidecar says and the plan its record replays.
struct PlannedShim {
    ShimInfo info;
    LaunchPlan plan;
};

/// Plan shim `spec.name` in `dir`: the target checked now (exists, ELF of the right arch,
/// emulator, libraries), so a broken shim fails with a precise message.
Result<PlannedShim> plan_shim(const std::filesystem::path& dir, const ShimSpec& spec);

/// Write the shim's sidecar, the link to `launcher` (what a shim hands over to when its record
/// is stale, corrupt or missing: run with ELR_SHIM_REPLAN, the launcher passes it to its emurun
/// CLI) and the launch record, in that order; no record (an error) when a file the plan read
/// changed since `planned_at`, the time the plan began.
Result<void> write_shim_files(const PlannedShim& shim, const std::filesystem::path& launcher,
                              const std::optional<timespec>& planned_at = std::nullopt);

/// Parse a sidecar read from `file` for the shim at `shim_path`; relative paths are resolved
/// against the shim's directory.
Result<ShimInfo> from_sidecar(const std::string& text, const std::filesystem::path& shim_path,
                              const std::filesystem::path& file);

} // namespace emurun::shim_detail
