/* The fast exec entry's ELF reader and library check; see fast_elf.h. Each rule names the
 * library function it follows. Freestanding: raw system calls, no libc. */
#include "fast_elf.h"

#include "arch_table_fast.h"
#include "fast_sys.h"

#pragma GCC visibility push(hidden)

enum {
    k_head = 128,          /* the longest binfmt magic */
    k_max_phdrs = 64,      /* more: the CLI decides */
    k_max_dynamic = 8192,  /* bytes of the dynamic section read */
    k_max_strings = 80,    /* string entries (NEEDED, SONAME, RPATH, RUNPATH) of one file */
    k_max_libraries = 64,  /* libraries of one program */
    k_queue_bytes = 16384, /* paths waiting to be read */
};

#define FX_MAX_ELF_BYTES (1ul << 31) /* read_elf's max_bytes */

static int arch_count(void) {
    return (int)(sizeof k_fast_arches / sizeof k_fast_arches[0]);
}

static unsigned long get_uint(const unsigned char* p, int width, int big) {
    unsigned long v = 0;
    for (int i = 0; i < width; ++i) {
        v = v << 8 | p[big ? i : width - 1 - i];
    }
    return v;
}

/* Arch::matches: the binfmt magic under its mask. */
static int matches(int a, const unsigned char* h, long got) {
    const struct FastArch* r = &k_fast_arches[a];
    if (got < r->magic_len) {
        return 0;
    }
    for (int i = 0; i < r->magic_len; ++i) {
        if (((h[i] ^ r->magic[i]) & r->mask[i]) != 0) {
            return 0;
        }
    }
    return 1;
}

/* decide_arch: the first arch whose magic matches and whose ELF fields agree, -1 for none. */
static int arch_of(const unsigned char* h, long got) {
    const int is64 = h[4] == 2, big = h[5] == 2;
    const unsigned long machine = get_uint(h + 18, 2, big);
    const unsigned long flags = get_uint(h + (is64 ? 48 : 36), 4, big);
    for (int a = 0; a < arch_count(); ++a) {
        const struct FastArch* r = &k_fast_arches[a];
        if (matches(a, h, got) && r->elf_class == h[4] && r->elf_data == h[5] &&
            r->e_machine == machine && (flags & r->e_flags_mask) == r->e_flags_value) {
            return a;
        }
    }
    return -1;
}

/* An open regular file and its size: open_read + fstat. -1 when not a regular file. */
static long open_regular(const char* path, unsigned long* size) {
    const long fd = fx_syscall3(k_sys_open, (long)path, FX_O_RDONLY_CLOEXEC | FX_O_NONBLOCK, 0);
    struct fx_stat st;
    if (fd < 0) {
        return -1;
    }
    if (fx_syscall3(k_sys_fstat, fd, (long)&st, 0) != 0 ||
        (fx_mode(&st) & FX_S_IFMT) != FX_S_IFREG) {
        fx_syscall3(k_sys_close, fd, 0, 0);
        return -1;
    }
    *size = (unsigned long)fx_size(&st);
    return fd;
}

/* The NUL-terminated string at off within the limit bytes that follow it (as the library
 * requires) into out (FX_NAME_MAX). 0 when absent, empty-but-required or too long to tell. */
static int read_string(long fd, unsigned long off, unsigned long limit, char* out) {
    const unsigned long n = limit < FX_NAME_MAX ? limit : FX_NAME_MAX;
    if (n == 0 || !fx_pread_all(fd, out, n, off)) {
        return 0;
    }
    for (unsigned long i = 0; i < n; ++i) {
        if (out[i] == '\0') {
            return 1;
        }
    }
    return 0;
}

struct Segments {
    unsigned long load_vaddr[k_max_phdrs], load_off[k_max_phdrs], load_filesz[k_max_phdrs];
    int loads;
    int dyn; /* index of the first PT_DYNAMIC, -1 */
    unsigned long dyn_off, dyn_filesz;
};

