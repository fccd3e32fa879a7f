// Private: where emurun caches what it builds (merged loader prefixes, calibration).
//
// The rule, first match wins:
//   1. $EMURUN_CACHE_DIR (made absolute),
//   2. $XDG_CACHE_HOME/emurun when XDG_CACHE_HOME is absolute (the XDG spec ignores relative),
//   3. $HOME/.cache/emurun when HOME is absolute and writable (nobody's /nonexistent is not),
//   4. /tmp/emurun-$UID (created 0700 here), used only when it is a directory of this user
//      closed to others; else (another user made it first, or a symlink) a fresh private
//      /tmp/emurun-$UID-XXXXXX for this process: a loader prefix decides what programs load.
// The callers create what they store below it.
#pragma once

#include <filesystem>

namespace emurun::util {

/// emurun's cache directory by the rule above.
[[nodiscard]] std::filesystem::path cache_dir();

/// `wanted` (created 0700 when missing) when it is a directory of this user that no one else
/// can write (a 0755 one is closed to 0700); else a fresh private `wanted`-XXXXXX (empty path
/// when even that cannot be made). For shared places such as /tmp, where another user may have
/// made the name first.
[[nodiscard]] std::filesystem::path private_dir(const std::filesystem::path& wanted);

} // namespace emurun::util
