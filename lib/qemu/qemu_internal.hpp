// Private helpers of the qemu module.
#pragma once

#include <emurun/qemu.hpp>

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace emurun::detail {

/// emulator_version() without its memory: scans the binary for QEMU's banner.
std::optional<std::string> read_emulator_version(const Emulator& emu);

/// The directories `search` looks in, in order: its dirs, then (system) $EMURUN_QEMU_DIR,
/// PATH, /usr/bin.
std::vector<std::filesystem::path> search_dirs(const EmulatorSearch& search);

/// qemu-<cpu>-static and qemu-<cpu>, in the preferred order.
std::vector<std::string> candidate_names(const Arch& arch, bool prefer_static);

/// The Emulator for `path` (made absolute; static when its ELF has no interpreter).
Emulator make_emulator(const Arch& arch, const std::filesystem::path& path);

} // namespace emurun::detail
