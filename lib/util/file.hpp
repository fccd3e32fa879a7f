// Private: reading and writing whole files, the one way emurun does it.
#pragma once

#include "util/fd.hpp"

#include <emurun/error.hpp>

#include <cstddef>
#include <cstdint>
#include <ctime>
#include <filesystem>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <sys/types.h>
#include <vector>

namespace emurun::util {

/// The most a `tar -t` listing may print (an archive or image layer of millions of members is
/// refused, not buffered without bound): artifacts and image layers alike.
inline constexpr std::size_t k_max_tar_listing = 256 * 1024 * 1024;

/// No size limit for read_file().
inline constexpr std::size_t k_no_limit = std::numeric_limits<std::size_t>::max();

/// The whole content of the regular file `path` (kernel files under /proc and binfmt_misc,
/// which report size 0, included). Reads retry on EINTR. Errors name the call and strerror
/// ("open X failed: No such file or directory"); a FIFO, device, socket or directory is
/// refused at once ("read X: not a regular file (a FIFO)") instead of blocking on it; a file
/// larger than `max_bytes` is refused.
[[nodiscard]] Result<std::string> read_file(const std::filesystem::path& path,
                                            std::size_t max_bytes = k_no_limit);

/// open(2) `path` for reading, close-on-exec and without blocking on a FIFO (O_NONBLOCK, which
/// regular files ignore). Error: "open X failed: <strerror>".
[[nodiscard]] Result<UniqueFd> open_read(const std::filesystem::path& path);

/// read_file() on a descriptor the caller opened; `name` names it in errors.
[[nodiscard]] Result<std::string> read_fd(int fd, const std::string& name,
                                          std::size_t max_bytes = k_no_limit);

/// Up to `n` bytes from the start of `path`: for sniffing magic numbers and ELF headers.
/// Empty when the file cannot be opened or is not a regular file (never blocks on a FIFO).
[[nodiscard]] std::string read_head(const std::filesystem::path& path, std::size_t n);

/// Up to the last `n` bytes of `path`, for the tail of a log however large; in `*skipped` when
/// given, how many bytes before them were not read (0 for a file that reports size 0, as /proc's
/// do, or one that grew meanwhile). Empty when the file cannot be opened or is not a regular file.
[[nodiscard]] std::string read_tail(const std::filesystem::path& path, std::size_t n,
                                    std::uint64_t* skipped = nullptr);
/// read_tail on a descriptor the caller opened (openat2_beneath).
[[nodiscard]] std::string read_tail_fd(int fd, std::size_t n, std::uint64_t* skipped = nullptr);

/// Append `content` to the regular file `path` (created if missing). Opened non-blocking and
/// checked to be a regular file first, so a FIFO or a device there is an error, not a hang.
[[nodiscard]] Result<void> append_file(const std::filesystem::path& path, std::string_view content);

/// Error unless `path` names a file write_file_atomic() may replace: not empty, with a file
/// name, and not an existing directory, device, FIFO or socket (the rename would put a regular
/// file in place of /dev/null, say).
[[nodiscard]] Result<void> check_replaceable(const std::filesystem::path& path);

/// Replace `path` with `content` atomically (check_replaceable() first): a temporary file in the
/// same directory, written, chmod'ed to `mode`, fsync'ed (unless Durability::cache), renamed over
/// `path`. Readers see the old file or the new one, never a part. On any failure (full disk:
/// ENOSPC, quota, I/O error) the temporary file is removed, `path` is left as it was, and the error
/// names the call and the file. Durability::cache skips the fsync: for a file whose loss or tearing
/// in a crash costs only its recomputation (a launch record: a torn one is refused by its reader).
enum class Durability { synced, cache };
[[nodiscard]] Result<void> write_file_atomic(const std::filesystem::path& path,
                                             std::string_view content, mode_t mode = 0644,
                                             Durability durability = Durability::synced);

/// The time now on the fine realtime clock: files changed before it have no later ctime.
[[nodiscard]] timespec realtime_now();

/// The first of `paths` outside `except` (a dir; empty: none) whose ctime is not before `since`
/// (realtime_now() taken before something read them: it may have read what they were before);
/// nullopt when none.
[[nodiscard]] std::optional<std::filesystem::path>
changed_since(const std::vector<std::filesystem::path>& paths, const timespec& since,
              const std::filesystem::path& except);

/// A copy of the regular file `from` (not followed when a symlink) as a new temporary file
/// beside `to` (".NAME.XXXXXX", created with O_EXCL: never written through a symlink or into an
/// existing file), chmod'ed to `mode` and fsync'ed; its path, for the caller to rename over `to`
/// or remove. On any failure (full disk: ENOSPC, quota, I/O error) nothing is left and the error
/// names the call, the file and strerror.
[[nodiscard]] Result<std::filesystem::path> copy_to_temporary(const std::filesystem::path& from,
                                                              const std::filesystem::path& to,
                                                              mode_t mode = 0644);

/// write(2) all of `content` to `fd`, retrying on EINTR and short writes. Error: the errno.
[[nodiscard]] Result<void> write_all(int fd, std::string_view content, const std::string& name);

} // namespace emurun::util
