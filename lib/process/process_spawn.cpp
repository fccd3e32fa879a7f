// Starting a child: Boost.Process v2's POSIX launcher (Boost 1.81, header-only), with our own
// initializer doing the child's set-up between fork and exec. The only file of emurun that
// includes Boost; Boost stays private to the process module (consumers of libemurun never see
// it, and nothing needs linking: Boost.Process v2, Asio and System are header-only in 1.81).
//
// How the 1.81 launcher is used, and the limits we work around (header lines are in
// boost/process/v2/posix/default_launcher.hpp unless named otherwise):
// - The executor + error_code overload (:352); the (context&, error_code&) one drops the
//   error_code and throws (:331). argv is passed as `const char**`, which is used as is
//   (:488-491), so argv[0] may differ from the file executed. The environment is `env` (:295).
// - The child writes errno, and only errno, to the launcher's error pipe when a hook or execve
//   fails (:408), so "chdir failed" would look exactly like "execve failed". Our hook folds the
//   stage into the value it leaves in errno (see encode_failure); execve's own errno has no
//   stage bits, so it decodes as ExecStage::execve.
// - After a failure the child calls exit(), not _exit() (:411): atexit handlers and a second
//   flush of the parent's stdio buffers would run in it. Our on_exec_error hook _exit()s first.
// - Hooks are found by SFINAE probes; for on_error, on_fork_error and on_exec_error the probe
//   tests a 5-argument call but the launcher makes a 4-argument one (:162 vs :164, :268 vs
//   :270): a hook is only called if a 5-argument overload is declared too (never called).
// - The child closes only descriptors above the highest whitelisted one (the error pipe),
//   because close_all skips no gaps (posix/detail/close_handles.ipp:135): our hook closes every
//   stray descriptor itself.
// - A failed child is never reaped by the launcher (:432-436): we reap it at `launcher.pid`.
// - basic_process opens a pidfd for the child (detail/process_handle_fd.hpp:69-72) and throws
//   when pidfd_open fails (kernel < 5.3, seccomp, qemu-user), after the child has exec'd
//   (:438). We then go on with the pid: we never wait through Boost anyway (detach() at once;
//   its destructor would waitpid(WNOHANG) and lose our rusage, process.hpp:182-185).
// - The io_context is private to the call and never run: the launcher needs one for
//   notify_fork and the pidfd; the child's notify_fork runs on that private context only.
//
// What Boost cannot do here: fork without exec. Every 1.81 launcher ends the child in execve
// (:406; vfork_launcher and fork_and_forget_launcher too), and the sandbox probe (a child that
// unshares a user namespace) is forked code that never execs. fork_call below is that one raw
// fork. (The step supervisor is a program of its own, started with posix_spawn in
// process_supervisor.cpp, which says why neither this launcher, whose fork copies emurun's page
// tables, nor Boost's vfork_launcher serves there.) The child's set-up itself is child_setup.c,
// which the supervisor compiles too.
#include "process/child_setup.h"
#include "process/spawn.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/process/v2/process.hpp>

#include <cerrno>
#include <exception>
#include <sys/resource.h>
#include <sys/wait.h>
#include <system_error>
#include <unistd.h>

namespace emurun::detail {
namespace {

namespace bp = boost::process::v2;
using Launcher = bp::posix::default_launcher;
using BoostError = boost::system::error_code;
using Path = bp::filesystem::path;

/// errno values stay below 4096 (the kernel's MAX_ERRNO); the stage sits above them.
constexpr int k_stage_shift = 16;

int encode_failure(ExecStage stage, int err) {
    return (static_cast<int>(stage) << k_stage_shift) | err;
}

ExecFailure decode_failure(int value) {
    const int stage = value >> k_stage_shift;
    return ExecFailure{stage == 0 ? ExecStage::execve : static_cast<ExecStage>(stage),
                       value & ((1 << k_stage_shift) - 1)};
}

/// The initializer Boost's launcher calls: the child's set-up, and the parent's view of a fork
/// failure. Only async-signal-safe calls on the child side.
class ChildInit {
  public:
    ChildInit(const ChildSetup& setup, const char* cwd) : m_setup(setup), m_cwd(cwd) {}

