#include "util/fd.hpp"

#include <cerrno>
#include <climits>
#include <cstdint>
#include <fcntl.h>
#include <linux/openat2.h>
#include <string>
#include <string_view>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <vector>

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

namespace {

constexpr int k_max_links = 40;

int fail_with(int error) {
    errno = error;
    return -1;
}

/// Pushes the components of `path` ("" and "." dropped) so that the first is popped first.
void push_components(std::vector<std::string>& pending, std::string_view path) {
    std::vector<std::string> parts;
    for (std::size_t i = 0; i <= path.size();) {
        std::size_t j = path.find('/', i);
        j = j == std::string_view::npos ? path.size() : j;
        if (const auto c = path.substr(i, j - i); !c.empty() && c != ".") {
            parts.emplace_back(c);
        }
        i = j + 1;
    }
    pending.insert(pending.end(), parts.rbegin(), parts.rend());
}

/// The target of the symlink `name` in `dir`, or "" with errno.
std::string link_target(int dir, const std::string& name) {
    std::string target(PATH_MAX, '\0');
    const ssize_t n = ::readlinkat(dir, name.c_str(), target.data(), target.size());
    target.resize(n > 0 ? static_cast<std::size_t>(n) : 0);
    return target;
}

} // namespace

int open_beneath_walk(int dirfd, const char* rel, int flags, unsigned mode) {
    if (rel[0] == '/') {
        return fail_with(EXDEV);
    }
    std::vector<UniqueFd> dirs; // the directories walked below dirfd
    auto cur = [&] { return dirs.empty() ? dirfd : dirs.back().get(); };
    std::vector<std::string> pending;
    push_components(pending, rel);
    int links = 0;
    while (!pending.empty()) {
        const std::string c = std::move(pending.back());
        pending.pop_back();
        if (c == "..") {
            if (dirs.empty()) {
                return fail_with(EXDEV);
            }
            dirs.pop_back();
            continue;
        }
        const bool last = pending.empty();
        struct stat st {};
        const bool is_link =
            ::fstatat(cur(), c.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode);
        if (is_link && !(last && (flags & O_NOFOLLOW) != 0)) {
            const std::string target = link_target(cur(), c);
            if (++links > k_max_links) {
                return fail_with(ELOOP);
            }
            if (target.empty() || target.front() == '/') {
                return fail_with(target.empty() ? ENOENT : EXDEV);
            }
            push_components(pending, target);
            continue;
        }
        if (last) {
            return ::openat(cur(), c.c_str(), flags | O_NOFOLLOW | O_CLOEXEC, mode);
        }
        UniqueFd next(::openat(cur(), c.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
        if (!next) {
            return -1;
        }
        dirs.push_back(std::move(next));
    }
    return ::openat(cur(), ".", flags | O_CLOEXEC, mode); // the path named dirfd itself
}

int openat2_beneath(int dirfd, const char* rel, int flags, unsigned mode) {
    struct open_how how {};
    how.flags = static_cast<std::uint64_t>(flags) | O_CLOEXEC;
    how.mode = (flags & (O_CREAT | O_TMPFILE)) != 0 ? mode : 0;
    how.resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS;
    for (int tries = 0;; ++tries) {
        const long fd = ::syscall(SYS_openat2, dirfd, rel, &how, sizeof how);
        if (fd < 0 && errno == ENOSYS) {
            return open_beneath_walk(dirfd, rel, flags, mode);
        }
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
