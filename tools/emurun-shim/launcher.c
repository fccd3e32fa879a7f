/* The launcher: the small static program that starts emurun and every shim. It replays launch
 * records (lib/launch/launch_record.h) and decides nothing: planning is the C++ library's.
 *
 * Started as a shim (SHIMDIR/NAME, a hard link or copy of this program, with the record
 * SHIMDIR/.emurun-shims/NAME.rec that `emurun shim add` wrote): when the record's key holds,
 * execve its command line with the caller's argv[0] and arguments; when it is stale, hand over
 * to the emurun CLI the record names (emurun-cli ELR_SHIM_REPLAN SHIM ARGV0 ARGS...), which
 * plans again, refreshes the record and runs the tool.
 *
 * Started as emurun (bin/emurun): for `emurun exec [OPTIONS] -- PROG ARGS...`, look up the
 * record of this request in emurun's cache (launch/<hash>.rec; the hash covers the words before
 * `--`, PROG, the working directory, PATH, EMURUN_QEMU_DIR and the CLI's own identity: all a
 * plan reads besides the files its key names), and replay it when it is ours (this user's, no
 * one else may write it or its directory) and its key holds. Anything else - another command,
 * no `--`, EMURUN_VERBOSE, no record, a record that is corrupt, planted or stale - is handed to
 * the C++ CLI (emurun-cli beside this program, else ../libexec/emurun/emurun-cli) unchanged;
 * for an exec, with ELR_RECORD_ENV naming the record to write.
 *
 * Same pid, stdio, cwd and signals whichever way. Failures print "emurun: ..." (or
 * "emurun-shim: SHIM: ...") on stderr and exit 125. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "launch/launch_record.h"

extern char** environ;

enum { k_exit_failure = 125 };

static const char* g_prefix = "emurun: "; /* "emurun-shim: SHIM: " in the shim role */
static const char* g_shim = 0;

static unsigned char g_record[elr_max_size];
static struct elr_view g_view;

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

/* "PREFIX WHAT: WHY (HINT)" and exit 125. */
static _Noreturn void die(const char* what, const char* why, const char* hint) {
    put(g_prefix);
    if (g_shim != 0) {
        put(g_shim);
        put(": ");
    }
    put(what);
    put(": ");
    put(why);
    if (hint != 0 && hint[0] != '\0') {
        put(" (");
        put(hint);
        put(")");
    }
    put("\n");
    _exit(k_exit_failure);
}

/* dst (size) = a + b + c; 0 when it does not fit. */
static int join3(char* dst, size_t size, const char* a, const char* b, const char* c) {
    size_t la = strlen(a), lb = strlen(b), lc = strlen(c);
    if (la + lb + lc + 1 > size) {
        return 0;
    }
    memmove(dst, a, la);
    memcpy(dst + la, b, lb);
    memcpy(dst + la + lb, c, lc + 1);
    return 1;
}

/* The value of NAME in the environment when set and not empty (util::get_env), else 0. */
static const char* env_value(const char* name) {
    const char* v = getenv(name);
    return v != 0 && v[0] != '\0' ? v : 0;
}

/* Read the record at `path` into g_record and parse it; 1 when well formed. With `own`, only a
 * regular file of this user that group and others cannot write (a record someone else could
 * have written is never replayed). Opened non-blocking, not through a symlink. */
static int load_record(const char* path, int own) {
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY | O_NOFOLLOW);
    if (fd < 0) {
        return 0;
    }
    struct stat st;
    size_t got = 0;
    int ok = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size <= elr_max_size &&
             (!own || (st.st_uid == geteuid() && (st.st_mode & 022) == 0));
    while (ok) {
        ssize_t n = read(fd, g_record + got, sizeof g_record - got);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            ok = n == 0;
            break;
        }
        got += (size_t)n;
        ok = got < sizeof g_record;
    }
    close(fd);
    return ok && elr_parse(g_record, got, &g_view) == 0;
}

