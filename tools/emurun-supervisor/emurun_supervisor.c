/* emurun-supervisor: the per-step supervisor process of emurun's step runner (lib/process).
 *
 * Why a program of its own: every step used to fork twice from emurun's image (emurun ->
 * supervisor -> command), so each step paid for copying emurun's page tables twice and its
 * max RSS counted emurun's pages. emurun now starts this small static program with
 * posix_spawn (vfork: no copy of emurun's address space), and it forks the command from its
 * own tiny image.
 *
 *   emurun (poll loop) --posix_spawn--> emurun-supervisor (child subreaper)
 *                                          `--fork+exec--> command (own group, PDEATHSIG=KILL)
 *                                                        `-- grandchildren, daemons
 *
 * Invocation (by emurun only): emurun-supervisor CWD PROGRAM ARGV0 [ARGS...]
 *   CWD      directory to enter before the exec ("" = stay)
 *   PROGRAM  the file to execve (emurun already searched PATH)
 *   ARGV0... the command's argv; the command's environment is this program's own.
 * Descriptors: 0, 1, 2 the command's stdio; 3 the report pipe (write end); 4 the control
 * socket (read end). Anything above 4 is closed first.
 *
 * Control: 'T' = SIGTERM, 'K' = SIGKILL to the command's process group; EOF (emurun died or
 * gave up) = SIGKILL. The supervisor reaps the command itself, so it never signals a group
 * whose leader was reaped. When the command has ended, every child left (orphans re-parented
 * to this subreaper, read from /proc/self/task/<pid>/children) is SIGKILLed and reaped, round
 * by round, until none is left; then RUSAGE_CHILDREN covers the whole tree.
 *
 * Report: text lines, each written with one write() (shorter than PIPE_BUF, so atomic):
 *   "S <pid>\n"                        the command has exec'd
 *   "E <stage> <errno>\n"              it never ran (stage numbers: lib/process ExecStage)
 *   "F <wait status> <leftovers> <utime s> <utime us> <stime s> <stime us> <max rss KiB>\n"
 * Text, so a supervisor of another arch or word size (emurun's tests under emulation) speaks
 * the same protocol. Exit status 0 after a report; 126 when it cannot become a subreaper or
 * set up its descriptors; 125 when run by hand.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

enum { k_report_fd = 3, k_control_fd = 4, k_max_tracked = 512 };

/* ExecStage of lib/process/process_exec.hpp: part of the report's encoding. */
enum {
    stage_setpgid = 1,
    stage_chdir = 3,
    stage_execve = 4,
    stage_prctl = 5,
    stage_fork = 6,
    stage_setup = 7
};

extern char** environ;

static void write_all(int fd, const char* data, size_t size) {
    while (size > 0) {
        ssize_t n = write(fd, data, size);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            return;
        }
        data += n;
        size -= (size_t)n;
    }
}

static void report(const char* line) {
    write_all(k_report_fd, line, strlen(line));
}

static void close_above(int last) {
    if (syscall(SYS_close_range, (unsigned)last + 1, ~0U, 0) == 0) {
        return;
    }
    struct rlimit limit; /* no close_range (kernel < 5.9): one by one */
    getrlimit(RLIMIT_NOFILE, &limit);
    for (long fd = last + 1; fd < (long)limit.rlim_cur && fd < 65536; ++fd) {
        close((int)fd);
    }
}

static void set_all_signals(void (*handler)(int)) {
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_handler = handler;
    sigemptyset(&action.sa_mask);
    for (int sig = 1; sig < NSIG; ++sig) {
        if (sig != SIGKILL && sig != SIGSTOP) {
            sigaction(sig, &action, NULL); /* refused by glibc for its reserved signals */
        }
    }
}

/* glibc refuses sigaction() for the signals it reserves (32 and 33, below SIGRTMIN), so one
 * ignored in this process would stay ignored in the command: ask the kernel directly. An
 * all-zero kernel sigaction is SIG_DFL, no flags, an empty mask in every layout. */
static void default_reserved_signals(void) {
    unsigned long zero[4] = {0, 0, 0, 0};
    for (int sig = 32; sig < SIGRTMIN; ++sig) {
        syscall(SYS_rt_sigaction, sig, zero, NULL, sizeof(unsigned long));
    }
}

