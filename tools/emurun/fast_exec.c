/* The fast way into `emurun exec` (issue 15): the emurun binary's entry point on x86-64.
 *
 * `emurun exec -- PROG ARGS...` for a statically linked foreign program is the most frequent
 * command emurun runs (CMAKE_CROSSCOMPILING_EMULATOR, meson's exe_wrapper, test suites), and
 * starting emurun's C++ image (static glibc, relocations, CLI11, the launch plan) cost more than
 * the 5% of a qemu start the issue allows. This code runs first, before glibc or anything else
 * in the binary is set up, decides whether the command line is that plain case and, when it
 * is, execs the emulator exactly as the CLI would:
 *     qemu-ARCH[-static] -0 PROG PATH-OF-PROG ARGS...
 * In every other case - another command, any option, a native, dynamic, static-PIE or not-ELF
 * program, a #! script, no emulator, anything it cannot read - it returns, the entry jumps to
 * glibc's _start and the CLI does everything as before, errors included. So it never prints,
 * and it decides nothing the CLI would decide differently: the rules below are the library's
 * (util::find_executable, launch's checks, the ELF reader's, arch_for_header plus the ELF
 * fields, runs_natively, find_emulator and qemu_command), spelled again here because this code
 * can use no library (the emulator search is the shim launcher's, tools/common/emulator_search.h);
 * integration.fast_exec runs both ways and compares what qemu receives.
 * The one difference: the environment is passed on as received (the CLI's is sorted by name).
 *
 * Constraints, as the code runs before the static PIE is relocated and before TLS exists:
 * raw system calls only, no libc function (the build checks the object's undefined symbols),
 * no pointer in static data (the arch table holds arrays), no stack protector, no sanitizer. */

#include "arch_table_fast.h"

#define FX_PATH_MAX ES_PATH_MAX
#define FX_HEAD 128
#define FX_MAX_PHDRS 64
#define FX_MAX_ARGS 4096

enum {
    k_sys_close = 3,
    k_sys_fstat = 5,
    k_sys_pread = 17,
    k_sys_access = 21,
    k_sys_execve = 59,
    k_sys_uname = 63,
    k_sys_getcwd = 79,
    k_sys_readlink = 89,
    k_sys_stat = 4,
    k_sys_open = 2,
};

static long fx_syscall3(long n, long a, long b, long c) {
    long ret;
    __asm__ volatile("syscall"
                     : "=a"(ret)
                     : "a"(n), "D"(a), "S"(b), "d"(c)
                     : "rcx", "r11", "memory");
    return ret;
}

