#include "util/fd.hpp"

#include <cerrno>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/socket.h>
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
