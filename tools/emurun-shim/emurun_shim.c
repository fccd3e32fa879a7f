/* emurun-shim: the launcher every shim runs. SHIMDIR/NAME is a hard link (or a copy) of this
 * program; it reads its sidecar SHIMDIR/.emurun-shims/NAME.json (written by `emurun shim add`,
 * the format lib/shim/shim_config.cpp defines) and execve()s the emulator at once:
 *   qemu [-cpu C] -0 ARGV0 [-L PREFIX] TARGET ARGS...    (native shims: TARGET ARGS...)
 * with the caller's environment plus the shim's variables. Same pid, stdio, cwd, signals.
 *
 * Every run of a shimmed tool pays for this program's start-up, so it is plain C linked
 * statically: no dynamic loader, no libstdc++, no heap (the sidecar is parsed in a stack
 * buffer). Failures print "emurun-shim: SHIM: what: why (hint)" on stderr and exit 125. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sidecar.h"

extern char** environ;

enum { k_exit_failure = 125 };

static const char* g_shim = "?"; /* the shim path, named in every error */

static void put(const char* s) {
    size_t n = strlen(s);
    while (n > 0) {
        ssize_t w = write(2, s, n);
        if (w < 0 && errno == EINTR) {
            continue;
        }
        if (w <= 0) {
            return;
        }
        s += w;
        n -= (size_t)w;
    }
}

/* "emurun-shim: SHIM: WHAT: WHY (HINT)" and exit 125. */
static _Noreturn void die(const char* what, const char* why, const char* hint) {
    put("emurun-shim: ");
    put(g_shim);
    put(": ");
    put(what);
    put(": ");
    put(why);
    if (hint != NULL && hint[0] != '\0') {
        put(" (");
        put(hint);
        put(")");
    }
    put("\n");
    _exit(k_exit_failure);
}

/* dst = a + b + c, or die when it does not fit. */
static char* join3(char* dst, size_t size, const char* a, const char* b, const char* c) {
    size_t la = strlen(a), lb = strlen(b), lc = strlen(c);
    if (la + lb + lc + 1 > size) {
        die("path too long", a, NULL);
    }
    memmove(dst, a, la); /* dst may be a */
    memcpy(dst + la, b, lb);
    memcpy(dst + la + lb, c, lc + 1);
    return dst;
}

/* The file this process was executed from: for a hard link, the link's own path. */
static void self_exe(char* buf, size_t size) {
    ssize_t n = readlink("/proc/self/exe", buf, size - 1);
    if (n <= 0) {
        die("readlink /proc/self/exe failed", strerror(errno), "is /proc mounted?");
    }
    buf[n] = '\0';
    static const char deleted[] = " (deleted)";
    size_t len = (size_t)n, dl = sizeof deleted - 1;
    if (len > dl && strcmp(buf + len - dl, deleted) == 0) {
        buf[len - dl] = '\0';
    }
}

/* Read the whole sidecar into buf (NUL-terminated). Opened non-blocking and checked to be a
 * regular file first, so a FIFO or a device in its place fails at once instead of hanging. */
static size_t read_sidecar(const char* path, char* buf, size_t size) {
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    if (fd < 0) {
        const int err = errno;
        die(path, strerror(err),
            err == ENOENT ? "not an emurun shim? create it with 'emurun shim add'"
                          : "check the sidecar's permissions, or recreate the shim");
    }
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        die(path, "not a regular file", "recreate the shim with 'emurun shim add'");
    }
    size_t got = 0;
    for (;;) {
        ssize_t n = read(fd, buf + got, size - 1 - got);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n < 0) {
            die(path, strerror(errno), NULL);
        }
        if (n == 0) {
            break;
        }
        got += (size_t)n;
        if (got == size - 1) {
            die(path, "too large for a shim sidecar", "recreate it with 'emurun shim add'");
        }
    }
    close(fd);
    buf[got] = '\0';
    return got;
}

/* `p` resolved against the shim dir when relative (a moved shim dir keeps its sysroots). */
static const char* resolved(const char* p, const char* dir, char* buf, size_t size) {
    if (p == NULL || p[0] == '/' || p[0] == '\0') {
        return p;
    }
    return join3(buf, size, dir, "/", p);
}

/* util::is_executable_file: a regular file this process may execute. */
static int es_executable(const char* path) {
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, X_OK) == 0;
}

static long es_getcwd(char* buf, unsigned long size) {
    return getcwd(buf, size) != NULL ? 1 : -1;
}

#include "emulator_search.h"

/* The recorded emulator, or, when it has gone away, qemu-CPU-static then qemu-CPU searched
 * like emurun does (EMURUN_QEMU_DIR, PATH, /usr/bin: tools/common/emulator_search.h). */
