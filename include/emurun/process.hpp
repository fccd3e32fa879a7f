// The only place in emurun that spawns processes: argument vectors (never shell strings), env,
// cwd, exit classification, one foreground child (`emurun exec`) and many supervised children
// served by one poll loop (pipeline steps) with rusage of the whole tree and a staged timeout.
// Layer: core. Its ABI is kept within a SOVERSION (abi/libemurun.abi; docs/api/mainpage.md).
#pragma once

#include <emurun/error.hpp>
#include <emurun/export.hpp>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace emurun {

/// What to run. argv[0] is what the program sees as its name; the file executed is `program`
/// if set, else argv[0]; a name without '/' is searched in PATH (the child's PATH when `env`
/// sets one, else emurun's).
struct Command {
    // Default member initializers let callers use designated initializers under -Wextra.
    std::vector<std::string> argv{}; ///< non-empty

    /// The child's whole environment; nullopt = inherit emurun's.
    std::optional<std::map<std::string, std::string>> env{};
    std::optional<std::filesystem::path> cwd{};     ///< nullopt = emurun's working directory
    std::optional<std::filesystem::path> program{}; ///< exec this file; argv[0] is kept as is
};

/// emurun's own environment as a map, to copy and modify into Command::env.
[[nodiscard]] EMURUN_EXPORT std::map<std::string, std::string> current_environment();

/// How a child ended: exited with a code, or killed by a signal (maybe with a core dump).
class ExitStatus {
  public:
    /// Default: exited with 0.
    ExitStatus() = default;
    /// From a raw wait(2) status (WIFEXITED/WIFSIGNALED).
    [[nodiscard]] EMURUN_EXPORT static ExitStatus from_wait_status(int status);
    /// A child that exited with `code`.
    [[nodiscard]] static ExitStatus exited(int code) { return ExitStatus(code, 0, false); }
    /// A child killed by signal `sig`, with a core dump when `core`.
    [[nodiscard]] static ExitStatus killed(int sig, bool core = false) {
        return ExitStatus(-1, sig, core);
    }

    /// The exit code when the child exited; nullopt when a signal killed it.
    [[nodiscard]] std::optional<int> code() const {
        return m_signal == 0 ? std::optional<int>(m_code) : std::nullopt;
    }
    /// The signal that killed the child; nullopt when it exited.
    [[nodiscard]] std::optional<int> signal() const {
        return m_signal != 0 ? std::optional<int>(m_signal) : std::nullopt;
    }
    /// Killed by a signal that dumped core.
    [[nodiscard]] bool core_dumped() const { return m_core; }
    /// Exited with 0.
    [[nodiscard]] bool success() const { return m_signal == 0 && m_code == 0; }
    /// The code a shell would report: the exit code, or 128 + signal number.
    [[nodiscard]] int shell_code() const { return m_signal != 0 ? 128 + m_signal : m_code; }
    /// "exited with 3", "killed by signal 11 (Segmentation fault), core dumped".
    [[nodiscard]] EMURUN_EXPORT std::string describe() const;

    /// Same exit code or signal, same core dump.
    friend bool operator==(const ExitStatus&, const ExitStatus&) = default;

  private:
    ExitStatus(int code, int sig, bool core) : m_code(code), m_signal(sig), m_core(core) {}
    int m_code = 0;
    int m_signal = 0;
    bool m_core = false;
};

/// Run `cmd` in the foreground like system(3), but without a shell: stdin/stdout/stderr are
/// inherited, the child stays in emurun's process group (so the terminal's Ctrl-C reaches it),
/// emurun ignores SIGINT/SIGQUIT and blocks SIGCHLD until the child ends, and the child starts
/// with default signal dispositions and an empty signal mask.
/// Errors (the child never ran): "execve /x/y failed: No such file or directory",
/// "chdir /d failed: ...", fork/pipe failures. A child that ran and failed is an ExitStatus.
[[nodiscard]] EMURUN_EXPORT Result<ExitStatus> run_foreground(const Command& cmd);

/// Why exec_replace returned: the Error, and the errno of the step that failed, so that a
/// caller can exit as a shell does.
struct ExecError {
    Error error; ///< what failed, with its kind (not_found, permission, ...) and a hint

    /// ENOENT also for an empty program name or one not in PATH (as execvp); EINVAL for an
    /// empty argv.
    int err = 0;
    /// The shell's exit code for this failure: 127 not found (ENOENT), 126 found but not
    /// executable (EACCES, ENOEXEC), else `otherwise`.
    [[nodiscard]] int shell_code(int otherwise) const {
        if (err == ENOENT) {
            return 127;
        }
        return err == EACCES || err == ENOEXEC ? 126 : otherwise;
    }
};