static long fx_syscall4(long n, long a, long b, long c, long d) {
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

static unsigned fx_mode(const struct fx_stat* st) {
    return (unsigned)(st->words[3] & 0xffffffffu);
}

static long fx_size(const struct fx_stat* st) {
    return (long)st->words[6];
}

#define FX_S_IFMT 0170000u
#define FX_S_IFREG 0100000u
#define FX_X_OK 1
#define FX_O_RDONLY_CLOEXEC 02000000

static int es_executable(const char* path);
static long es_getcwd(char* buf, unsigned long size);
#include "emulator_search.h"

static int fx_eq(const char* a, const char* b) {
    while (*a != '\0' && *a == *b) {
        ++a;
        ++b;
    }
    return *a == *b;
}

/* The value of NAME in envp, or 0 (the first entry wins, as getenv). */
static const char* fx_getenv(char** envp, const char* name) {
    const unsigned long n = es_len(name);
    for (char** e = envp; *e != 0; ++e) {
        unsigned long i = 0;
        while (i < n && (*e)[i] == name[i]) {
            ++i;
        }
        if (i == n && (*e)[n] == '=') {
            return *e + n + 1;
        }
    }
    return 0;
}

/* util::is_executable_file: a regular file this process may execute. */
static int es_executable(const char* path) {
    struct fx_stat st;
    return fx_syscall3(k_sys_stat, (long)path, (long)&st, 0) == 0 &&
           (fx_mode(&st) & FX_S_IFMT) == FX_S_IFREG &&
           fx_syscall3(k_sys_access, (long)path, FX_X_OK, 0) == 0;
}

static long es_getcwd(char* buf, unsigned long size) {
    return fx_syscall3(k_sys_getcwd, (long)buf, (long)size, 0);
}

/* util::find_executable: a name with '/' as given, else the first PATH dir holding it. */
static int fx_find_program(char** envp, const char* name, char* out) {
    for (const char* c = name; *c != '\0'; ++c) {
        if (*c == '/') {
            return es_join(out, "", 0, name);
        }
    }
    const char* path = fx_getenv(envp, "PATH");
    return es_search(path != 0 ? path : ES_DEFAULT_PATH, name, out);
}

static unsigned long fx_uint(const unsigned char* p, int width, int big) {
    unsigned long v = 0;
    for (int i = 0; i < width; ++i) {
        v = v << 8 | p[big ? i : width - 1 - i];
    }
    return v;
}

/* Whether the program headers show a plain static program: every PT_LOAD within the file, no
 * PT_INTERP (dynamic) and no PT_DYNAMIC (static PIE: the CLI checks its dynamic section). */
static int fx_plain_static(int fd, const unsigned char* h, int is64, int big, long size) {
    const unsigned long phoff = fx_uint(h + (is64 ? 32 : 28), is64 ? 8 : 4, big);
    const unsigned long entsize = fx_uint(h + (is64 ? 54 : 42), 2, big);
    const unsigned long count = fx_uint(h + (is64 ? 56 : 44), 2, big);
    if (count == 0 || count > FX_MAX_PHDRS || entsize != (is64 ? 56u : 32u) ||
        phoff > (unsigned long)size || count * entsize > (unsigned long)size - phoff) {
        return 0;
    }
    unsigned char ph[FX_MAX_PHDRS * 56];
    if (fx_syscall4(k_sys_pread, fd, (long)ph, (long)(count * entsize), (long)phoff) !=
        (long)(count * entsize)) {
        return 0;
    }
    for (unsigned long i = 0; i < count; ++i) {
        const unsigned char* p = ph + i * entsize;
        const unsigned long type = fx_uint(p, 4, big);
        if (type == 2 || type == 3) {
            return 0;
        }
        const unsigned long off = fx_uint(p + (is64 ? 8 : 4), is64 ? 8 : 4, big);
        const unsigned long filesz = fx_uint(p + (is64 ? 32 : 16), is64 ? 8 : 4, big);
        if (type == 1 && (off > (unsigned long)size || filesz > (unsigned long)size - off)) {
            return 0;
        }
    }
    return 1;
}

/* The arch as the CLI decides it: the first entry whose binfmt magic and mask match the
 * header and whose ELF fields agree (arch_for_header + has_elf_fields); -1 for none. */
static int fx_arch_of(const unsigned char* h, long got) {
    const int is64 = h[4] == 2, big = h[5] == 2;
    const unsigned long machine = fx_uint(h + 18, 2, big);
    const unsigned long flags = fx_uint(h + (is64 ? 48 : 36), 4, big);
    const int n = (int)(sizeof k_fast_arches / sizeof k_fast_arches[0]);
    for (int a = 0; a < n; ++a) {
        const struct FastArch* r = &k_fast_arches[a];
        int match = got >= r->magic_len;
        for (int i = 0; match && i < r->magic_len; ++i) {
            match = ((h[i] ^ r->magic[i]) & r->mask[i]) == 0;
        }
        if (match && r->elf_class == h[4] && r->elf_data == h[5] && r->e_machine == machine &&
            (flags & r->e_flags_mask) == r->e_flags_value) {
            return a;
        }
    }
    return -1;
}

/* The arch of PATH when it is a plain static foreign-looking ELF program, else -1. */
static int fx_static_program_arch(const char* path) {
    struct fx_stat st;
    if (fx_syscall3(k_sys_stat, (long)path, (long)&st, 0) != 0 ||
        (fx_mode(&st) & FX_S_IFMT) != FX_S_IFREG ||
        fx_syscall3(k_sys_access, (long)path, FX_X_OK, 0) != 0) {
        return -1;
    }
    const long fd = fx_syscall3(k_sys_open, (long)path, FX_O_RDONLY_CLOEXEC, 0);
    if (fd < 0) {
        return -1;
    }
    unsigned char h[FX_HEAD];
    struct fx_stat fst;
    const long got = fx_syscall4(k_sys_pread, fd, (long)h, sizeof h, 0);
    int arch = -1;
    if (fx_syscall3(k_sys_fstat, fd, (long)&fst, 0) == 0 && got >= 64 && h[0] == 0x7f &&
        h[1] == 'E' && h[2] == 'L' && h[3] == 'F' && (h[4] == 1 || h[4] == 2) &&
        (h[5] == 1 || h[5] == 2) &&
        fx_plain_static((int)fd, h, h[4] == 2, h[5] == 2, fx_size(&fst))) {
        arch = fx_arch_of(h, got);
    }
    fx_syscall3(k_sys_close, fd, 0, 0);
    return arch;
}

/* Whether NAME is arch B's name or one of its aliases (find_arch; uname's are lower case). */
static int fx_names(int b, const char* name) {
    const char* al = k_fast_arches[b].aliases; /* "|a|b|" */
    if (fx_eq(k_fast_arches[b].name, name)) {
        return 1;
    }
    const unsigned long n = es_len(name);
    for (unsigned long i = 0; al[i] != '\0'; ++i) {
        unsigned long j = 0;
        while (j < n && al[i + 1 + j] == name[j]) {
            ++j;
        }
        if (al[i] == '|' && n > 0 && j == n && al[i + 1 + j] == '|') {
            return 1;
        }
    }
    return 0;
}

/* Whether arch A runs natively here (runs_natively: the host's own, or i386 on x86_64); an
 * unknown host counts as native, which leaves the decision to the CLI. */
static int fx_native(int a) {
    struct {
        char f[6][65];
    } u;
    if (fx_syscall3(k_sys_uname, (long)&u, 0, 0) != 0) {
        return 1;
    }
    const int n = (int)(sizeof k_fast_arches / sizeof k_fast_arches[0]);
    for (int h = 0; h < n; ++h) {
        if (fx_names(h, u.f[4])) {
            return h == a ||
                   (fx_eq(k_fast_arches[h].name, "x86_64") && fx_eq(k_fast_arches[a].name, "i386"));
        }
    }
    return 1;
}

/* This binary is emurun by its name, and not an old-style shim named emurun. */
static int fx_is_plain_emurun(void) {
    char self[FX_PATH_MAX];
    const long n =
        fx_syscall3(k_sys_readlink, (long)"/proc/self/exe", (long)self, sizeof self - 40);
    if (n <= 0) {
        return 0;
    }
    self[n] = '\0';
    long base = n;
    while (base > 0 && self[base - 1] != '/') {
        --base;
    }
    if (!fx_eq(self + base, "emurun")) {
        return 0;
    }
    return es_join(self, self, (unsigned long)base, ".emurun-shims/emurun.json") &&
           fx_syscall3(k_sys_access, (long)self, 0, 0) != 0;
}

/* exec's plain form, its checks passed: find PROG and its emulator, become qemu. Returns when
 * either is not the plain case. Its buffers live here, not in the entry's frame: a command
 * that is not exec never touches these stack pages. */
__attribute__((noinline)) static void fx_exec(long argc, char** argv, char** envp, long at) {
    char program[FX_PATH_MAX], emulator[FX_PATH_MAX];
    if (!fx_is_plain_emurun() || !fx_find_program(envp, argv[at], program)) {
        return;
    }
    const int arch = fx_static_program_arch(program);
    if (arch < 0 || fx_native(arch) ||
        !es_find_emulator(fx_getenv(envp, "EMURUN_QEMU_DIR"), fx_getenv(envp, "PATH"),
                          k_fast_arches[arch].qemu, emulator)) {
        return;
    }
    char* out[argc - at + 4];
    long n = 0;
    out[n++] = emulator;
    out[n++] = (char*)"-0";
    out[n++] = argv[at];
    out[n++] = program;
    for (long i = at + 1; i < argc; ++i) {
        out[n++] = argv[i];
    }
    out[n] = 0;
    fx_syscall3(k_sys_execve, (long)emulator, (long)out, (long)envp);
    /* execve failed: the CLI says why. */
}

/* Called by the entry with the kernel's initial stack: argc, argv..., 0, envp..., 0. Returns
 * only when the CLI is to handle the command. */
__attribute__((visibility("hidden"), used)) void emurun_fast_exec(long* sp) {
    const long argc = sp[0];
    char** argv = (char**)(sp + 1);
    char** envp = argv + argc + 1;
    if (argc < 3 || argc > FX_MAX_ARGS || !fx_eq(argv[1], "exec")) {
        return;
    }
    const char* verbose = fx_getenv(envp, "EMURUN_VERBOSE");
    if (verbose != 0 && *verbose != '\0' && !fx_eq(verbose, "0")) {
        return;
    }
    const long at = fx_eq(argv[2], "--") ? 3 : 2;
    if (at < argc && argv[at][0] != '-' && argv[at][0] != '\0') {
        fx_exec(argc, argv, envp, at);
    }
}
/* The entry point (ld -e emurun_fast_start): the kernel's stack is handed to emurun_fast_exec,
 * then, untouched, to glibc's _start (%rdx, the function _start registers with atexit, is 0
 * from the kernel for a static program, and stays so). */
__asm__(".text\n"
        ".globl emurun_fast_start\n"
        ".type emurun_fast_start,@function\n"
        "emurun_fast_start:\n"
        "    xorl %ebp, %ebp\n"
        "    movq %rsp, %r12\n"
        "    movq %rsp, %rdi\n"
        "    andq $-16, %rsp\n"
        "    call emurun_fast_exec\n"
        "    movq %r12, %rsp\n"
        "    xorl %edx, %edx\n"
        "    jmp _start\n"
        ".size emurun_fast_start, .-emurun_fast_start\n");
