/* A JSON reader for exactly what the shim sidecar holds (see sidecar.h): strict RFC 8259 syntax,
 * strings decoded in place (an escape never grows: "\u00e9" is 6 bytes in, 2 out), no heap. */
#include "sidecar.h"

#include <string.h>

enum { k_max_depth = 32, k_format = 1 };

struct Parser {
    char* start;
    char* p;
    const char* error;
};

static char g_error[64]; /* "not valid JSON at byte N" */

static int fail_at(struct Parser* ps) {
    if (ps->error == NULL) {
        static const char prefix[] = "not valid JSON at byte ";
        char digits[24];
        size_t n = 0;
        unsigned long at = (unsigned long)(ps->p - ps->start);
        do {
            digits[n++] = (char)('0' + at % 10);
            at /= 10;
        } while (at > 0);
        memcpy(g_error, prefix, sizeof prefix - 1);
        for (size_t i = 0; i < n; ++i) {
            g_error[sizeof prefix - 1 + i] = digits[n - 1 - i];
        }
        g_error[sizeof prefix - 1 + n] = '\0';
        ps->error = g_error;
    }
    return 0;
}

static int fail_with(struct Parser* ps, const char* why) {
    if (ps->error == NULL) {
        ps->error = why;
    }
    return 0;
}

static void skip_ws(struct Parser* ps) {
    while (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\n' || *ps->p == '\r') {
        ++ps->p;
    }
}

static int expect(struct Parser* ps, char c) {
    skip_ws(ps);
    if (*ps->p != c) {
        return fail_at(ps);
    }
    ++ps->p;
    return 1;
}

static long hex4(const char* s) {
    long v = 0;
    for (int i = 0; i < 4; ++i) {
        char c = s[i];
        int d = c >= '0' && c <= '9'   ? c - '0'
                : c >= 'a' && c <= 'f' ? c - 'a' + 10
                : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                       : -1;
        if (d < 0) {
            return -1;
        }
        v = v * 16 + d;
    }
    return v;
}

