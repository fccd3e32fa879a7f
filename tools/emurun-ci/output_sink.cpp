// Non-blocking output for what a run prints: see OutputSink in emurun_term.hpp.
#include "emurun_term.hpp"

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <fcntl.h>
#include <poll.h>
#include <string>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

namespace emurun {

struct OutputSink::State {
    State(int original, std::string stream, OutputSink* notice_sink)
        : fd(original), name(std::move(stream)), notices(notice_sink) {}

    State(const State&) = delete;
    State& operator=(const State&) = delete;
    ~State() {
        if (own >= 0) {
            ::close(own); // never retried: the descriptor is released even on EINTR
        }
    }

    int fd;       ///< where writes go: own when reopened, else the original
    int own = -1; ///< our non-blocking reopen of the original, closed at the end
    bool socket = false;
    std::string name;
    OutputSink* notices;
    std::string queue;
    bool dropping = false; ///< step output is no longer printed here
    bool closed = false;   ///< the reader is gone: nothing more is written
    int error = 0;         ///< the errno of the write that failed (EPIPE: the reader went away)

    void flush_some(OutputSink& self);
    [[nodiscard]] bool wait_writable(std::chrono::milliseconds timeout) const;
    void drop(std::string_view why);
};

OutputSink::OutputSink(int fd, std::string name, OutputSink* notices)
    : m_state(std::make_unique<State>(fd, std::move(name), notices ? notices : this)) {
    State& s = *m_state;
    struct stat st {};
    if (::fstat(fd, &st) != 0) {
        s.closed = true; // not open: nothing to print to
        return;
    }
    if (S_ISSOCK(st.st_mode)) {
        s.socket = true;
    } else if (S_ISFIFO(st.st_mode) || S_ISCHR(st.st_mode)) {
        // A description of our own, so O_NONBLOCK does not leak to the shell sharing fd 1.
        const std::string path = "/proc/self/fd/" + std::to_string(fd);
        s.own = ::open(path.c_str(), O_WRONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
        if (s.own >= 0) {
            s.fd = s.own;
        } else if (errno == ENXIO) {
            s.closed = true; // a FIFO without a reader
        }
        // Else (no /proc): the original, blocking; flush_some() writes only when poll allows.
    }
}

OutputSink::~OutputSink() = default;

void OutputSink::write_step_output(std::string_view data) {
    State& s = *m_state;
    if (s.closed || s.dropping) {
        return;
    }
    if (s.queue.size() + data.size() > k_queue_limit) {
        s.flush_some(*this);
        if (s.queue.size() + data.size() > k_queue_limit) {
            s.drop("is not being read");
            return;
        }
    }
    s.queue.append(data);
    s.flush_some(*this);
}

void OutputSink::write(std::string_view data) {
    State& s = *m_state;
    if (s.closed) {
        return;
    }
    if (s.dropping && !s.queue.empty() && s.queue.back() != '\n') {
        s.queue.push_back('\n'); // step output was cut mid-line: our line starts on its own
    }
    s.queue.append(data);
    s.flush_some(*this);
}

void OutputSink::State::flush_some(OutputSink& self) {
    while (!queue.empty() && !closed) {
        // Without a non-blocking description, write only what poll says fits (a pipe takes
        // PIPE_BUF bytes at once when it says writable).
        const bool blocking = own < 0 && !socket;
        if (blocking && !wait_writable(std::chrono::milliseconds(0))) {
            return;
        }
        const std::size_t size =
            blocking ? std::min<std::size_t>(queue.size(), PIPE_BUF) : queue.size();
        const ssize_t n = socket ? ::send(fd, queue.data(), size, MSG_DONTWAIT | MSG_NOSIGNAL)
                                 : ::write(fd, queue.data(), size);
        if (n > 0) {
            queue.erase(0, static_cast<std::size_t>(n));
        } else if (n < 0 && errno == EINTR) {
            continue;
        } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            return;
        } else {
            error = n < 0 ? errno : EIO; // EPIPE: the reader is gone; ENOSPC: a full disk
            closed = true;
            queue.clear();
            if (notices != &self) {
                drop(error == EPIPE
                         ? std::string("was closed by its reader")
                         : "could not be written (" + std::string(std::strerror(error)) + ")");
            }
            return;
        }
    }
}

bool OutputSink::State::wait_writable(std::chrono::milliseconds timeout) const {
    pollfd p{fd, POLLOUT, 0};
    const int n = ::poll(&p, 1, static_cast<int>(timeout.count()));
    return n > 0 && (p.revents & POLLOUT) != 0;
}

void OutputSink::drain(std::chrono::milliseconds stall_limit) {
    State& s = *m_state;
    while (!s.queue.empty() && !s.closed) {
        const std::size_t before = s.queue.size();
        if (s.wait_writable(stall_limit)) {
            s.flush_some(*this);
        }
        if (s.queue.size() == before && !s.closed) {
            s.queue.clear();
            s.closed = true;
            if (s.notices != this) {
                s.notices->write("emurun: warning: " + s.name + " took nothing for " +
                                 std::to_string(stall_limit.count() / 1000) +
                                 " s: the rest of the output is not printed (the report and "
                                 "the logs have it)\n");
            }
        }
    }
}

int OutputSink::write_error() const {
    return m_state->error;
}

void OutputSink::State::drop(std::string_view why) {
    if (dropping) {
        return;
    }
    dropping = true;
    notices->write("emurun: warning: " + name + " " + std::string(why) +
                   ": step output is no longer printed there (the logs have all of it)\n");
}

} // namespace emurun
