// Small runners for probes (binfmt verify, the sandbox probe): run a program and capture its
// stdout with a time limit, or run a function in a forked child and collect what it reports.
#include "process/spawn.hpp"
#include "util/fd.hpp"

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <fcntl.h>
#include <poll.h>
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

/// Read `out_fd` into `out` until EOF and the end of `pid`, or until `deadline`: true if both
/// came in time. Woken by a pidfd; without one (kernel < 5.3, qemu-user) every 20 ms.
bool capture_until(pid_t pid, UniqueFd& out_fd, std::string& out, std::size_t max,
                   Clock::time_point deadline) {
    UniqueFd pidfd(static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)));
    for (;;) {
        if (!out_fd.valid() && has_ended(pid)) {
            return true;
        }
        const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now());
        if (left.count() <= 0) {
            return false;
        }
        long wait = std::min<long>(left.count(), 20'000);
        if (!out_fd.valid() && !pidfd.valid()) {
            wait = std::min<long>(wait, 20);
        }
        pollfd fds[2] = {{out_fd.get(), POLLIN, 0}, {pidfd.get(), POLLIN, 0}};
        if (::poll(fds, 2, static_cast<int>(wait)) < 0 && errno != EINTR) {
            return false;
        }
        if (fds[1].revents != 0) {
            pidfd.reset(); // it has ended: stop waking on it
        }
        if (fds[0].revents != 0 && !read_some(out_fd.get(), out, max)) {
            out_fd.reset();
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
    auto pid = spawn_prepared(*exec, ChildSetup{.new_process_group = true,
                                                .stdin_fd = null_in.get(),
                                                .stdout_fd = out.second.get(),
                                                .parent_death_signal = SIGKILL});
    out.second.reset();
    Captured result;
    if (!pid) {
        result.start_error = exec_failure_error(*exec, pid.error());
        result.start_errno = pid.error().err;
        return result;
    }
    if (!capture_until(*pid, out.first, result.out, options.max_output, deadline)) {
        result.timed_out = true;
        ::kill(-*pid, SIGKILL); // not reaped yet, so the group id cannot have been reused
    }
    auto status = EMURUN_TRY(reap(*pid));
    result.status = ExitStatus::from_wait_status(status);
    return result;
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
