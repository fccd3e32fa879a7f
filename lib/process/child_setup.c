/* A child's set-up between fork and exec (child_setup.h): async-signal-safe calls only. */
#define _GNU_SOURCE
#include "process/child_setup.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stddef.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

/* The kernel's sigset size: what rt_sigaction checks its last argument against. */
enum { k_kernel_sigset_bytes = _NSIG / 8, k_fallback_max_fd = 1 << 20 };

/* glibc refuses sigaction() for the signals it reserves (32 and 33, below SIGRTMIN), so one
 * ignored in the parent would stay ignored in the command: ask the kernel directly. An
 * all-zero kernel sigaction is SIG_DFL, no flags, an empty mask in every layout. */
static void default_reserved_signals(void) {
    static const unsigned long zero[8] = {0};
    for (int sig = 32; sig < SIGRTMIN; ++sig) {
        syscall(SYS_rt_sigaction, sig, zero, NULL, (size_t)k_kernel_sigset_bytes);
    }
}

void ecs_default_signals(void) {
    struct sigaction dfl;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    for (int sig = 1; sig < NSIG; ++sig) {
        if (sig != SIGKILL && sig != SIGSTOP) {
            sigaction(sig, &dfl, NULL); /* refused for the reserved ones: see above */
        }
    }
    default_reserved_signals();
    sigset_t empty;
    sigemptyset(&empty);
    sigprocmask(SIG_SETMASK, &empty, NULL);
}

void ecs_close_range(unsigned from, unsigned to) {
    if (from > to || syscall(SYS_close_range, from, to, 0) == 0) {
        return;
    }
    struct rlimit limit = {0, 0};
    getrlimit(RLIMIT_NOFILE, &limit);
    rlim_t last = limit.rlim_cur < (rlim_t)to ? limit.rlim_cur : (rlim_t)to;
    if (last > (rlim_t)k_fallback_max_fd) { /* RLIM_INFINITY: the kernel's nr_open default */
        last = (rlim_t)k_fallback_max_fd;
    }
    for (rlim_t fd = from; fd <= last; ++fd) {
        close((int)fd);
    }
}

/* Close every descriptor from 3 up but those in keep[0..n). */
static void close_stray_fds(const int* keep, int n) {
    unsigned from = 3;
    for (;;) {
        unsigned next = UINT_MAX; /* the lowest kept descriptor at or above `from` */
        for (int i = 0; i < n; ++i) {
            if (keep[i] >= 0 && (unsigned)keep[i] >= from && (unsigned)keep[i] < next) {
                next = (unsigned)keep[i];
            }
        }
        if (next == UINT_MAX) {
            ecs_close_range(from, ~0U);
            return;
        }
        if (next > from) {
            ecs_close_range(from, next - 1);
        }
        from = next + 1;
    }
}

/* dup2 the given descriptors onto 0, 1, 2. Each source is first copied above 2, so a source
 * that already sits on 0..2 cannot be overwritten before it is used (the copies are
 * close-on-exec, and closed with the stray descriptors). 0 when done. */
static int redirect_stdio(const struct ecs_child* child) {
    int high[3] = {-1, -1, -1};
    for (int i = 0; i < 3; ++i) {
        if (child->stdio[i] >= 0 && (high[i] = fcntl(child->stdio[i], F_DUPFD_CLOEXEC, 3)) < 0) {
            return -1;
        }
    }
    for (int i = 0; i < 3; ++i) {
        if (high[i] >= 0 ? dup2(high[i], i) != i /* dup2 clears FD_CLOEXEC on i */
                         : child->close_absent && close(i) != 0 && errno != EBADF) {
            return -1;
        }
    }
    return 0;
}

int ecs_setup_child(const struct ecs_child* child) {
    ecs_default_signals();
    if (child->parent_death_signal != 0 &&
        prctl(PR_SET_PDEATHSIG, child->parent_death_signal) != 0) {
        return ecs_stage_prctl;
    }
    if (child->new_process_group && setpgid(0, 0) != 0) {
        return ecs_stage_setpgid;
    }
    if (redirect_stdio(child) != 0) {
        return ecs_stage_dup2;
    }
    if (child->cwd != NULL && child->cwd[0] != '\0' && chdir(child->cwd) != 0) {
        return ecs_stage_chdir;
    }
    close_stray_fds(child->keep, child->n_keep);
    return 0;
}