/// Replace this process by `cmd` (execve in place): same pid, process group, stdio, signal
/// dispositions and mask as the caller gave emurun, so the program's exit code and fatal signal
/// reach emurun's parent exactly (`emurun exec` when nothing has to be supervised). stdio
/// buffers are flushed first; `cmd.cwd` is entered before the exec. The program is found by
/// emurun's one PATH rule (util/path.hpp); unlike execvp(3), a file the kernel refuses with
/// ENOEXEC (a script without "#!") is not retried under /bin/sh. Returns only on failure:
/// "execve /x/y failed: No such file or directory", "chdir /d failed: ...", program not in PATH.
[[nodiscard]] EMURUN_EXPORT ExecError exec_replace(const Command& cmd);

// ---------------------------------------------------------------------------------------------
// Many supervised children served by one poll loop (the step runner).

/// One process of a tree as /proc showed it (a picture of a stuck step, taken before its stop).
struct ProcessSnapshot {
    int pid = 0;           ///< its process id
    int ppid = 0;          ///< its parent's process id
    char state = '?';      ///< R running, S sleeping, D uninterruptible, T stopped, Z zombie...
    std::string wchan{};   ///< the kernel function it sleeps in; empty when running or unknown
    double cpu = 0;        ///< user + system seconds so far
    std::string cmdline{}; ///< its arguments joined by spaces; "[comm]" when it has none

    /// Every field equal.
    friend bool operator==(const ProcessSnapshot&, const ProcessSnapshot&) = default;
};

/// Every process below `root` (and `root` itself with `include_root`), parents before their
/// children, read from /proc. Processes that end meanwhile are left out; empty when /proc
/// cannot be read.
[[nodiscard]] EMURUN_EXPORT std::vector<ProcessSnapshot> snapshot_process_tree(int root,
                                                                               bool include_root);

/// Which output stream a chunk came from.
enum class Stream { out, err };

/// Resource limits of one child's whole tree. Enforced with a cgroup of its own where this
/// process can make one (cgroup v2 with the controller delegated to its cgroup, or a cgroup v1
/// pids hierarchy), else with rlimits where one exists (pids: RLIMIT_NPROC, which counts the
/// user's processes and binds no root; memory: RLIMIT_AS, per process and virtual); what could
/// not be enforced as asked is said in ChildResult::limit_gap.
struct ResourceLimits {
    std::optional<std::uint64_t> pids{};         ///< processes and threads at once
    std::optional<std::uint64_t> memory_bytes{}; ///< memory of the tree (cgroup) or per process
    std::optional<double> cpus{};                ///< CPU bandwidth in CPUs (1.5 = 150% of one)

    /// Whether any limit is set.
    [[nodiscard]] bool any() const { return pids || memory_bytes || cpus; }
};

/// Per-child options for Supervisor::spawn.
struct SpawnOptions {
    /// The size of this struct as the caller was compiled with it: how libemurun tells which
    /// version of it a program passes (a versioned struct: fields are only added at its end,
    /// and a program built against an older libemurun keeps working). Leave it as it is.
    StructSize<SpawnOptions> struct_size{};
    /// Append the child's stdout/stderr here (created 0644 if missing). Both may name the same
    /// file: the streams are then interleaved chunk by chunk.
    std::optional<std::filesystem::path> stdout_log{};
    std::optional<std::filesystem::path> stderr_log{}; ///< as stdout_log, for stderr

    /// Called on the poll loop's thread with every chunk read (after it reached the log).
    std::function<void(Stream, std::string_view)> on_output{};
    bool stdin_null = true; ///< stdin from /dev/null; false = inherit emurun's stdin

    /// Wall-time limit; on expiry SIGTERM to the child's process group, then SIGKILL after
    /// `grace`. nullopt = no limit.
    std::optional<std::chrono::milliseconds> timeout{};
    /// No output on either stream for this long: the child is stopped as by `timeout`
    /// (ChildResult::timed_out and ChildResult::idle). nullopt = no limit.
    std::optional<std::chrono::milliseconds> idle_timeout{};
    /// How long a stopped child's group has between SIGTERM and SIGKILL.
    std::chrono::milliseconds grace{10'000};
    ResourceLimits limits{}; ///< none by default
};

/// Identifies a child of one Supervisor.
using ChildId = std::uint64_t;

/// What one supervised child did. Times and rusage cover the whole tree: the child and every
/// descendant that was reaped, including orphans killed when the child ended.
struct ChildResult {
    ChildId id = 0;         ///< what Supervisor::spawn returned for it
    ExitStatus status;      ///< how the child itself ended
    bool timed_out = false; ///< the timeout fired (status then usually shows SIGTERM/SIGKILL)
    bool idle = false;      ///< ... and it was the idle timeout: no output for that long
    bool stopped = false;   ///< stopped by Supervisor::stop_all (not when it had ended already)