static const char* find_emulator(const char* recorded, char* out) {
    if (es_executable(recorded)) {
        return recorded;
    }
    const char* base = strrchr(recorded, '/');
    base = base != NULL ? base + 1 : recorded;
    static const char suffix[] = "-static";
    const size_t len = strlen(base), sl = sizeof suffix - 1;
    char cpu[NAME_MAX + 1];
    if (len >= sizeof cpu || strncmp(base, "qemu-", 5) != 0 || len == 5) {
        die("emulator", recorded, "gone; recreate the shim with 'emurun shim add'");
    }
    strcpy(cpu, base + 5);
    if (len - 5 > sl && strcmp(cpu + len - 5 - sl, suffix) == 0) {
        cpu[len - 5 - sl] = '\0';
    }
    if (es_find_emulator(getenv("EMURUN_QEMU_DIR"), getenv("PATH"), cpu, out)) {
        return out;
    }
    die(recorded, "gone, and no other emulator in $EMURUN_QEMU_DIR, PATH or /usr/bin",
        "apt-get install qemu-user-static, or recreate the shim");
}

/* environ without the shim's variables, then the shim's "K=V" (built in `arena`). */
static void build_env(const struct Sidecar* sc, char** envp, char* arena, size_t arena_size) {
    size_t n = 0;
    for (char** e = environ; e != NULL && *e != NULL; ++e) {
        if (!sidecar_sets(sc, *e)) {
            envp[n++] = *e;
        }
    }
    size_t used = 0;
    for (size_t i = 0; i < sc->env_count; ++i) {
        const char* k = sc->env[i].key;
        const char* v = sc->env[i].value;
        size_t need = strlen(k) + strlen(v) + 2;
        if (used + need > arena_size) {
            die("sidecar env", "too large", NULL);
        }
        envp[n++] = join3(arena + used, need, k, "=", v);
        used += need;
    }
    envp[n] = NULL;
}

static size_t environ_count(void) {
    size_t n = 0;
    for (char** e = environ; e != NULL && *e != NULL; ++e) {
        ++n;
    }
    return n;
}

/* qemu [-cpu C] -0 ARGV0 [-L PREFIX] TARGET ARGS...  or  ARGV0 ARGS... (native). */
static void build_argv(const char* emulator, const struct Sidecar* sc, const char* target,
                       const char* ld_prefix, int argc, char** argv, char** out) {
    size_t n = 0;
    const char* argv0 = argc > 0 ? argv[0] : g_shim;
    if (!sc->native) {
        out[n++] = (char*)emulator;
        if (sc->cpu != NULL) {
            out[n++] = (char*)"-cpu";
            out[n++] = (char*)sc->cpu;
        }
        out[n++] = (char*)"-0";
        out[n++] = (char*)argv0;
        if (ld_prefix != NULL) {
            out[n++] = (char*)"-L";
            out[n++] = (char*)ld_prefix;
        }
        out[n++] = (char*)target;
    } else {
        out[n++] = (char*)argv0;
    }
    for (int i = 1; i < argc; ++i) {
        out[n++] = argv[i];
    }
    out[n] = NULL;
}

int main(int argc, char** argv) {
    static char self[PATH_MAX];
    self_exe(self, sizeof self);
    g_shim = self;
    char dir[PATH_MAX];
    strcpy(dir, self);
    char* slash = strrchr(dir, '/');
    const char* name = slash != NULL ? slash + 1 : self;
    if (slash != NULL) {
        *slash = '\0';
    }
    char path[PATH_MAX];
    join3(path, sizeof path, dir, "/.emurun-shims/", name);
    join3(path, sizeof path, path, ".json", "");

    char text[k_sidecar_max];
    read_sidecar(path, text, sizeof text);
    struct Sidecar sc;
    const char* error = sidecar_parse(text, &sc);
    if (error != NULL) {
        die(path, error, "recreate it with 'emurun shim add'");
    }
    char target_buf[PATH_MAX], prefix_buf[PATH_MAX], emu_buf[ES_PATH_MAX];
    const char* target = resolved(sc.target, dir, target_buf, sizeof target_buf);
    const char* ld_prefix = resolved(sc.ld_prefix, dir, prefix_buf, sizeof prefix_buf);
    const char* file = sc.native ? target : find_emulator(sc.emulator, emu_buf);

    char* out_argv[(size_t)argc + 8];
    build_argv(file, &sc, target, ld_prefix, argc, argv, out_argv);
    char* envp[environ_count() + sc.env_count + 1];
    char arena[k_sidecar_max];
    build_env(&sc, envp, arena, sizeof arena);
    execve(file, out_argv, envp);
    char what[PATH_MAX + 16];
    join3(what, sizeof what, "execve ", file, " failed");
    char hint[PATH_MAX + 32];
    die(what, strerror(errno),
        join3(hint, sizeof hint, "check 'emurun shim list --dir ", dir, "'"));
}
