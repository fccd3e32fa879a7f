// The per-step supervisor process: why and how nothing survives a step.
//
// A step's command may leave processes behind: a grandchild that ignores SIGTERM, or a daemon
// that double-forked and called setsid (it has left the step's process group and session, so
// kill(-pgid) cannot reach it). Linux re-parents such orphans to the nearest ancestor that
// set PR_SET_CHILD_SUBREAPER. If emurun itself were the subreaper, the orphans of all parallel
// steps would land in one pile with no record of which step left them. So every step gets its
// own supervisor: the small static program emurun-supervisor (tools/emurun-supervisor), which
// becomes a subreaper, forks and execs the command, serves the control socket, kills and
// reaps what is left when the command ended, and reports the whole tree's rusage.
//
//   emurun (poll loop) ──posix_spawn──> emurun-supervisor (subreaper)
//                                          └─fork+exec─> command (own group, PDEATHSIG=KILL)
//                                                     └─ ... grandchildren, daemons
//
// Why a separate program started with posix_spawn, not a fork of emurun: a fork copies
// emurun's page tables (twice per step: supervisor, then command), so each step cost more the
// bigger emurun grew (5,000 steps cost 15x 500), and the command's max RSS began as emurun's.
// posix_spawn's clone(CLONE_VM|CLONE_VFORK) copies nothing, and the command is forked from the
// helper's few hundred KiB.
//
// - The command's stdout/stderr are emurun's pipes; the supervisor drops its own copies, so
//   the pipes reach EOF only when every process holding them is gone.
// - Signals to the step go through the control socket ('T' = SIGTERM, 'K' = SIGKILL to the
//   command's group). The supervisor reaps the command, so it never signals a group whose
//   leader was reaped (and whose pid could be reused); emurun never signals the command.
// - EOF on the control socket means emurun died or gave up: SIGKILL the group.
// - The report is text lines (see the helper's header), so a helper of another arch or word
//   size (emurun's own tests under emulation) speaks the same protocol.
#include "process/process_supervisor.hpp"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <csignal>
#include <spawn.h>
#include <string>
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

/// `fds` onto 0..4 in the child: each source is first copied above every source, so none is
/// overwritten before it is used (dup2 also clears FD_CLOEXEC). The helper closes the rest.
int arrange_fds(SpawnSetup& setup, const SupervisorFds& fds) {
    const int src[5] = {fds.stdin_fd, fds.stdout_fd, fds.stderr_fd, fds.report_fd, fds.control_fd};
    const int base = std::max({src[0], src[1], src[2], src[3], src[4], 4}) + 1;
    for (int i = 0; i < 5; ++i) {
        if (src[i] >= 0) {
            if (int rc = ::posix_spawn_file_actions_adddup2(&setup.actions, src[i], base + i)) {
                return rc;
            }
        }
    }
    for (int i = 0; i < 5; ++i) {
        if (src[i] >= 0) {
            if (int rc = ::posix_spawn_file_actions_adddup2(&setup.actions, base + i, i)) {
                return rc;
            }
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

} // namespace

std::optional<SupervisorReport> parse_report(std::string_view line) {
    if (line.size() < 2 || line[1] != ' ') {
        return std::nullopt;
    }
    const std::string_view rest = line.substr(2);
    SupervisorReport r;
    long v[7] = {};
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
        if (!parse_numbers(rest, v, 7)) {
            return std::nullopt;
        }
        r.kind = ReportKind::finished;
        r.wait_status = static_cast<int>(v[0]);
        r.leftovers = static_cast<int>(v[1]);
        r.user = to_timeval(v[2], v[3]);
        r.sys = to_timeval(v[4], v[5]);
        r.max_rss_kib = v[6];
        return r;
    default:
        return std::nullopt;
    }
}

Result<pid_t> spawn_supervisor(const std::filesystem::path& helper, const PreparedExec& exec,
                               const SupervisorFds& fds) {
    SpawnSetup setup;
    int rc = arrange_fds(setup, fds);
    rc = rc != 0 ? rc : reset_signals(setup);
    if (rc != 0) {
        return std::unexpected(system_error("prepare to start " + helper.string(), rc));
    }
    // emurun-supervisor CWD PROGRAM ARGV0 ARGS...; the command's environment is the helper's.
    std::vector<const char*> argv{helper.c_str(), exec.cwd.c_str(), exec.path.c_str()};
    argv.insert(argv.end(), exec.argv.begin(), exec.argv.end()); // ends with its nullptr
    pid_t pid = -1;
    rc = ::posix_spawn(&pid, helper.c_str(), &setup.actions, &setup.attr,
                       const_cast<char* const*>(argv.data()),
                       const_cast<char* const*>(exec.envp.data()));
    if (rc != 0) {
        return std::unexpected(system_error("start the step supervisor " + helper.string(), rc,
                                            "reinstall emurun: " + std::string(k_supervisor_name) +
                                                " is installed with it"));
    }
    return pid;
}

} // namespace emurun::detail