static char* put_utf8(char* w, long cp) {
    if (cp < 0x80) {
        *w++ = (char)cp;
    } else if (cp < 0x800) {
        *w++ = (char)(0xC0 | (cp >> 6));
        *w++ = (char)(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
        *w++ = (char)(0xE0 | (cp >> 12));
        *w++ = (char)(0x80 | ((cp >> 6) & 0x3F));
        *w++ = (char)(0x80 | (cp & 0x3F));
    } else {
        *w++ = (char)(0xF0 | (cp >> 18));
        *w++ = (char)(0x80 | ((cp >> 12) & 0x3F));
        *w++ = (char)(0x80 | ((cp >> 6) & 0x3F));
        *w++ = (char)(0x80 | (cp & 0x3F));
    }
    return w;
}

/* \uXXXX at r (after the 'u'), with a following low surrogate when XXXX is a high one.
 * Returns the code point and advances *r past what it used; -1 when malformed or NUL. */
static long unicode_escape(const char** r) {
    long cp = hex4(*r);
    *r += 4;
    if (cp >= 0xDC00 && cp <= 0xDFFF) {
        return -1;
    }
    if (cp >= 0xD800 && cp <= 0xDBFF) {
        if ((*r)[0] != '\\' || (*r)[1] != 'u') {
            return -1;
        }
        long lo = hex4(*r + 2);
        if (lo < 0xDC00 || lo > 0xDFFF) {
            return -1;
        }
        *r += 6;
        cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
    }
    return cp > 0 ? cp : -1; /* a NUL cannot be passed to execve */
}

static char simple_escape(char c) {
    switch (c) {
    case '"':
    case '\\':
    case '/':
        return c;
    case 'b':
        return '\b';
    case 'f':
        return '\f';
    case 'n':
        return '\n';
    case 'r':
        return '\r';
    case 't':
        return '\t';
    default:
        return 0;
    }
}

/* A string at ps->p, decoded in place and NUL-terminated; NULL on error. */
static char* parse_string(struct Parser* ps) {
    if (!expect(ps, '"')) {
        return NULL;
    }
    char* out = ps->p;
    char* w = ps->p;
    const char* r = ps->p;
    for (;;) {
        unsigned char c = (unsigned char)*r;
        if (c == '"') {
            ps->p = (char*)r + 1;
            *w = '\0'; /* w <= r: at worst on the closing quote, already passed */
            return out;
        }
        if (c < 0x20) { /* includes the terminating NUL: unterminated string */
            ps->p = (char*)r;
            fail_at(ps);
            return NULL;
        }
        if (c != '\\') {
            *w++ = (char)c;
            ++r;
            continue;
        }
        char e = r[1];
        r += 2;
        if (e == 'u') {
            long cp = unicode_escape(&r);
            if (cp < 0) {
                ps->p = (char*)r;
                fail_at(ps);
                return NULL;
            }
            w = put_utf8(w, cp);
        } else if ((*w = simple_escape(e)) != 0) {
            ++w;
        } else {
            ps->p = (char*)r - 1;
            fail_at(ps);
            return NULL;
        }
    }
}

static int match_word(struct Parser* ps, const char* word) {
    size_t n = strlen(word);
    if (strncmp(ps->p, word, n) != 0) {
        return 0;
    }
    ps->p += n;
    return 1;
}

/* A JSON number; *value gets its integer part when it is a plain integer, else -1. */
static int parse_number(struct Parser* ps, long* value) {
    char* p = ps->p;
    int integer = 1;
    long v = 0;
    if (*p == '-') {
        integer = 0;
        ++p;
    }
    if (*p < '0' || *p > '9' || (*p == '0' && p[1] >= '0' && p[1] <= '9')) {
        return fail_at(ps);
    }
    while (*p >= '0' && *p <= '9') {
        v = v < 100000000 ? v * 10 + (*p - '0') : v;
        ++p;
    }
    if (*p == '.' || *p == 'e' || *p == 'E') {
        integer = 0;
        p += *p == '.' ? 1 : 0;
        while ((*p >= '0' && *p <= '9') || *p == 'e' || *p == 'E' || *p == '+' || *p == '-') {
            ++p;
        }
    }
    ps->p = p;
    *value = integer ? v : -1;
    return 1;
}

static int skip_value(struct Parser* ps, int depth);

/* '{' or '[' then members until the closing bracket; objects have "key": before each value. */
static int skip_container(struct Parser* ps, int depth, char close) {
    ++ps->p;
    skip_ws(ps);
    if (*ps->p == close) {
        ++ps->p;
        return 1;
    }
    for (;;) {
        if (close == '}' && (parse_string(ps) == NULL || !expect(ps, ':'))) {
            return 0;
        }
        if (!skip_value(ps, depth + 1)) {
            return 0;
        }
        skip_ws(ps);
        if (*ps->p == close) {
            ++ps->p;
            return 1;
        }
        if (!expect(ps, ',')) {
            return 0;
        }
    }
}

static int skip_value(struct Parser* ps, int depth) {
    long ignored = 0;
    skip_ws(ps);
    if (depth > k_max_depth) {
        return fail_with(ps, "nested too deeply");
    }
    switch (*ps->p) {
    case '"':
        return parse_string(ps) != NULL;
    case '{':
        return skip_container(ps, depth, '}');
    case '[':
        return skip_container(ps, depth, ']');
    default:
        if (match_word(ps, "true") || match_word(ps, "false") || match_word(ps, "null")) {
            return 1;
        }
        return parse_number(ps, &ignored);
    }
}

static int parse_bool(struct Parser* ps, int* out) {
    skip_ws(ps);
    if (match_word(ps, "true")) {
        *out = 1;
        return 1;
    }
    if (match_word(ps, "false")) {
        *out = 0;
        return 1;
    }
    return fail_with(ps, "\"native\" is not true or false");
}

/* Opens a JSON object: 0 on error (named `why`), 1 when it is empty (consumed), 2 when members
 * follow. */
static int open_object(struct Parser* ps, const char* why) {
    if (!expect(ps, '{')) {
        return fail_with(ps, why);
    }
    skip_ws(ps);
    if (*ps->p == '}') {
        ++ps->p;
        return 1;
    }
    return 2;
}

/* The "env" object: string keys to string values. */
static int parse_env(struct Parser* ps, struct Sidecar* sc) {
    int opened = open_object(ps, "\"env\" is not an object");
    if (opened != 2) {
        return opened;
    }
    for (;;) {
        if (sc->env_count == k_sidecar_env_max) {
            return fail_with(ps, "\"env\" has too many variables");
        }
        struct SidecarVar* v = &sc->env[sc->env_count];
        if ((v->key = parse_string(ps)) == NULL || !expect(ps, ':')) {
            return 0;
        }
        skip_ws(ps);
        if (*ps->p != '"') {
            return fail_with(ps, "an \"env\" value is not a string");
        }
        if ((v->value = parse_string(ps)) == NULL) {
            return 0;
        }
        if (v->key[0] == '\0' || strchr(v->key, '=') != NULL) {
            return fail_with(ps, "an \"env\" name is empty or holds '='");
        }
        ++sc->env_count;
        skip_ws(ps);
        if (*ps->p == '}') {
            ++ps->p;
            return 1;
        }
        if (!expect(ps, ',')) {
            return 0;
        }
    }
}

/* A string member's value; `error` when it is not a string. */
static int member_string(struct Parser* ps, const char** out, const char* error) {
    skip_ws(ps);
    if (*ps->p != '"') {
        return fail_with(ps, error);
    }
    return (*out = parse_string(ps)) != NULL;
}

static int parse_member(struct Parser* ps, const char* key, struct Sidecar* sc, long* format) {
    if (strcmp(key, "format") == 0) {
        skip_ws(ps);
        return parse_number(ps, format);
    }
    if (strcmp(key, "target") == 0) {
        return member_string(ps, &sc->target, "\"target\" is not a string");
    }
    if (strcmp(key, "emulator") == 0) {
        return member_string(ps, &sc->emulator, "\"emulator\" is not a string");
    }
    if (strcmp(key, "ld_prefix") == 0) {
        return member_string(ps, &sc->ld_prefix, "\"ld_prefix\" is not a string");
    }
    if (strcmp(key, "cpu") == 0) {
        return member_string(ps, &sc->cpu, "\"cpu\" is not a string");
    }
    if (strcmp(key, "native") == 0) {
        return parse_bool(ps, &sc->native);
    }
    if (strcmp(key, "env") == 0) {
        return parse_env(ps, sc);
    }
    return skip_value(ps, 1);
}

static int parse_object(struct Parser* ps, struct Sidecar* sc, long* format) {
    int opened = open_object(ps, "not a JSON object");
    if (opened != 2) {
        return opened;
    }
    for (;;) {
        const char* key = parse_string(ps);
        if (key == NULL || !expect(ps, ':') || !parse_member(ps, key, sc, format)) {
            return 0;
        }
        skip_ws(ps);
        if (*ps->p == '}') {
            ++ps->p;
            return 1;
        }
        if (!expect(ps, ',')) {
            return 0;
        }
    }
}

static const char* check_complete(const struct Sidecar* sc, long format, int native_seen) {
    if (format != k_format) {
        return "unsupported format (want 1)";
    }
    if (sc->target == NULL || sc->target[0] == '\0') {
        return "missing \"target\"";
    }
    if (!native_seen) {
        return "missing \"native\"";
    }
    if (!sc->native && (sc->emulator == NULL || sc->emulator[0] == '\0')) {
        return "missing \"emulator\"";
    }
    return NULL;
}

const char* sidecar_parse(char* text, struct Sidecar* out) {
    memset(out, 0, sizeof *out);
    out->native = -1;
    struct Parser ps = {text, text, NULL};
    long format = 0;
    if (!parse_object(&ps, out, &format)) {
        return ps.error != NULL ? ps.error : "not valid JSON";
    }
    skip_ws(&ps);
    if (*ps.p != '\0') {
        fail_at(&ps);
        return ps.error;
    }
    int native_seen = out->native >= 0;
    if (!native_seen) {
        out->native = 0;
    }
    return check_complete(out, format, native_seen);
}

int sidecar_sets(const struct Sidecar* sc, const char* entry) {
    const char* eq = strchr(entry, '=');
    size_t len = eq != NULL ? (size_t)(eq - entry) : strlen(entry);
    for (size_t i = 0; i < sc->env_count; ++i) {
        if (strncmp(sc->env[i].key, entry, len) == 0 && sc->env[i].key[len] == '\0') {
            return 1;
        }
    }
    return 0;
}
