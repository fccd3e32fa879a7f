/* A launch record: one launch plan (lib/launch, plan_launch) as a flat file that the small
 * static launcher (tools/emurun-shim/launcher.c) replays without deciding anything. Written by
 * the C++ library only (launch_record.cpp); read by the launcher, the unit tests and the fuzz
 * target through elr_parse() below, the one reader. C and C++ both compile this header.
 *
 * Layout (native byte order and sizes: a record is read on the machine that wrote it):
 *   struct elr_header                      48 bytes: counts, the request hash, the checksum
 *   struct elr_id[n_ids]                   64 bytes each: the identity each key path had
 *   strings, each NUL-terminated, in this order, the last NUL the record's last byte:
 *     exe                                  the file to execve (absolute)
 *     argv[n_argv]                         the argv prefix; the caller's argv[0] is inserted at
 *                                          index argv0_at (ELR_NO_ARGV0: the prefix has its
 *                                          own), the caller's arguments appended
 *     env[n_env]                           "NAME=VALUE" set on top of the caller's environment
 *     path[n_ids]                          the key: a file or directory the plan was decided
 *                                          from (absolute); the record is valid while each has
 *                                          the identity (dev, inode, size, mtime, ctime) of its
 *                                          id, or, for an id marked absent, while it does not
 *                                          exist or cannot be reached (stat fails as
 *                                          elr_unseen says: no search finds anything there)
 * The header's `request` is a hash of the request the record answers (elr_hash: for exec, the
 * launcher's hash of the command, which also names the file; for a shim, elr_shim_request of
 * the shim's path): the launcher replays a record only for the request it computes itself, so
 * a record copied over another is planned again. `checksum` is elr_hash of every byte after
 * the header. Anything else - another magic or version, a checksum that does not match, a
 * count over its limit, a string running past the end, bytes after the last string, an empty
 * exe, a relative path, an env entry without a name - makes elr_parse() refuse the record, and
 * the launcher hands over to the C++ CLI, which plans again and writes a fresh record. */
#ifndef EMURUN_LAUNCH_RECORD_H
#define EMURUN_LAUNCH_RECORD_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define ELR_MAGIC "EMURUNLR"
#define ELR_NO_ARGV0 0xffffffffu
/* The variable the launcher sets, for the CLI only, when it found no valid record: the record
 * file `emurun exec` is to write (the CLI removes it from the environment it passes on). */
#define ELR_RECORD_ENV "EMURUN_LAUNCH_RECORD"
/* argv[1] of the CLI when a shim's record is stale: emurun-cli ELR_SHIM_REPLAN SHIM ARGV0 ARGS.
 * The emurun a shim hands over to is the symlink SHIMDIR/.emurun-shims/NAME ELR_SHIM_EMURUN,
 * beside its record (not in it: a corrupt record or one of another version is handed over too). */
#define ELR_SHIM_REPLAN "--emurun-shim-replan"
#define ELR_SHIM_EMURUN ".emurun"

enum {
    elr_version = 2,
    elr_max_size = 1 << 18,
    elr_max_ids = 512,
    elr_max_argv = 256,
    elr_max_env = 256,
};

struct elr_header {
    char magic[8];
    uint32_t version;
    uint32_t size; /* of the whole record */
    uint32_t n_ids;
    uint32_t n_argv;
    uint32_t n_env;
    uint32_t argv0_at;
    uint64_t request;  /* the hash of the request the record answers */
    uint64_t checksum; /* elr_hash of the bytes after the header */
};

struct elr_id {
    uint64_t dev;
    uint64_t ino;
    uint64_t size;
    int64_t mtime_sec;
    int64_t mtime_nsec;
    int64_t ctime_sec; /* a file rewritten in place with its size and mtime kept (cp; touch -r) */
    int64_t ctime_nsec;
    uint64_t absent; /* 1: the path did not exist (a place a search tried); the rest is 0 */
};

/* Whether stat's errno `err` says that nothing is at a path for any search: it does not exist,
 * a dir on the way is not a dir or cannot be searched by this user, the path loops or is too
 * long. A key path that fails so is keyed (and holds) as absent. */
static inline int elr_unseen(int err) {
    return err == ENOENT || err == ENOTDIR || err == EACCES || err == ELOOP || err == ENAMETOOLONG;
}

#define ELR_HASH_INIT 0xcbf29ce484222325ull

