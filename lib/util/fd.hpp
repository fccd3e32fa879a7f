// Private: the one owner of a file descriptor in emurun.
#pragma once

#include <emurun/error.hpp>

#include <filesystem>
#include <string>
#include <utility>

namespace emurun::util {

/// Owns one file descriptor and closes it when destroyed or reset. Move-only.
/// close(2) is never retried: on Linux the descriptor is released even when close reports
/// EINTR, and a retry could close a descriptor another thread has just been given.
class UniqueFd {
  public:
    UniqueFd() = default;
    explicit UniqueFd(int fd) noexcept : m_fd(fd) {}
    UniqueFd(UniqueFd&& other) noexcept : m_fd(other.release()) {}
    UniqueFd& operator=(UniqueFd&& other) noexcept {
        reset(other.release());
        return *this;
    }
    UniqueFd(const UniqueFd&) = delete;
    UniqueFd& operator=(const UniqueFd&) = delete;
    ~UniqueFd() { reset(); }

    /// The descriptor, or -1.
    [[nodiscard]] int get() const noexcept { return m_fd; }
    /// True while a descriptor is owned.
    [[nodiscard]] bool valid() const noexcept { return m_fd >= 0; }
    explicit operator bool() const noexcept { return valid(); }

    /// Give up ownership without closing; returns the descriptor.
    [[nodiscard]] int release() noexcept { return std::exchange(m_fd, -1); }
    /// Close the owned descriptor (errors ignored) and own `fd` instead.
    void reset(int fd = -1) noexcept;
    /// Close now and report close's own error, for files just written (NFS and some disks
    /// report a failed write-back only here). EINTR counts as closed, see above. `what` names
    /// the file in the error: "close FILE failed: ...".
    [[nodiscard]] Result<void> close(const std::string& what);

  private:
    int m_fd = -1;
};

/// An exclusive flock(2) held until destruction: closing the only descriptor releases it.
class FileLock {
  public:
    /// Wait for the lock on `path`: a file (created when missing) or, with `is_dir`, an existing
    /// directory. Errors name the file; `hint` says what to do when it cannot be opened.
    [[nodiscard]] static Result<FileLock> acquire(const std::filesystem::path& path, bool is_dir,
                                                  const std::string& hint = {});

  private:
    explicit FileLock(UniqueFd fd) : m_fd(std::move(fd)) {}
    UniqueFd m_fd;
};

/// openat2(2) of `rel` beneath the directory `dirfd` with RESOLVE_BENEATH and
/// RESOLVE_NO_MAGICLINKS: no "..", absolute path or symlink (of the tree or of /proc) leads out
/// of it; `flags` get O_CLOEXEC. For every path a file or an archive names. The new descriptor,
/// or -1 with errno: EXDEV or ELOOP for a path that leads out; EINTR and EAGAIN (a rename raced
/// the lookup) are retried. Without openat2 (ENOSYS: Linux before 5.6, qemu-user before 9.1,
/// which runs emurun's own tests on other arches) the same rules are kept by
/// open_beneath_walk, never by a plain open.
[[nodiscard]] int openat2_beneath(int dirfd, const char* rel, int flags, unsigned mode);

/// openat2_beneath's rules without openat2: each component opened with O_NOFOLLOW from the
/// directory descriptors walked so far; a symlink's target is spliced into the path (the kernel
/// never follows one, so no /proc magic link is followed); ".." returns to the descriptor of
/// the directory walked before (never the real parent); an absolute path or link target or a
/// ".." above `dirfd` is EXDEV, more than 40 links ELOOP. O_NOFOLLOW in `flags` keeps a last
/// component that is a symlink as the kernel would (ELOOP).
[[nodiscard]] int open_beneath_walk(int dirfd, const char* rel, int flags, unsigned mode);

/// The read and write ends of a new pipe, both close-on-exec.
/// Error: "pipe2 failed: Too many open files (too many open files? (ulimit -n))".
[[nodiscard]] Result<std::pair<UniqueFd, UniqueFd>> make_pipe();

/// Both ends of a new AF_UNIX stream socket pair, close-on-exec (a pipe that works both ways).
[[nodiscard]] Result<std::pair<UniqueFd, UniqueFd>> make_socket_pair();

} // namespace emurun::util
