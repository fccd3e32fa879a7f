// Small runners for probes (binfmt verify, the sandbox probe): run a program and capture its
// stdout with a time limit, or run a function in a forked child and collect what it reports.
#include "process/spawn.hpp"
#include "util/fd.hpp"

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

namespace emurun::detail {
namespace {

using Clock = std::chrono::steady_clock;
using util::make_pipe;
using util::UniqueFd;

/// Whether `pid` has ended, without reaping it.
bool has_ended(pid_t pid) {
    siginfo_t info{};
    return ::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0 &&
           info.si_pid == pid;
}

/// Append what `fd` has to `out` (up to `max`); false at EOF or on error.
bool read_some(int fd, std::string& out, std::size_t max) {
    char buf[4096];
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) {
        return true;
    }
    if (n <= 0) {
        return false;
    }
    out.append(buf, std::min(static_cast<std::size_t>(n), max - std::min(max, out.size())));
    return true;
}

constexpr std::chrono::seconds k_interrupt_grace{2};

/// SIGINT, SIGTERM and SIGHUP blocked in this thread for its life and readable from fd()
/// (pending ones too); the old mask comes back at the end. Disabled: fd() is -1.
class Interrupts {
  public:
    explicit Interrupts(bool enable) {
        if (!enable) {
            return;
        }
        sigset_t set;
        sigemptyset(&set);
        for (int sig : {SIGINT, SIGTERM, SIGHUP}) {
            sigaddset(&set, sig);
        }
        m_blocked = ::pthread_sigmask(SIG_BLOCK, &set, &m_old) == 0;
        m_fd.reset(::signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK));
    }
    ~Interrupts() {
        if (m_blocked) {
            ::pthread_sigmask(SIG_SETMASK, &m_old, nullptr);
        }
    }
    Interrupts(const Interrupts&) = delete;
    Interrupts& operator=(const Interrupts&) = delete;
    [[nodiscard]] int fd() const { return m_fd.get(); }
    /// The signal that came (taken), or 0.
    int take() {
        signalfd_siginfo info{};
        return ::read(m_fd.get(), &info, sizeof info) == sizeof info
                   ? static_cast<int>(info.ssi_signo)
                   : 0;
    }

  private:
    UniqueFd m_fd;
    bool m_blocked = false;
    sigset_t m_old{};
};

/// What capture_until waits on and what it found.
struct Waiting {
    pid_t pid;
    UniqueFd& out_fd;
    std::string& out;
    std::size_t max;
    Clock::time_point deadline;
    Interrupts& interrupts;
    int interrupted_by = 0;
};

/// An interrupt: SIGTERM to the child's group, SIGKILL (by the caller) after the grace.
void stop_for(Waiting& w, int sig) {
    w.interrupted_by = sig;
    ::kill(-w.pid, SIGTERM); // not reaped yet, so the group id cannot have been reused
    w.deadline = std::min(w.deadline, Clock::now() + k_interrupt_grace);
}

/// Read `out_fd` into `out` until EOF and the end of `pid`, or until the deadline: true if both
/// came in time. Woken by a pidfd; without one (kernel < 5.3, qemu-user) every 20 ms.
bool capture_until(Waiting& w) {
    UniqueFd pidfd(static_cast<int>(::syscall(SYS_pidfd_open, w.pid, 0)));
    for (;;) {
        if (!w.out_fd.valid() && has_ended(w.pid)) {
            return true;
        }
        const auto left = std::chrono::ceil<std::chrono::milliseconds>(w.deadline - Clock::now());
        if (left.count() <= 0) {
            return false;
        }
        long wait = std::min<long>(left.count(), 20'000);
        if (!w.out_fd.valid() && !pidfd.valid()) {
            wait = std::min<long>(wait, 20);
        }
        pollfd fds[3] = {{w.out_fd.get(), POLLIN, 0},
                         {pidfd.get(), POLLIN, 0},
                         {w.interrupted_by == 0 ? w.interrupts.fd() : -1, POLLIN, 0}};
        if (::poll(fds, 3, static_cast<int>(wait)) < 0 && errno != EINTR) {
            return false;
        }
        if (fds[1].revents != 0) {
            pidfd.reset(); // it has ended: stop waking on it
        }
        if (fds[0].revents != 0 && !read_some(w.out_fd.get(), w.out, w.max)) {
            w.out_fd.reset();
        }
        if (fds[2].revents != 0) {
            if (const int sig = w.interrupts.take(); sig != 0) {
                stop_for(w, sig);
            }
        }
    }
}

} // namespace

Result<Captured> run_captured(const Command& cmd, const CaptureOptions& options) {
    auto exec = EMURUN_TRY(prepare_exec(cmd));
    UniqueFd null_in(::open("/dev/null", O_RDONLY | O_CLOEXEC));
    if (null_in.get() < 0) {
        return std::unexpected(system_error("open /dev/null", errno));
    }
    auto out = EMURUN_TRY(make_pipe());
    const auto deadline = Clock::now() + options.timeout;
    Interrupts interrupts(options.stop_on_interrupt); // before the spawn: none is lost
    auto pid =
        spawn_prepared(*exec, ChildSetup{.new_process_group = true,
                                         .stdin_fd = null_in.get(),
                                         .stdout_fd = out.second.get(),
                                         .stderr_fd = options.merge_stderr ? out.second.get() : -1,
                                         .parent_death_signal = SIGKILL});
    out.second.reset();
    Captured result;
    if (!pid) {
        result.start_error = exec_failure_error(*exec, pid.error());
        result.start_errno = pid.error().err;
        return result;
    }
    Waiting w{*pid, out.first, result.out, options.max_output, deadline, interrupts};
    if (!capture_until(w)) {
        result.timed_out = w.interrupted_by == 0;
        ::kill(-*pid, SIGKILL); // not reaped yet, so the group id cannot have been reused
    }
    result.interrupted_by = w.interrupted_by;
    auto status = EMURUN_TRY(reap(*pid));
    result.status = ExitStatus::from_wait_status(status);
    return result;
}

Result<Captured> run_tar(std::vector<std::string> args, CaptureOptions options) {
    args.insert(args.begin(), "tar");
    options.stop_on_interrupt = true;
    auto run = EMURUN_TRY(run_captured(Command{.argv = std::move(args)}, options));
    if (run.start_error) {
        return std::unexpected(*run.start_error);
    }
    return run;
}

Result<ForkedRun> run_forked(const std::function<int(int report_fd)>& body) {
    auto report = EMURUN_TRY(make_pipe());
    const int write_end = report.second.get();
    auto pid = fork_call([&]() -> int { return body(write_end); });
    if (!pid) {
        return std::unexpected(pid.error());
    }
    report.second.reset();
    ForkedRun result;
    result.report.resize(4096);
    const long got = read_full(report.first.get(), result.report.data(), result.report.size());
    result.report.resize(got > 0 ? static_cast<std::size_t>(got) : 0);
    auto status = EMURUN_TRY(reap(*pid));
    result.status = ExitStatus::from_wait_status(status);
    return result;
}

} // namespace emurun::detail
