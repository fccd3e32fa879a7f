// The files binfmt entries persist in: systemd's binfmt.d and Debian's update-binfmts formats,
// written by `emurun binfmt export` and read by `import`. Part of the binfmt module.
// Layer: core. Its ABI is kept within a SOVERSION (abi/libemurun.abi; docs/api/mainpage.md).
#pragma once

#include <emurun/binfmt.hpp>
#include <emurun/error.hpp>
#include <emurun/export.hpp>

#include <filesystem>
#include <vector>

namespace emurun {

/// The file formats of export and import.
enum class BinfmtFileFormat {
    binfmt_d,       ///< systemd's binfmt.d: DIR/NAME.conf
    update_binfmts, ///< Debian's update-binfmts: DIR/NAME
};

/// Write `entry` to its own file in the existing directory `dir` (atomically: a reader sees the
/// old file or the new one) and return its path. Errors: the format cannot express the entry,
/// the file cannot be written.
[[nodiscard]] EMURUN_EXPORT Result<std::filesystem::path>
export_binfmt_file(const BinfmtEntry& entry, BinfmtFileFormat format,
                   const std::filesystem::path& dir);

/// The entries of one file to import: a binfmt.d file when its name ends in ".conf", else an
/// update-binfmts file (one entry, named after the file). Errors name the file: it cannot be
/// read (missing, not a regular file, over 1 MiB), a line does not parse, or it holds no entry.
[[nodiscard]] EMURUN_EXPORT Result<std::vector<BinfmtEntry>>
read_binfmt_file(const std::filesystem::path& file);

} // namespace emurun
