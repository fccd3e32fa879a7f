/* The fast way into `emurun exec` (issue 15): the emurun binary's entry point on x86-64.
 *
 * `emurun exec [--sysroot SR] [--] PROG ARGS...` for a foreign program is the command emurun
 * runs most often (CMAKE_CROSSCOMPILING_EMULATOR, meson's exe_wrapper, test suites), and
 * starting emurun's C++ image (static glibc, relocations, CLI11, the launch plan) cost more than
 * the 5% of a qemu start the issue allows. This code runs first, before glibc or anything else
 * in the binary is set up, decides whether the command line is that case and, when it is,
 * execs the emulator exactly as the CLI would:
 *     qemu-ARCH[-static] -0 PROG PATH-OF-PROG ARGS...   (+ QEMU_LD_PREFIX for a dynamic PROG)
 * In every other case - another command, another option, a native or not-ELF program, a #!
 * script, a $ORIGIN or relative RUNPATH, two sysroots in use, a missing library or emulator,
 * anything it cannot read or tell - it returns, the
 * entry jumps to glibc's _start and the CLI does everything as before, errors included. So it
 * never prints, and it decides nothing the CLI would decide differently: the rules are the
 * library's (util::find_executable, launch's checks, the ELF reader's, arch_for_header plus the
 * ELF fields, runs_natively, resolve_libraries and used_sysroots, find_emulator and
 * qemu_command), spelled again because this code can use no library (fast_elf.c; the emulator
 * search is the shim launcher's, tools/common/emulator_search.h); integration.fast_exec runs
 * every case both ways and compares what qemu receives. The one difference: the environment
 * keeps its order (the CLI's is sorted by name), QEMU_LD_PREFIX last; its content is the
 * CLI's (no entry without '=', the first of a name wins).
 *
 * Constraints, as the code runs before the static PIE is relocated and before TLS exists:
 * raw system calls only, no libc function (the build checks the object's undefined symbols),
 * no pointer in static data (the arch table holds arrays), no stack protector, no sanitizer. */

#include "fast_elf.h"
#include "fast_sys.h"

#define FX_MAX_ARGS 4096
#define FX_MAX_ENV 4096

static int es_executable(const char* path);
static long es_getcwd(char* buf, unsigned long size);
#include "emulator_search.h"

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
    return fx_stat_of(path, &st) && (fx_mode(&st) & FX_S_IFMT) == FX_S_IFREG &&
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

/* This binary is emurun by its name, not an old-style shim named emurun, and started by a
 * name that says emurun (argv[0]'s file name; the CLI refuses others). */
