/* emurun-supervisor: a job slot of emurun's step runner (lib/process).
 *
 * Why a program of its own: a step's command must not be forked from emurun's image (each
 * step would pay for copying emurun's page tables, and its max RSS would begin as emurun's),
 * and the orphans of parallel steps must not land in one pile. emurun starts this small
 * static program once per job slot (posix_spawn: no copy of emurun's address space); the slot
 * is a child subreaper that runs one step at a time, so every orphan re-parented to it belongs
 * to its current step. A step is then one fork, of the command from this tiny image:
 *
 *   emurun (poll loop) --posix_spawn, once per slot--> emurun-supervisor --slot (subreaper)
 *                                                        `--fork+exec per step--> command
 *                                                           (own group, PDEATHSIG=KILL)
 *                                                           `-- grandchildren, daemons
 *
 * Invocation (by emurun only): emurun-supervisor --slot, fd 3 a SOCK_SEQPACKET socket; 0, 1,
 * 2 open (emurun gives /dev/null). EOF on the socket: emurun is done or gone, the slot exits.
 *
 * Request, one message per step: "<argc> <envc> <has stdin> <cgroups> <nproc> <as>" NUL, cwd
 * NUL, program NUL, argc argument strings and envc environment strings, each ended by NUL;
 * SCM_RIGHTS: stdin (when has stdin is 1), stdout, stderr, report, control, then <cgroups>
 * cgroup.procs files the command joins (writes "0" to) before its exec; <nproc> and <as> are
 * its RLIMIT_NPROC and RLIMIT_AS, -1 for unchanged (the step's "limits"). A request too big for one
 * message is sent as the message "M" with a memfd holding the text before those descriptors. No
 * reply: what follows goes to the step's own report socket, and EOF on it ends the step for emurun.
 *
 * Control (the step's socket): 'T' = SIGTERM, 'K' = SIGKILL to the command's process group;
 * EOF (emurun died or gave up) = SIGKILL. The slot reaps the command itself, so it never
 * signals a group whose leader was reaped. When the command has ended, every child left
 * (orphans re-parented to this subreaper, read from /proc/self/task/<pid>/children) is
 * SIGKILLed and reaped, round by round, until none is left; an orphan that ends while the
 * command runs is reaped at once (SIGCHLD, read from a signalfd), so a step that starts
 * thousands of short-lived daemons leaves no zombies. The step's CPU time and max RSS
 * are the sum and the maximum of what wait4 returns for the command and for each orphan (a
 * process's own and its waited-for descendants': what RUSAGE_CHILDREN adds up), so a step
 * counts its own tree only, never an earlier step's.
 *
 * Report: text lines on a stream socket (a socket, so no /proc/<pid>/fd/N open reaches it; the
 * slot is non-dumpable, so a step of its uid cannot take the descriptor either), each written
 * with one write():
 *   "S <pid>\n"                        the command has exec'd
 *   "E <stage> <errno>\n"              it never ran (stage: lib/process/child_setup.h)
 *   "F <wait status> <leftovers> <utime s> <utime us> <stime s> <stime us> <max rss KiB>
 *      <signalled>\n"   signalled: 1 when a 'T' or 'K' (or EOF) reached the command while it
 *                      ran, 0 when it ended on its own (a stop that came after its end is none)
 * then the slot closes the step's report and control descriptors and waits for the next
 * request. Text, so a supervisor of another arch or word size (emurun's tests under
 * emulation) speaks the same protocol. Exit status 0 at EOF; 125 when run by hand.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "process/child_setup.h"

enum { k_socket_fd = 3, k_max_request = 4 << 20, k_max_cgroups = 2, k_max_fds = 6 + k_max_cgroups };

/* One step as received: its descriptors (stdin only when has_stdin) and its strings. */
struct Request {
    int fds[k_max_fds];
    int nfds;
    int has_stdin;
    int in, out, err, report, control; /* -1 when absent */
    int cgroups[k_max_cgroups];        /* cgroup.procs files the command joins */
    int ncgroups;
    long long nproc, address_space; /* rlimits of the command; -1 = unchanged */
    char* cwd;
    char* program;
    char** argv;
    char** envp;
};

