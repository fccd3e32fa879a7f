// Non-blocking output for `emurun run`: see run_output.hpp.
#include "run_output.hpp"

#include <algorithm>
#include <cerrno>
#include <climits>
#include <fcntl.h>
#include <poll.h>
#include <string>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

namespace emurun::cli {

OutputSink::OutputSink(int fd, std::string name, OutputSink* notices)
    : m_fd(fd), m_name(std::move(name)), m_notices(notices != nullptr ? notices : this) {
    struct stat st {};
    if (::fstat(fd, &st) != 0) {
        m_closed = true; // not open: nothing to print to
        return;
    }
    if (S_ISSOCK(st.st_mode)) {
        m_socket = true;
    } else if (S_ISFIFO(st.st_mode) || S_ISCHR(st.st_mode)) {
        // A description of our own, so O_NONBLOCK does not leak to the shell sharing fd 1.
        const std::string path = "/proc/self/fd/" + std::to_string(fd);
        m_own = ::open(path.c_str(), O_WRONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
        if (m_own >= 0) {
            m_fd = m_own;
        } else if (errno == ENXIO) {
            m_closed = true; // a FIFO without a reader
        }
        // Else (no /proc): the original, blocking; flush_some() writes only when poll allows.
    }
}

OutputSink::~OutputSink() {
    if (m_own >= 0) {
        ::close(m_own);
    }
}

void OutputSink::write_step_output(std::string_view data) {
    if (m_closed || m_dropping) {
        return;
    }
    if (m_queue.size() + data.size() > k_queue_limit) {
        flush_some();
        if (m_queue.size() + data.size() > k_queue_limit) {
            drop("is not being read");
            return;
        }
    }
    m_queue.append(data);
    flush_some();
}

void OutputSink::write(std::string_view data) {
    if (m_closed) {
        return;
    }
    if (m_dropping && !m_queue.empty() && m_queue.back() != '\n') {
        m_queue.push_back('\n'); // step output was cut mid-line: our line starts on its own
    }
    m_queue.append(data);
    flush_some();
}

void OutputSink::flush_some() {
    while (!m_queue.empty() && !m_closed) {
        // Without a non-blocking description, write only what poll says fits (a pipe takes
        // PIPE_BUF bytes at once when it says writable).
        const bool blocking = m_own < 0 && !m_socket;
        if (blocking && !wait_writable(std::chrono::milliseconds(0))) {
            return;
        }
        const std::size_t size =
            blocking ? std::min<std::size_t>(m_queue.size(), PIPE_BUF) : m_queue.size();
        const ssize_t n = m_socket ? ::send(m_fd, m_queue.data(), size, MSG_DONTWAIT | MSG_NOSIGNAL)
                                   : ::write(m_fd, m_queue.data(), size);
        if (n > 0) {
            m_queue.erase(0, static_cast<std::size_t>(n));
        } else if (n < 0 && errno == EINTR) {
            continue;
        } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            return;
        } else {
            m_closed = true; // EPIPE and the like: the reader is gone
            m_queue.clear();
            if (m_notices != this) {
                drop("was closed by its reader");
            }
            return;
        }
    }
}

bool OutputSink::wait_writable(std::chrono::milliseconds timeout) const {
    pollfd p{m_fd, POLLOUT, 0};
    const int n = ::poll(&p, 1, static_cast<int>(timeout.count()));
    return n > 0 && (p.revents & POLLOUT) != 0;
}

void OutputSink::drain(std::chrono::milliseconds stall_limit) {
    while (!m_queue.empty() && !m_closed) {
        const std::size_t before = m_queue.size();
        if (wait_writable(stall_limit)) {
            flush_some();
        }
        if (m_queue.size() == before && !m_closed) {
            m_queue.clear();
            m_closed = true;
            if (m_notices != this) {
                m_notices->write("emurun: warning: " + m_name + " took nothing for " +
                                 std::to_string(stall_limit.count() / 1000) +
                                 " s: the rest of the output is not printed (the report and "
                                 "the logs have it)\n");
            }
        }
    }
}

void OutputSink::drop(std::string_view why) {
    if (m_dropping) {
        return;
    }
    m_dropping = true;
    m_notices->write("emurun: warning: " + m_name + " " + std::string(why) +
                     ": step output is no longer printed there (the logs have all of it)\n");
}

} // namespace emurun::cli