static int fx_is_plain_emurun(const char* argv0) {
    const char* name = argv0;
    for (const char* c = argv0; *c != '\0'; ++c) {
        if (*c == '/') {
            name = c + 1;
        }
    }
    int says_emurun = 0;
    for (const char* c = name; *c != '\0' && !says_emurun; ++c) {
        says_emurun =
            c[0] == 'e' && c[1] == 'm' && c[2] == 'u' && c[3] == 'r' && c[4] == 'u' && c[5] == 'n';
    }
    if (!says_emurun) {
        return 0;
    }
    char self[FX_PATH_MAX];
    const long n = fx_syscall3(k_sys_readlink, (long)"/proc/self/exe", (long)self, sizeof self);
    if (n <= 0 || n >= (long)sizeof self) { /* a full buffer may be a cut-off name */
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

/* The plan: PROG found and runnable (check_runnable), an ELF of a foreign arch; for a dynamic
 * one the QEMU_LD_PREFIX value in prefix ("" for a static one). 1 when the CLI would plan the
 * same. */
static int fx_plan(char** envp, const char* name, const char* sysroot, char* program,
                   struct FxElf* elf, char* prefix) {
    prefix[0] = '\0';
    if (!fx_find_program(envp, name, program) || !es_executable(program) ||
        !fx_read_elf(program, elf) || elf->arch < 0 || fx_runs_natively(elf->arch) ||
        (sysroot != 0 && !fx_sysroot_ok(sysroot))) {
        return 0;
    }
    return !elf->has_interp || fx_library_prefix(elf, sysroot, prefix);
}

/* The length of entry's name ("NAME=value"; "=value" has an empty one), -1 without '='. */
static long fx_name_len(const char* entry) {
    long n = 0;
    while (entry[n] != '\0' && entry[n] != '=') {
        ++n;
    }
    return entry[n] == '=' ? n : -1;
}

static int fx_same_name(const char* a, const char* b, long n) {
    for (long i = 0; i < n; ++i) {
        if (a[i] != b[i]) {
            return 0;
        }
    }
    return b[n] == '=';
}

/* The environment the CLI passes (util::current_environment, then the plan's variables on
 * top): entries without '=' dropped, the first of each name kept, in their order; with a
 * prefix, QEMU_LD_PREFIX=prefix (written in var) instead of any inherited one, last. */
static void fx_environment(char** envp, const char* prefix, char* var, char** out) {
    static const char k_name[] = "QEMU_LD_PREFIX=";
    long n = 0;
    for (char** e = envp; *e != 0; ++e) {
        const long len = fx_name_len(*e);
        int keep = len >= 0 && !(prefix[0] != '\0' && fx_same_name(*e, k_name, len));
        for (long k = 0; keep && k < n; ++k) {
            keep = !fx_same_name(*e, out[k], len);
        }
        if (keep) {
            out[n++] = *e;
        }
    }
    if (prefix[0] != '\0') {
        es_join(var, "", 0, k_name);
        es_join(var + sizeof k_name - 1, "", 0, prefix);
        out[n++] = var;
    }
    out[n] = 0;
}

/* exec's fast form, its command line parsed: plan, find the emulator, become qemu. Returns
 * when the CLI is to decide. Its buffers live here, not in the entry's frame: a command that
 * is not exec never touches these stack pages. */
__attribute__((noinline)) static void fx_exec(long argc, char** argv, char** envp, long at,
                                              const char* arch, const char* sysroot) {
    char program[FX_PATH_MAX], emulator[FX_PATH_MAX], prefix[FX_PATH_MAX];
    struct FxElf elf;
    if (!fx_is_plain_emurun(argv[0]) || !fx_plan(envp, argv[at], sysroot, program, &elf, prefix) ||
        (arch != 0 && fx_find_arch(arch) != elf.arch) ||
        !es_find_emulator(fx_getenv(envp, "EMURUN_QEMU_DIR"), fx_getenv(envp, "PATH"),
                          fx_arch_qemu(elf.arch), emulator)) {
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
    long envc = 0;
    while (envp[envc] != 0) {
        ++envc;
    }
    if (envc > FX_MAX_ENV) {
        return;
    }
    char* env[envc + 2];
    char var[FX_PATH_MAX + 16];
    fx_environment(envp, prefix, var, env);
    fx_syscall3(k_sys_execve, (long)emulator, (long)out, (long)env);
    /* execve failed: the CLI says why. */
}

/* The value of option `opt` ("--sysroot") spelled `--opt VALUE` or `--opt=VALUE` at argv[*at]
 * (then *at moves past it); 0 when argv[*at] is not that option. A missing or empty VALUE, or
 * one that starts with '-', is CLI11's to judge: *bad is set. */
static const char* fx_option(long argc, char** argv, long* at, const char* opt, int* bad) {
    const char* a = argv[*at];
    unsigned long i = 0;
    while (opt[i] != '\0' && a[i] == opt[i]) {
        ++i;
    }
    if (opt[i] != '\0' || (a[i] != '=' && a[i] != '\0')) {
        return 0;
    }
    const char* value = a[i] == '=' ? a + i + 1 : *at + 1 < argc ? argv[*at + 1] : 0;
    *at += a[i] == '=' ? 1 : 2;
    if (value == 0 || value[0] == '\0' || value[0] == '-') {
        *bad = 1;
        return 0;
    }
    return value;
}

/* Called by the entry with the kernel's initial stack: argc, argv..., 0, envp..., 0. Returns
 * only when the CLI is to handle the command: anything but
 *     exec [--arch A] [--sysroot SR] [--] PROG ARGS...   (each option at most once, either
 *                                                        order, also as --opt=VALUE)
 * with PROG not starting with '-' (CLI11 would read it as an option). */
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
    /* Its buffers take ~100 KiB of stack: under a smaller limit the CLI runs. */
    unsigned long limit[2];
    if (fx_syscall4(k_sys_prlimit64, 0, 3 /* RLIMIT_STACK */, 0, (long)limit) != 0 ||
        limit[0] < (1ul << 20)) {
        return;
    }
    const char* arch = 0;
    const char* sysroot = 0;
    long at = 2;
    int bad = 0;
    for (int k = 0; k < 2 && at < argc && !bad; ++k) {
        const char* v;
        if ((v = fx_option(argc, argv, &at, "--arch", &bad)) != 0 && arch == 0) {
            arch = v;
        } else if (!bad && v == 0 && (v = fx_option(argc, argv, &at, "--sysroot", &bad)) != 0 &&
                   sysroot == 0) {
            sysroot = v;
        } else if (v != 0) {
            return; /* an option twice */
        }
    }
    const int dashdash = at < argc && fx_eq(argv[at], "--");
    at += dashdash;
    /* A later `--` without one before PROG: the CLI checks that none of exec's options sits
     * between PROG and it (options_before_dashdash). */
    for (long i = at + 1; !dashdash && i < argc; ++i) {
        if (fx_eq(argv[i], "--")) {
            return;
        }
    }
    if (!bad && at < argc && argv[at][0] != '-' && argv[at][0] != '\0') {
        fx_exec(argc, argv, envp, at, arch, sysroot);
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