/* FNV-1a, 64 bits, of n bytes at data, continuing from h (ELR_HASH_INIT to start): the one
 * hash of records (their checksum, the launcher's request hash and record name). */
static inline uint64_t elr_hash(uint64_t h, const void* data, size_t n) {
    const unsigned char* p = (const unsigned char*)data;
    for (size_t i = 0; i < n; ++i) {
        h ^= p[i];
        h *= 0x100000001b3ull;
    }
    return h;
}

/* elr_hash of the string s and its NUL. */
static inline uint64_t elr_hash_str(uint64_t h, const char* s) {
    return elr_hash(h, s, strlen(s) + 1);
}

/* The request hash of the shim at `shim` (absolute, as /proc/self/exe names it). */
static inline uint64_t elr_shim_request(const char* shim) {
    return elr_hash_str(elr_hash_str(ELR_HASH_INIT, "emurun shim"), shim);
}

/* A parsed record: pointers into the caller's buffer, which must outlive the view. */
struct elr_view {
    uint32_t n_ids, n_argv, n_env, argv0_at;
    uint64_t request;
    const unsigned char* ids; /* n_ids packed struct elr_id: read with elr_id_at() */
    const char* exe;
    const char* argv[elr_max_argv];
    const char* env[elr_max_env];
    const char* paths[elr_max_ids];
};

/* The next NUL-terminated string at buf[*at] (below end), *at moved past it; 0 when none. */
static inline const char* elr_next(const unsigned char* buf, size_t end, size_t* at) {
    const size_t start = *at;
    const void* nul = start < end ? memchr(buf + start, '\0', end - start) : 0;
    if (nul == 0) {
        return 0;
    }
    *at = (size_t)((const unsigned char*)nul - buf) + 1;
    return (const char*)(buf + start);
}

/* Parse the `size` bytes at `buf` into *v. NULL when the record is well formed, else a short
 * reason. Reads nothing outside buf[0 .. size). */
static inline const char* elr_parse(const unsigned char* buf, size_t size, struct elr_view* v) {
    struct elr_header h;
    if (size < sizeof h || size > (size_t)elr_max_size) {
        return "size out of range";
    }
    memcpy(&h, buf, sizeof h);
    if (memcmp(h.magic, ELR_MAGIC, 8) != 0) {
        return "not a launch record";
    }
    if (h.version != (uint32_t)elr_version) {
        return "another version";
    }
    if (h.size != size) {
        return "truncated or extended";
    }
    if (elr_hash(ELR_HASH_INIT, buf + sizeof h, size - sizeof h) != h.checksum) {
        return "checksum mismatch";
    }
    if (h.n_ids > (uint32_t)elr_max_ids || h.n_argv > (uint32_t)elr_max_argv ||
        h.n_env > (uint32_t)elr_max_env) {
        return "a count over its limit";
    }
    if (h.argv0_at != ELR_NO_ARGV0 ? h.argv0_at > h.n_argv : h.n_argv == 0) {
        return "no argv[0]";
    }
    size_t at = sizeof h + (size_t)h.n_ids * sizeof(struct elr_id);
    if (at > size) {
        return "identities past the end";
    }
    v->n_ids = h.n_ids;
    v->n_argv = h.n_argv;
    v->n_env = h.n_env;
    v->argv0_at = h.argv0_at;
    v->request = h.request;
    v->ids = buf + sizeof h;
    v->exe = elr_next(buf, size, &at);
    if (v->exe == 0 || v->exe[0] != '/') {
        return "no absolute exe";
    }
    for (uint32_t i = 0; i < h.n_argv; ++i) {
        if ((v->argv[i] = elr_next(buf, size, &at)) == 0) {
            return "argv past the end";
        }
    }
    for (uint32_t i = 0; i < h.n_env; ++i) {
        const char* e = v->env[i] = elr_next(buf, size, &at);
        if (e == 0 || e[0] == '=' || strchr(e, '=') == 0) {
            return "an environment entry without a name";
        }
    }
    for (uint32_t i = 0; i < h.n_ids; ++i) {
        const char* p = v->paths[i] = elr_next(buf, size, &at);
        if (p == 0 || p[0] != '/') {
            return "a key path that is not absolute";
        }
    }
    return at == size ? 0 : "bytes after the last string";
}

/* Identity i of a parsed record. */
static inline void elr_id_at(const struct elr_view* v, uint32_t i, struct elr_id* out) {
    memcpy(out, v->ids + (size_t)i * sizeof *out, sizeof *out);
}

#endif