/* What wait4 returned for the step's processes, added up. */
struct Usage {
    struct timeval user, sys;
    long max_rss;
};

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

static void report_failure(int fd, int stage, int err) {
    char line[64];
    int n = snprintf(line, sizeof line, "E %d %d\n", stage, err);
    write_all(fd, line, (size_t)n);
}

/* The slot's own dispositions: deaf to the terminal's and a step's stray signals (a stop from
 * the terminal's signals too; SIGSTOP cannot be refused, emurun continues a stopped slot). */
static void ignore_signals(void) {
    static const int ignored[] = {SIGINT,  SIGQUIT, SIGTERM, SIGHUP,
                                  SIGPIPE, SIGTSTP, SIGTTIN, SIGTTOU};
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

/* The command joins its cgroups and takes its rlimits (the step's "limits"). 0 when done. */
static int apply_limits(const struct Request* req) {
    for (int i = 0; i < req->ncgroups; ++i) {
        if (write(req->cgroups[i], "0", 1) != 1) {
            return -1;
        }
    }
    const int resources[2] = {RLIMIT_NPROC, RLIMIT_AS};
    const long long values[2] = {req->nproc, req->address_space};
    for (int i = 0; i < 2; ++i) {
        struct rlimit limit = {(rlim_t)values[i], (rlim_t)values[i]};
        if (values[i] >= 0 && setrlimit(resources[i], &limit) != 0) {
            return -1;
        }
    }
    return 0;
}

/* The command's side of the fork: its limits, then child_setup.c's set-up (default signals, an
 * empty mask, SIGKILL when the slot dies, its own process group, its stdio, no descriptor but
 * those and `error_fd`, the working directory), then execve. A failure goes to `error_fd` as
 * "<stage> <errno>". */
static void exec_command(int error_fd, const struct Request* req) {
    const struct ecs_child child = {
        .parent_death_signal = SIGKILL,
        .new_process_group = 1,
        .stdio = {req->in, req->out, req->err},
        .close_absent = 1,
        .cwd = req->cwd,
        .keep = &error_fd,
        .n_keep = 1,
    };
    int stage = ecs_stage_limits;
    if (apply_limits(req) == 0 && (stage = ecs_setup_child(&child)) == 0) {
        stage = ecs_stage_execve;
        execve(req->program, req->argv, req->envp);
    }
    char line[32];
    int n = snprintf(line, sizeof line, "%d %d", stage, errno);
    write_all(error_fd, line, (size_t)n);
    _exit(127);
}

/* Fork the command and wait until it has exec'd. Returns its pid, or -1 after reporting why
 * it never ran. The child's failure comes over a socket pair, not a pipe: the command runs
 * before this process has closed its end, and a pipe's end could be opened for writing
 * through /proc/<slot>/fd/N by a root step, a socket's cannot. */
static pid_t start_command(const struct Request* req) {
    int pipe_fds[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pipe_fds) != 0) {
        report_failure(req->report, ecs_stage_setup, errno);
        return -1;
    }
    pid_t pid = fork();
    if (pid == 0) {
        close(pipe_fds[0]);
        exec_command(pipe_fds[1], req);
    }
    int fork_errno = errno;
    close(pipe_fds[1]);
    if (pid < 0) {
        close(pipe_fds[0]);
        report_failure(req->report, ecs_stage_fork, fork_errno);
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
    int stage = ecs_stage_execve;
    int err = 0;
    sscanf(failure, "%d %d", &stage, &err);
    waitpid(pid, NULL, 0);
    report_failure(req->report, stage, err);
    return -1;
}

static void add_time(struct timeval* sum, const struct timeval* add) {
    sum->tv_sec += add->tv_sec;
    sum->tv_usec += add->tv_usec;
    if (sum->tv_usec >= 1000000) {
        sum->tv_sec += 1;
        sum->tv_usec -= 1000000;
    }
}

/* wait4 that adds what it reaped to `usage`; its result as wait4's. */
static pid_t reap(pid_t pid, int* status, int flags, struct Usage* usage) {
    struct rusage ru;
    pid_t got;
    do {
        memset(&ru, 0, sizeof ru);
        got = wait4(pid, status, flags, &ru);
    } while (got < 0 && errno == EINTR);
    if (got > 0) {
        add_time(&usage->user, &ru.ru_utime);
        add_time(&usage->sys, &ru.ru_stime);
        usage->max_rss = ru.ru_maxrss > usage->max_rss ? ru.ru_maxrss : usage->max_rss;
    }
    return got;
}

/* Reap whatever has ended below the slot (the command, orphans), never blocking: an orphan
 * that ends while the command runs is no zombie for long. 1 when the command was reaped, its
 * raw wait status in `*status`. */
static int reap_ended(pid_t pid, int* status, struct Usage* usage) {
    int command_done = 0;
    int st = 0;
    pid_t got;
    while ((got = reap(-1, &st, WNOHANG, usage)) > 0) {
        if (got == pid) {
            *status = st;
            command_done = 1;
        }
    }
    return command_done;
}

/* Empty the SIGCHLD signalfd (it only wakes the poll). */
static void drain(int sigfd) {
    struct signalfd_siginfo info[8];
    while (read(sigfd, info, sizeof info) > 0) {
    }
}

/* Wait for the command while serving the control socket, reaping orphans as they end (woken
 * by SIGCHLD through `sigfd`; without one, every 20 ms). Returns its raw wait status;
 * `*signalled` is 1 when a request signalled it while it ran. */
static int wait_command(pid_t pid, int control_fd, int sigfd, int* signalled, struct Usage* usage) {
    int control_open = 1;
    int status = 0;
    while (!reap_ended(pid, &status, usage)) {
        /* poll skips an fd of -1 (a closed control socket, no signalfd) */
        struct pollfd fds[2] = {{control_open ? control_fd : -1, POLLIN, 0}, {sigfd, POLLIN, 0}};
        if (poll(fds, 2, sigfd >= 0 ? -1 : 20) < 0) {
            continue;
        }
        if (fds[1].revents != 0) {
            drain(sigfd);
        }
        if (fds[0].revents == 0) {
            continue;
        }
        char request = 'K';
        ssize_t n = read(control_fd, &request, 1);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            control_open = 0; /* emurun is gone: nobody will collect this step */
        }
        if (reap_ended(pid, &status, usage)) {
            break; /* it ended before the request: no stop, and its group may be gone */
        }
        kill(-pid, request == 'T' ? SIGTERM : SIGKILL);
        kill(-pid, SIGCONT); /* a stopped group acts on SIGTERM only once continued */
        *signalled = 1;
    }
    return status;
}