/* read_segments: PT_LOAD, PT_INTERP and PT_DYNAMIC inside the file; the first interpreter. */
static int read_segments(long fd, const unsigned char* h, unsigned long size, struct FxElf* out,
                         struct Segments* seg) {
    const int is64 = h[4] == 2, big = h[5] == 2;
    const unsigned long phoff = get_uint(h + (is64 ? 32 : 28), is64 ? 8 : 4, big);
    const unsigned long entsize = get_uint(h + (is64 ? 54 : 42), 2, big);
    const unsigned long count = get_uint(h + (is64 ? 56 : 44), 2, big);
    unsigned char ph[k_max_phdrs * 56];
    if (count == 0 || count > k_max_phdrs || entsize != (is64 ? 56u : 32u) || phoff > size ||
        count * entsize > size - phoff || !fx_pread_all(fd, ph, count * entsize, phoff)) {
        return 0;
    }
    seg->loads = 0;
    seg->dyn = -1;
    for (unsigned long i = 0; i < count; ++i) {
        const unsigned char* p = ph + i * entsize;
        const unsigned long type = get_uint(p, 4, big);
        const unsigned long off = get_uint(p + (is64 ? 8 : 4), is64 ? 8 : 4, big);
        const unsigned long vaddr = get_uint(p + (is64 ? 16 : 8), is64 ? 8 : 4, big);
        const unsigned long filesz = get_uint(p + (is64 ? 32 : 16), is64 ? 8 : 4, big);
        if (type < 1 || type > 3) {
            continue;
        }
        if (off > size || filesz > size - off) {
            return 0;
        }
        if (type == 1) {
            seg->load_vaddr[seg->loads] = vaddr, seg->load_off[seg->loads] = off;
            seg->load_filesz[seg->loads++] = filesz;
        } else if (type == 3 && !out->has_interp) {
            if (!read_string(fd, off, filesz, out->interp) || out->interp[0] == '\0') {
                return 0;
            }
            out->has_interp = 1;
        } else if (type == 2 && seg->dyn < 0) {
            seg->dyn = (int)i, seg->dyn_off = off, seg->dyn_filesz = filesz;
        }
    }
    return 1;
}

/* strtab_offset: DT_STRTAB's file offset through the PT_LOAD holding it (a string table found
 * only through the section headers is left to the CLI). */
static int strtab_offset(const struct Segments* seg, unsigned long vaddr, unsigned long strsz,
                         unsigned long* off) {
    for (int i = 0; i < seg->loads; ++i) {
        const unsigned long lv = seg->load_vaddr[i], lf = seg->load_filesz[i];
        if (vaddr >= lv && vaddr - lv < lf) {
            if (strsz > lf - (vaddr - lv)) {
                return 0;
            }
            *off = seg->load_off[i] + (vaddr - lv);
            return 1;
        }
    }
    return 0;
}

/* list += ":" + value (a list of search paths, as split_path_list joins them); 0 when too long. */
static int append_list(char* list, const char* value) {
    unsigned long n = es_len(list);
    const unsigned long vl = es_len(value);
    if (n + 1 + vl + 1 > FX_NAME_MAX) {
        return 0;
    }
    if (n > 0) {
        list[n++] = ':';
    }
    for (unsigned long i = 0; i <= vl; ++i) {
        list[n + i] = value[i];
    }
    return 1;
}

/* read_dynamic: the entries up to DT_NULL, then every string entry checked and the needed
 * names and search-path presence kept. */
