// A child in new user + mount + pid namespaces with 64Ki ids mapped (see namespaces.hpp).
// The parent writes the maps (a process cannot map more than its own id into its own
// namespace); the child waits for them on a pipe, runs the caller's set-up and starts the command.
#include "process/namespaces.hpp"
#include "process/child_setup.h"
#include "process/spawn.hpp"
#include "util/file.hpp"
#include "util/self.hpp"

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <grp.h>
#include <sched.h>
#include <sstream>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ; // NOLINT: POSIX

namespace emurun::process {
namespace {

constexpr const char* k_subid_hint_tail = " and install the package uidmap (newuidmap/newgidmap)";

/// The caller's login name, which /etc/subuid lines may use: /etc/passwd's, else what the
/// system's name service says (`getent passwd UID`, libc-bin: LDAP, sssd, systemd users), else
/// the number. Not getpwuid(): the emurun binary links glibc statically (issue 15, start-up), and
/// a static glibc would have to load the host's name service modules itself.
std::string user_name(uid_t uid) {
    if (auto name = passwd_name(util::read_file("/etc/passwd").value_or(""), uid)) {
        return *name;
    }
    detail::CaptureOptions o;
    o.timeout = std::chrono::seconds(10);
    o.max_output = 4096;
    auto run = detail::run_captured(Command{.argv = {"getent", "passwd", std::to_string(uid)}}, o);
    if (run && !run->start_error && run->status.success()) {
        if (auto name = passwd_name(run->out, uid)) {
            return *name;
        }
    }
    return std::to_string(uid);
}

std::string read_text(const std::string& path) {
    return util::read_file(path).value_or(""); // missing or unreadable: no ranges
}

std::string subid_hint(const std::string& user) {
    return "as root: usermod --add-subuids 100000-165535 --add-subgids 100000-165535 " + user +
           k_subid_hint_tail;
}

bool has_program(const char* path) {
    return ::access(path, X_OK) == 0;
}

/// One write(2) of `text`: the kernel takes an id map whole or not at all.
Result<void> write_file(const std::string& path, const std::string& text) {
    const util::UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CLOEXEC));
    if (!fd) {
        return std::unexpected(system_error("open " + path, errno));
    }
    const ssize_t n = ::write(fd.get(), text.data(), text.size());
    const int err = errno;
    if (n != static_cast<ssize_t>(text.size())) {
        return std::unexpected(system_error("write " + path, n < 0 ? err : EIO));
    }
    return {};
}

/// newuidmap/newgidmap PID 0 ID 1 1 START 65535.
Result<void> run_newidmap(const char* tool, pid_t pid, unsigned long own, SubIdRange range) {
    const Command cmd{.argv = {tool, std::to_string(pid), "0", std::to_string(own), "1", "1",
                               std::to_string(range.start), std::to_string(k_mapped_ids - 1)}};
    auto st = run_foreground(cmd);
    if (!st) {
        return std::unexpected(st.error());
    }
    if (!st->success()) {
        return fail(std::string(tool) + " " + std::to_string(pid), st->describe(),
                    "check /etc/subuid and /etc/subgid, and that " + std::string(tool) +
                        " is setuid root (package uidmap)");
    }
    return {};
}

Result<SubIdRange> own_range(const char* file) {
    const uid_t uid = ::getuid();
    return find_subid_range(read_text(file), user_name(uid), uid, file, k_mapped_ids - 1);
}

Result<void> write_maps(pid_t pid) {
    const std::string proc = "/proc/" + std::to_string(pid);
    if (::geteuid() == 0) {
        const std::string line = "0 0 " + std::to_string(k_mapped_ids) + "\n";
        if (auto r = write_file(proc + "/uid_map", line); !r) {
            return r;
        }
        return write_file(proc + "/gid_map", line);
    }
    auto uids = own_range("/etc/subuid");
    auto gids = own_range("/etc/subgid");
    if (!uids || !gids) {
        return std::unexpected(!uids ? uids.error() : gids.error());
    }
    if (auto r = run_newidmap("/usr/bin/newuidmap", pid, ::getuid(), *uids); !r) {
        return r;
    }
    return run_newidmap("/usr/bin/newgidmap", pid, ::getgid(), *gids);
}

// --- the child side ------------------------------------------------------------------------

/// what \0 why \0 hint, written once to the error pipe.
void send_error(int fd, const Error& e) {
    const std::string msg = e.what + '\0' + e.why + '\0' + e.hint;
    [[maybe_unused]] auto n = ::write(fd, msg.data(), msg.size());
}