/* SIGKILL every current child; 0 when there was none, -1 when the list cannot be read (a
 * kernel without CONFIG_PROC_CHILDREN). */
static int kill_children(void) {
    char path[64];
    snprintf(path, sizeof path, "/proc/self/task/%d/children", (int)getpid());
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        return -1;
    }
    int any = 0;
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
                any = 1;
                pid = 0;
            }
        }
        if (n <= 0) {
            break;
        }
    }
    close(fd);
    return any;
}

/* Kill and reap everything left below us once the command ended; how many were killed. Each
 * round kills every child listed, then reaps them all (their children, re-parented here on
 * their death, are the next round's), until none is left: linear in the leftovers. */
static int kill_leftovers(struct Usage* usage) {
    int status = 0;
    while (reap(-1, &status, WNOHANG, usage) > 0) {
        /* orphans that already ended on their own are not leftovers */
    }
    int killed = 0;
    for (;;) {
        int listed = kill_children();
        if (listed < 0) { /* cannot list: reap what has ended, never block on the rest */
            while (reap(-1, &status, WNOHANG, usage) > 0) {
            }
            break;
        }
        /* None listed: a child may still be on its way here (its parent just died): list
         * again rather than block on it. */
        pid_t got = reap(-1, &status, listed > 0 ? 0 : WNOHANG, usage);
        if (got < 0) {
            break; /* ECHILD: nothing left */
        }
        for (killed += got > 0 ? 1 : 0; reap(-1, &status, WNOHANG, usage) > 0; killed += 1) {
        }
    }
    return killed;
}

/* One step: start the command, serve the control socket, report. The slot's copies of the
 * command's stdio are closed as soon as it runs, or emurun's pipes never reach EOF (and its
 * cgroup.procs files: the command has joined). */
