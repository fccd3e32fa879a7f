// The step supervisor: why and how nothing survives a step.
//
// A step's command may leave processes behind: a grandchild that ignores SIGTERM, or a daemon
// that double-forked and called setsid (it has left the step's process group and session, so
// kill(-pgid) cannot reach it). Linux re-parents such orphans to the nearest ancestor that
// set PR_SET_CHILD_SUBREAPER. If emurun itself were the subreaper, the orphans of all parallel
// steps would land in one pile with no record of which step left them. So steps run under job
// slots: each slot is the small static program emurun-supervisor (tools/emurun-supervisor), a
// subreaper running one step at a time, so whatever is re-parented to it belongs to its
// current step. For each step it forks and execs the command, serves the step's control
// socket, kills and reaps what is left when the command ended, and reports the tree's rusage
// (the sum of what wait4 returned for the command and each orphan).
//
//   emurun (poll loop) ──posix_spawn, once per slot──> emurun-supervisor --slot (subreaper)
//                                                  └─fork+exec per step─> command (own group,
//                                                     PDEATHSIG=KILL) └─ grandchildren, daemons
//
// Why a separate program started with posix_spawn, not a fork of emurun: a fork copies
// emurun's page tables, so each step cost more the bigger emurun grew (5,000 steps cost 15x
// 500), and the command's max RSS began as emurun's. posix_spawn's clone(CLONE_VM|CLONE_VFORK)
// copies nothing, and the command is forked from the helper's few hundred KiB. Why not Boost's
// vfork_launcher, which copies nothing either (Boost 1.81, posix/vfork_launcher.hpp): its vfork
// child runs asio's notify_fork and the initializers in emurun's memory with emurun's signal
// handlers live, and a failed exec ends it with exit(), whose atexit handlers would run there
// too; glibc's posix_spawn blocks every signal around its clone, runs the child on a stack of
// its own, resets the dispositions and reports an exec failure itself. Why slots and
// not a supervisor per step: a step then costs one process creation, not two (a supervisor
// per step, even forked from a small server, cost ~0.08 ms and 10-13% of a shell loop's step,
// issue 15's runner rows).
//
// - The command's stdout/stderr are emurun's pipes; the slot drops its own copies once the
//   command runs, so the pipes reach EOF only when every process holding them is gone.
// - Signals to the step go through the step's control socket ('T' = SIGTERM, 'K' = SIGKILL
//   to the command's group). The slot reaps the command, so it never signals a group whose
//   leader was reaped (and whose pid could be reused); emurun never signals the command.
// - EOF on the control socket means emurun died or gave up: SIGKILL the group.
// - The report is text lines (see the helper's header), so a helper of another arch or word
//   size (emurun's own tests under emulation) speaks the same protocol. After its last line
//   the slot closes the step's report socket: EOF there ends the step for emurun.
#include "process/process_supervisor.hpp"

#include "util/file.hpp"

#include <algorithm>
#include <array>
#include <cerrno>
#include <charconv>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sstream>
#include <string>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