/* Every key path still has its recorded identity. */
static int key_holds(void) {
    for (uint32_t i = 0; i < g_view.n_ids; ++i) {
        struct elr_id id;
        struct stat st;
        elr_id_at(&g_view, i, &id);
        if (stat(g_view.paths[i], &st) != 0 || (uint64_t)st.st_dev != id.dev ||
            (uint64_t)st.st_ino != id.ino || (uint64_t)st.st_size != id.size ||
            (int64_t)st.st_mtim.tv_sec != id.mtime_sec ||
            (int64_t)st.st_mtim.tv_nsec != id.mtime_nsec) {
            return 0;
        }
    }
    return 1;
}

/* Whether entry "NAME=..." has the name of "NAME=..." `other` (both with '='). */
static int same_name(const char* entry, const char* other) {
    while (*entry != '=' && *entry == *other) {
        ++entry;
        ++other;
    }
    return *entry == '=' && *other == '=';
}

/* The environment the CLI passes (util::current_environment, then the plan's variables on
 * top): entries without '=' dropped, the first of each name kept, the record's names and
 * ELR_RECORD_ENV left out, then the record's entries. */
static void build_env(char** out) {
    size_t n = 0;
    for (char** e = environ; e != 0 && *e != 0; ++e) {
        int keep = strchr(*e, '=') != 0 && !same_name(*e, ELR_RECORD_ENV "=");
        for (uint32_t i = 0; keep && i < g_view.n_env; ++i) {
            keep = !same_name(*e, g_view.env[i]);
        }
        for (size_t k = 0; keep && k < n; ++k) {
            keep = !same_name(*e, out[k]);
        }
        if (keep) {
            out[n++] = *e;
        }
    }
    for (uint32_t i = 0; i < g_view.n_env; ++i) {
        out[n++] = (char*)g_view.env[i];
    }
    out[n] = 0;
}

static size_t environ_count(void) {
    size_t n = 0;
    for (char** e = environ; e != 0 && *e != 0; ++e) {
        ++n;
    }
    return n;
}

/* execve the loaded record: its argv prefix, argv0 at its slot (when it has one), then args.
 * Returns only when execve fails. */
