/* std::filesystem's `dir / name` for emurun's C programs (the shim launcher, the fast exec
 * entry): freestanding, no libc call, no static data. */
#ifndef EMURUN_PATH_JOIN_H
#define EMURUN_PATH_JOIN_H

#define ES_PATH_MAX 4096

static unsigned long es_len(const char* s) {
    unsigned long n = 0;
    while (s[n] != '\0') {
        ++n;
    }
    return n;
}

/* dst (ES_PATH_MAX) = the first dir_len bytes of dir, "/" unless dir ends with one (as
 * std::filesystem's `dir / name`), name; 0 when too long. dst may be dir. */
static int es_join(char* dst, const char* dir, unsigned long dir_len, const char* name) {
    const unsigned long nl = es_len(name);
    const int slash = dir_len > 0 && dir[dir_len - 1] != '/';
    if (dir_len + (unsigned long)slash + nl + 1 > ES_PATH_MAX) {
        return 0;
    }
    for (unsigned long i = 0; i < dir_len; ++i) {
        dst[i] = dir[i];
    }
    if (slash) {
        dst[dir_len] = '/';
    }
    for (unsigned long i = 0; i <= nl; ++i) {
        dst[dir_len + (unsigned long)slash + i] = name[i];
    }
    return 1;
}

#endif
