// Private: where emurun caches what it builds (merged loader prefixes, calibration).
//
// The rule, first match wins:
//   1. $EMURUN_CACHE_DIR (made absolute),
//   2. $XDG_CACHE_HOME/emurun when XDG_CACHE_HOME is absolute (the XDG spec ignores relative),
//   3. $HOME/.cache/emurun when HOME is absolute and writable (nobody's /nonexistent is not),
//   4. /tmp/emurun-$UID.
// Nothing is created here; the callers create what they store.
#pragma once

#include <filesystem>

namespace emurun::util {

/// emurun's cache directory by the rule above.
[[nodiscard]] std::filesystem::path cache_dir();

} // namespace emurun::util
