// Private helpers of the qemu module.
#pragma once

#include <emurun/qemu.hpp>

#include <optional>
#include <string>

namespace emurun::detail {

/// emulator_version() without its memory: scans the binary for QEMU's banner.
std::optional<std::string> read_emulator_version(const Emulator& emu);

} // namespace emurun::detail
