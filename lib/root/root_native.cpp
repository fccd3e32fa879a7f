// The arch-neutral tools an accelerated root runs as the host's own programs: the data, one
// entry a package, each with why its native run gives what the emulated one gives. They run with
// the root's files, environment and PATH; only the program is the host's (bound over the root's
// /usr/bin/NAME), served by the host's C library. Whether a given root gets them is decided
// with the root's and the host's dpkg records (native_tool_identity, root_identity.cpp).
//
// Left emulated on purpose, never listed here:
// - uname, arch, nproc, hostid: they report the machine (the guest's view is the target's).
// - od: its multi-byte words follow the CPU's byte order.
// - printf, seq, sort (coreutils): they compute in long double (x86-64: 80-bit extended; arm64,
//   s390x: 128-bit quad; ppc64el: double-double), so `printf %.25f`, `seq -f` and `sort -g`
//   can print or order differently.
// - bash: $HOSTTYPE, $MACHTYPE and BASH_VERSINFO[5] name the machine it was built for
//   (configure stays in dash instead: CONFIG_SHELL=/bin/sh in root_environment).
// - perl, python3: their configuration names the platform (archname, sysconfig).
// - cmake by default (it is an opt-in entry below): cmake_host_system_information reads the
//   machine itself (OS_PLATFORM from uname(2), the processor queries from CPUID and
//   /proc/cpuinfo), which a native program gets from the host.
// - everything the build makes, and every other program of the root.
#include "root/root_internal.hpp"

#include <algorithm>

namespace emurun::root_detail {

const std::vector<NativeTool>& native_tools() {
    static const std::vector<NativeTool> t{
        {"sh",
         "dash",
         {"dash"},
         true,
         "a POSIX shell: no variable names the machine (no $HOSTTYPE); its arithmetic is "
         "intmax_t on every Debian arch. One case differs, undefined in C and loud: "
         "$(( -9223372036854775808 / -1 )) (and % -1) kills the host's dash with SIGFPE, as "
         "an s390x machine's would, where arm64's gives -9223372036854775808"},
        {"sed", "sed", {"sed"}, true, "text in, text out; regular expressions from the C library"},
        {"grep", "grep", {"grep"}, true, "text in, text out (PCRE2 for -P, the same version)"},
        {"awk",
         "mawk",
         {"mawk"},
         false,
         "opt-in: numbers are IEEE doubles everywhere, but a NaN made by arithmetic "
         "(log(-1), sqrt(-1), inf - inf) takes the CPU's sign: x86-64 prints -nan where arm64 "
         "prints nan; anything else is the same"},
        {"gawk",
         "gawk",
         {"gawk"},
         false,
         "opt-in: as mawk (a NaN's sign is the CPU's); PROCINFO[\"platform\"] is \"posix\" on "
         "every Linux arch"},
        {"m4",
         "m4",
         {"m4"},
         true,
         "macro expansion with 32-bit eval arithmetic on every Debian arch; autoconf's engine"},
        {"diffutils",
         "diffutils",
         {"cmp", "diff", "diff3", "sdiff"},
         true,
         "compares files byte by byte and line by line"},
        {"findutils",
         "findutils",
         {"find", "xargs"},
         true,
         "walks the root's tree; xargs' limits come from the kernel, which both see"},
        {"tar",
         "tar",
         {"tar"},
         true,
         "archive formats are defined byte for byte; owner names come from the root's "
         "/etc/passwd"},
        {"gzip", "gzip", {"gzip"}, true, "deflate output depends only on the version and level"},
        {"xz",
         "xz-utils",
         {"xz"},
         true,
         "LZMA2 output depends only on the version and options (threads: the same CPU count)"},
        {"ninja",
         "ninja-build",
         {"ninja"},
         true,
         "runs the build graph; its default -j is the CPU count, which both see alike"},
        {"hostname",
         "hostname",
         {"hostname"},
         true,
         "prints the node name, which QEMU passes through unchanged (only uname's machine "
         "field is the target's)"},
        {"coreutils",
         "coreutils",
         {"[",        "basename", "cat",    "chmod",   "cksum",     "comm",  "cp",    "csplit",
          "cut",      "date",     "dd",     "dirname", "du",        "echo",  "env",   "expand",
          "expr",     "false",    "fold",   "head",    "install",   "join",  "ln",    "ls",
          "md5sum",   "mkdir",    "mktemp", "mv",      "nl",        "paste", "pwd",   "readlink",
          "realpath", "rm",       "rmdir",  "sha1sum", "sha256sum", "sleep", "split", "stat",
          "sum",      "tac",      "tail",   "tee",     "test",      "touch", "tr",    "true",
          "tsort",    "unexpand", "uniq",   "wc"},
         true,
         "file and text utilities; expr's arithmetic is arbitrary-precision integers (left "
         "out: printf, seq and sort compute in long double, od reads words in the CPU's byte "
         "order, uname/arch/nproc report the machine)"},
        {"cmake",
         "cmake",
         {"cmake"},
         false,
         "opt-in: cmake_host_system_information's OS_PLATFORM and processor queries (FindMPI's "
         "core count) read the host natively; the rest is the same: CMAKE_HOST_SYSTEM_PROCESSOR "
         "comes from running the root's uname -m (emulated), the compiler checks run the root's "
         "compilers, its modules are the root's /usr/share/cmake-*"},
        {"make",
         "make",
         {"make"},
         false,
         "opt-in: $(MAKE_HOST) names the machine make was built for (x86_64-pc-linux-gnu "
         "natively); everything else it does is the same"},
    };
    return t;
}

const NativeTool* find_native_tool(std::string_view name) {
    const auto& t = native_tools();
    const auto it = std::ranges::find_if(t, [&](const NativeTool& n) { return n.name == name; });
    return it == t.end() ? nullptr : &*it;
}

} // namespace emurun::root_detail
