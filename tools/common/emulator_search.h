/* The emulator search of emurun's two C programs, the shim launcher (tools/emurun-shim) and
 * the fast exec entry (tools/emurun/fast_exec.c), written once: emurun's one PATH rule
 * (lib/util/path.hpp, execvp's: an empty entry is the current directory) and lib/qemu's
 * find_emulator (qemu-Q-static in $EMURUN_QEMU_DIR, PATH, /usr/bin, then qemu-Q the same way;
 * the path made absolute). Header-only and freestanding - no libc call, no static data - as
 * the fast entry runs before libc exists. The includer defines, before including it:
 *     static int es_executable(const char* path);          a regular file it may execute
 *     static long es_getcwd(char* buf, unsigned long size); > 0 on success
 * integration.shim and integration.fast_exec check both programs against `emurun exec`. */
#ifndef EMURUN_EMULATOR_SEARCH_H
#define EMURUN_EMULATOR_SEARCH_H

#include "path_join.h"

#define ES_DEFAULT_PATH "/usr/local/bin:/usr/bin:/bin" /* util::k_default_path */

/* The first dir of the ':'-separated list (an empty entry is ".") holding an executable name,
 * as dir/name in out (ES_PATH_MAX); 0 when none does. */
static int es_search(const char* list, const char* name, char* out) {
    for (;;) {
        unsigned long len = 0;
        while (list[len] != '\0' && list[len] != ':') {
            ++len;
        }
        if ((len == 0 ? es_join(out, ".", 1, name) : es_join(out, list, len, name)) &&
            es_executable(out)) {
            return 1;
        }
        if (list[len] == '\0') {
            return 0;
        }
        list += len + 1;
    }
}

/* "qemu-Q" or "qemu-Q-static" in out (64 bytes); 0 when Q is too long. */
static int es_emulator_name(char* out, const char* qemu, int is_static) {
    static const char k_static[] = "-static"; /* an array: no pointer to relocate */
    const unsigned long ql = es_len(qemu);
    if (ql + 13 > 64) {
        return 0;
    }
    unsigned long n = 0;
    out[n++] = 'q', out[n++] = 'e', out[n++] = 'm', out[n++] = 'u', out[n++] = '-';
    for (unsigned long i = 0; i < ql; ++i) {
        out[n++] = qemu[i];
    }
    for (unsigned long i = 0; is_static && k_static[i] != '\0'; ++i) {
        out[n++] = k_static[i];
    }
    out[n] = '\0';
    return 1;
}

/* find_emulator for qemu's CPU name Q ("aarch64"): a static emulator anywhere beats a dynamic
 * one earlier in the search. qemu_dir is $EMURUN_QEMU_DIR (0 or empty: unset), path is $PATH
 * (0: unset). The absolute path in out (ES_PATH_MAX); 0 when none is found. */
static int es_find_emulator(const char* qemu_dir, const char* path, const char* qemu, char* out) {
    char name[64], found[ES_PATH_MAX];
    int hit = 0;
    for (int is_static = 1; is_static >= 0 && !hit; --is_static) {
        if (!es_emulator_name(name, qemu, is_static)) {
            return 0;
        }
        hit = (qemu_dir != 0 && qemu_dir[0] != '\0' && es_search(qemu_dir, name, found)) ||
              es_search(path != 0 ? path : ES_DEFAULT_PATH, name, found) ||
              es_search("/usr/bin", name, found);
    }
    if (!hit) {
        return 0;
    }
    if (found[0] == '/') {
        return es_join(out, "", 0, found);
    }
    char cwd[ES_PATH_MAX];
    if (es_getcwd(cwd, sizeof cwd) <= 0 || cwd[0] != '/') {
        return 0;
    }
    return es_join(out, cwd, es_len(cwd), found);
}

#endif