static void ignore_signals(void) {
    static const int ignored[] = {SIGINT, SIGQUIT, SIGTERM, SIGHUP, SIGPIPE};
    struct sigaction ignore;
    memset(&ignore, 0, sizeof ignore);
    ignore.sa_handler = SIG_IGN;
    sigemptyset(&ignore.sa_mask);
    for (size_t i = 0; i < sizeof ignored / sizeof ignored[0]; ++i) {
        sigaction(ignored[i], &ignore, NULL);
    }
    sigset_t empty;
    sigemptyset(&empty);
    sigprocmask(SIG_SETMASK, &empty, NULL);
}

/* The command's side of the fork: default signals, an empty mask, its own process group,
 * SIGKILL when we die, the working directory, then execve. A failure goes to `error_fd` as
 * "<stage> <errno>". */
static void exec_command(int error_fd, const char* cwd, const char* program, char** argv) {
    int stage = stage_prctl;
    set_all_signals(SIG_DFL);
    default_reserved_signals();
    sigset_t empty;
    sigemptyset(&empty);
    sigprocmask(SIG_SETMASK, &empty, NULL);
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) == 0) {
        stage = stage_setpgid;
        if (setpgid(0, 0) == 0) {
            stage = stage_chdir;
            if (cwd[0] == '\0' || chdir(cwd) == 0) {
                stage = stage_execve;
                execve(program, argv, environ);
            }
        }
    }
    char line[32];
    int n = snprintf(line, sizeof line, "%d %d", stage, errno);
    write_all(error_fd, line, (size_t)n);
    _exit(127);
}

/* Fork the command and wait until it has exec'd. Returns its pid, or -1 after reporting why
 * it never ran. */
static pid_t start_command(const char* cwd, const char* program, char** argv) {
    char line[64];
    int pipe_fds[2];
    if (pipe2(pipe_fds, O_CLOEXEC) != 0) {
        snprintf(line, sizeof line, "E %d %d\n", stage_setup, errno);
        report(line);
        return -1;
    }
    pid_t pid = fork();
    if (pid == 0) {
        close(pipe_fds[0]);
        exec_command(pipe_fds[1], cwd, program, argv);
    }
    int fork_errno = errno;
    close(pipe_fds[1]);
    if (pid < 0) {
        close(pipe_fds[0]);
        snprintf(line, sizeof line, "E %d %d\n", stage_fork, fork_errno);
        report(line);
        return -1;
    }
    char failure[32] = {0};
    ssize_t n;
    do {
        n = read(pipe_fds[0], failure, sizeof failure - 1);
    } while (n < 0 && errno == EINTR);
    close(pipe_fds[0]);
    if (n <= 0) { /* EOF: the exec closed the pipe */
        return pid;
    }
    int stage = stage_execve;
    int err = 0;
    sscanf(failure, "%d %d", &stage, &err);
    waitpid(pid, NULL, 0);
    snprintf(line, sizeof line, "E %d %d\n", stage, err);
    report(line);
    return -1;
}

/* Wait for the command while serving the control socket. Returns its raw wait status. */
static int wait_command(pid_t pid) {
    int pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
    int control_open = 1;
    for (;;) {
        int status = 0;
        if (waitpid(pid, &status, WNOHANG) == pid) {
            return status;
        }
        struct pollfd fds[2] = {{k_control_fd, POLLIN, 0}, {pidfd, POLLIN, 0}};
        /* Without a pidfd (kernel < 5.3, qemu-user) poll the wait status every 20 ms. */
        int timeout = pidfd >= 0 ? -1 : 20;
        /* A closed control socket or a missing pidfd is skipped: poll ignores fd -1. */
        if (!control_open) {
            fds[0].fd = -1;
        }
        if (poll(fds, 2, timeout) < 0) {
            continue;
        }
        if (control_open && (fds[0].revents & (POLLIN | POLLHUP | POLLERR)) != 0) {
            char request = 'K';
            ssize_t n = read(k_control_fd, &request, 1);
            if (n < 0 && errno == EINTR) {
                continue;
            }
            if (n <= 0) {
                control_open = 0; /* emurun is gone: nobody will collect this step */
            }
            kill(-pid, request == 'T' ? SIGTERM : SIGKILL);
        }
    }
}

