#include "util/fd.hpp"

#include <cerrno>
#include <cstdint>
#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace emurun::util {

void UniqueFd::reset(int fd) noexcept {
    if (m_fd >= 0 && m_fd != fd) {
        ::close(m_fd);
    }
    m_fd = fd;
}

Result<void> UniqueFd::close(const std::string& what) {
    const int fd = release();
    if (fd >= 0 && ::close(fd) != 0 && errno != EINTR) {
        return std::unexpected(system_error("close " + what, errno));
    }
    return {};
}

int openat2_beneath(int dirfd, const char* rel, int flags, unsigned mode) {
    struct open_how how {};
    how.flags = static_cast<std::uint64_t>(flags) | O_CLOEXEC;
    how.mode = (flags & (O_CREAT | O_TMPFILE)) != 0 ? mode : 0;
    how.resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS;
    for (int tries = 0;; ++tries) {
        const long fd = ::syscall(SYS_openat2, dirfd, rel, &how, sizeof how);
        if (fd >= 0 || !(errno == EINTR || (errno == EAGAIN && tries < 100))) {
            return static_cast<int>(fd); // EAGAIN: a rename raced the lookup
        }
    }
}

Result<FileLock> FileLock::acquire(const std::filesystem::path& path, bool is_dir,
                                   const std::string& hint) {
    const int flags = O_RDONLY | O_CLOEXEC | (is_dir ? O_DIRECTORY : O_CREAT);
    UniqueFd fd(::open(path.c_str(), flags, 0644));
    if (!fd) {
        return std::unexpected(system_error("open lock " + path.string(), errno, hint));
    }
    while (::flock(fd.get(), LOCK_EX) != 0) {
        if (errno != EINTR) {
            return std::unexpected(system_error("flock " + path.string(), errno));
        }
    }
    return FileLock(std::move(fd));
}

Result<std::pair<UniqueFd, UniqueFd>> make_pipe() {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) {
        return std::unexpected(system_error("pipe2", errno, "too many open files? (ulimit -n)"));
    }
    return std::pair{UniqueFd(fds[0]), UniqueFd(fds[1])};
}

Result<std::pair<UniqueFd, UniqueFd>> make_socket_pair() {
    int fds[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0) {
        return std::unexpected(
            system_error("socketpair", errno, "too many open files? (ulimit -n)"));
    }
    return std::pair{UniqueFd(fds[0]), UniqueFd(fds[1])};
}

} // namespace emurun::util