static void run_step(struct Request* req, int sigfd) {
    pid_t pid = start_command(req);
    for (int i = 0; i < req->nfds; ++i) {
        int cgroup = 0;
        for (int k = 0; k < req->ncgroups; ++k) {
            cgroup = cgroup || req->fds[i] == req->cgroups[k];
        }
        if (req->fds[i] == req->in || req->fds[i] == req->out || req->fds[i] == req->err ||
            cgroup) {
            close(req->fds[i]);
            req->fds[i] = -1;
        }
    }
    if (pid < 0) {
        return;
    }
    char line[256];
    int n = snprintf(line, sizeof line, "S %d\n", (int)pid);
    write_all(req->report, line, (size_t)n);
    int signalled = 0;
    struct Usage usage;
    memset(&usage, 0, sizeof usage);
    int status = wait_command(pid, req->control, sigfd, &signalled, &usage);
    int leftovers = kill_leftovers(&usage);
    n = snprintf(line, sizeof line, "F %d %d %ld %ld %ld %ld %ld %d\n", status, leftovers,
                 (long)usage.user.tv_sec, (long)usage.user.tv_usec, (long)usage.sys.tv_sec,
                 (long)usage.sys.tv_usec, usage.max_rss, signalled);
    write_all(req->report, line, (size_t)n);
}

/* ---- Requests ---------------------------------------------------------------------------- */

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

/* Name the received descriptors: [stdin] stdout stderr report control cgroups... 0 when they
 * fit. */
static int name_fds(struct Request* req) {
    if (req->nfds != 4 + req->has_stdin + req->ncgroups) {
        return -1;
    }
    const int* fd = req->fds;
    req->in = req->has_stdin ? *fd++ : -1;
    req->out = fd[0];
    req->err = fd[1];
    req->report = fd[2];
    req->control = fd[3];
    for (int i = 0; i < req->ncgroups; ++i) {
        req->cgroups[i] = fd[4 + i];
    }
    return 0;
}

/* Parse one request held in `text` (its `size` bytes); 0 on success. */
static int parse_request(char* text, size_t size, struct Request* req) {
    long argc = -1;
    long envc = -1;
    int has_stdin = -1;
    int ncgroups = -1;
    char* end = memchr(text, '\0', size);
    if (end == NULL ||
        sscanf(text, "%ld %ld %d %d %lld %lld", &argc, &envc, &has_stdin, &ncgroups, &req->nproc,
               &req->address_space) != 6 ||
        argc < 1 || envc < 0 || argc > (long)size || envc > (long)size ||
        (has_stdin != 0 && has_stdin != 1) || ncgroups < 0 || ncgroups > k_max_cgroups) {
        return -1;
    }
    req->has_stdin = has_stdin;
    req->ncgroups = ncgroups;
    if (name_fds(req) != 0) {
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
    return 0;
}

/* The descriptors of a received message's SCM_RIGHTS into `req` (those beyond k_max_fds are
 * closed). */
static void take_fds(struct msghdr* msg, struct Request* req) {
    for (struct cmsghdr* c = CMSG_FIRSTHDR(msg); c != NULL; c = CMSG_NXTHDR(msg, c)) {
        if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) {
            continue;
        }
        int count = (int)((c->cmsg_len - CMSG_LEN(0)) / sizeof(int));
        for (int i = 0; i < count; ++i) {
            int fd;
            memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof fd);
            if (req->nfds < k_max_fds) {
                req->fds[req->nfds++] = fd;
            } else {
                close(fd);
            }
        }
    }
}

/* A request sent as "M" and a memfd: the text read from it into `*text` (malloc'd), the
 * memfd closed and dropped from `req->fds`. Its size, -1 when it cannot be read. */
static ssize_t read_memfd_request(char** text, struct Request* req) {
    struct stat st;
    int fd = req->fds[0];
    free(*text);
    *text = NULL;
    req->nfds -= 1;
    memmove(req->fds, req->fds + 1, sizeof(int) * (size_t)req->nfds);
    if (fstat(fd, &st) != 0 || st.st_size <= 0 || st.st_size > k_max_request ||
        (*text = malloc((size_t)st.st_size + 1)) == NULL) {
        close(fd);
        return -1;
    }
    ssize_t done = 0;
    while (done < st.st_size) {
        ssize_t n = pread(fd, *text + done, (size_t)(st.st_size - done), done);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            break;
        }
        done += n;
    }
    close(fd);
    if (done != st.st_size) {
        return -1;
    }
    (*text)[done] = '\0';
    return done;
}

