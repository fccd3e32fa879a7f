// Private API of the process module, also for binfmt, sandbox, root and runner: the one
// spawn-and-exec (Boost.Process v2's POSIX launcher with child_setup.c's set-up), the one fork
// without exec, and the small runners built on them (probes, tar). The namespaces' clone and
// the job slots' posix_spawn are the process module's other two spawners, one job each
// (ARCHITECTURE.md says which serves what and why). Nothing else in lib/ calls fork or exec.
#pragma once

#include "process/process_exec.hpp"

#include <emurun/process.hpp>

#include <chrono>
#include <cstddef>
#include <expected>
#include <functional>
#include <optional>
#include <string>
#include <sys/resource.h>
#include <sys/types.h>
#include <vector>

namespace emurun::detail {

/// How the child sets itself up between fork and exec. It always starts with default signal
/// dispositions, an empty signal mask, and no descriptors but 0, 1 and 2.
struct ChildSetup {
    bool new_process_group = false; ///< setpgid(0, 0): the child leads its own group
    int stdin_fd = -1;              ///< dup2'd onto 0/1/2 (may be any fd); -1 = inherit
    int stdout_fd = -1;
    int stderr_fd = -1;
    int parent_death_signal = 0; ///< PR_SET_PDEATHSIG; 0 = none
};

/// Start `exec` as a child and return its pid once it has exec'd; the caller reaps it (wait4,
/// for the exit status and rusage). A child that failed before or at execve is reaped here and
/// reported as the failing stage with its errno (chdir vs execve, ...). Never throws.
/// Not async-signal-safe (the launcher allocates).
[[nodiscard]] std::expected<pid_t, ExecFailure> spawn_prepared(const PreparedExec& exec,
                                                               const ChildSetup& setup) noexcept;

/// prepare_exec + spawn_prepared. Errors: bad argv, program not in PATH, "execve /x failed:
/// No such file or directory", "chdir /d failed: ...", fork failures.
[[nodiscard]] Result<pid_t> spawn_process(const Command& cmd, const ChildSetup& setup);

/// fork() without exec: the child runs `body` and _exit()s with what it returns. Only
/// async-signal-safe code may run in `body` (the caller may have threads). The caller reaps.
/// The one fork without exec: see process_spawn.cpp for why it is not Boost's.
[[nodiscard]] Result<pid_t> fork_call(const std::function<int()>& body);

/// wait4(pid) retrying on EINTR: the raw wait status, rusage into `usage` when given.
[[nodiscard]] Result<int> reap(pid_t pid, struct rusage* usage = nullptr);

/// Options for run_captured.
struct CaptureOptions {
    std::chrono::milliseconds timeout{30'000}; ///< then SIGKILL to the child's process group
    std::size_t max_output = 64 * 1024;        ///< keep at most this much of stdout
    /// SIGINT, SIGTERM or SIGHUP (blocked while it runs, taken through a signalfd, pending ones
    /// too) stops the child: SIGTERM to its process group, SIGKILL after a grace of 2 s. The
    /// signal is taken: Captured::interrupted_by says which, the caller decides what follows.
    bool stop_on_interrupt = false;
    /// The child's stderr goes into the captured pipe too (what `2>&1` does), else it is
    /// inherited: for a tool whose message is the caller's error text.
    bool merge_stderr = false;
};

/// What a captured run did.
struct Captured {
    ExitStatus status;      ///< meaningless when start_error is set
    std::string out;        ///< stdout, cut at CaptureOptions::max_output
    bool timed_out = false; ///< killed at the time limit
    int interrupted_by = 0; ///< stopped by this signal (CaptureOptions::stop_on_interrupt)
    std::optional<Error> start_error{}; ///< the program never ran
    int start_errno = 0;                ///< the errno of start_error (ENOEXEC, ...)
};

/// Run `cmd` with stdin from /dev/null and stdout captured, stderr inherited (or merged), in its
/// own process group (killed with it at the time limit, or when emurun dies). For short probes.
/// Errors: bad argv, program not in PATH, pipe/open failures.
[[nodiscard]] Result<Captured> run_captured(const Command& cmd, const CaptureOptions& options);

/// Debian's tar (from PATH) with `args`, as run_captured runs it with stop_on_interrupt always
/// on: the one way the library runs tar (artifact archives, image layers). What tar did is the
/// caller's to tell (status, timed_out, interrupted_by, out). Errors: tar could not start
/// (not installed, bad argv, pipe/open failures).
[[nodiscard]] Result<Captured> run_tar(std::vector<std::string> args, CaptureOptions options);

/// What a forked function did.
struct ForkedRun {
    ExitStatus status;
    std::string report; ///< what it wrote to its report fd (at most 4 KiB)
};

/// Run `body(report_fd)` in a forked child (single-threaded: it may unshare a user namespace),
/// wait for it and return its exit status and what it wrote to `report_fd`. Async-signal-safe
/// code only in `body`. Errors: pipe/fork/wait failures.
[[nodiscard]] Result<ForkedRun> run_forked(const std::function<int(int report_fd)>& body);

} // namespace emurun::detail
