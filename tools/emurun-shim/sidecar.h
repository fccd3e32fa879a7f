/* The shim sidecar (SHIMDIR/.emurun-shims/NAME.json, format 1) parsed in place: a JSON object
 * with "format" (1), "target", "native", "emulator", optional "ld_prefix" and "cpu", and "env"
 * (an object of strings). Other members ("name", "arch", future ones) are skipped. Strings are
 * decoded inside the caller's buffer; nothing is allocated. */
#ifndef EMURUN_SHIM_SIDECAR_H
#define EMURUN_SHIM_SIDECAR_H

#include <stddef.h>

enum { k_sidecar_max = 65536, k_sidecar_env_max = 256 };

struct SidecarVar {
    const char* key;
    const char* value;
};

struct Sidecar {
    const char* target;
    const char* emulator;
    const char* ld_prefix; /* NULL when absent */
    const char* cpu;       /* NULL when absent */
    int native;
    struct SidecarVar env[k_sidecar_env_max];
    size_t env_count;
};

/* Parse the NUL-terminated `text` (modified in place). Returns NULL on success, else a short
 * reason ("not valid JSON at byte 17", "unsupported format (want 1)", "missing \"target\""). */
const char* sidecar_parse(char* text, struct Sidecar* out);

/* True when the environment entry "K=V" names a variable the sidecar sets. */
int sidecar_sets(const struct Sidecar* sc, const char* entry);

#endif
