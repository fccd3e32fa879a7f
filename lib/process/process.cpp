// Exit classification, the foreground run (system(3) without a shell) and the exec in place
// behind `emurun exec`. A foreground child stays in emurun's process group so the terminal's
// signals reach it directly; emurun itself ignores SIGINT and SIGQUIT while it waits (system(3)'s
// rule) so Ctrl-C ends the child, and emurun then reports the child's fate. The supervised,
// many-children side lives in process_supervisor*.cpp.
#include "process/spawn.hpp"
#include "util/env.hpp"

#include <emurun/process.hpp>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <sys/wait.h>
#include <unistd.h>

namespace emurun {

ExitStatus ExitStatus::from_wait_status(int status) {
    if (WIFSIGNALED(status)) {
        return killed(WTERMSIG(status), WCOREDUMP(status));
    }
    return exited(WIFEXITED(status) ? WEXITSTATUS(status) : 0);
}

std::string ExitStatus::describe() const {
    if (m_signal == 0) {
        return "exited with " + std::to_string(m_code);
    }
    const char* name = ::strsignal(m_signal);
    std::string out = "killed by signal " + std::to_string(m_signal);
    if (name != nullptr) {
        out += std::string(" (") + name + ")";
    }
    if (m_core) {
        out += ", core dumped";
    }
    return out;
}

std::map<std::string, std::string> current_environment() {
    return util::current_environment();
}

namespace {

/// SIGINT/SIGQUIT ignored and SIGCHLD blocked for the lifetime of the object, as system(3)
/// does, so the terminal's Ctrl-C ends only the child and nobody else reaps it.
class ForegroundSignals {
  public:
    ForegroundSignals() {
        struct sigaction ignore {};
        ignore.sa_handler = SIG_IGN;
        ::sigemptyset(&ignore.sa_mask);
        ::sigaction(SIGINT, &ignore, &m_old_int);
        ::sigaction(SIGQUIT, &ignore, &m_old_quit);
        sigset_t chld;
        ::sigemptyset(&chld);
        ::sigaddset(&chld, SIGCHLD);
        ::pthread_sigmask(SIG_BLOCK, &chld, &m_old_mask);
    }
    ~ForegroundSignals() {
        ::sigaction(SIGINT, &m_old_int, nullptr);
        ::sigaction(SIGQUIT, &m_old_quit, nullptr);
        ::pthread_sigmask(SIG_SETMASK, &m_old_mask, nullptr);
    }
    ForegroundSignals(const ForegroundSignals&) = delete;
    ForegroundSignals& operator=(const ForegroundSignals&) = delete;

  private:
    struct sigaction m_old_int {};
    struct sigaction m_old_quit {};
    sigset_t m_old_mask{};
};

} // namespace

Result<ExitStatus> run_foreground(const Command& cmd) {
    auto exec = EMURUN_TRY(detail::prepare_exec(cmd));
    ForegroundSignals signals;
    auto pid = detail::spawn_prepared(*exec, detail::ChildSetup{});
    if (!pid) {
        return std::unexpected(detail::exec_failure_error(*exec, pid.error()));
    }
    auto status = EMURUN_TRY(detail::reap(*pid));
    return ExitStatus::from_wait_status(status);
}

ExecError exec_replace(const Command& cmd) {
    auto exec = detail::prepare_exec(cmd);
    if (!exec) {
        // prepare_exec fails for an empty argv (EINVAL), else for an empty name or a name not
        // in PATH (ENOENT, as execvp says for both).
        return {exec.error(), cmd.argv.empty() ? EINVAL : ENOENT};
    }
    const detail::PreparedExec& e = **exec;
    if (!e.cwd.empty() && ::chdir(e.cwd.c_str()) != 0) {
        const int err = errno;
        return {detail::exec_failure_error(e, {detail::ExecStage::chdir, err}), err};
    }
    std::fflush(nullptr); // what emurun printed must come out before the program's output
    ::execve(e.path.c_str(), const_cast<char* const*>(e.argv.data()),
             const_cast<char* const*>(e.envp.data()));
    const int err = errno;
    return {detail::exec_failure_error(e, {detail::ExecStage::execve, err}), err};
}

} // namespace emurun