Error receive_error(const std::string& msg) {
    Error e;
    const auto a = msg.find('\0');
    const auto b = a == std::string::npos ? a : msg.find('\0', a + 1);
    e.what = msg.substr(0, a);
    if (b != std::string::npos) {
        e.why = msg.substr(a + 1, b - a - 1);
        e.hint = msg.substr(b + 1);
    }
    return e;
}

std::vector<std::string> env_strings(const Command& cmd) {
    std::vector<std::string> out;
    for (const auto& [k, v] : cmd.env.value_or(current_environment())) {
        out.push_back(k + "=" + v);
    }
    return out;
}

/// The command, as the child of pid 1: default signals and mask, its env, exec (PATH from its env).
[[noreturn]] void exec_command(const Command& cmd, std::vector<std::string> envs) {
    std::vector<char*> envp;
    for (auto& e : envs) {
        envp.push_back(e.data());
    }
    envp.push_back(nullptr);
    std::vector<std::string> args = cmd.argv;
    std::vector<char*> argv;
    for (auto& a : args) {
        argv.push_back(a.data());
    }
    argv.push_back(nullptr);
    ecs_default_signals(); // pid 1's are emurun's, and its mask
    environ = envp.data();
    const std::string program = cmd.program ? cmd.program->string() : cmd.argv.front();
    ::execvp(program.c_str(), argv.data());
    const int err = errno;
    std::fprintf(stderr, "emurun: error: execvp %s: %s\n", program.c_str(), std::strerror(err));
    ::_exit(err == ENOENT ? 127 : 126);
}

/// After forwarding SIGTERM/SIGHUP, how long pid 1 lets the namespace's processes end before it
/// kills them all (mmdebstrap, for one, waits for its worker when signalled).
constexpr unsigned k_stop_grace_seconds = 10;

/// pid 1 forwards SIGTERM/SIGHUP to every process of the namespace (what a terminal does for a
/// process group: a command's own workers must stop too), then SIGKILLs what is left.
void forward_signal(int sig) {
    ::kill(-1, sig); // in a pid namespace's init: every process of it but itself
    ::alarm(k_stop_grace_seconds);
}

void kill_all(int /*sig*/) {
    ::kill(-1, SIGKILL);
}

/// Interactive pid 1: a SIGINT the parent queued (one sent to emurun alone, not the terminal's,
/// which reaches the command itself) goes to every process of the namespace, as a terminal's
/// would; the command decides. Any other SIGINT (the terminal's, a process group's) is ignored.
void forward_queued_interrupt(int sig, siginfo_t* info, void* /*context*/) {
    if (info != nullptr && info->si_code == SI_QUEUE) {
        ::kill(-1, sig);
    }
}

void handle_interrupts(Interrupts interrupts) {
    struct sigaction sa {};
    if (interrupts == Interrupts::stop_all) {
        sa.sa_handler = forward_signal;
    } else {
        sa.sa_sigaction = forward_queued_interrupt;
        sa.sa_flags = SA_SIGINFO;
    }
    ::sigaction(SIGINT, &sa, nullptr);
}

/// pid 1: start the command, reap everything until it ends; its status is ours.
[[noreturn]] void be_init(const Command& cmd, util::UniqueFd error_fd, Interrupts interrupts) {
    auto envs = env_strings(cmd);
    const pid_t child = ::fork();
    if (child < 0) {
        send_error(error_fd.get(), system_error("fork the command", errno));
        ::_exit(125);
    }
    if (child == 0) {
        exec_command(cmd, std::move(envs));
    }
    error_fd.reset(); // the parent's read ends: the command started
    for (int sig : {SIGTERM, SIGHUP}) {
        std::signal(sig, forward_signal);
    }
    std::signal(SIGALRM, kill_all);
    // Interactive: the terminal sends SIGINT to the command too, which decides (a shell inside
    // goes on). Stop all: SIGINT ends the whole namespace like SIGTERM.
    handle_interrupts(interrupts);
    int status = 0;
    for (;;) {
        const pid_t w = ::wait(&status);
        if (w == child) {
            ::_exit(ExitStatus::from_wait_status(status).shell_code());
        }
        if (w < 0 && errno != EINTR) {
            ::_exit(125);
        }
    }
}

