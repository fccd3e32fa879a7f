// Private: emurun as the child subreaper of last resort while a Supervisor lives.
#pragma once

#include <sys/types.h>

#include <set>

namespace emurun::detail {

/// While it lives, this process is a child subreaper (PR_SET_CHILD_SUBREAPER), so that what a
/// step leaves behind after killing its own supervisor process (`kill -9 $PPID`) is re-parented
/// here instead of to init, where nothing would stop it. The previous setting is restored.
/// qemu-user refuses the prctl (EINVAL): then such orphans still escape, as before.
class OrphanCatcher {
  public:
    OrphanCatcher();
    ~OrphanCatcher();
    OrphanCatcher(const OrphanCatcher&) = delete;
    OrphanCatcher& operator=(const OrphanCatcher&) = delete;

    /// SIGKILL and reap every child of this process that is neither in `keep` (live
    /// supervisors) nor was a child before this object existed, repeating until none is left
    /// (a killed orphan's own children are re-parented here before it can be reaped). Returns
    /// how many processes were killed. Call it once a supervisor died without reporting.
    int sweep(const std::set<pid_t>& keep);

  private:
    bool m_enabled = false;
    int m_previous = 0;
    std::set<pid_t> m_preexisting; ///< the caller's own children: never touched
};

} // namespace emurun::detail
