// Private: a supervised child's resource limits (SpawnOptions::limits) as cgroups and rlimits.
#pragma once

#include "util/fd.hpp"

#include <emurun/process.hpp>

#include <filesystem>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace emurun::detail {

/// One child's limits, ready for its slot: the command joins each cgroup (writes "0" to its
/// cgroup.procs, opened here) and sets the rlimits before its exec.
struct ChildLimits {
    std::vector<util::UniqueFd> procs;                ///< cgroup.procs of the child's cgroups
    long long nproc = -1;                             ///< RLIMIT_NPROC for the command; -1 = none
    long long address_space = -1;                     ///< RLIMIT_AS for the command; -1 = none
    std::optional<std::filesystem::path> v2_dir;      ///< its cgroup v2 (pids, memory, cpu)
    std::optional<std::filesystem::path> v1_pids_dir; ///< its cgroup in a v1 pids hierarchy
    std::string gap;                                  ///< ChildResult::limit_gap
};

/// Where this process makes its children's cgroups: found at the first child with limits, a
/// directory "emurun-<pid>" below this process's own cgroup (v2, with the controllers its
/// parent delegates; and/or the cgroup v1 pids hierarchy), removed with this object.
class LimitsHome {
  public:
    LimitsHome() = default;
    LimitsHome(const LimitsHome&) = delete;
    LimitsHome& operator=(const LimitsHome&) = delete;
    ~LimitsHome();

    /// The cgroups and rlimits of child `id` for `limits`. Errors: a cgroup could be made but
    /// not set up (a limit refused by the kernel, no descriptor left).
    [[nodiscard]] Result<ChildLimits> prepare(const ResourceLimits& limits, std::uint64_t id);
    /// The limit the child's tree hit, from its cgroups' event counters; nullopt: none.
    [[nodiscard]] static std::optional<std::string> hit(const ChildLimits& step,
                                                        const ResourceLimits& limits);
    /// SIGKILL every process in the child's cgroups at once (v2: cgroup.kill; v1: each pid of
    /// cgroup.procs, round after round until none is left): a fork bomb gets no grace, and a
    /// setsid'd process of it is killed too. The child's slot, their subreaper, reaps them. Returns
    /// how many it killed.
    static int kill_tree(const ChildLimits& step);
    /// Remove the child's cgroups (once its tree is gone; what is left in them is killed).
    static void remove(ChildLimits& step);

  private:
    void probe();
    bool m_probed = false;
    std::optional<std::filesystem::path> m_v2;      ///< the run's v2 cgroup
    std::set<std::string> m_v2_controllers;         ///< enabled for its children
    std::optional<std::filesystem::path> m_v1_pids; ///< the run's v1 pids cgroup
    std::string m_why;                              ///< why a controller is missing, for the gap
};

} // namespace emurun::detail