[[noreturn]] void child_main(const NamespaceSetup& setup, const Command& cmd, util::UniqueFd go_fd,
                             util::UniqueFd error_fd, Interrupts interrupts) {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    char c = 0;
    if (::read(go_fd.get(), &c, 1) != 1) { // the parent could not write the maps
        ::_exit(125);
    }
    go_fd.reset();
    Result<void> r;
    if (::setresgid(0, 0, 0) != 0 || ::setresuid(0, 0, 0) != 0 || ::setgroups(0, nullptr) != 0) {
        r = std::unexpected(system_error("become root in the new user namespace", errno));
    } else if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) {
        r = std::unexpected(system_error("mount --make-rprivate /", errno));
    } else {
        r = setup();
    }
    if (r && cmd.cwd && ::chdir(cmd.cwd->c_str()) != 0) {
        Error e = system_error("chdir " + cmd.cwd->string(), errno,
                               "is the directory there inside? bind it in");
        e.field = "binds";
        r = std::unexpected(std::move(e));
    }
    if (!r) {
        send_error(error_fd.get(), r.error());
        ::_exit(125);
    }
    be_init(cmd, std::move(error_fd), interrupts);
}

volatile pid_t g_namespace_child = 0;            // the parent forwards SIGTERM/SIGHUP to pid 1
volatile std::sig_atomic_t g_interrupted_by = 0; // the last SIGINT/SIGTERM/SIGHUP received

/// Interactive SIGINT: noted; forwarded (queued, so pid 1 tells it from the terminal's) unless
/// the kernel sent it (the terminal's Ctrl-C, which the command receives itself): a SIGINT sent
/// to emurun's pid alone (kill, a CI runner's cancel) must still reach the command.
void note_interrupt(int sig, siginfo_t* info, void* /*context*/) {
    g_interrupted_by = sig;
    if (info != nullptr && info->si_code != SI_KERNEL && g_namespace_child > 0) {
        ::sigqueue(g_namespace_child, sig, sigval{});
    }
}

void forward_to_child(int sig) {
    g_interrupted_by = sig;
    if (g_namespace_child > 0) {
        ::kill(g_namespace_child, sig);
    }
}

/// While the parent waits: SIGINT noted (the terminal sends it to the command too; one sent to
/// emurun alone is passed on, see note_interrupt), SIGQUIT
/// ignored, SIGTERM/SIGHUP noted and forwarded to pid 1, which forwards them to the command;
/// the caller then sees the command's end and can clean up. Restored when destroyed.
class ParentSignals {
  public:
    ParentSignals(pid_t child, Interrupts interrupts) {
        g_namespace_child = child;
        g_interrupted_by = 0;
        struct sigaction note {};
        note.sa_sigaction = note_interrupt;
        note.sa_flags = SA_SIGINFO;
        struct sigaction ign {};
        ign.sa_handler = SIG_IGN;
        struct sigaction fwd {};
        fwd.sa_handler = forward_to_child;
        ::sigaction(SIGINT, interrupts == Interrupts::stop_all ? &fwd : &note, &m_old[0]);
        ::sigaction(SIGQUIT, &ign, &m_old[1]);
        ::sigaction(SIGTERM, &fwd, &m_old[2]);
        ::sigaction(SIGHUP, &fwd, &m_old[3]);
    }
    ~ParentSignals() {
        int i = 0;
        for (int sig : {SIGINT, SIGQUIT, SIGTERM, SIGHUP}) {
            ::sigaction(sig, &m_old[i++], nullptr);
        }
        g_namespace_child = 0;
    }
    ParentSignals(const ParentSignals&) = delete;
    ParentSignals& operator=(const ParentSignals&) = delete;

  private:
    std::array<struct sigaction, 4> m_old{};
};

Error clone_error(int err) {
    return system_error("clone(CLONE_NEWUSER|CLONE_NEWNS|CLONE_NEWPID)", err,
                        "user namespaces must be enabled: sysctl user.max_user_namespaces "
                        "(> 0) and kernel.unprivileged_userns_clone (1); 'emurun doctor' checks");
}

/// Read the child's error record (empty when it started the command), then reap it.
Result<ExitStatus> collect(pid_t pid, util::UniqueFd error_fd) {
    std::string msg;
    std::array<char, 4096> buf{};
    for (;;) {
        const ssize_t n = ::read(error_fd.get(), buf.data(), buf.size());
        if (n > 0) {
            msg.append(buf.data(), static_cast<std::size_t>(n));
        } else if (n == 0 || errno != EINTR) {
            break;
        }
    }
    error_fd.reset();
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (!msg.empty()) {
        return std::unexpected(receive_error(msg));
    }
    return ExitStatus::from_wait_status(status);
}

} // namespace

