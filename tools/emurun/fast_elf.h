/* The fast exec entry's ELF reading and library check (fast_elf.c): what the library's ELF
 * reader (lib/arch/elf*.cpp), arch rule (arch_for_header + the ELF fields, runs_natively) and
 * library resolution (lib/sysroot/sysroot.cpp) decide, for the files it understands fully.
 * Anything it does not understand or that the library would report as an error makes these
 * functions say no, and the CLI then decides. Freestanding, like fast_exec.c. */
#ifndef EMURUN_FAST_ELF_H
#define EMURUN_FAST_ELF_H

#pragma GCC visibility push(hidden)

#define FX_NAME_MAX 256 /* an interpreter or DT_NEEDED name, NUL included */
#define FX_MAX_NEEDED 32

struct FxElf {
    int arch; /* index of the arch table, -1 when none */
    int has_interp;
    char runpath[FX_NAME_MAX]; /* DT_RUNPATH entries joined with ':', "" without */
    char rpath[FX_NAME_MAX];   /* DT_RPATH likewise */
    char interp[FX_NAME_MAX];
    unsigned needed_count;
    char needed[FX_MAX_NEEDED][FX_NAME_MAX];
};

/* Reads path as read_elf does. 1 when it is an ELF file the library reads without error and
 * every part of it this code needs was understood; then out holds its arch, interpreter and
 * DT_NEEDED names. 0 otherwise (including a file that is no ELF). */
int fx_read_elf(const char* path, struct FxElf* out);

/* 1 when arch a runs on this host without emulation (or the host is unknown). */
int fx_runs_natively(int a);

/* find_arch: the arch named (any case) or aliased `name`, -1 for none. */
int fx_find_arch(const char* name);

/* The arch's qemu CPU name, e.g. "aarch64". */
const char* fx_arch_qemu(int a);

/* check_sysroots: root is a directory. */
int fx_sysroot_ok(const char* root);

/* The QEMU_LD_PREFIX `emurun exec` sets for the dynamic program read as elf when the caller
 * names the sysroot root (0: Debian's defaults, /usr/TRIPLET or /), as resolve_libraries
 * finds its interpreter and libraries there: 1 with the value in prefix (FX_PATH_MAX), 0 when
 * something is missing or this code cannot tell. */
int fx_library_prefix(const struct FxElf* elf, const char* root, char* prefix);

#pragma GCC visibility pop

#endif