/* Receive one request into `*text` (malloc'd) and `req->fds`: its size; 0 at EOF or when the
 * socket failed (the slot ends); -1 for a message that is no request. */
static ssize_t receive_request(char** text, struct Request* req) {
    ssize_t size;
    do {
        size = recv(k_socket_fd, NULL, 0, MSG_PEEK | MSG_TRUNC);
    } while (size < 0 && errno == EINTR);
    if (size <= 0) {
        return 0;
    }
    static char dummy[1];
    *text = size <= k_max_request ? malloc((size_t)size + 1) : NULL;
    union {
        char buf[CMSG_SPACE(sizeof(int) * k_max_fds)];
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
        n = recvmsg(k_socket_fd, &msg, MSG_CMSG_CLOEXEC);
    } while (n < 0 && errno == EINTR);
    if (n <= 0) {
        return 0;
    }
    take_fds(&msg, req);
    if (*text == NULL || (msg.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) != 0) {
        return -1;
    }
    (*text)[n] = '\0';
    if (n == 1 && (*text)[0] == 'M' && req->nfds > 0) {
        return read_memfd_request(text, req);
    }
    return n;
}

/* The slot: become a subreaper, then one step per request until the socket's EOF. */
static int serve_slot(void) {
    ecs_close_range(k_socket_fd + 1, ~0U);
    ignore_signals();
    fcntl(k_socket_fd, F_SETFD, FD_CLOEXEC);
    /* Non-dumpable: a step of the same uid can neither open /proc/<slot>/fd/N nor ptrace the
     * slot (pidfd_getfd) to reach its report channel; the command's exec makes it dumpable
     * again. (A root step with CAP_SYS_PTRACE still can: emurun trusts no report from a slot
     * that died.) */
    prctl(PR_SET_DUMPABLE, 0);
    /* qemu-user (7.2) rejects PR_SET_CHILD_SUBREAPER with EINVAL: running anyway beats failing
     * every step; the command's group is still stopped, only daemons that left it escape. */
    int setup_errno = prctl(PR_SET_CHILD_SUBREAPER, 1) != 0 && errno != EINVAL ? errno : 0;
    /* SIGCHLD blocked and read from a signalfd: what wakes a step's wait when an orphan ends
     * (the command's child side empties its mask before the exec). */
    sigset_t chld;
    sigemptyset(&chld);
    sigaddset(&chld, SIGCHLD);
    sigprocmask(SIG_BLOCK, &chld, NULL);
    int sigfd = signalfd(-1, &chld, SFD_NONBLOCK | SFD_CLOEXEC);
    for (;;) {
        char* text = NULL;
        struct Request req;
        memset(&req, 0, sizeof req);
        ssize_t size = receive_request(&text, &req);
        if (size == 0) {
            return 0; /* emurun closed the socket */
        }
        int parsed = size > 0 ? parse_request(text, (size_t)size, &req) : -1;
        if (parsed == 0 && setup_errno == 0) {
            run_step(&req, sigfd);
        } else if (parsed == 0 || name_fds(&req) == 0) {
            report_failure(req.report, ecs_stage_setup, parsed == 0 ? setup_errno : EINVAL);
        }
        /* The step's descriptors end here: EOF on its report socket tells emurun it is over. */
        for (int i = 0; i < req.nfds; ++i) {
            if (req.fds[i] >= 0) {
                close(req.fds[i]);
            }
        }
        free(req.argv);
        free(req.envp);
        free(text);
    }
}

static int is_open(int fd) {
    return fcntl(fd, F_GETFD) >= 0;
}

int main(int argc, char** argv) {
    if (argc == 2 && strcmp(argv[1], "--slot") == 0 && is_open(k_socket_fd)) {
        return serve_slot();
    }
    static const char usage[] = "emurun-supervisor: a helper of emurun's step runner, started by "
                                "emurun itself (not meant to be run by hand); run steps with "
                                "'emurun run'\n";
    write_all(2, usage, sizeof usage - 1);
    return 125;
}
