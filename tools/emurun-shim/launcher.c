/* The launcher: the small static program that starts emurun and every shim. It replays launch
 * records (lib/launch/launch_record.h) and decides nothing: planning is the C++ library's.
 *
 * Started as a shim (SHIMDIR/NAME, a hard link or copy of this program, with the record
 * SHIMDIR/.emurun-shims/NAME.rec that `emurun shim add` wrote): when the record is intact,
 * this shim's (its request hash is elr_shim_request of /proc/self/exe) and its key holds,
 * execve its command line with the caller's argv[0] and arguments; otherwise (stale, missing,
 * corrupt, of another version or another shim's) hand over to the emurun the symlink
 * NAME.emurun beside it names (EMURUN ELR_SHIM_REPLAN SHIM ARGV0 ARGS...), which plans again
 * from the sidecar, refreshes the record and runs the tool. Only a record, link or
 * .emurun-shims others could write is fatal (exit 125).
 *
 * Started as emurun (bin/emurun): for `emurun exec [OPTIONS] -- PROG ARGS...`, look up the
 * record of this request in emurun's cache (launch/<hash>.rec; the hash covers the words before
 * `--`, PROG, the working directory, PATH, EMURUN_QEMU_DIR and the CLI's own identity: all a
 * plan reads besides the files its key names), and replay it when it is ours (this user's, no
 * one else may write it or its directory, in a cache dir the CLI would use), intact, holds this
 * hash and its key holds. Anything else - another command, no `--`, no record, a record that is
 * corrupt, planted, another request's or stale - is handed to the C++ CLI (emurun-cli beside this
 * program, else ../libexec/emurun/emurun-cli) unchanged; for an exec, with ELR_RECORD_ENV naming
 * the record to write. With EMURUN_VERBOSE >= 1 either role says on stderr whether it
 * replayed, and why not.
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

/* Read the record at `path` into g_record and parse it: 0 when it is well formed and answers
 * `request`, else why not. With `own`, only a regular file of this user that group and others
 * cannot write (a record someone else could have written is never replayed). Opened
 * non-blocking, not through a symlink. */
static const char* load_record(const char* path, int own, uint64_t request) {
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY | O_NOFOLLOW);
    if (fd < 0) {
        return errno == ENOENT ? "none yet" : "cannot be opened (or is a symlink)";
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
    if (!ok) {
        return !S_ISREG(st.st_mode) ? "not a regular file"
               : own && (st.st_uid != geteuid() || (st.st_mode & 022) != 0)
                   ? "not this user's alone"
                   : "unreadable or too large";
    }
    const char* why = elr_parse(g_record, got, &g_view);
    return why != 0 ? why : g_view.request != request ? "of another request" : 0;
}

/* The first key path that no longer has its recorded identity (or absence); 0 when the key
 * holds. */
static const char* key_changed(void) {
    for (uint32_t i = 0; i < g_view.n_ids; ++i) {
        struct elr_id id;
        struct stat st;
        elr_id_at(&g_view, i, &id);
        const int found = stat(g_view.paths[i], &st) == 0;
        if (id.absent != 0) {
            if (found || !elr_unseen(errno)) {
                return g_view.paths[i];
            }
            continue;
        }
        if (!found || (uint64_t)st.st_dev != id.dev || (uint64_t)st.st_ino != id.ino ||
            (uint64_t)st.st_size != id.size || (int64_t)st.st_mtim.tv_sec != id.mtime_sec ||
            (int64_t)st.st_mtim.tv_nsec != id.mtime_nsec ||
            (int64_t)st.st_ctim.tv_sec != id.ctime_sec ||
            (int64_t)st.st_ctim.tv_nsec != id.ctime_nsec) {
            return g_view.paths[i];
        }
    }
    return 0;
}

/* EMURUN_VERBOSE as the CLI reads it (verbosity_from_env): an integer, else 0. */
static long verbosity(void) {
    const char* v = env_value("EMURUN_VERBOSE");
    char* end = 0;
    long n = v != 0 ? strtol(v, &end, 10) : 0;
    return v != 0 && *end == '\0' ? n : 0;
}

/* With EMURUN_VERBOSE >= 1, the CLI's debug line on what became of the record at `path`:
 * "PREFIX[SHIM: ]debug: launch record PATH: WHAT[WHY]" (the one way to see a replay). */