int interrupted_by() {
    return g_interrupted_by;
}

std::optional<std::string> passwd_name(std::string_view text, uid_t uid) {
    const std::string id = std::to_string(uid);
    constexpr auto npos = std::string_view::npos;
    // A loop of find() rather than std::views::split: clang-15 (the sanitizer build) cannot
    // instantiate libstdc++ 12's split_view of a string_view.
    for (std::size_t start = 0; start < text.size();) {
        const auto end = std::min(text.find('\n', start), text.size());
        const std::string_view line = text.substr(start, end - start);
        start = end + 1;
        // name:password:uid:gid:...
        const auto c1 = line.find(':');
        const auto c2 = c1 == npos ? npos : line.find(':', c1 + 1);
        if (c1 == 0 || c2 == npos) {
            continue;
        }
        const auto c3 = line.find(':', c2 + 1);
        if (line.substr(c2 + 1, c3 == npos ? npos : c3 - c2 - 1) == id) {
            return std::string(line.substr(0, c1));
        }
    }
    return std::nullopt;
}

Result<SubIdRange> find_subid_range(const std::string& text, const std::string& user, uid_t uid,
                                    const std::string& file, unsigned long needed) {
    std::istringstream in(text);
    std::string line;
    while (std::getline(in, line)) {
        std::array<std::string, 3> f;
        std::istringstream fields(line);
        if (!std::getline(fields, f[0], ':') || !std::getline(fields, f[1], ':') ||
            !std::getline(fields, f[2])) {
            continue;
        }
        if (f[0] != user && f[0] != std::to_string(uid)) {
            continue;
        }
        const SubIdRange r{std::strtoul(f[1].c_str(), nullptr, 10),
                           std::strtoul(f[2].c_str(), nullptr, 10)};
        if (r.count >= needed) {
            return r;
        }
    }
    return fail("map " + std::to_string(needed + 1) + " ids for user " + user,
                "no range of " + std::to_string(needed) + " ids for " + user + " in " + file +
                    " (a Debian root's files belong to many users)",
                subid_hint(user));
}

Result<void> check_id_maps() {
    if (::geteuid() == 0) {
        return {};
    }
    const std::string user = user_name(::getuid());
    if (!has_program("/usr/bin/newuidmap") || !has_program("/usr/bin/newgidmap")) {
        return fail("map " + std::to_string(k_mapped_ids) + " ids for user " + user,
                    "/usr/bin/newuidmap or /usr/bin/newgidmap is missing",
                    "as root: apt-get install uidmap, and give " + user +
                        " subordinate ids: usermod --add-subuids 100000-165535 --add-subgids "
                        "100000-165535 " +
                        user);
    }
    if (auto r = own_range("/etc/subuid"); !r) {
        return std::unexpected(r.error());
    }
    if (auto r = own_range("/etc/subgid"); !r) {
        return std::unexpected(r.error());
    }
    return {};
}

Result<ExitStatus> run_in_namespaces(const NamespaceSetup& setup, const Command& command,
                                     Interrupts interrupts) {
    if (command.argv.empty()) {
        return fail("run in namespaces", "empty command");
    }
    if (util::thread_count() > 1) {
        return fail("run in namespaces", "the caller is multithreaded",
                    "call it from a single-threaded process (the CLI does)");
    }
    if (auto r = check_id_maps(); !r) {
        return std::unexpected(r.error());
    }
    auto go = EMURUN_TRY(util::make_pipe());  // "maps written, go on"
    auto err = EMURUN_TRY(util::make_pipe()); // why the child could not start the command
    std::fflush(nullptr);
    const long pid =
        ::syscall(SYS_clone, CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | SIGCHLD, 0, 0, 0, 0);
    if (pid == 0) {
        go.second.reset();
        err.first.reset();
        child_main(setup, command, std::move(go.first), std::move(err.second), interrupts);
    }
    const int clone_errno = errno;
    go.first.reset();
    err.second.reset();
    if (pid < 0) {
        return std::unexpected(clone_error(clone_errno));
    }
    auto maps = write_maps(static_cast<pid_t>(pid));
    if (maps) {
        [[maybe_unused]] auto n = ::write(go.second.get(), "g", 1);
    }
    go.second.reset();
    Result<ExitStatus> result;
    {
        const ParentSignals signals(static_cast<pid_t>(pid), interrupts);
        result = collect(static_cast<pid_t>(pid), std::move(err.first));
    }
    if (!maps) {
        return std::unexpected(maps.error());
    }
    return result;
}

} // namespace emurun::process
