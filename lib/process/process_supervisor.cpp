// The per-child supervisor process: why and how nothing survives a step.
//
// A step's command may leave processes behind: a grandchild that ignores SIGTERM, or a daemon
// that double-forked and called setsid (it has left the step's process group and session, so
// kill(-pgid) cannot reach it). Linux re-parents such orphans to the nearest ancestor that
// set PR_SET_CHILD_SUBREAPER. If emurun itself were the subreaper, the orphans of all parallel
// steps would land in one pile with no record of which step left them. So every child gets
// its own supervisor, forked from emurun without exec (fork_call: no Boost.Process launcher
// can fork without exec). It starts the command with spawn_prepared (Boost's launcher), which
// allocates: safe in this single-threaded child because glibc's fork leaves malloc usable;
// everything else here is async-signal-safe.
//
//   emurun (poll loop) ──fork──> supervisor (subreaper, ignores INT/QUIT/TERM/HUP/PIPE)
//                                   └─spawn_prepared─> command (own group, PDEATHSIG=KILL)
//                                                   └─ ... grandchildren, daemons
//
// - The command's stdout/stderr are emurun's pipes; the supervisor drops its own copies, so
//   the pipes reach EOF only when every process holding them is gone.
// - Signals to the step go through the control pipe ('T' = SIGTERM, 'K' = SIGKILL to the
//   command's group). The supervisor is the one that reaps the command, so it never signals a
//   group whose leader was reaped (and whose pid could be reused); emurun never calls kill().
// - EOF on the control pipe means emurun died or gave up: SIGKILL the group.
// - When the command has ended (seen through a pidfd, so the control pipe stays served), the
//   supervisor SIGKILLs every child it has (read from /proc/self/task/<tid>/children), reaps
//   one, and repeats until wait reports no children. An orphan is re-parented to us before its
//   parent can be reaped, so each round sees everything the previous round's deaths released.
// - Then getrusage(RUSAGE_CHILDREN) covers the command and every reaped descendant (user,
//   sys, max RSS of the largest); it goes to emurun on the report pipe with the wait status.
// Only the command's pid (= pgid) and the final record travel back; emurun reaps the
// supervisor itself when the report pipe closes.
#include "process/process_supervisor.hpp"
#include "process/spawn.hpp"
#include "util/fd.hpp"

#include <cerrno>
#include <csignal>
#include <fcntl.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