namespace emurun::detail {
namespace {

/// Reads the space-separated integers of `text` into `out`; false unless exactly `count`.
bool parse_numbers(std::string_view text, long* out, std::size_t count) {
    std::size_t n = 0;
    const char* p = text.data();
    const char* end = text.data() + text.size();
    while (p < end) {
        if (*p == ' ') {
            ++p;
            continue;
        }
        if (n == count) {
            return false;
        }
        auto [next, ec] = std::from_chars(p, end, out[n]);
        if (ec != std::errc{} || (next < end && *next != ' ')) {
            return false;
        }
        p = next;
        ++n;
    }
    return n == count;
}

timeval to_timeval(long sec, long usec) {
    timeval tv{};
    tv.tv_sec = static_cast<time_t>(sec);
    tv.tv_usec = static_cast<suseconds_t>(usec);
    return tv;
}

/// posix_spawn's file actions and attributes, released on every path.
struct SpawnSetup {
    posix_spawn_file_actions_t actions{};
    posix_spawnattr_t attr{};
    SpawnSetup() {
        ::posix_spawn_file_actions_init(&actions);
        ::posix_spawnattr_init(&attr);
    }
    ~SpawnSetup() {
        ::posix_spawn_file_actions_destroy(&actions);
        ::posix_spawnattr_destroy(&attr);
    }
    SpawnSetup(const SpawnSetup&) = delete;
    SpawnSetup& operator=(const SpawnSetup&) = delete;
};

/// `fds` onto 0..3 in the child: each source is first copied above every source, so none is
/// overwritten before it is used (dup2 also clears FD_CLOEXEC). The helper closes the rest.
int arrange_fds(SpawnSetup& setup, const std::array<int, 4>& src) {
    const int base = std::max({src[0], src[1], src[2], src[3], 3}) + 1;
    for (int i = 0; i < 4; ++i) {
        if (int rc = ::posix_spawn_file_actions_adddup2(&setup.actions, src[i], base + i)) {
            return rc;
        }
    }
    for (int i = 0; i < 4; ++i) {
        if (int rc = ::posix_spawn_file_actions_adddup2(&setup.actions, base + i, i)) {
            return rc;
        }
    }
    return 0;
}

/// Default dispositions for every signal and an empty mask in the child.
int reset_signals(SpawnSetup& setup) {
    sigset_t all;
    sigset_t none;
    ::sigfillset(&all);
    ::sigemptyset(&none);
    int rc = ::posix_spawnattr_setsigdefault(&setup.attr, &all);
    rc = rc != 0 ? rc : ::posix_spawnattr_setsigmask(&setup.attr, &none);
    return rc != 0 ? rc
                   : ::posix_spawnattr_setflags(&setup.attr,
                                                POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);
}

/// Process `pid` has begun to exit (PF_EXITING in /proc/PID/stat's flags: set first thing in
/// the kernel's do_exit, before its descriptors are closed), or is gone.
bool exiting(pid_t pid) {
    constexpr unsigned long k_pf_exiting = 0x4;
    auto stat = util::read_file("/proc/" + std::to_string(pid) + "/stat", 4096);
    const auto end = stat ? stat->rfind(')') : std::string::npos;
    if (end == std::string::npos) {
        return true;
    }
    // After "(comm)": state ppid pgrp session tty_nr tpgid flags
    std::istringstream fields(stat->substr(end + 1));
    std::string skip;
    unsigned long flags = 0;
    for (int i = 0; i < 6; ++i) {
        fields >> skip;
    }
    fields >> flags;
    return !fields || (flags & k_pf_exiting) != 0;
}

} // namespace

std::optional<SupervisorReport> parse_report(std::string_view line) {
    if (line.size() < 2 || line[1] != ' ') {
        return std::nullopt;
    }
    const std::string_view rest = line.substr(2);
    SupervisorReport r;
    long v[8] = {};
    switch (line[0]) {
    case 'S':
        if (!parse_numbers(rest, v, 1)) {
            return std::nullopt;
        }
        r.kind = ReportKind::started;
        r.pid = static_cast<int>(v[0]);
        return r;
    case 'E':
        if (!parse_numbers(rest, v, 2)) {
            return std::nullopt;
        }
        r.kind = ReportKind::exec_failed;
        r.failure = ExecFailure{static_cast<ExecStage>(v[0]), static_cast<int>(v[1])};
        return r;
    case 'F':
        if (!parse_numbers(rest, v, 8)) {
            return std::nullopt;
        }
        r.kind = ReportKind::finished;
        r.wait_status = static_cast<int>(v[0]);
        r.leftovers = static_cast<int>(v[1]);
        r.user = to_timeval(v[2], v[3]);
        r.sys = to_timeval(v[4], v[5]);
        r.max_rss_kib = v[6];
        r.signalled = v[7] != 0;
        return r;
    default:
        return std::nullopt;
    }
}

namespace {

/// Each step running at once holds ~7 descriptors in this process and its slot one more.
constexpr const char* k_fd_hint =
    "too many open files: raise the limit (ulimit -n) or run fewer steps at once";

/// posix_spawn `helper --slot` with `fds` on 0..3 and no environment.
Result<pid_t> spawn_slot(const std::filesystem::path& helper, const std::array<int, 4>& fds) {
    SpawnSetup setup;
    int rc = arrange_fds(setup, fds);
    rc = rc != 0 ? rc : reset_signals(setup);
    if (rc == EBADF) { // the copies above every source are beyond the descriptor limit
        rc = EMFILE;
    }
    if (rc != 0) {
        return std::unexpected(
            system_error("prepare to start " + helper.string(), rc, rc == EMFILE ? k_fd_hint : ""));
    }
    const char* argv[] = {helper.c_str(), "--slot", nullptr};
    const char* envp[] = {nullptr};
    pid_t pid = -1;
    rc = ::posix_spawn(&pid, helper.c_str(), &setup.actions, &setup.attr,
                       const_cast<char* const*>(argv), const_cast<char* const*>(envp));
    if (rc != 0) {
        return std::unexpected(system_error("start the step supervisor " + helper.string(), rc,
                                            "reinstall emurun: " + std::string(k_supervisor_name) +
                                                " is installed with it"));
    }
    return pid;
}

/// The request's text: "<argc> <envc> <has stdin> <cgroups> <nproc> <as>", cwd, program,
/// argv, environment, each ended by NUL (the protocol of the helper's serve_slot()).
Result<std::string> request_text(const PreparedExec& exec, bool has_stdin,
                                 const SupervisorFds& fds) {
    std::string cwd = exec.cwd;
    if (cwd.empty()) { // the slot's cwd is this process's at its start, not necessarily now
        std::error_code ec;
        cwd = std::filesystem::current_path(ec).string();
        if (ec) {
            return std::unexpected(system_error("getcwd", ec.value()));
        }
    }
    const std::size_t argc = exec.args.size();
    const std::size_t envc = exec.envs.size();
    std::string text = std::to_string(argc) + ' ' + std::to_string(envc) +
                       (has_stdin ? " 1 " : " 0 ") + std::to_string(fds.cgroup_procs.size()) + ' ' +
                       std::to_string(fds.nproc) + ' ' + std::to_string(fds.address_space);
    text += '\0';
    text.append(cwd).push_back('\0');
    text.append(exec.path).push_back('\0');
    for (const auto* list : {&exec.args, &exec.envs}) {
        for (const auto& item : *list) {
            text += item;
            text += '\0';
        }
    }
    return text;
}

/// A request too big for one message (a socket's message is at most its send buffer, ~200
/// KiB) travels in a memfd: the message is then "M" with the memfd before the step's fds.
constexpr std::size_t k_inline_request = 64 * 1024;

Result<util::UniqueFd> request_memfd(const std::string& text) {
    util::UniqueFd fd(::memfd_create("emurun-step-request", MFD_CLOEXEC));
    if (!fd.valid() || !write_all(fd.get(), text.data(), text.size())) {
        return std::unexpected(system_error("write the step's request to a memfd", errno,
                                            "free memory, or shorten the step's arguments"));
    }
    return fd;
}

/// Send `text` with `fds` as one message on `socket`: an error with `*gone` set when the
/// socket does not take it (the slot is dead, or stopped with an earlier request unread).
Result<void> send_request(int socket, const std::string& text, const std::vector<int>& fds,
                          bool* gone) {
    std::vector<char> control(CMSG_SPACE(sizeof(int) * fds.size()));
    iovec iov{const_cast<char*>(text.data()), text.size()};
    msghdr msg{};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control.data();
    msg.msg_controllen = control.size();
    cmsghdr* c = CMSG_FIRSTHDR(&msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int) * fds.size());
    std::memcpy(CMSG_DATA(c), fds.data(), sizeof(int) * fds.size());
    while (::sendmsg(socket, &msg, MSG_NOSIGNAL | MSG_DONTWAIT) < 0) {
        if (errno != EINTR) {
            *gone = true;
            return std::unexpected(system_error("hand the step to its supervisor", errno));
        }
    }
    return {};
}

} // namespace