/* Remember `pid`; 1 when it was new. */
static int remember(pid_t pid, pid_t* seen, int* count) {
    for (int i = 0; i < *count; ++i) {
        if (seen[i] == pid) {
            return 0;
        }
    }
    if (*count < k_max_tracked) {
        seen[(*count)++] = pid;
    }
    return 1;
}

/* SIGKILL every current child; how many were not killed before, -1 when the list cannot be
 * read (a kernel without CONFIG_PROC_CHILDREN). */
static int kill_children(pid_t* seen, int* count) {
    char path[64];
    snprintf(path, sizeof path, "/proc/self/task/%d/children", (int)getpid());
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        return -1;
    }
    int fresh = 0;
    pid_t pid = 0;
    char buf[1024];
    for (;;) {
        ssize_t n = read(fd, buf, sizeof buf);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        for (ssize_t i = 0; i < n; ++i) {
            if (buf[i] >= '0' && buf[i] <= '9') {
                pid = pid * 10 + (buf[i] - '0');
            } else if (pid > 0) {
                kill(pid, SIGKILL);
                fresh += remember(pid, seen, count);
                pid = 0;
            }
        }
        if (n <= 0) {
            break;
        }
    }
    close(fd);
    return fresh;
}

/* Kill and reap everything left below us once the command ended; how many were killed. */
static int kill_leftovers(void) {
    int status = 0;
    while (waitpid(-1, &status, WNOHANG) > 0) {
        /* orphans that already ended on their own are not leftovers */
    }
    static pid_t seen[k_max_tracked];
    int count = 0;
    int killed = 0;
    for (;;) {
        int fresh = kill_children(seen, &count);
        if (fresh < 0) { /* cannot list: reap what has ended, never block on the rest */
            while (waitpid(-1, &status, WNOHANG) > 0) {
            }
            break;
        }
        killed += fresh;
        if (waitpid(-1, &status, 0) < 0 && errno != EINTR) {
            break; /* ECHILD: nothing left */
        }
    }
    return killed;
}

static int is_open(int fd) {
    return fcntl(fd, F_GETFD) >= 0;
}

int main(int argc, char** argv) {
    if (argc < 4 || !is_open(k_report_fd) || !is_open(k_control_fd)) {
        static const char usage[] =
            "emurun-supervisor: a helper of emurun's step runner, started by emurun itself "
            "(not meant to be run by hand); run steps with 'emurun run'\n";
        write_all(2, usage, sizeof usage - 1);
        return 125;
    }
    close_above(k_control_fd);
    ignore_signals();
    fcntl(k_report_fd, F_SETFD, FD_CLOEXEC);
    fcntl(k_control_fd, F_SETFD, FD_CLOEXEC);
    /* qemu-user (7.2) rejects PR_SET_CHILD_SUBREAPER with EINVAL: running anyway beats failing
     * every step; the command's group is still stopped, only daemons that left it escape. */
    if (prctl(PR_SET_CHILD_SUBREAPER, 1) != 0 && errno != EINVAL) {
        return 126;
    }
    pid_t pid = start_command(argv[1], argv[2], argv + 3);
    /* Our copies of the command's stdio must go, or emurun's pipes never reach EOF. */
    close(0);
    close(1);
    close(2);
    if (pid < 0) {
        return 0;
    }
    char line[256];
    snprintf(line, sizeof line, "S %d\n", (int)pid);
    report(line);
    int status = wait_command(pid);
    int leftovers = kill_leftovers();
    struct rusage usage;
    memset(&usage, 0, sizeof usage);
    getrusage(RUSAGE_CHILDREN, &usage);
    snprintf(line, sizeof line, "F %d %d %ld %ld %ld %ld %ld\n", status, leftovers,
             (long)usage.ru_utime.tv_sec, (long)usage.ru_utime.tv_usec, (long)usage.ru_stime.tv_sec,
             (long)usage.ru_stime.tv_usec, usage.ru_maxrss);
    report(line);
    return 0;
}
