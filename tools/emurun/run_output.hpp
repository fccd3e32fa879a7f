// What `emurun run` prints while steps run: step output and progress lines, written so that a
// reader that stalls or goes away never holds up the run (timeouts, later steps, the report).
#pragma once

#include <chrono>
#include <string>
#include <string_view>

namespace emurun::cli {

/// One of emurun's own output streams (stdout or stderr), written without blocking. A pipe, FIFO
/// or terminal is reopened non-blocking through /proc/self/fd (a description of our own: the
/// one shared with the shell keeps its flags); a socket is written with MSG_DONTWAIT; a regular
/// file is written directly. When the reader is slow, up to k_queue_limit bytes wait in memory;
/// beyond that, step output is dropped from this stream (the logs have all of it) with one
/// notice on stderr. A reader that went away (EPIPE; SIGPIPE is ignored by `run`) drops the
/// stream the same way.
class OutputSink {
  public:
    static constexpr std::size_t k_queue_limit = 1024 * 1024;

    /// `fd` is STDOUT_FILENO or STDERR_FILENO; `name` says which in the notice, which goes to
    /// `notices` (nullptr: this sink itself).
    OutputSink(int fd, std::string name, OutputSink* notices = nullptr);
    ~OutputSink();
    OutputSink(const OutputSink&) = delete;
    OutputSink& operator=(const OutputSink&) = delete;

    /// Step output: queued and written as far as the reader takes it; dropped once the queue
    /// would pass k_queue_limit (then for the rest of the run).
    void write_step_output(std::string_view data);
    /// emurun's own lines (progress, results, the final table): always queued (they are
    /// small), never block here.
    void write(std::string_view data);
    /// At the end of the run: wait while the reader makes progress, give up (with a notice)
    /// once it took nothing for `stall_limit`.
    void drain(std::chrono::milliseconds stall_limit);

  private:
    void flush_some();
    bool wait_writable(std::chrono::milliseconds timeout) const;
    void drop(std::string_view why);

    int m_fd;       ///< where writes go: m_own when reopened, else the original
    int m_own = -1; ///< our non-blocking reopen of the original, closed at the end
    bool m_socket = false;
    std::string m_name;
    OutputSink* m_notices;
    std::string m_queue;
    bool m_dropping = false; ///< step output is no longer printed here
    bool m_closed = false;   ///< the reader is gone: nothing more is written
};

} // namespace emurun::cli