namespace emurun::detail {
namespace {

// The supervisor's fixed descriptor layout after arrange_fds().
constexpr int k_report_fd = 3;
constexpr int k_control_fd = 4;
constexpr int k_max_tracked = 512;

void ignore_signals() {
    struct sigaction ignore {};
    ignore.sa_handler = SIG_IGN;
    ::sigemptyset(&ignore.sa_mask);
    for (int sig : {SIGINT, SIGQUIT, SIGTERM, SIGHUP, SIGPIPE}) {
        ::sigaction(sig, &ignore, nullptr);
    }
    sigset_t empty;
    ::sigemptyset(&empty);
    ::sigprocmask(SIG_SETMASK, &empty, nullptr);
}

/// Put stdin/stdout/stderr/report/control on 0..4 and close everything else (other children's
/// control pipes, log files), so this supervisor holds nothing that belongs to another step.
bool arrange_fds(const SupervisorFds& fds) {
    int src[5] = {fds.stdin_fd, fds.stdout_fd, fds.stderr_fd, fds.report_fd, fds.control_fd};
    int high[5];
    for (int i = 0; i < 5; ++i) {
        high[i] = src[i] < 0 ? -1 : ::fcntl(src[i], F_DUPFD, 16);
        if (src[i] >= 0 && high[i] < 0) {
            return false;
        }
    }
    for (int i = 0; i < 5; ++i) {
        if (high[i] >= 0 && ::dup2(high[i], i) != i) {
            return false;
        }
    }
    ::close_range(5, ~0U, 0);
    ::fcntl(k_report_fd, F_SETFD, FD_CLOEXEC);
    ::fcntl(k_control_fd, F_SETFD, FD_CLOEXEC);
    return true;
}

void send_report(const SupervisorReport& report) {
    write_all(k_report_fd, &report, sizeof report);
}

/// Path "/proc/self/task/<pid>/children" built without allocation.
void children_path(char* out, std::size_t size) {
    const char prefix[] = "/proc/self/task/";
    const char suffix[] = "/children";
    char digits[16];
    int n = 0;
    for (pid_t p = ::getpid(); p > 0 && n < 15; p /= 10) {
        digits[n++] = static_cast<char>('0' + p % 10);
    }
    std::size_t i = 0;
    for (const char* c = prefix; *c != '\0' && i + 1 < size; ++c) {
        out[i++] = *c;
    }
    while (n > 0 && i + 1 < size) {
        out[i++] = digits[--n];
    }
    for (const char* c = suffix; *c != '\0' && i + 1 < size; ++c) {
        out[i++] = *c;
    }
    out[i] = '\0';
}

/// Remember `pid` in `seen` (of `count`); true when it was new.
bool remember(pid_t pid, pid_t* seen, int& count) {
    for (int i = 0; i < count; ++i) {
        if (seen[i] == pid) {
            return false;
        }
    }
    if (count < k_max_tracked) {
        seen[count++] = pid;
    }
    return true;
}

/// SIGKILL every current child; returns how many were not killed before, -1 when the
/// children list cannot be read.
int kill_children(pid_t* seen, int& count) {
    char path[64];
    children_path(path, sizeof path);
    const util::UniqueFd fd(::open(path, O_RDONLY | O_CLOEXEC)); // async-signal-safe owner
    if (!fd) {
        return -1; // kernel without CONFIG_PROC_CHILDREN
    }
    int fresh = 0;
    pid_t pid = 0;
    char buf[1024];
    for (;;) {
        ssize_t n = ::read(fd.get(), buf, sizeof buf);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        for (ssize_t i = 0; i < n; ++i) {
            if (buf[i] >= '0' && buf[i] <= '9') {
                pid = pid * 10 + (buf[i] - '0');
            } else if (pid > 0) {
                ::kill(pid, SIGKILL);
                fresh += remember(pid, seen, count) ? 1 : 0;
                pid = 0;
            }
        }
        if (n <= 0) {
            break;
        }
    }
    return fresh;
}

/// Kill and reap everything left below us once the command ended.
int kill_leftovers() {
    int status = 0;
    while (::wait4(-1, &status, WNOHANG, nullptr) > 0) {
        // orphans that already ended on their own are not leftovers
    }
    pid_t seen[k_max_tracked];
    int count = 0;
    int killed = 0;
    for (;;) {
        int fresh = kill_children(seen, count);
        if (fresh < 0) {
            // Cannot list children: reap what has ended, never block on what we cannot kill.
            while (::wait4(-1, &status, WNOHANG, nullptr) > 0) {
            }
            break;
        }
        killed += fresh;
        pid_t r = ::wait4(-1, &status, 0, nullptr);
        if (r < 0 && errno != EINTR) {
            break; // ECHILD: nothing left
        }
    }
    return killed;
}

void signal_group(pid_t pgid, char request) {
    ::kill(-pgid, request == k_control_term ? SIGTERM : SIGKILL);
}

/// Wait for the command while serving the control pipe. Returns its raw wait status.
int wait_command(pid_t pid) {
    int pidfd = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
    bool control_open = true;
    for (;;) {
        int status = 0;
        if (::wait4(pid, &status, WNOHANG, nullptr) == pid) {
            return status;
        }
        struct pollfd fds[2] = {{k_control_fd, POLLIN, 0}, {pidfd, POLLIN, 0}};
        // Without a pidfd (kernel < 5.3) poll the wait status every 20 ms.
        int timeout = pidfd >= 0 ? -1 : 20;
        if (::poll(control_open ? fds : fds + 1, control_open ? 2 : 1, timeout) < 0) {
            continue;
        }
        if (control_open && (fds[0].revents & (POLLIN | POLLHUP | POLLERR)) != 0) {
            char request = k_control_kill;
            ssize_t n = ::read(k_control_fd, &request, 1);
            if (n <= 0) {
                control_open = false; // emurun is gone: nobody will collect this step
            }
            signal_group(pid, request);
        }
    }
}

} // namespace

void run_supervisor(const PreparedExec& exec, const SupervisorFds& fds) {
    ignore_signals();
    // qemu-user (7.2) rejects PR_SET_CHILD_SUBREAPER with EINVAL. Running anyway (emurun's own
    // tests under emulation, emurun in a foreign-arch container) beats failing every step: the
    // command's process group is still stopped, only daemons that left it are not caught.
    if (!arrange_fds(fds) || (::prctl(PR_SET_CHILD_SUBREAPER, 1) != 0 && errno != EINVAL)) {
        ::_exit(126);
    }
    auto started =
        spawn_prepared(exec, ChildSetup{.new_process_group = true, .parent_death_signal = SIGKILL});
    // Our copies of the command's stdio must go, or the pipes never reach EOF.
    ::close(0);
    ::close(1);
    ::close(2);
    if (!started) { // a failed child was reaped by spawn_prepared
        send_report(SupervisorReport{.kind = ReportKind::exec_failed, .failure = started.error()});
        ::_exit(0);
    }
    const pid_t pid = *started; // it has exec'd, so it already leads its own process group
    send_report(SupervisorReport{.kind = ReportKind::started, .pid = pid});
    SupervisorReport done{.kind = ReportKind::finished, .pid = pid};
    done.wait_status = wait_command(pid);
    done.leftovers = kill_leftovers();
    ::getrusage(RUSAGE_CHILDREN, &done.usage);
    send_report(done);
    ::_exit(0);
}

} // namespace emurun::detail
