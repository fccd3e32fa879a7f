// Private: starting a step's supervisor process (the helper program emurun-supervisor) and its
// protocol with the poll loop. The helper's side is tools/emurun-supervisor/emurun_supervisor.c.
#pragma once

#include "process/process_exec.hpp"

#include "util/fd.hpp"

#include <emurun/error.hpp>

#include <filesystem>
#include <optional>
#include <string_view>
#include <sys/time.h>
#include <sys/types.h>
#include <utility>
#include <vector>

namespace emurun::detail {

/// File name of the helper, found by util::find_helper (beside emurun, or its libexec dir).
inline constexpr const char* k_supervisor_name = "emurun-supervisor";

/// Bytes the poll loop writes to a supervisor's control socket. EOF (emurun died or gave up)
/// means SIGKILL.
inline constexpr char k_control_term = 'T';
inline constexpr char k_control_kill = 'K';

enum class ReportKind { started, exec_failed, finished };

/// One line of the report socket: "S pid", "E stage errno", "F status leftovers us... rss
/// signalled".
struct SupervisorReport {
    ReportKind kind = ReportKind::started;
    int pid = 0;           ///< started: the command's pid (= its process group)
    ExecFailure failure{}; ///< exec_failed
    int wait_status = 0;   ///< finished: the command's raw wait status
    int leftovers = 0;     ///< finished: processes SIGKILLed after the command ended
    timeval user{};        ///< finished: RUSAGE_CHILDREN of the supervisor (the whole tree)
    timeval sys{};
    long max_rss_kib = 0;
    bool signalled = false; ///< finished: a stop request reached the command while it ran
};

/// Parse one report line (without its '\n'); nullopt when it is not one.
[[nodiscard]] std::optional<SupervisorReport> parse_report(std::string_view line);

/// The supervisor's descriptors, as open in emurun. stdin_fd -1 = inherit fd 0.
struct SupervisorFds {
    int stdin_fd = -1;
    int stdout_fd = -1;
    int stderr_fd = -1;
    int report_fd =
        -1; ///< the slot's end of the report socket (a socket: /proc/PID/fd/N cannot open it)
    int control_fd = -1;           ///< read end of the control socket
    std::vector<int> cgroup_procs; ///< cgroup.procs files the command joins (StepLimits)
    long long nproc = -1;          ///< RLIMIT_NPROC of the command; -1 = unchanged
    long long address_space = -1;  ///< RLIMIT_AS of the command; -1 = unchanged
};

/// A job slot: one long-lived `emurun-supervisor --slot`, this process's child, started with
/// posix_spawn (glibc's vfork-like clone shares emurun's memory until the exec, so no page
/// table of emurun is copied), that runs one step at a time: for each it forks the command
/// from its own small image, is the subreaper of the step's tree and reports over the step's
/// report socket. A Supervisor keeps its idle slots and hands each new step to one (a new slot
/// when none is idle), so a run starts as many slots as steps ever ran at once, and a step
/// costs one fork. The slot gets default signal dispositions, an empty mask, /dev/null on 0..2
/// and no environment; rlimits, umask and scheduling are this process's when it started. The
/// request carries the step's cwd (this process's when the step names none: taken at each
/// request), program, argv, environment and descriptors.
class SupervisorSlot {
  public:
    /// Start a slot. Errors: the helper cannot be executed (missing, not executable), no
    /// memory, processes or socket.
    [[nodiscard]] static Result<SupervisorSlot> start(const std::filesystem::path& helper);
    /// Hand `exec` with `fds` (the step's ends, which the caller closes after) to this idle
    /// slot. Never blocks. Errors: no cwd, no memory for a request too big for one message;
    /// the slot is gone or does not read (`slot_gone()` then: reap it, use another).
    [[nodiscard]] Result<void> run(const PreparedExec& exec, const SupervisorFds& fds);
    /// The last run() failed because the slot cannot take requests.
    [[nodiscard]] bool slot_gone() const { return m_gone; }
    [[nodiscard]] pid_t pid() const { return m_pid; }
    /// The slot has neither exited (nor is exiting: its socket is still open). A report whose
    /// end arrives from a slot that is not alive is not trusted (a step that took the slot's
    /// report descriptor, wrote a result and killed the slot).
    [[nodiscard]] bool alive() const;
    /// End the slot and return its wait status: EOF on its socket (an idle slot exits, a busy
    /// one after its step, which ends at once when its control socket was closed), SIGCONT in
    /// case a step stopped it, SIGKILL first when `kill` (a slot that did not act on its step's
    /// 'K'), then reap it.
    int finish(bool kill);

    SupervisorSlot(SupervisorSlot&& other) noexcept;
    SupervisorSlot& operator=(SupervisorSlot&& other) noexcept;
    SupervisorSlot(const SupervisorSlot&) = delete;
    SupervisorSlot& operator=(const SupervisorSlot&) = delete;
    /// finish(true) unless finished.
    ~SupervisorSlot();

  private:
    SupervisorSlot(pid_t pid, util::UniqueFd socket) : m_pid(pid), m_socket(std::move(socket)) {}
    pid_t m_pid = -1;
    util::UniqueFd m_socket;
    bool m_gone = false;
};

} // namespace emurun::detail