static int read_dynamic(long fd, int is64, int big, const struct Segments* seg, struct FxElf* out) {
    unsigned char dyn[k_max_dynamic];
    const unsigned long entsize = is64 ? 16 : 8, w = entsize / 2;
    const unsigned long count = seg->dyn_filesz / entsize;
    if (count * entsize > sizeof dyn || !fx_pread_all(fd, dyn, count * entsize, seg->dyn_off)) {
        return 0;
    }
    unsigned long tags[k_max_strings], refs[k_max_strings], strtab = 0, strsz = 0;
    int n = 0, have_strtab = 0, have_strsz = 0, ended = 0;
    for (unsigned long i = 0; i < count && !ended; ++i) {
        const unsigned long tag = get_uint(dyn + i * entsize, (int)w, big);
        const unsigned long val = get_uint(dyn + i * entsize + w, (int)w, big);
        ended = tag == 0;
        if (tag == 1 || tag == 14 || tag == 15 || tag == 29) {
            if (n == k_max_strings) {
                return 0;
            }
            tags[n] = tag, refs[n++] = val;
        } else if (tag == 5) {
            strtab = val, have_strtab = 1;
        } else if (tag == 10) {
            strsz = val, have_strsz = 1;
        }
    }
    if (!ended || n == 0) {
        return ended;
    }
    unsigned long base = 0;
    if (!have_strtab || !have_strsz || !strtab_offset(seg, strtab, strsz, &base)) {
        return 0;
    }
    out->needed_count = 0;
    for (int i = 0; i < n; ++i) {
        char s[FX_NAME_MAX];
        if (refs[i] >= strsz || !read_string(fd, base + refs[i], strsz - refs[i], s)) {
            return 0;
        }
        if ((tags[i] == 15 || tags[i] == 29) && s[0] != '\0' &&
            !append_list(tags[i] == 29 ? out->runpath : out->rpath, s)) {
            return 0;
        }
        if (tags[i] == 1) {
            if (out->needed_count == FX_MAX_NEEDED) {
                return 0;
            }
            char* d = out->needed[out->needed_count++];
            for (int k = 0; (d[k] = s[k]) != '\0'; ++k) {
            }
        }
    }
    return 1;
}

int fx_read_elf(const char* path, struct FxElf* out) {
    unsigned long size = 0;
    const long fd = open_regular(path, &size);
    if (fd < 0) {
        return 0;
    }
    unsigned char h[k_head];
    const long got = fx_syscall4(k_sys_pread, fd, (long)h, sizeof h, 0);
    struct Segments seg;
    out->arch = -1, out->has_interp = 0, out->needed_count = 0;
    out->runpath[0] = '\0', out->rpath[0] = '\0';
    int ok = size <= FX_MAX_ELF_BYTES && got >= 64 && h[0] == 0x7f && h[1] == 'E' && h[2] == 'L' &&
             h[3] == 'F' && (h[4] == 1 || h[4] == 2) && (h[5] == 1 || h[5] == 2) &&
             read_segments(fd, h, size, out, &seg);
    if (ok && seg.dyn >= 0) {
        ok = read_dynamic(fd, h[4] == 2, h[5] == 2, &seg, out);
    }
    if (ok) {
        out->arch = arch_of(h, got);
    }
    fx_syscall3(k_sys_close, fd, 0, 0);
    return ok;
}

const char* fx_arch_qemu(int a) {
    return k_fast_arches[a].qemu;
}

/* find_arch: arch b's name or one of its aliases ("|a|b|"). */
static int names_arch(int b, const char* name) {
    const char* al = k_fast_arches[b].aliases;
    const unsigned long n = es_len(name);
    if (fx_eq(k_fast_arches[b].name, name)) {
        return 1;
    }
    for (unsigned long i = 0; n > 0 && al[i] != '\0'; ++i) {
        unsigned long j = 0;
        while (j < n && al[i + 1 + j] == name[j]) {
            ++j;
        }
        if (al[i] == '|' && j == n && al[i + 1 + j] == '|') {
            return 1;
        }
    }
    return 0;
}

int fx_find_arch(const char* name) {
    char lower[64];
    unsigned long n = 0;
    for (; name[n] != '\0'; ++n) {
        if (n + 1 == sizeof lower) {
            return -1;
        }
        lower[n] = name[n] >= 'A' && name[n] <= 'Z' ? (char)(name[n] - 'A' + 'a') : name[n];
    }
    lower[n] = '\0';
    for (int a = 0; a < arch_count(); ++a) {
        if (names_arch(a, lower)) {
            return a;
        }
    }
    return -1;
}

int fx_runs_natively(int a) {
    struct {
        char f[6][65];
    } u;
    if (fx_syscall3(k_sys_uname, (long)&u, 0, 0) != 0) {
        return 1;
    }
    for (int h = 0; h < arch_count(); ++h) {
        if (names_arch(h, u.f[4])) {
            return h == a ||
                   (fx_eq(k_fast_arches[h].name, "x86_64") && fx_eq(k_fast_arches[a].name, "i386"));
        }
    }
    return 1;
}