static void debug_record(const char* path, const char* what, const char* why) {
    if (verbosity() < 1) {
        return;
    }
    put(g_prefix);
    if (g_shim != 0) {
        put(g_shim);
        put(": ");
    }
    put("debug: launch record ");
    put(path);
    put(": ");
    put(what);
    put(why != 0 ? why : "");
    put("\n");
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

/* Replay the record loaded from `path` when `why` (load_record's verdict) is 0 and its key
 * holds, saying so with EMURUN_VERBOSE. Returns why it was not replayed (a failed execve too),
 * said likewise. */
static const char* replay_if_valid(const char* path, const char* why, const char* argv0,
                                   char** args, int nargs) {
    const char* changed = why == 0 ? key_changed() : 0;
    if (why == 0 && changed == 0) {
        debug_record(path, "replayed", 0);
        replay(argv0, args, nargs);
        why = strerror(errno);
    }
    debug_record(path, changed != 0 ? "not replayed: changed: " : "not replayed: ",
                 changed != 0 ? changed : why);
    return changed != 0 ? "stale" : why;
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

/* A file of a shim's (.emurun-shims/NAME.rec or NAME.emurun) and its directory are writable by
 * their owner only, one owner for both: anyone else who could write either could make the shim
 * run any program. A symlink's own mode means nothing: its owner and its directory's count. */
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
    return lstat(path, &rec) == 0 && stat(dir, &d) == 0 &&
           (S_ISLNK(rec.st_mode) || (rec.st_mode & 022) == 0) && (d.st_mode & 022) == 0 &&
           rec.st_uid == d.st_uid;
}

static _Noreturn void die_unsafe(void) {
    die("launch record",
        "it, its emurun link or .emurun-shims is writable by others than its owner, so anyone "
        "could make this shim run any program",
        "chmod go-w the shim dir's .emurun-shims and its files, or recreate the shim with "
        "'emurun shim add'");
}

/* Hand the shim to the emurun its link (`link`, SHIMDIR/.emurun-shims/NAME.emurun) names, which
 * plans it again from its sidecar, refreshes its files and runs the tool:
 * EMURUN ELR_SHIM_REPLAN SHIM ARGV0 ARGS... `why`: why the record was not replayed. */
static _Noreturn void shim_handover(const char* self, const char* link, const char* why, int argc,
                                    char** argv) {
    static char emurun[PATH_MAX];
    struct stat st;
    if (lstat(link, &st) != 0) {
        die("launch record", why,
            "no emurun link beside it: recreate the shim with 'emurun shim add'");
    }
    if (!shim_record_safe(link)) {
        die_unsafe();
    }
    ssize_t n = readlink(link, emurun, sizeof emurun - 1);
    if (n <= 0 || emurun[0] != '/') {
        die(link, "not a symlink to an absolute path", "recreate the shim with 'emurun shim add'");
    }
    emurun[n] = '\0';
    char* out[(size_t)argc + 5];
    size_t k = 0;
    out[k++] = emurun;
    out[k++] = (char*)ELR_SHIM_REPLAN;
    out[k++] = (char*)self;
    out[k++] = argc > 0 ? argv[0] : (char*)self;
    for (int i = 1; i < argc; ++i) {
        out[k++] = argv[i];
    }
    out[k] = 0;
    execve(emurun, out, environ);
    die(emurun, strerror(errno), "emurun moved? recreate the shim with 'emurun shim add'");
}

/* Run the shim whose record is `rec` (SHIMDIR/.emurun-shims/NAME.rec, `base` its path without
 * ".rec"): replay the record when it is well formed, this shim's, and its key holds; else hand
 * over. Only a record others could have written is fatal. */
static _Noreturn void run_shim(const char* self, char* rec, size_t base, int argc, char** argv) {
    g_prefix = "emurun-shim: ";
    g_shim = self;
    struct stat st;
    if (lstat(rec, &st) == 0 && !shim_record_safe(rec)) {
        die_unsafe();
    }
    const char* why = load_record(rec, 0, elr_shim_request(self));
    why = replay_if_valid(rec, why, argc > 0 ? argv[0] : self, argv + 1, argc > 0 ? argc - 1 : 0);
    memcpy(rec + base, ELR_SHIM_EMURUN, sizeof ELR_SHIM_EMURUN);
    shim_handover(self, rec, why, argc, argv);
}

/* --- the emurun role ---------------------------------------------------------------------- */

static uint64_t hash_var(uint64_t h, const char* name) {
    const char* v = getenv(name);
    return v != 0 ? elr_hash_str(elr_hash_str(h, name), v) : elr_hash_str(h, "\1unset");
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

/* The hash of the request `exec WORDS[2..dd) -- PROG`: the words, the working directory, PATH,
 * EMURUN_QEMU_DIR and the CLI's identity (all a plan reads besides the files its key names). */
static int request_hash(char** argv, int dd, const struct stat* cli, uint64_t* out) {
    char cwd[PATH_MAX];
    if (getcwd(cwd, sizeof cwd) == 0) {
        return 0;
    }
    char version[] = {'v', (char)('0' + elr_version), '\0'};
    uint64_t h = elr_hash_str(elr_hash_str(ELR_HASH_INIT, "emurun launch record"), version);
    const int64_t id[] = {(int64_t)cli->st_dev, (int64_t)cli->st_ino, cli->st_mtim.tv_sec,
                          cli->st_mtim.tv_nsec, cli->st_ctim.tv_sec,  cli->st_ctim.tv_nsec};
    h = elr_hash(h, id, sizeof id);
    for (int i = 2; i <= dd + 1; ++i) {
        h = elr_hash_str(h, argv[i]);
    }
    *out = hash_var(hash_var(elr_hash_str(h, cwd), "PATH"), "EMURUN_QEMU_DIR");
    return 1;
}

/* Whether `st` (a parent of the cache dir) can be changed by no one but this user or root:
 * owned by one of them, and writable by no one else unless sticky (util::opened_to_others). */
static int parent_closed(const struct stat* st) {
    return (st->st_uid == geteuid() || st->st_uid == 0) &&
           ((st->st_mode & 022) == 0 || (st->st_mode & S_ISVTX) != 0);
}

/* Whether the CLI would use `dir` as its cache dir (util::own_cache_dir): a directory, not a
 * symlink, of this user that no one else can write, each parent of its real path closed. A
 * record in any other is never replayed: a fresh plan that needs the cache dir stops there. */
static int cache_dir_closed(const char* dir) {
    struct stat st;
    char real[PATH_MAX];
    if (lstat(dir, &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != geteuid() ||
        (st.st_mode & 022) != 0 || realpath(dir, real) == 0) {
        return 0;
    }
    for (char* cut = strrchr(real, '/'); cut != 0; cut = strrchr(real, '/')) {
        cut[cut == real ? 1 : 0] = '\0';
        if (lstat(real, &st) != 0 || !parent_closed(&st)) {
            return 0;
        }
        if (cut == real) {
            return 1;
        }
    }
    return 0;
}

/* The record file for request hash h in out: 0 when there is none to look for, 1 when it is
 * not looked for (*why says why), 2 when it is to be read. */
static int record_file(uint64_t h, char* out, size_t size, const char** why) {
    char dir[PATH_MAX];
    if (!cache_dir(dir, sizeof dir)) {
        return 0;
    }
    *why = "none yet";
    char name[32];
    static const char hex[] = "0123456789abcdef";
    for (int i = 0; i < 16; ++i) {
        name[i] = hex[(h >> (60 - 4 * i)) & 0xf];
    }
    memcpy(name + 16, ".rec", 5);
    if (!join3(out, size, dir, "/launch", "")) {
        return 0;
    }
    /* The records' dir: a directory of ours closed to others (util::own_cache_subdir) in a
     * cache dir the CLI would use; else none yet (the CLI makes it) or not ours. */
    struct stat st;
    const int closed = cache_dir_closed(dir);
    if (!closed || lstat(out, &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != geteuid() ||
        (st.st_mode & 022) != 0) {
        if (!closed && lstat(dir, &st) == 0) { /* a missing one: none yet */
            *why = "the cache directory is not this user's alone";
        }
        return join3(out, size, out, "/", name) ? 1 : 0;
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
    int found = 0;
    uint64_t request = 0;
    const char* none = 0;
    if (argc > 1 && strcmp(argv[1], "exec") == 0 && dd + 1 < argc &&
        request_hash(argv, dd, &cli_st, &request)) {
        found = record_file(request, record, sizeof record, &none);
    }
    if (found == 2) {
        const char* why = load_record(record, 1, request);
        if (why == 0 && g_view.argv0_at != ELR_NO_ARGV0) {
            why = "not an exec record";
        }
        (void)replay_if_valid(record, why, 0, argv + dd + 2, argc - dd - 2);
    } else if (found == 1) {
        debug_record(record, "not replayed: ", none);
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

int main(int argc, char** argv) {
    static char self[PATH_MAX], path[PATH_MAX];
    self_exe(self, sizeof self);
    const char* slash = strrchr(self, '/');
    const char* name = slash != 0 ? slash + 1 : self;
    const size_t dir_len = slash != 0 ? (size_t)(slash - self) : 0;
    if (dir_len + strlen(name) + 32 < sizeof path) { /* room for .json and .emurun too */
        memcpy(path, self, dir_len);
        join3(path + dir_len, sizeof path - dir_len, "/.emurun-shims/", name, ".rec");
        const size_t base = strlen(path) - 4;
        struct stat st;
        /* A shim: its record, its emurun link or its sidecar is there. */
        int shim = lstat(path, &st) == 0;
        memcpy(path + base, ELR_SHIM_EMURUN, sizeof ELR_SHIM_EMURUN);
        shim = shim || lstat(path, &st) == 0;
        memcpy(path + base, ".json", 6);
        shim = shim || lstat(path, &st) == 0;
        memcpy(path + base, ".rec", 5);
        if (shim) {
            run_shim(self, path, base, argc, argv);
        }
    }
    run_emurun(self, argc, argv);
}
