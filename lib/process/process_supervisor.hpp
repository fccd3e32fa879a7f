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

namespace emurun::detail {

/// File name of the helper, found by util::find_helper (beside emurun, or its libexec dir).
inline constexpr const char* k_supervisor_name = "emurun-supervisor";

/// Bytes the poll loop writes to a supervisor's control socket. EOF (emurun died or gave up)
/// means SIGKILL.
inline constexpr char k_control_term = 'T';
inline constexpr char k_control_kill = 'K';

enum class ReportKind { started, exec_failed, finished };

/// One line of the report pipe: "S pid", "E stage errno", "F status leftovers us... rss
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
    int report_fd = -1;  ///< write end of the report pipe
    int control_fd = -1; ///< read end of the control socket
};

/// Start `helper` (emurun-supervisor) for `exec` with posix_spawn: glibc's vfork-like clone
/// shares emurun's memory until the exec, so no page table of emurun is copied. The helper gets
/// `fds` on 0..4, `exec`'s environment as its own, default signal dispositions and an empty
/// mask; it becomes a child subreaper, forks the command from its own small image and reports.
/// Errors: the helper cannot be executed (missing, not executable), no memory or processes.
[[nodiscard]] Result<pid_t> spawn_supervisor(const std::filesystem::path& helper,
                                             const PreparedExec& exec, const SupervisorFds& fds);

/// The supervisor server: one `emurun-supervisor --serve` per Supervisor, started at its second
/// step, that forks each later step's supervisor on request (clone3 with CLONE_PARENT, so the
/// supervisor is this process's child as if spawn_supervisor had started it: the poll loop
/// waits for it, signals it and catches its orphans unchanged). It saves every step but the
/// first the exec of the helper (~0.3 ms here, most of it glibc's start-up). The request
/// carries the step's cwd (this process's when the step names none: taken at each request),
/// program, argv, environment and descriptors; rlimits, umask and scheduling are the server's,
/// taken from this process when the server started.
class SupervisorServer {
  public:
    /// Start the server. Errors: the helper cannot be started, no socket.
    [[nodiscard]] static Result<SupervisorServer> start(const std::filesystem::path& helper);
    /// One step's supervisor for `exec` with `fds` (as spawn_supervisor): its pid; nullopt when
    /// nothing was started (clone3 refused by the kernel or an emulator, a request too big,
    /// the server gone: start the helper with spawn_supervisor); an error when the server did
    /// not answer (a supervisor may exist: do not start the step again).
    [[nodiscard]] Result<std::optional<pid_t>> spawn(const PreparedExec& exec,
                                                     const SupervisorFds& fds);
    [[nodiscard]] pid_t pid() const { return m_pid; }

    SupervisorServer(SupervisorServer&& other) noexcept;
    SupervisorServer& operator=(SupervisorServer&&) = delete;
    SupervisorServer(const SupervisorServer&) = delete;
    SupervisorServer& operator=(const SupervisorServer&) = delete;
    /// Closes the socket, kills and reaps the server.
    ~SupervisorServer();

  private:
    SupervisorServer(pid_t pid, util::UniqueFd socket) : m_pid(pid), m_socket(std::move(socket)) {}
    pid_t m_pid = -1;
    util::UniqueFd m_socket;
};

} // namespace emurun::detail
