// Entering the sandbox: user + mount namespace, id maps, private binfmt_misc, registration,
// exec. Runs in a single-threaded process (unshare(CLONE_NEWUSER) refuses multithreaded ones).
#include "process/spawn.hpp"
#include "sandbox/sandbox_internal.hpp"
#include "sandbox/sandbox_versions.hpp"
#include "util/env.hpp"
#include "util/fd.hpp"
#include "util/file.hpp"
#include "util/self.hpp"

#include <emurun/process.hpp>
#include <emurun/sandbox.hpp>

#include <array>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/utsname.h>
#include <unistd.h>

namespace emurun {
namespace fs = std::filesystem;

namespace {

constexpr const char* k_reexec_marker = "EMURUN_SANDBOX_REEXEC";
constexpr const char* k_mount_point = "/proc/sys/fs/binfmt_misc";

std::string kernel_release() {
    struct utsname u {};
    return ::uname(&u) == 0 ? std::string(u.release) : std::string("unknown");
}

/// The threads of this process (/proc/self/status); 0 when it cannot be read.
int thread_count() {
    auto text = util::read_file("/proc/self/status");
    const auto at = text ? text->find("\nThreads:") : std::string::npos;
    return at == std::string::npos ? 0 : std::atoi(text->c_str() + at + 9);
}

/// Why the kernel said no: unshare(2) refuses a new user namespace to a multi-threaded process
/// with EINVAL, and under QEMU's user mode (an emurun for another arch, emulated) every process
/// is multi-threaded; else what the kernel must have.
std::string unsupported_why(int err) {
    const int threads = err == EINVAL ? thread_count() : 0;
    if (threads > 1) {
        return std::string(std::strerror(err)) + ": this process has " + std::to_string(threads) +
               " threads, and the kernel gives a new user namespace only to a single-threaded "
               "process; an emurun running under QEMU's user mode (an emulated emurun) is "
               "multi-threaded, so it has no sandbox there";
    }
    return std::string(std::strerror(err)) +
           "; emurun sandbox needs Linux >= 6.7 (binfmt_misc mountable in a user namespace) and "
           "user namespaces enabled; this kernel is " +
           kernel_release();
}

/// The error for a kernel (or configuration) that cannot give us a private binfmt_misc.
Error unsupported(const std::string& what, int err) {
    return Error{what, unsupported_why(err),
                 "run 'emurun doctor'; alternatives: 'emurun exec -- PROG' for one program, "
                 "'emurun shim add' for the tools a build runs, or 'emurun binfmt register "
                 "ARCH' as root (changes the host's table)",
                 ErrorKind::kernel_unsupported};
}

/// open + write + close, reporting errno; used for /proc/self/{setgroups,uid_map,gid_map}.
Result<void> write_proc(const char* path, const std::string& text) {
    util::UniqueFd fd(::open(path, O_WRONLY | O_CLOEXEC));
    if (!fd) {
        return std::unexpected(system_error(std::string("open ") + path, errno));
    }
    const ssize_t n = ::write(fd.get(), text.data(), text.size());
    const int err = errno;
    fd.reset();
    if (n != static_cast<ssize_t>(text.size())) {
        return std::unexpected(system_error(std::string("write ") + path, n < 0 ? err : EIO));
    }
    return {};
}

/// New user + mount namespace where our uid/gid are 0, mounts private, binfmt_misc mounted.
Result<void> enter_namespaces() {
    const uid_t uid = ::geteuid();
    const gid_t gid = ::getegid();
    if (::unshare(CLONE_NEWUSER | CLONE_NEWNS) != 0) {
        return std::unexpected(unsupported("unshare(CLONE_NEWUSER|CLONE_NEWNS) failed", errno));
    }
    // setgroups must be denied before an unprivileged gid_map; kernels before 3.19 lack it.
    if (::access("/proc/self/setgroups", F_OK) == 0) {
        if (auto r = write_proc("/proc/self/setgroups", "deny"); !r) {
            return r;
        }
    }
    if (auto r = write_proc("/proc/self/uid_map", detail::id_map_line(0, uid)); !r) {
        return r;
    }
    if (auto r = write_proc("/proc/self/gid_map", detail::id_map_line(0, gid)); !r) {
        return r;
    }
    // Nothing we mount may propagate back to the host.
    if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) {
        return std::unexpected(system_error("mount --make-rprivate /", errno));
    }
    if (::mount("binfmt_misc", k_mount_point, "binfmt_misc", MS_NOSUID | MS_NODEV | MS_NOEXEC,
                nullptr) != 0) {
        return std::unexpected(unsupported(std::string("mount binfmt_misc on ") + k_mount_point +
                                               " in a user namespace failed",
                                           errno));
    }
    return {};
}

Result<void> register_entries(const SandboxPlan& plan, const DiagnosticSink& diagnostics) {
    BinfmtOptions options;
    options.mount = k_mount_point;
    options.mount_if_missing = false;
    // No lock_file: the binfmt module then locks the mount directory, creating nothing.
    const auto applied = EMURUN_TRY(register_binfmt(plan.entries, options));
    for (const auto& w : applied.warnings) {
        emit(diagnostics, Severity::debug, "sandbox registration: " + w);
    }
    return {};
}

/// The failure of the final exec: 127 not found, 126 not executable (as a shell exits).
SandboxFailure exec_failure(const std::string& program, const ExecError& failure) {
    const int err = failure.err;
    return {
        system_error("execvp " + program, err, err == ENOENT ? "is it installed and in PATH?" : ""),
        failure.shell_code(125)};
}

/// A multithreaded caller cannot unshare a user namespace: run a fresh emurun instead.
SandboxFailure reexec_fresh(const SandboxSpec& spec, const std::vector<std::string>& argv) {
    if (util::get_env(k_reexec_marker)) {
        return {Error{"emurun sandbox", "still multithreaded after re-executing emurun", ""}};
    }
    auto fresh = sandbox_argv(spec, argv);
    if (!fresh) {
        return {fresh.error()};
    }
    ::setenv(k_reexec_marker, "1", 1);
    const auto failure = exec_replace(Command{.argv = *fresh});
    return {system_error("execv " + fresh->front(), failure.err)};
}

} // namespace

