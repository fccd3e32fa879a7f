// Private: an owned file descriptor for the process module.
#pragma once

#include <unistd.h>
#include <utility>

namespace emurun::detail {

/// Closes its descriptor when destroyed or reset.
class UniqueFd {
  public:
    UniqueFd() = default;
    explicit UniqueFd(int fd) : m_fd(fd) {}
    UniqueFd(UniqueFd&& o) noexcept : m_fd(std::exchange(o.m_fd, -1)) {}
    UniqueFd& operator=(UniqueFd&& o) noexcept {
        reset(std::exchange(o.m_fd, -1));
        return *this;
    }
    UniqueFd(const UniqueFd&) = delete;
    UniqueFd& operator=(const UniqueFd&) = delete;
    ~UniqueFd() { reset(); }
    void reset(int fd = -1) {
        if (m_fd >= 0) {
            ::close(m_fd);
        }
        m_fd = fd;
    }
    [[nodiscard]] int get() const { return m_fd; }
    [[nodiscard]] bool open() const { return m_fd >= 0; }

  private:
    int m_fd = -1;
};

} // namespace emurun::detail
