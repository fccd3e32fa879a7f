// Private: the per-child supervisor process and its protocol with the poll loop.
#pragma once

#include "process/process_exec.hpp"

#include <sys/resource.h>

namespace emurun::detail {

/// Bytes the poll loop writes to a supervisor's control pipe. EOF (emurun died or gave up)
/// means SIGKILL.
inline constexpr char k_control_term = 'T';
inline constexpr char k_control_kill = 'K';

enum class ReportKind : int { started = 1, exec_failed = 2, finished = 3 };

/// One record on the report pipe (smaller than PIPE_BUF, so each write is atomic).
struct SupervisorReport {
    ReportKind kind = ReportKind::started;
    int pid = 0;            ///< started: the command's pid (= its process group)
    ExecFailure failure{};  ///< exec_failed
    int wait_status = 0;    ///< finished: the command's raw wait status
    int leftovers = 0;      ///< finished: processes SIGKILLed after the command ended
    struct rusage usage {}; ///< finished: RUSAGE_CHILDREN of the supervisor (the whole tree)
};

/// The supervisor's descriptors, as open in emurun before fork. stdin_fd -1 = inherit fd 0.
struct SupervisorFds {
    int stdin_fd = -1;
    int stdout_fd = -1;
    int stderr_fd = -1;
    int report_fd = -1;  ///< write end of the report pipe
    int control_fd = -1; ///< read end of the control pipe
};

/// Runs in the child of fork() in emurun and never returns: becomes a child subreaper, starts
/// `exec` in its own process group, relays signals asked for on the control pipe, and once the
/// command ended kills and reaps everything left below it, then reports. Async-signal-safe but
/// for the start of the command (spawn_prepared; see process_supervisor.cpp).
[[noreturn]] void run_supervisor(const PreparedExec& exec, const SupervisorFds& fds);

} // namespace emurun::detail
