// Preparing a Command before a child is started (PATH search, argv, envp), and the Error for a
// child that never ran. Starting it is process_spawn.cpp's job.
#include "process/process_exec.hpp"
#include "util/env.hpp"
#include "util/path.hpp"

#include <cerrno>
#include <unistd.h>

extern char** environ;

namespace emurun::detail {
namespace {

/// The PATH the program is searched in: the command's own, else emurun's.
std::string search_path_variable(const Command& cmd) {
    if (cmd.env) {
        if (auto path = util::get_env(*cmd.env, "PATH")) {
            return *path;
        }
    }
    return util::path_variable();
}

/// The PATH rule of util/path.hpp (execvp's), decided before fork.
Result<std::string> resolve_program(const Command& cmd) {
    std::string name = cmd.program ? cmd.program->string() : cmd.argv.front();
    if (name.empty()) {
        return fail("start a program", "the program name is empty");
    }
    const std::string path = search_path_variable(cmd);
    if (auto found = util::find_executable(name, path)) {
        return found->string();
    }
    return std::unexpected(
        system_error("execve " + name, ENOENT, "not found as an executable in PATH=" + path));
}

void point_into(const std::vector<std::string>& strings, std::vector<const char*>& pointers) {
    pointers.clear();
    for (const auto& s : strings) {
        pointers.push_back(s.c_str());
    }
    pointers.push_back(nullptr);
}

} // namespace

Result<std::unique_ptr<PreparedExec>> prepare_exec(const Command& cmd) {
    if (cmd.argv.empty()) {
        return fail("start a program", "the argument vector is empty");
    }
    auto path = EMURUN_TRY(resolve_program(cmd));
    auto exec = std::make_unique<PreparedExec>();
    exec->path = std::move(path);
    exec->args = cmd.argv;
    if (cmd.env) {
        for (const auto& [key, value] : *cmd.env) {
            exec->envs.push_back(key + "=" + value);
        }
    } else {
        for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
            exec->envs.emplace_back(*e);
        }
    }
    point_into(exec->args, exec->argv);
    point_into(exec->envs, exec->envp);
    if (cmd.cwd) {
        exec->cwd = cmd.cwd->string();
    }
    return exec;
}

Error exec_failure_error(const PreparedExec& exec, const ExecFailure& failure) {
    switch (failure.stage) {
    case ExecStage::chdir:
        return system_error("chdir " + exec.cwd, failure.err, "check the working directory");
    case ExecStage::setpgid:
        return system_error("setpgid in the child of " + exec.path, failure.err);
    case ExecStage::dup2:
        return system_error("dup2 in the child of " + exec.path, failure.err);
    case ExecStage::prctl:
        return system_error("prctl(PR_SET_PDEATHSIG) in the child of " + exec.path, failure.err);
    case ExecStage::fork:
        return system_error("fork for " + exec.path, failure.err, "too many processes?");
    case ExecStage::setup:
        return system_error("prepare to start " + exec.path, failure.err,
                            "too many open files or no memory?");
    case ExecStage::limits:
        return system_error("apply the resource limits of " + exec.path, failure.err,
                            "check the step's \"limits\"");
    case ExecStage::execve:
        break;
    }
    std::string hint;
    if (failure.err == ENOEXEC) {
        hint = "not a format this kernel runs; a foreign binary needs binfmt_misc or 'emurun exec'";
    } else if (failure.err == EACCES) {
        hint = "check that the file is executable and its filesystem is not mounted noexec";
    }
    return system_error("execve " + exec.path, failure.err, std::move(hint));
}

bool write_all(int fd, const void* data, std::size_t size) {
    const char* p = static_cast<const char*>(data);
    while (size > 0) {
        ssize_t n = ::write(fd, p, size);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            return false;
        }
        p += n;
        size -= static_cast<std::size_t>(n);
    }
    return true;
}

long read_full(int fd, void* data, std::size_t size) {
    char* p = static_cast<char*>(data);
    std::size_t done = 0;
    while (done < size) {
        ssize_t n = ::read(fd, p + done, size - done);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n < 0) {
            return -1;
        }
        if (n == 0) {
            break;
        }
        done += static_cast<std::size_t>(n);
    }
    return static_cast<long>(done);
}

} // namespace emurun::detail
