// Private: preparing a Command for exec before fork, and the async-signal-safe child side.
#pragma once

#include <emurun/process.hpp>

#include <memory>
#include <string>
#include <vector>

namespace emurun::detail {

/// Everything the child needs, built before fork: after fork in a possibly multithreaded
/// process the child may only call async-signal-safe functions, so no allocation there.
/// Neither copyable nor movable: argv/envp point into the strings held here.
struct PreparedExec {
    std::string path; ///< the file to execve (PATH already searched)
    std::vector<std::string> args;
    std::vector<std::string> envs;
    std::vector<char*> argv; ///< null-terminated pointers into args
    std::vector<char*> envp; ///< null-terminated pointers into envs
    std::string cwd;         ///< empty = do not chdir

    PreparedExec() = default;
    PreparedExec(const PreparedExec&) = delete;
    PreparedExec& operator=(const PreparedExec&) = delete;
};

/// Resolve the program and build argv/envp. Errors: empty argv, program not found in PATH.
[[nodiscard]] Result<std::unique_ptr<PreparedExec>> prepare_exec(const Command& cmd);

/// How the child sets itself up between fork and exec.
struct ChildSetup {
    bool new_process_group = false; ///< setpgid(0, 0)
    int stdin_fd = -1;              ///< dup2'd onto 0/1/2; -1 = inherit
    int stdout_fd = -1;
    int stderr_fd = -1;
    int parent_death_signal = 0; ///< PR_SET_PDEATHSIG; 0 = none
};

/// Which step of the child's set-up failed (sent through the error pipe).
enum class ExecStage : int { setpgid = 1, dup2 = 2, chdir = 3, execve = 4, prctl = 5, fork = 6 };

/// The record the child writes to the CLOEXEC error pipe when it cannot exec.
struct ExecFailure {
    ExecStage stage = ExecStage::execve;
    int err = 0;
};

/// In the forked child: reset signals, apply `setup`, exec. On failure writes an ExecFailure
/// to `error_fd` and _exit(127). Async-signal-safe.
[[noreturn]] void exec_child(const PreparedExec& exec, const ChildSetup& setup, int error_fd);

/// The Error for a failure the child reported: "execve /x/y failed: No such file or directory".
[[nodiscard]] Error exec_failure_error(const PreparedExec& exec, const ExecFailure& failure);

/// write() all of `size` bytes, retrying on EINTR. Async-signal-safe. False on error.
bool write_all(int fd, const void* data, std::size_t size);

/// read() until `size` bytes or EOF, retrying on EINTR. Returns bytes read, -1 on error.
long read_full(int fd, void* data, std::size_t size);

} // namespace emurun::detail
