// Who notices when a step kills its own supervisor process: emurun, as a child subreaper.
//
// Each step's supervisor is a subreaper, so a step's orphans (a setsid'd daemon that ignores
// SIGTERM) land in it and die with the step. A step can SIGKILL that supervisor, though
// (`kill -9 $PPID` from the step's shell): the command then dies of its parent-death signal,
// but its orphans are re-parented to the next subreaper up, or to init, where nothing would
// ever stop them. With emurun itself a subreaper they come here instead. The poll loop sees the
// supervisor's report pipe close without a final record, reaps the supervisor, and sweeps:
// every child of emurun that is not a live supervisor (nor one of the caller's own children
// from before) is such an orphan. Measured against the alternatives: one prctl per Supervisor
// and a /proc read only when a supervisor died, against a cgroup per step (needs a delegated
// cgroup v2 subtree, which CI runners rarely give an unprivileged user) or a second subreaper
// level per step (one more fork per step, the cost issue 15 removes).
#include "process/process_orphans.hpp"
#include "util/file.hpp"

#include <cerrno>
#include <csignal>
#include <dirent.h>
#include <sstream>
#include <string>
#include <string_view>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

namespace emurun::detail {
namespace {

/// Append the pids listed in one /proc/self/task/<tid>/children file (this runs in emurun, not
/// in a forked child, so util's reader serves; the supervisor's async-signal-safe scan cannot).
void read_children(const std::string& path, std::set<pid_t>& out) {
    const auto text = util::read_file(path, 1 << 20);
    if (!text) {
        return; // the thread ended, or no CONFIG_PROC_CHILDREN
    }
    std::istringstream in(*text);
    for (pid_t pid = 0; in >> pid;) {
        out.insert(pid);
    }
}

/// Every child of this process, whichever thread it hangs on (orphans go to the main thread).
std::set<pid_t> children() {
    std::set<pid_t> out;
    DIR* dir = ::opendir("/proc/self/task");
    if (dir == nullptr) {
        return out;
    }
    while (const dirent* e = ::readdir(dir)) {
        if (e->d_name[0] != '.') {
            read_children(std::string("/proc/self/task/") + e->d_name + "/children", out);
        }
    }
    ::closedir(dir);
    return out;
}

/// True when `pid` has already ended (a zombie waiting to be reaped): not a leftover.
bool ended(pid_t pid) {
    const auto text = util::read_file("/proc/" + std::to_string(pid) + "/stat", 4096);
    if (!text) {
        return true;
    }
    const std::string_view stat(*text);
    const auto paren = stat.rfind(')'); // the command name may hold spaces and parentheses
    return paren == std::string_view::npos || paren + 2 >= stat.size() || stat[paren + 2] == 'Z';
}

} // namespace

OrphanCatcher::OrphanCatcher() {
    ::prctl(PR_GET_CHILD_SUBREAPER, &m_previous);
    m_enabled = m_previous != 0 || ::prctl(PR_SET_CHILD_SUBREAPER, 1) == 0;
    if (m_enabled) {
        m_preexisting = children();
    }
}

OrphanCatcher::~OrphanCatcher() {
    if (m_enabled && m_previous == 0) {
        ::prctl(PR_SET_CHILD_SUBREAPER, 0);
    }
}

int OrphanCatcher::sweep(const std::set<pid_t>& keep) {
    int killed = 0;
    // Bounded: each round reaps at least one process; a fork bomb cannot keep us here forever.
    for (int round = 0; round < 10'000; ++round) {
        std::set<pid_t> orphans;
        for (pid_t pid : children()) {
            if (!keep.contains(pid) && !m_preexisting.contains(pid)) {
                orphans.insert(pid);
            }
        }
        if (orphans.empty()) {
            break;
        }
        for (pid_t pid : orphans) {
            const bool alive = !ended(pid);
            killed += ::kill(pid, SIGKILL) == 0 && alive ? 1 : 0;
        }
        for (pid_t pid : orphans) {
            // Once reaped, its own children have been re-parented here: the next round sees them.
            while (::waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
            }
        }
    }
    return killed;
}

} // namespace emurun::detail
