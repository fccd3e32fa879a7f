/* The fast exec entry's view of the kernel (x86-64): raw system calls and the few string
 * helpers it needs, as it runs before libc exists (see fast_exec.c). Nothing here calls a
 * library function or keeps a pointer in static data. */
#ifndef EMURUN_FAST_SYS_H
#define EMURUN_FAST_SYS_H

#include "path_join.h"

#pragma GCC visibility push(hidden)

#define FX_PATH_MAX ES_PATH_MAX

enum {
    k_sys_open = 2,
    k_sys_close = 3,
    k_sys_stat = 4,
    k_sys_fstat = 5,
    k_sys_pread = 17,
    k_sys_access = 21,
    k_sys_execve = 59,
    k_sys_uname = 63,
    k_sys_getcwd = 79,
    k_sys_readlink = 89,
    k_sys_prlimit64 = 302,
};

static inline long fx_syscall3(long n, long a, long b, long c) {
    long ret;
    __asm__ volatile("syscall"
                     : "=a"(ret)
                     : "a"(n), "D"(a), "S"(b), "d"(c)
                     : "rcx", "r11", "memory");
    return ret;
}

static inline long fx_syscall4(long n, long a, long b, long c, long d) {
    long ret;
    register long r10 __asm__("r10") = d;
    __asm__ volatile("syscall"
                     : "=a"(ret)
                     : "a"(n), "D"(a), "S"(b), "d"(c), "r"(r10)
                     : "rcx", "r11", "memory");
    return ret;
}

/* struct stat of x86-64: st_mode at byte 24, st_size at byte 48 (144 bytes in all). */
struct fx_stat {
    unsigned long words[18];
};

#define FX_S_IFMT 0170000u
#define FX_S_IFDIR 0040000u
#define FX_S_IFREG 0100000u
#define FX_X_OK 1
#define FX_O_RDONLY_CLOEXEC 02000000
#define FX_O_NONBLOCK 04000

static inline unsigned fx_mode(const struct fx_stat* st) {
    return (unsigned)(st->words[3] & 0xffffffffu);
}

static inline long fx_size(const struct fx_stat* st) {
    return (long)st->words[6];
}

/* stat(2) of path into st; 1 on success. */
static inline int fx_stat_of(const char* path, struct fx_stat* st) {
    return fx_syscall3(k_sys_stat, (long)path, (long)st, 0) == 0;
}

/* pread(2) of exactly n bytes; 1 when all came. */
static inline int fx_pread_all(long fd, void* buf, unsigned long n, unsigned long off) {
    return fx_syscall4(k_sys_pread, fd, (long)buf, (long)n, (long)off) == (long)n;
}

static inline int fx_eq(const char* a, const char* b) {
    while (*a != '\0' && *a == *b) {
        ++a;
        ++b;
    }
    return *a == *b;
}

#pragma GCC visibility pop

#endif
