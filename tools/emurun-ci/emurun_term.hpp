// emurun_term: what emurun's CLI shows on a terminal, apart from the library: the colour of a
// report's status cells, doctor's text with the CLI's own spelling of request fields, and the
// non-blocking writer of what a run prints. The library hands over data (Report, DoctorReport,
// the Runner's RunEvent and step output through RunnerOptions::on_event / on_output); how it
// looks is decided here. Part of the emurun_ci target; not installed.
#pragma once

#include <emurun/doctor.hpp>
#include <emurun/error.hpp>
#include <emurun/report.hpp>

#include <chrono>
#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

namespace emurun {

/// A StatusStyle for to_table on a colour terminal: the status text in green (passed, reused),
/// red (counts_as_failure) or yellow (skipped, not run).
[[nodiscard]] std::string status_color(StepStatus status, std::string_view text);

/// One line per check: "OK    kernel: Linux 6.1.0 ..." and for WARN/FAIL "      fix: ...",
/// the fix's field spelled by `spell` (DoctorCheck::fix_text).
[[nodiscard]] std::string format_doctor_text(const DoctorReport& report, FieldSpelling spell);

/// One of the caller's own output streams (stdout or stderr), written without blocking: what a
/// run prints while steps run, so that a reader that stalls or goes away never holds up the run
/// (timeouts, later steps, the report). A pipe, FIFO or terminal is reopened non-blocking
/// through /proc/self/fd (a description of our own: the one shared with the shell keeps its
/// flags); a socket is written with MSG_DONTWAIT; a regular file is written directly. When the
/// reader is slow, up to k_queue_limit bytes wait in memory; beyond that, step output is dropped
/// from this stream (the logs have all of it) with one notice. A reader that went away (EPIPE;
/// the caller ignores SIGPIPE) drops the stream the same way.
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
    /// The caller's own lines (progress, results, the final table): always queued (they are
    /// small), never block here.
    void write(std::string_view data);
    /// At the end of the run: wait while the reader makes progress, give up (with a notice)
    /// once it took nothing for `stall_limit`.
    void drain(std::chrono::milliseconds stall_limit);
    /// The errno of the write that failed on this stream (EPIPE: its reader went away), or 0:
    /// what was printed here after it is lost.
    [[nodiscard]] int write_error() const;

  private:
    struct State;
    std::unique_ptr<State> m_state;
};

} // namespace emurun
