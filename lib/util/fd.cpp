#include "util/fd.hpp"

#include <cerrno>
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

} // namespace emurun::util