/* dst (FX_PATH_MAX) = dir / name (path_join.h); 0 when too long. */
static int join(char* dst, const char* dir, const char* name) {
    return es_join(dst, dir, es_len(dir), name);
}

static int exists(const char* path) {
    struct fx_stat st;
    return fx_stat_of(path, &st);
}

/* is_object_of: a regular file whose first 64 bytes match arch a's magic (1), else 0. */
static int is_object_of(const char* path, int a) {
    unsigned long size = 0;
    const long fd = open_regular(path, &size);
    if (fd < 0) {
        return 0;
    }
    unsigned char h[64];
    const long got = fx_syscall4(k_sys_pread, fd, (long)h, sizeof h, 0);
    fx_syscall3(k_sys_close, fd, 0, 0);
    return got >= 20 && matches(a, h, got);
}

/* A path whose components lexically_relative compares as written: no empty, "." or ".."
 * component, no trailing '/' (the root "/" itself is fine). */
static int plain_path(const char* p) {
    const unsigned long n = es_len(p);
    if (n == 0 || (n > 1 && p[n - 1] == '/')) {
        return 0;
    }
    for (unsigned long i = 0; i < n; ++i) {
        const int start = i == 0 || p[i - 1] == '/';
        if ((i > 0 && p[i] == '/' && p[i - 1] == '/') ||
            (start && p[i] == '.' && (p[i + 1] == '/' || p[i + 1] == '\0')) ||
            (start && p[i] == '.' && p[i + 1] == '.' && (p[i + 2] == '/' || p[i + 2] == '\0'))) {
            return 0;
        }
    }
    return 1;
}

/* default_sysroots: /usr/TRIPLET (when it has lib/), then / (when /lib/TRIPLET or
 * /usr/lib/TRIPLET exist), into roots; how many. */
static int default_roots(int a, char (*roots)[FX_PATH_MAX]) {
    const char* t = k_fast_arches[a].triplet;
    char probe[FX_PATH_MAX];
    int n = 0;
    if (t[0] == '\0' || !join(roots[0], "/usr", t) || !join(probe, roots[0], "lib")) {
        return 0;
    }
    n += exists(probe);
    if ((join(probe, "/lib", t) && exists(probe)) ||
        (join(probe, "/usr/lib", t) && exists(probe))) {
        join(roots[n++], "", "/");
    }
    return n;
}

/* A candidate that exists and is an object of arch a (find_library's test). */
static int candidate(const char* dir, const char* name, int a, char* found) {
    return join(found, dir, name) && exists(found) && is_object_of(found, a);
}

/* find_library with search_dirs for one name: the object's RUNPATH (else RPATH) entries first,
 * each absolute one under each root and then on the host; then each root's default_lib_dirs.
 * The first candidate that exists and is an object of arch a, in found: 1 when it is under
 * roots[0] or on the host; 0 when it is missing or under another root (used_sysroots would
 * then name two: a merged prefix), or an entry is one this code leaves to the CLI ($ORIGIN,
 * relative, empty). */
static int find_library(char (*roots)[FX_PATH_MAX], int n_roots, int a, const char* list,
                        const char* name, char* found) {
    char entry[FX_NAME_MAX], dir[FX_PATH_MAX];
    for (int more = *list != '\0'; more;) { /* "/a:" has an empty last entry, as "/a::/b" one */
        unsigned long len = 0;
        while (list[len] != '\0' && list[len] != ':') {
            ++len;
        }
        if (len == 0 || list[0] != '/' || list[1] == '/') {
            return 0;
        }
        for (unsigned long i = 0; i < len; ++i) {
            entry[i] = list[i];
        }
        entry[len] = '\0';
        for (unsigned long i = 0; i + 6 <= len; ++i) {
            if (entry[i] == 'O' && entry[i + 1] == 'R' && entry[i + 2] == 'I' &&
                entry[i + 3] == 'G' && entry[i + 4] == 'I' && entry[i + 5] == 'N') {
                return 0;
            }
        }
        for (int r = 0; r < n_roots; ++r) {
            if (join(dir, roots[r], entry + 1) && candidate(dir, name, a, found)) {
                return r == 0;
            }
        }
        if (candidate(entry, name, a, found)) {
            return 1;
        }
        more = list[len] == ':';
        list += len + more;
    }
    char dirs[6][48];
    const char* t = k_fast_arches[a].triplet;
    const int is64 = k_fast_arches[a].elf_class == 2;
    if (es_len(t) > 38 || !join(dirs[0], "lib", t) || !join(dirs[1], "usr/lib", t)) {
        return 0;
    }
    join(dirs[2], "", "lib"), join(dirs[3], "", "usr/lib");
    join(dirs[4], "", is64 ? "lib64" : "lib32"),
        join(dirs[5], "", is64 ? "usr/lib64" : "usr/lib32");
    for (int r = 0; r < n_roots; ++r) {
        for (int i = 0; i < 6; ++i) {
            if (join(dir, roots[r], dirs[i]) && candidate(dir, name, a, found)) {
                return r == 0;
            }
        }
    }
    return 0;
}

