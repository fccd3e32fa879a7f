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
 *   "F <wait status> <leftovers> <utime s> <utime us> <stime s> <stime us> <max rss KiB>
 *      <signalled>\n"   signalled: 1 when a 'T' or 'K' (or EOF) reached the command while it
 *                      ran, 0 when it ended on its own (a stop that came after its end is none)
 * Text, so a supervisor of another arch or word size (emurun's tests under emulation) speaks
 * the same protocol. Exit status 0 after a report; 126 when it cannot become a subreaper or
 * set up its descriptors; 125 when run by hand.
 *
 * Server mode (emurun-supervisor --serve): one process per run that forks each step's
 * supervisor on request instead of emurun starting this program per step; see serve().
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
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

/* Wait for the command while serving the control socket. Returns its raw wait status;
 * `*signalled` is 1 when a request signalled it while it ran. */
static int wait_command(pid_t pid, int* signalled) {
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
            if (waitpid(pid, &status, WNOHANG) == pid) {
                return status; /* it ended before the request: no stop, and its group may be gone */
            }
            kill(-pid, request == 'T' ? SIGTERM : SIGKILL);
            *signalled = 1;
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

/* One step: become a subreaper, start the command, serve the control socket, report. fds 0..4
 * are in place (see the header). Returns the exit status of this supervisor. */
static int supervise(const char* cwd, const char* program, char** argv) {
    close_above(k_control_fd);
    ignore_signals();
    fcntl(k_report_fd, F_SETFD, FD_CLOEXEC);
    fcntl(k_control_fd, F_SETFD, FD_CLOEXEC);
    /* qemu-user (7.2) rejects PR_SET_CHILD_SUBREAPER with EINVAL: running anyway beats failing
     * every step; the command's group is still stopped, only daemons that left it escape. */
    if (prctl(PR_SET_CHILD_SUBREAPER, 1) != 0 && errno != EINVAL) {
        return 126;
    }
    pid_t pid = start_command(cwd, program, argv);
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
    int signalled = 0;
    int status = wait_command(pid, &signalled);
    int leftovers = kill_leftovers();
    struct rusage usage;
    memset(&usage, 0, sizeof usage);
    getrusage(RUSAGE_CHILDREN, &usage);
    snprintf(line, sizeof line, "F %d %d %ld %ld %ld %ld %ld %d\n", status, leftovers,
             (long)usage.ru_utime.tv_sec, (long)usage.ru_utime.tv_usec, (long)usage.ru_stime.tv_sec,
             (long)usage.ru_stime.tv_usec, usage.ru_maxrss, signalled);
    report(line);
    return 0;
}

/* ---- Server mode: one long-lived process per run that forks each step's supervisor. ----
 *
 * Invocation (by emurun only): emurun-supervisor --serve, fd 3 a SOCK_SEQPACKET socket.
 * Why: exec'ing this static program once per step cost ~0.3 ms (glibc's start traps CPUID on
 * a VM); forking it from a process already running costs a fraction. The fork is a clone3 with
 * CLONE_PARENT, so each step's supervisor is emurun's child exactly as when emurun started it:
 * emurun waits for it, signals it and catches its orphans unchanged.
 *
 * Request, one message: "<argc> <envc> <has stdin>" NUL, cwd NUL, program NUL, argc argument
 * strings and envc environment strings, each ended by NUL; SCM_RIGHTS: stdin (when has stdin
 * is 1), stdout, stderr, report, control. Reply, one message: "<pid>" or "-<errno>" (text).
 * EOF on the socket: emurun is gone or done, the server exits. A forked supervisor renames
 * itself "emurun-supervisor --step" (comm "emurun-step"), so ps tells it from the server.
 * emurun sends SIGCONT before each request (a step may have stopped the server), never blocks
 * on a full socket, and gives the server up (SIGKILL) when an answer does not come. */
enum { k_server_fd = 3, k_max_request = 4 << 20 };

struct Request {
    int fds[5];
    int nfds;
    int has_stdin;
    char* cwd;
    char* program;
    char** argv;
    char** envp;
};

/* Split the payload into strings: `count` pointers into `text` (NUL-ended) from `*pos`. */
static int take_strings(char* text, size_t size, size_t* pos, char** out, long count) {
    for (long i = 0; i < count; ++i) {
        if (*pos >= size) {
            return -1;
        }
        out[i] = text + *pos;
        char* end = memchr(text + *pos, '\0', size - *pos);
        if (end == NULL) {
            return -1;
        }
        *pos = (size_t)(end - text) + 1;
    }
    out[count] = NULL;
    return 0;
}

/* Parse one request held in `text` (its `size` bytes); 0 on success. */
static int parse_request(char* text, size_t size, struct Request* req) {
    long argc = -1;
    long envc = -1;
    int has_stdin = -1;
    char* end = memchr(text, '\0', size);
    if (end == NULL || sscanf(text, "%ld %ld %d", &argc, &envc, &has_stdin) != 3 || argc < 1 ||
        envc < 0 || argc > (long)size || envc > (long)size || (has_stdin != 0 && has_stdin != 1) ||
        req->nfds != 4 + has_stdin) {
        return -1;
    }
    size_t pos = (size_t)(end - text) + 1;
    char* head[3];
    req->argv = malloc(sizeof(char*) * (size_t)(argc + 1));
    req->envp = malloc(sizeof(char*) * (size_t)(envc + 1));
    if (req->argv == NULL || req->envp == NULL || take_strings(text, size, &pos, head, 2) != 0 ||
        take_strings(text, size, &pos, req->argv, argc) != 0 ||
        take_strings(text, size, &pos, req->envp, envc) != 0) {
        return -1;
    }
    req->cwd = head[0];
    req->program = head[1];
    req->has_stdin = has_stdin;
    return 0;
}

/* Receive one request into `*text` (malloc'd) and `req->fds`: its size; 0 at EOF or when the
 * socket failed (the server ends); -1 for a message that is no request (answered, skipped). */
static ssize_t receive_request(char** text, struct Request* req) {
    ssize_t size;
    do {
        size = recv(k_server_fd, NULL, 0, MSG_PEEK | MSG_TRUNC);
    } while (size < 0 && errno == EINTR);
    if (size <= 0) {
        return 0;
    }
    static char dummy[1];
    *text = size <= k_max_request ? malloc((size_t)size + 1) : NULL;
    union {
        char buf[CMSG_SPACE(sizeof(int) * 5)];
        struct cmsghdr align;
    } control;
    struct iovec iov = {*text != NULL ? *text : dummy, *text != NULL ? (size_t)size : 1};
    struct msghdr msg;
    memset(&msg, 0, sizeof msg);
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control.buf;
    msg.msg_controllen = sizeof control.buf;
    ssize_t n;
    do {
        n = recvmsg(k_server_fd, &msg, MSG_CMSG_CLOEXEC);
    } while (n < 0 && errno == EINTR);
    if (n <= 0) {
        return 0;
    }
    for (struct cmsghdr* c = CMSG_FIRSTHDR(&msg); c != NULL; c = CMSG_NXTHDR(&msg, c)) {
        if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
            int count = (int)((c->cmsg_len - CMSG_LEN(0)) / sizeof(int));
            for (int i = 0; i < count; ++i) {
                int fd;
                memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof fd);
                if (req->nfds < 5) {
                    req->fds[req->nfds++] = fd;
                } else {
                    close(fd);
                }
            }
        }
    }
    if (*text == NULL || (msg.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) != 0) {
        return -1;
    }
    (*text)[n] = '\0';
    return n;
}

