// Private: preparing a Command for exec, and how a start failure is recorded and told.
#pragma once

#include "process/child_setup.h"

#include <emurun/process.hpp>

#include <memory>
#include <string>
#include <vector>

namespace emurun::detail {

/// Everything the child needs, built before fork: after fork the child may only call
/// async-signal-safe functions, so no allocation there.
/// Neither copyable nor movable: argv/envp point into the strings held here.
struct PreparedExec {
    std::string path; ///< the file to execve (PATH already searched)
    std::vector<std::string> args;
    std::vector<std::string> envs;
    std::vector<const char*> argv; ///< null-terminated pointers into args
    std::vector<const char*> envp; ///< null-terminated pointers into envs
    std::string cwd;               ///< empty = do not chdir

    PreparedExec() = default;
    PreparedExec(const PreparedExec&) = delete;
    PreparedExec& operator=(const PreparedExec&) = delete;
};

/// Resolve the program and build argv/envp. Errors: empty argv, program not found in PATH.
[[nodiscard]] Result<std::unique_ptr<PreparedExec>> prepare_exec(const Command& cmd);

/// Which step of starting a child failed. The child-side stages travel to the parent through
/// the launcher's error pipe (see process_spawn.cpp) and the supervisor's report; the values
/// are child_setup.h's, the one definition both encodings use.
enum class ExecStage : int {
    setpgid = ecs_stage_setpgid,
    dup2 = ecs_stage_dup2,
    chdir = ecs_stage_chdir,
    execve = ecs_stage_execve,
    prctl = ecs_stage_prctl,
    fork = ecs_stage_fork,
    setup = ecs_stage_setup, ///< in emurun, before fork: the launcher's pipe, memory
    limits =
        ecs_stage_limits, ///< joining the child's cgroups, setting its rlimits (ResourceLimits)
};

/// Why a child never ran: the stage and its errno.
struct ExecFailure {
    ExecStage stage = ExecStage::execve;
    int err = 0;
};

/// The Error for a failure: "execve /x/y failed: No such file or directory".
[[nodiscard]] Error exec_failure_error(const PreparedExec& exec, const ExecFailure& failure);

/// write() all of `size` bytes, retrying on EINTR. Async-signal-safe. False on error.
bool write_all(int fd, const void* data, std::size_t size);

/// read() until `size` bytes or EOF, retrying on EINTR. Returns bytes read, -1 on error.
long read_full(int fd, void* data, std::size_t size);

} // namespace emurun::detail