SandboxFailure exec_in_sandbox(const SandboxSpec& given, const std::vector<std::string>& argv) {
    std::optional<SandboxSpec> upgraded;
    auto ours = util::caller_form(given, upgraded);
    if (!ours) {
        return {ours.error()};
    }
    const SandboxSpec& spec = **ours;
    if (argv.empty()) {
        return {Error{"emurun sandbox", "no command given",
                      "give the command to run and its arguments"},
                2};
    }
    auto plan = plan_sandbox(spec);
    if (!plan) {
        return {plan.error()};
    }
    for (const auto& n : plan->notes) {
        emit(spec.diagnostics, Severity::warning, n);
    }
    if (util::thread_count() > 1) {
        return reexec_fresh(spec, argv);
    }
    ::unsetenv(k_reexec_marker);
    if (auto r = enter_namespaces(); !r) {
        return {r.error()};
    }
    if (auto r = register_entries(*plan, spec.diagnostics); !r) {
        return {r.error()};
    }
    for (const auto& [k, v] : plan->env) {
        ::setenv(k.c_str(), v.c_str(), 1);
    }
    return exec_failure(argv.front(), exec_replace(Command{.argv = argv}));
}

SandboxFailure exec_through_host_handlers(const SandboxSpec& given,
                                          const std::vector<std::string>& argv) {
    std::optional<SandboxSpec> upgraded;
    auto ours = util::caller_form(given, upgraded);
    if (!ours) {
        return {ours.error()};
    }
    const SandboxSpec& spec = **ours;
    if (argv.empty()) {
        return {Error{"emurun sandbox", "no command given",
                      "give the command to run and its arguments"},
                2};
    }
    auto plan = plan_host_handlers(spec);
    if (!plan) {
        return {plan.error()};
    }
    emit(spec.diagnostics, Severity::warning,
         "this kernel has no private binfmt_misc for a sandbox; running through the host's "
         "binfmt_misc handlers, which serve every requested arch");
    for (const auto& n : plan->notes) {
        emit(spec.diagnostics, Severity::warning, n);
    }
    for (const auto& [k, v] : plan->env) {
        ::setenv(k.c_str(), v.c_str(), 1);
    }
    return exec_failure(argv.front(), exec_replace(Command{.argv = argv}));
}

Result<void> probe_sandbox() {
    // Everything the child needs is prepared here: after fork only async-signal-safe calls.
    const std::string uid_map = detail::id_map_line(0, ::geteuid());
    // The steps, in the child: {0, 0}, or the failed step's number and errno. UniqueFd only
    // calls close(2), which is async-signal-safe.
    auto steps = [&]() -> std::array<int, 2> {
        if (::unshare(CLONE_NEWUSER | CLONE_NEWNS) != 0) {
            return {1, errno};
        }
        const util::UniqueFd map(::open("/proc/self/uid_map", O_WRONLY | O_CLOEXEC));
        if (!map || ::write(map.get(), uid_map.data(), uid_map.size()) < 0) {
            return {2, errno}; // read before map's close
        }
        if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) {
            return {3, errno};
        }
        if (::mount("binfmt_misc", k_mount_point, "binfmt_misc", 0, nullptr) != 0) {
            return {4, errno};
        }
        return {0, 0};
    };
    auto run = detail::run_forked([&](int report_fd) {
        const std::array<int, 2> res = steps();
        [[maybe_unused]] auto n = ::write(report_fd, res.data(), sizeof res);
        return 0;
    });
    if (!run) {
        return std::unexpected(run.error());
    }
    std::array<int, 2> res{-1, 0};
    if (run->report.size() != sizeof res) {
        return fail("probe the sandbox",
                    "the probe process ended before reporting (" + run->status.describe() + ")");
    }
    std::memcpy(res.data(), run->report.data(), sizeof res);
    static constexpr std::array<const char*, 5> k_steps{
        "", "unshare(CLONE_NEWUSER|CLONE_NEWNS) failed", "write /proc/self/uid_map failed",
        "mount --make-rprivate / failed", "mount binfmt_misc in a user namespace failed"};
    if (res[0] != 0) {
        return std::unexpected(unsupported(k_steps.at(static_cast<std::size_t>(res[0])), res[1]));
    }
    return {};
}

} // namespace emurun