/* Whether name is among the first n of seen. */
static int seen_before(char (*seen)[FX_NAME_MAX], int n, const char* name) {
    for (int i = 0; i < n; ++i) {
        if (fx_eq(seen[i], name)) {
            return 1;
        }
    }
    return 0;
}

/* resolve_libraries' walk, everything found under roots[0]: every DT_NEEDED name of the program,
 * then of each library found (breadth first, each name once), found by find_library; 0 when one is
 * missing, a name has '/', or anything this code cannot read or leaves to the CLI. */
static int libraries_found(char (*roots)[FX_PATH_MAX], int n_roots, const struct FxElf* prog,
                           int a) {
    char seen[k_max_libraries][FX_NAME_MAX];
    char queue[k_queue_bytes]; /* found paths, NUL-separated */
    unsigned long head = 0, tail = 0;
    int n_seen = 0;
    struct FxElf lib;
    const struct FxElf* cur = prog;
    for (;;) {
        const char* list = cur->runpath[0] != '\0' ? cur->runpath : cur->rpath;
        for (unsigned i = 0; i < cur->needed_count; ++i) {
            const char* name = cur->needed[i];
            char found[FX_PATH_MAX];
            if (seen_before(seen, n_seen, name)) {
                continue;
            }
            for (const char* c = name; *c != '\0'; ++c) {
                if (*c == '/') {
                    return 0;
                }
            }
            if (n_seen == k_max_libraries || !find_library(roots, n_roots, a, list, name, found) ||
                tail + es_len(found) + 1 > sizeof queue) {
                return 0;
            }
            join(seen[n_seen++], "", name);
            join(queue + tail, "", found);
            tail += es_len(found) + 1;
        }
        /* The next library that is an object of some arch (read_elf's arch): its needs next. */
        do {
            if (head == tail) {
                return 1;
            }
            if (!fx_read_elf(queue + head, &lib)) {
                return 0;
            }
            head += es_len(queue + head) + 1;
        } while (lib.arch < 0);
        if (lib.arch != a) {
            return 0;
        }
        cur = &lib;
    }
}

int fx_sysroot_ok(const char* root) {
    struct fx_stat st;
    return fx_stat_of(root, &st) && (fx_mode(&st) & FX_S_IFMT) == FX_S_IFDIR;
}

int fx_library_prefix(const struct FxElf* elf, const char* root, char* prefix) {
    char roots[2][FX_PATH_MAX];
    int n = 1;
    if (root != 0) {
        /* Plain, so that used_sysroots sees it as written. */
        if (!fx_sysroot_ok(root) || !plain_path(root) || !join(roots[0], "", root)) {
            return 0;
        }
    } else if ((n = default_roots(elf->arch, roots)) == 0) {
        return 0;
    }
    /* lookup_interpreter: the first root holding the interpreter's path (without its leading
     * '/'); it must be roots[0], the only one used. */
    char interp[FX_PATH_MAX];
    if (elf->interp[0] != '/' || elf->interp[1] == '/' ||
        !join(interp, roots[0], elf->interp + 1) || !exists(interp) ||
        !is_object_of(interp, elf->arch)) {
        return 0;
    }
    return libraries_found(roots, n, elf, elf->arch) && join(prefix, "", roots[0]);
}