    /// Child, after fork: the set-up of child_setup.c, the launcher's error pipe kept.
    BoostError on_exec_setup(Launcher& launcher, const Path&, const char* const*) const {
        const ecs_child child{
            .parent_death_signal = m_setup.parent_death_signal,
            .new_process_group = m_setup.new_process_group ? 1 : 0,
            .stdio = {m_setup.stdin_fd, m_setup.stdout_fd, m_setup.stderr_fd},
            .close_absent = 0,
            .cwd = m_cwd,
            .keep = launcher.fd_whitelist.data(),
            .n_keep = static_cast<int>(launcher.fd_whitelist.size()),
        };
        if (const int stage = ecs_setup_child(&child); stage != 0) {
            return failed(static_cast<ExecStage>(stage));
        }
        return {};
    }
    /// Child, after a hook or execve failed and errno went to the parent: leave without
    /// running atexit handlers or flushing stdio copied from emurun (the launcher's exit()).
    [[noreturn]] void on_exec_error(Launcher&, const Path&, const char* const*,
                                    const BoostError&) const {
        ::_exit(127);
    }
    /// Parent, fork() failed (errno is assigned to the error_code after this hook).
    void on_fork_error(Launcher&, const Path&, const char* const*, const BoostError&) {
        m_fork_failed = true;
    }
    // Declared only, never defined or called: 1.81's SFINAE probes look for these signatures
    // before calling the 4-argument hooks above (default_launcher.hpp:162, :268).
    void on_exec_error(Launcher&, const BoostError&, const Path&, const char* const*,
                       const BoostError&) const;
    void on_fork_error(Launcher&, const BoostError&, const Path&, const char* const*,
                       const BoostError&);

    [[nodiscard]] bool fork_failed() const { return m_fork_failed; }

  private:
    /// The launcher sends errno, not our return value: leave the encoded failure in errno.
    static BoostError failed(ExecStage stage) {
        errno = encode_failure(stage, errno);
        return BoostError(errno, boost::system::system_category());
    }

    const ChildSetup& m_setup;
    const char* m_cwd;
    bool m_fork_failed = false;
};

/// Run the launcher; fills `ec`. Returns false when it threw before the child existed.
bool launch(Launcher& launcher, const PreparedExec& exec, ChildInit& init, BoostError& ec,
            int& setup_errno) noexcept {
    try {
        boost::asio::io_context context; // private, never run: see the top of this file
        auto argv = const_cast<const char**>(exec.argv.data());
        auto process = launcher(context.get_executor(), ec, exec.path, argv, init);
        process.detach(); // the handle it returns only closes the pidfd
        return true;
    } catch (const std::system_error& e) {
        setup_errno = e.code().value();
    } catch (const boost::system::system_error& e) {
        setup_errno = e.code().value();
    } catch (const std::exception&) {
        setup_errno = ENOMEM;
    }
    // A throw once the child exists can only be the pidfd: the child has exec'd.
    return launcher.pid > 0;
}

} // namespace

std::expected<pid_t, ExecFailure> spawn_prepared(const PreparedExec& exec,
                                                 const ChildSetup& setup) noexcept {
    Launcher launcher; // one-shot: it keeps state (argv, whitelist) from a launch
    launcher.env = exec.envp.data();
    ChildInit init(setup, exec.cwd.empty() ? nullptr : exec.cwd.c_str());
    BoostError ec;
    int setup_errno = 0;
    if (!launch(launcher, exec, init, ec, setup_errno)) {
        return std::unexpected(ExecFailure{ExecStage::setup, setup_errno});
    }
    if (!ec) {
        return launcher.pid;
    }
    if (launcher.pid > 0) { // the child failed before or at execve
        (void)reap(launcher.pid);
        return std::unexpected(decode_failure(ec.value()));
    }
    return std::unexpected(
        ExecFailure{init.fork_failed() ? ExecStage::fork : ExecStage::setup, ec.value()});
}

Result<pid_t> spawn_process(const Command& cmd, const ChildSetup& setup) {
    auto exec = EMURUN_TRY(prepare_exec(cmd));
    auto pid = spawn_prepared(*exec, setup);
    if (!pid) {
        return std::unexpected(exec_failure_error(*exec, pid.error()));
    }
    return *pid;
}

Result<pid_t> fork_call(const std::function<int()>& body) {
    const pid_t pid = ::fork();
    if (pid < 0) {
        return std::unexpected(system_error("fork", errno, "too many processes or no memory?"));
    }
    if (pid == 0) {
        ::_exit(body());
    }
    return pid;
}

Result<int> reap(pid_t pid, struct rusage* usage) {
    int status = 0;
    while (::wait4(pid, &status, 0, usage) < 0) {
        if (errno != EINTR) {
            return std::unexpected(system_error("wait4 " + std::to_string(pid), errno));
        }
    }
    return status;
}

} // namespace emurun::detail
