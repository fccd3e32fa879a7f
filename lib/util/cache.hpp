// Private: where emurun caches what it builds (merged loader prefixes, calibration).
//
// The rule, first match wins:
//   1. $EMURUN_CACHE_DIR (made absolute),
//   2. $XDG_CACHE_HOME/emurun when XDG_CACHE_HOME is absolute (the XDG spec ignores relative),
//   3. $HOME/.cache/emurun when HOME is absolute and writable (nobody's /nonexistent is not),
//   4. /tmp/emurun-$UID (created 0700 here), used only when it is a directory of this user
//      closed to others; else (another user made it first, or a symlink) the first of
//      /tmp/emurun-$UID-1 .. -9 that is (made when missing: the same one every run, so a
//      squatted name costs one dir, not one per run); else a fresh /tmp/emurun-$UID-XXXXXX.
// Whatever the source, the dir is used only after own_cache_dir accepts it: what a cache
// holds decides what programs load (a loader prefix), so a dir another user can change is
// refused, never trusted. The callers create what they store below it.
#pragma once

#include <emurun/error.hpp>

#include <filesystem>

namespace emurun::util {

/// emurun's cache directory by the rule above (not yet checked: see own_cache_dir).
[[nodiscard]] std::filesystem::path cache_dir();

/// `dir` made when missing (0700, missing parents with the umask's mode), then accepted only
/// when it is a real directory of this user (effective uid) that neither group nor others can
/// write, below parents only this user or root can change (a sticky one such as /tmp counts as
/// closed). Else an Error naming the dir, who can change it and what to do.
[[nodiscard]] Result<std::filesystem::path> own_cache_dir(const std::filesystem::path& dir);

/// `cache/sub` (`cache` accepted by own_cache_dir; `sub` relative, each of its directories
/// made 0755 when missing, never through a symlink) accepted only by the same rule: a real
/// directory of this user that neither group nor others can write. Every directory emurun uses
/// below its cache dir is reached through this: what a subdirectory another user can change
/// holds (a loader prefix) would be what root's programs load.
[[nodiscard]] Result<std::filesystem::path> own_cache_subdir(const std::filesystem::path& cache,
                                                             const std::filesystem::path& sub);

/// cache_dir(), checked by own_cache_dir.
[[nodiscard]] Result<std::filesystem::path> checked_cache_dir();

inline constexpr int k_private_tries = 9;

/// `wanted` (created 0700 when missing) when it is a directory of this user that no one else
/// can write (a 0755 one is closed to 0700); else the first of `wanted`-1 .. -k_private_tries
/// that is (made when missing); else a fresh private `wanted`-XXXXXX (empty path when even that
/// cannot be made). For shared places such as /tmp, where another user may have made the name
/// first.
[[nodiscard]] std::filesystem::path private_dir(const std::filesystem::path& wanted);

} // namespace emurun::util