Result<SupervisorSlot> SupervisorSlot::start(const std::filesystem::path& helper) {
    int pair[2];
    if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair) != 0) {
        return std::unexpected(system_error("socketpair", errno));
    }
    util::UniqueFd ours(pair[0]);
    util::UniqueFd theirs(pair[1]);
    util::UniqueFd null(::open("/dev/null", O_RDWR | O_CLOEXEC));
    if (!null.valid()) {
        return std::unexpected(
            system_error("open /dev/null", errno, errno == EMFILE ? k_fd_hint : ""));
    }
    const pid_t pid =
        EMURUN_TRY(spawn_slot(helper, {null.get(), null.get(), null.get(), theirs.get()}));
    return SupervisorSlot(pid, std::move(ours));
}

Result<void> SupervisorSlot::run(const PreparedExec& exec, const SupervisorFds& fds) {
    const int in = fds.stdin_fd >= 0 ? fds.stdin_fd : 0; // -1: this process's own stdin
    const bool has_stdin = ::fcntl(in, F_GETFD) >= 0;    // ... unless it is closed
    // One push_back per fd into reserved room: GCC 14 warns falsely (-Wstringop-overflow) about
    // a range insert after an initializer-list insert into the same vector.
    std::vector<int> passed;
    passed.reserve(6 + fds.cgroup_procs.size()); // stdin, 4 fds, the cgroups, a memfd
    if (has_stdin) {
        passed.push_back(in);
    }
    for (const int fd : {fds.stdout_fd, fds.stderr_fd, fds.report_fd, fds.control_fd}) {
        passed.push_back(fd);
    }
    for (const int fd : fds.cgroup_procs) {
        passed.push_back(fd);
    }
    auto text = EMURUN_TRY(request_text(exec, has_stdin, fds));
    util::UniqueFd memfd;
    if (text.size() > k_inline_request) {
        memfd = EMURUN_TRY(request_memfd(text));
        text = "M";
        passed.insert(passed.begin(), memfd.get());
    }
    ::kill(m_pid, SIGCONT); // a step may have stopped it; our unreaped child, so the pid is its
    return send_request(m_socket.get(), text, passed, &m_gone);
}