/* The server's "--serve" argument, renamed "--step" in each forked supervisor so that ps and
 * pkill tell the server from the steps' supervisors. */
static char* g_mode_arg;

/* The step's side of the server's fork: the received fds onto 0..4 (each first copied above
 * all of them, so none is overwritten before it is used), then one step as usual. */
static void run_request(const struct Request* req) {
    memcpy(g_mode_arg, "--step\0", 8); /* as long as "--serve" with its NUL */
    prctl(PR_SET_NAME, "emurun-step");
    int src[5] = {-1, -1, -1, -1, -1};
    for (int i = 0; i < req->nfds; ++i) {
        src[i + (req->has_stdin ? 0 : 1)] = req->fds[i];
    }
    int base = k_server_fd + 5;
    for (int i = 0; i < req->nfds; ++i) {
        base = req->fds[i] >= base ? req->fds[i] + 1 : base;
    }
    for (int i = 0; i < 5; ++i) {
        if (src[i] >= 0 && (src[i] = fcntl(src[i], F_DUPFD, base + i)) < 0) {
            _exit(126);
        }
    }
    for (int i = 0; i < 5; ++i) {
        if (src[i] < 0) {
            close(i); /* no stdin given: emurun's was closed */
        } else if (dup2(src[i], i) < 0) {
            _exit(126);
        }
    }
    environ = req->envp;
    _exit(supervise(req->cwd, req->program, req->argv));
}

/* fork with CLONE_PARENT: the new process is our parent's (emurun's) child. clone3 refuses an
 * exit signal with CLONE_PARENT: the child takes ours, SIGCHLD (posix_spawn's). */
static pid_t fork_for_parent(void) {
#ifdef SYS_clone3
    struct {
        unsigned long long flags, pidfd, child_tid, parent_tid, exit_signal, stack, stack_size, tls;
    } args;
    memset(&args, 0, sizeof args);
    args.flags = CLONE_PARENT;
    return (pid_t)syscall(SYS_clone3, &args, sizeof args);
#else
    errno = ENOSYS;
    return -1;
#endif
}

static void reply(long value) {
    char line[32];
    int n = snprintf(line, sizeof line, "%ld", value);
    send(k_server_fd, line, (size_t)n, MSG_NOSIGNAL);
}

static int serve(void) {
    close_above(k_server_fd);
    ignore_signals();
    fcntl(k_server_fd, F_SETFD, FD_CLOEXEC);
    for (;;) {
        char* text = NULL;
        struct Request req;
        memset(&req, 0, sizeof req);
        ssize_t size = receive_request(&text, &req);
        if (size == 0) {
            return 0; /* emurun closed the socket */
        }
        long result = -EINVAL;
        if (size > 0 && parse_request(text, (size_t)size, &req) == 0) {
            pid_t pid = fork_for_parent();
            if (pid == 0) {
                run_request(&req);
            }
            result = pid > 0 ? (long)pid : -(long)errno;
        }
        for (int i = 0; i < req.nfds; ++i) {
            close(req.fds[i]);
        }
        free(req.argv);
        free(req.envp);
        free(text);
        reply(result);
    }
}

int main(int argc, char** argv) {
    if (argc == 2 && strcmp(argv[1], "--serve") == 0 && is_open(k_server_fd)) {
        g_mode_arg = argv[1];
        return serve();
    }
    if (argc < 4 || !is_open(k_report_fd) || !is_open(k_control_fd)) {
        static const char usage[] =
            "emurun-supervisor: a helper of emurun's step runner, started by emurun itself "
            "(not meant to be run by hand); run steps with 'emurun run'\n";
        write_all(2, usage, sizeof usage - 1);
        return 125;
    }
    return supervise(argv[1], argv[2], argv + 3);
}