    /// The child's process tree just before a timeout or stop_all stopped it (empty otherwise).
    std::vector<ProcessSnapshot> snapshot;
    std::chrono::nanoseconds wall{0};  ///< steady clock, spawn to end of the tree
    std::chrono::microseconds user{0}; ///< user CPU time of the tree (rusage)
    std::chrono::microseconds sys{0};  ///< system CPU time of the tree (rusage)
    long max_rss_kib = 0;              ///< largest resident set of any process in the tree
    std::uint64_t stdout_bytes = 0;    ///< bytes the tree wrote to stdout
    std::uint64_t stderr_bytes = 0;    ///< bytes the tree wrote to stderr
    int leftovers_killed = 0; ///< processes still alive when the child ended, then SIGKILLed

    /// Set when the child never ran (exec failure, bad cwd): status is then meaningless.
    std::optional<Error> start_error;
    /// Set when writing output to a log failed (a full disk): the log misses that output.
    std::optional<Error> log_error;
    /// A limit of SpawnOptions::limits that the tree hit, as the kernel counted it ("pids limit
    /// 4096 reached", "memory limit 2147483648 bytes: out-of-memory kill"); the child was then
    /// stopped (pids) or killed by the kernel (memory).
    std::optional<std::string> limit_hit;
    /// The limits that could not be enforced as asked, and why (empty: all were).
    std::string limit_gap;
};

class SupervisorImpl;

/// The helper program every Supervisor runs its children under (emurun-supervisor), found from
/// the emurun binary (find_emurun_exe's rule: beside it, or in its ../libexec/emurun). Error
/// (not_found) naming both places and the fix: what a caller checks before starting anything.
[[nodiscard]] EMURUN_EXPORT Result<std::filesystem::path> find_supervisor_helper();

/// Runs many children at once, each under a small supervisor process (a child subreaper) so
/// that nothing a child leaves behind survives it, not even a daemon that double-forked and
/// called setsid. The supervisors are job slots: helper processes (`emurun-supervisor
/// --slot`, children of the caller) that run one child at a time and are kept for the
/// Supervisor's lifetime; a spawn goes to an idle slot, else to a new one, so there are as
/// many as children ever ran at once. A child gets its Command's cwd (else the caller's at
/// spawn time), argv and environment, but the rlimits, umask and scheduling settings the
/// caller had when its slot started. A child's CPU time and max RSS are its own tree's.
/// One poll loop on the caller's thread serves every pipe and timer: call wait_any()
/// repeatedly. Not thread-safe: use one Supervisor from one thread.
/// While a Supervisor lives, the calling process is a child subreaper (PR_SET_CHILD_SUBREAPER;
/// the previous setting is restored): if a step kills its slot, what it left behind is
/// re-parented to the caller, and once such a slot has been reaped the Supervisor kills and
/// reaps every child of the caller that is not one of its slots and was not already a child
/// when it was created. A caller that starts children of its own from another thread while a
/// Supervisor lives risks them only in that case.
class Supervisor {
  public:
    EMURUN_EXPORT Supervisor();
    /// Kills (SIGKILL) and reaps every child still running.
    EMURUN_EXPORT ~Supervisor();
    Supervisor(const Supervisor&) = delete;
    Supervisor& operator=(const Supervisor&) = delete;

    /// Start `cmd` in its own process group. Errors: bad argv, missing program in PATH,
    /// log file cannot be opened, pipe/fork failures. An exec failure inside the child is
    /// reported later as ChildResult::start_error.
    [[nodiscard]] EMURUN_EXPORT Result<ChildId> spawn(const Command& cmd,
                                                      const SpawnOptions& options = {});

    /// Serve pipes and timers until at least one child finished or `poll_timeout` passed
    /// (nullopt = until a child finishes). Returns the children that finished (maybe none:
    /// timeout, or a signal interrupted the wait). Error only if poll itself fails.
    [[nodiscard]] EMURUN_EXPORT Result<std::vector<ChildResult>>
    wait_any(std::optional<std::chrono::milliseconds> poll_timeout = std::nullopt);

    /// Stage a stop of every running child: SIGTERM to its process group now, SIGKILL after
    /// its grace. Keep calling wait_any() to collect them.
    EMURUN_EXPORT void stop_all();

    /// Signal mask to install while waiting in ppoll (ninja's pattern: the caller blocks
    /// SIGINT/SIGTERM, the wait unblocks them, the handler only sets a flag).
    EMURUN_EXPORT void set_wait_sigmask(const sigset_t& mask);

    /// Children spawned and not yet returned by wait_any().
    [[nodiscard]] EMURUN_EXPORT std::size_t running() const;

  private:
    std::unique_ptr<SupervisorImpl> m_impl;
};

} // namespace emurun