bool SupervisorSlot::alive() const {
    siginfo_t info{};
    if (m_pid <= 0 ||
        ::waitid(P_PID, static_cast<id_t>(m_pid), &info, WEXITED | WNOHANG | WNOWAIT) != 0 ||
        info.si_pid == m_pid) {
        return false; // exited (or not our child any more)
    }
    pollfd socket{m_socket.get(), POLLIN, 0}; // a dying slot may have closed its end
    if (::poll(&socket, 1, 0) < 0 || (socket.revents & (POLLHUP | POLLERR | POLLNVAL)) != 0) {
        return false;
    }
    return !exiting(m_pid);
}

int SupervisorSlot::finish(bool kill) {
    if (m_pid <= 0) {
        return 0;
    }
    m_socket.reset();
    // Our unreaped child, so the pid is its.
    ::kill(m_pid, kill ? SIGKILL : SIGCONT);
    int status = 0;
    while (::waitpid(m_pid, &status, 0) < 0 && errno == EINTR) {
    }
    m_pid = -1;
    return status;
}

SupervisorSlot::SupervisorSlot(SupervisorSlot&& other) noexcept
    : m_pid(std::exchange(other.m_pid, -1)), m_socket(std::move(other.m_socket)),
      m_gone(other.m_gone) {}

SupervisorSlot& SupervisorSlot::operator=(SupervisorSlot&& other) noexcept {
    if (this != &other) {
        finish(true);
        m_pid = std::exchange(other.m_pid, -1);
        m_socket = std::move(other.m_socket);
        m_gone = other.m_gone;
    }
    return *this;
}

SupervisorSlot::~SupervisorSlot() {
    finish(true);
}

} // namespace emurun::detail