static void replay(const char* argv0, char** args, int nargs) {
    char* out[g_view.n_argv + (size_t)nargs + 2];
    size_t n = 0;
    for (uint32_t i = 0; i <= g_view.n_argv; ++i) {
        if (i == g_view.argv0_at) {
            out[n++] = (char*)argv0;
        }
        if (i < g_view.n_argv) {
            out[n++] = (char*)g_view.argv[i];
        }
    }
    for (int i = 0; i < nargs; ++i) {
        out[n++] = args[i];
    }
    out[n] = 0;
    char* env[environ_count() + g_view.n_env + 1];
    build_env(env);
    execve(g_view.exe, out, env);
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

/* --- the shim role ----------------------------------------------------------------------- */

static _Noreturn void run_shim(const char* self, int argc, char** argv) {
    g_prefix = "emurun-shim: ";
    g_shim = self;
    const char* argv0 = argc > 0 ? argv[0] : self;
    if (key_holds()) {
        replay(argv0, argv + 1, argc > 0 ? argc - 1 : 0);
    }
    /* Stale (or execve failed): the CLI plans again and says what is wrong. */
    if (g_view.handover[0] == '\0') {
        die("launch record", "stale, and it names no emurun to plan it again",
            "recreate the shim with 'emurun shim add'");
    }
    char* out[(size_t)argc + 5];
    size_t n = 0;
    out[n++] = (char*)g_view.handover;
    out[n++] = (char*)ELR_SHIM_REPLAN;
    out[n++] = (char*)self;
    out[n++] = (char*)argv0;
    for (int i = 1; i < argc; ++i) {
        out[n++] = argv[i];
    }
    out[n] = 0;
    execve(g_view.handover, out, environ);
    die(g_view.handover, strerror(errno), "emurun moved? recreate the shim with 'emurun shim add'");
}

/* --- the emurun role ---------------------------------------------------------------------- */

/* FNV-1a, 64 bits, of s and its NUL. */
static uint64_t fnv(uint64_t h, const char* s) {
    do {
        h ^= (unsigned char)*s;
        h *= 0x100000001b3ull;
    } while (*s++ != '\0');
    return h;
}

static uint64_t fnv_var(uint64_t h, const char* name) {
    const char* v = getenv(name);
    return v != 0 ? fnv(fnv(h, name), v) : fnv(h, "\1unset");
}

/* emurun's cache dir by util::cache_dir's first three rules; 0 when none applies (the CLI's
 * /tmp fallback: no record is looked for, every run is planned). */
static int cache_dir(char* out, size_t size) {
    const char* v;
    if ((v = env_value("EMURUN_CACHE_DIR")) != 0) {
        return v[0] == '/' && join3(out, size, v, "", "");
    }
    if ((v = env_value("XDG_CACHE_HOME")) != 0 && v[0] == '/') {
        return join3(out, size, v, "/emurun", "");
    }
    if ((v = env_value("HOME")) != 0 && v[0] == '/' && access(v, W_OK) == 0) {
        return join3(out, size, v, "/.cache/emurun", "");
    }
    return 0;
}

/* The record file for `exec WORDS[2..dd) -- PROG` in out; 0 when there is none to look for. */
static int record_file(char** argv, int dd, const struct stat* cli, char* out, size_t size) {
    char dir[PATH_MAX], cwd[PATH_MAX];
    if (!cache_dir(dir, sizeof dir) || getcwd(cwd, sizeof cwd) == 0) {
        return 0;
    }
    uint64_t h = fnv(0xcbf29ce484222325ull, "emurun launch record 1");
    h ^= (uint64_t)cli->st_dev * 31u + (uint64_t)cli->st_ino;
    h = fnv(h, "") ^ ((uint64_t)cli->st_mtim.tv_sec * 1000000007u + (uint64_t)cli->st_mtim.tv_nsec);
    for (int i = 2; i <= dd + 1; ++i) {
        h = fnv(h, argv[i]);
    }
    h = fnv_var(fnv_var(fnv(h, cwd), "PATH"), "EMURUN_QEMU_DIR");
    char name[32];
    static const char hex[] = "0123456789abcdef";
    for (int i = 0; i < 16; ++i) {
        name[i] = hex[(h >> (60 - 4 * i)) & 0xf];
    }
    memcpy(name + 16, ".rec", 5);
    if (!join3(out, size, dir, "/launch", "")) {
        return 0;
    }
    struct stat st; /* the records' dir: ours, closed to others (util::own_cache_subdir) */
    if (stat(out, &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != geteuid() ||
        (st.st_mode & 022) != 0) {
        return join3(out, size, out, "/", name) ? 1 : 0; /* none yet: the CLI makes it */
    }
    return join3(out, size, out, "/", name) ? 2 : 0;
}

/* The C++ CLI of this emurun: emurun-cli beside it (a build tree), else in
 * ../libexec/emurun/ (an install) - util::find_helper's rule. */
static void find_cli(const char* self, char* out, size_t size, struct stat* st) {
    char dir[PATH_MAX];
    join3(dir, sizeof dir, self, "", "");
    char* cut = strrchr(dir, '/');
    if (cut != 0) {
        *cut = '\0';
    }
    const char* slash = strrchr(self, '/');
    if (join3(out, size, dir, "/emurun-cli", "") && stat(out, st) == 0 && S_ISREG(st->st_mode)) {
        return;
    }
    if (join3(out, size, dir, "/../libexec/emurun/emurun-cli", "") && stat(out, st) == 0 &&
        S_ISREG(st->st_mode)) {
        return;
    }
    const char* name = slash != 0 ? slash + 1 : self;
    char why[PATH_MAX + 128];
    join3(why, sizeof why, "not a shim (no .emurun-shims/", name,
          ".rec beside it), and no emurun-cli beside it or in ../libexec/emurun");
    die(self, why, "recreate the shim with 'emurun shim add', or reinstall emurun");
}

static _Noreturn void run_emurun(const char* self, int argc, char** argv) {
    char cli[PATH_MAX], record[PATH_MAX], var[PATH_MAX + sizeof ELR_RECORD_ENV + 1];
    struct stat cli_st;
    find_cli(self, cli, sizeof cli, &cli_st);
    int dd = 2;
    while (dd < argc && strcmp(argv[dd], "--") != 0) {
        ++dd;
    }
    const char* verbose = env_value("EMURUN_VERBOSE");
    int found = 0;
    if (argc > 1 && strcmp(argv[1], "exec") == 0 && dd + 1 < argc &&
        (verbose == 0 || strcmp(verbose, "0") == 0)) {
        found = record_file(argv, dd, &cli_st, record, sizeof record);
    }
    if (found == 2 && load_record(record, 1) && g_view.argv0_at == ELR_NO_ARGV0 && key_holds()) {
        replay(0, argv + dd + 2, argc - dd - 2);
    }
    char** env = environ;
    char* with[environ_count() + 2];
    if (found != 0 && join3(var, sizeof var, ELR_RECORD_ENV "=", record, "")) {
        size_t n = 0;
        for (char** e = environ; e != 0 && *e != 0; ++e) {
            if (!same_name(*e, ELR_RECORD_ENV "=")) {
                with[n++] = *e;
            }
        }
        with[n++] = var;
        with[n] = 0;
        env = with;
    }
    execve(cli, argv, env);
    die(cli, strerror(errno), "reinstall emurun");
}

/* A shim's record and its directory (.emurun-shims) are writable by their owner only, one
 * owner for both: anyone else who could write either could make the shim run any program.
 * (exec's records in the cache must be this user's own; a shim is shared by whoever runs it.) */
static int shim_record_safe(const char* path) {
    static char dir[PATH_MAX];
    const char* slash = strrchr(path, '/');
    const size_t n = slash != 0 ? (size_t)(slash - path) : 0;
    struct stat rec, d;
    if (n == 0 || n >= sizeof dir) {
        return 0;
    }
    memcpy(dir, path, n);
    dir[n] = '\0';
    return lstat(path, &rec) == 0 && stat(dir, &d) == 0 && (rec.st_mode & 022) == 0 &&
           (d.st_mode & 022) == 0 && rec.st_uid == d.st_uid;
}

int main(int argc, char** argv) {
    static char self[PATH_MAX], path[PATH_MAX];
    self_exe(self, sizeof self);
    const char* slash = strrchr(self, '/');
    const char* name = slash != 0 ? slash + 1 : self;
    const size_t dir_len = slash != 0 ? (size_t)(slash - self) : 0;
    if (dir_len + strlen(name) + 32 < sizeof path) { /* room for .json too */
        memcpy(path, self, dir_len);
        join3(path + dir_len, sizeof path - dir_len, "/.emurun-shims/", name, ".rec");
        if (access(path, F_OK) == 0 && !shim_record_safe(path)) {
            g_prefix = "emurun-shim: ";
            g_shim = self;
            die("launch record",
                "it or .emurun-shims is writable by others than its owner, so anyone could "
                "make this shim run any program",
                "chmod go-w the shim dir's .emurun-shims and its files, or recreate the shim "
                "with 'emurun shim add'");
        }
        if (load_record(path, 0)) {
            run_shim(self, argc, argv);
        }
        const int has_record = access(path, F_OK) == 0;
        memcpy(path + strlen(path) - 4, ".json", 6);
        if (has_record || access(path, F_OK) == 0) {
            g_prefix = "emurun-shim: ";
            g_shim = self;
            die(has_record ? "launch record" : "no launch record",
                has_record ? "not one this emurun reads (corrupt, or of another version)"
                           : "the shim was made by an older emurun",
                "recreate the shim with 'emurun shim add'");
        }
    }
    run_emurun(self, argc, argv);
}
