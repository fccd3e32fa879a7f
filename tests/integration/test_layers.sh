#!/bin/bash
# ctest-tier: quick
# The build refuses an include that breaks the module graph (ARCHITECTURE.md): the checker passes
# on the tree as it is and fails, naming the file and the rule, on copies with a planted violation;
# then the compiler alone, with each module's own include tree, refuses planted files.
. "$(dirname "$0")/lib/common.sh"
src=$EMURUN_SOURCE_DIR
rules=$EMURUN_BUILD_DIR/lib/layers.txt
[ -f "$rules" ] || skip "no $rules: configure the build first"

# check DIR -> prints the checker's output, returns its status
check() {
    cmake -DRULES="$rules" -DROOT="$1" -DSTAMP="$T/stamp" -P "$src/cmake/EmurunCheckLayers.cmake" 2>&1
}
copy() {
    rm -rf "$T/tree" && mkdir -p "$T/tree/tools"
    cp -r "$src/lib" "$src/include" "$T/tree/" && cp -r "$src/tools/emurun" "$T/tree/tools/"
}

copy
if out=$(check "$T/tree"); then ok "the tree as it is passes"; else not_ok "clean tree refused: $out"; fi

# plant FILE LINE LABEL NEEDLE: prepend LINE to FILE in a fresh copy; the check must fail naming NEEDLE
plant() {
    copy
    sed -i "1i $2" "$T/tree/$1"
    if out=$(check "$T/tree"); then
        not_ok "$3: accepted"
    else
        expect_contains "$3" "$out" "$4"
    fi
}
plant lib/arch/arch.cpp '#include <emurun/runner.hpp>' "upward public include" \
    "lib/arch/arch.cpp: #include <emurun/runner.hpp>: module 'arch' may not use 'runner'"
plant lib/util/error.cpp '#include "process/process_exec.hpp"' "util includes a module" \
    "module 'util' may not use 'process'"
plant include/emurun/process.hpp '#include <emurun/pipeline.hpp>' "public header upward" \
    "include/emurun/process.hpp: #include <emurun/pipeline.hpp>: module 'process' may not use 'pipeline'"
plant tools/emurun/cli.cpp '#include "runner/runner_internal.hpp"' "CLI includes a private header" \
    "the CLI may include public headers only"
plant lib/report/report.cpp '#include "../runner/runner_internal.hpp"' "climbing include" \
    "climb with '..'"
# Both delimiters compile (include/ and lib/ are both include dirs), so both are checked.
plant lib/arch/arch.cpp '#include "emurun/runner.hpp"' "public header in quotes" \
    "lib/arch/arch.cpp: #include \"emurun/runner.hpp\": module 'arch' may not use 'runner'"
plant lib/qemu/qemu.cpp '#include <runner/runner_internal.hpp>' "private header in brackets" \
    "module 'qemu' may not use 'runner'"
plant lib/report/report.cpp '#include <boost/asio/io_context.hpp>' "Boost outside lib/process" \
    "lib/report/report.cpp: #include <boost/asio/io_context.hpp>: only lib/process includes Boost"
# Spellings that compile yet once passed unchecked.
plant lib/util/error.cpp '#include <emurun//runner.hpp>' "a doubled slash" \
    "lib/util/error.cpp: #include <emurun//runner.hpp>: not a plain path"
plant lib/util/error.cpp '#include <emurun/./runner.hpp>' "a '.' segment" "not a plain path"
plant lib/arch/arch.cpp '#include "./runner/runner_internal.hpp"' "a leading ./" \
    "lib/arch/arch.cpp: #include \"./runner/runner_internal.hpp\": not a plain path"
plant lib/arch/arch.cpp '#include /* why */ <emurun/runner.hpp>' "a comment before the name" \
    "write includes as #include <path>"
plant lib/arch/arch.cpp '#include "/usr/include/emurun/runner.hpp"' "an absolute path" \
    "lib/arch/arch.cpp: #include \"/usr/include/emurun/runner.hpp\": an absolute path"
copy && printf '#include <emurun/runner.hpp>\n' >"$T/tree/lib/arch/helper.h"
if out=$(check "$T/tree"); then not_ok "a .h in a module accepted"; else
    expect_contains "a module's .h is checked too" "$out" "lib/arch/helper.h: #include <emurun/runner.hpp>: module 'arch' may not use 'runner'"; fi
copy && printf '#include <emurun/runner.hpp>\n' >"$T/tree/include/emurun/extra.h"
if out=$(check "$T/tree"); then not_ok "a public .h accepted"; else
    expect_contains "a public header that is no module's" "$out" "include/emurun/extra.h: public headers are include/emurun/<module>.hpp"; fi
copy && mkdir "$T/tree/lib/runner/detail" && touch "$T/tree/lib/runner/detail/x.hpp"
if out=$(check "$T/tree"); then not_ok "module sub-folder accepted"; else
    expect_contains "a module sub-folder" "$out" "lib/runner/detail/: a module is one flat folder"; fi
copy && mkdir "$T/tree/lib/extra" && touch "$T/tree/lib/extra/x.cpp"
if out=$(check "$T/tree"); then not_ok "unknown folder accepted"; else
    expect_contains "a folder that is no module" "$out" "lib/extra/: not a module"; fi
# The compiler enforces the graph by itself: each module compiles against its own include tree
# (build/lib/include-<m>/, lib/CMakeLists.txt). A planted file is compiled with the build's own
# command for a source of the module (compile_commands.json), without the check above: an
# upward or sideways private header is "No such file", a public one the tree's #error naming
# the rule. Each compile that must fail has a twin that must pass (same command, allowed
# headers), so a failure comes from the boundary, not from the set-up.
db=$EMURUN_BUILD_DIR/compile_commands.json
# compile_as SOURCE FILE [TREE NEW-TREE]: FILE compiled as the build compiles lib/SOURCE (or
# tools/emurun-ci/SOURCE), with the include dir TREE replaced by NEW-TREE; the compiler's
# output in $T/cc.out, its status returned.
compile_as() {
    python3 - "$db" "$T/planted.o" "$@" >"$T/cc.out" 2>&1 <<'PY'
import json, os, shlex, subprocess, sys
db, obj, source, planted = sys.argv[1:5]
swap = sys.argv[5:7]
entry = [e for e in json.load(open(db)) if e["file"].endswith("/" + source)][0]
args, out, skip = shlex.split(entry["command"]), [], 0
if os.path.basename(args[0]) == "ccache":
    args = args[1:]
for i, a in enumerate(args):
    if skip:
        skip -= 1
    elif a in ("-MD", "-MMD"):
        continue
    elif a in ("-MT", "-MF", "-MQ", "-o", "-c"):
        skip = 1
    elif swap and a == "-I" + swap[0]:
        out.append("-I" + swap[1])
    else:
        out.append(a)
cmd = out + ["-o", obj, "-c", planted]
print("$ " + shlex.join(cmd), flush=True)
sys.exit(subprocess.run(cmd, cwd=entry["directory"]).returncode)
PY
}
# refused LABEL SOURCE INCLUDE NEEDLE [TREE NEW-TREE]: a file of INCLUDE compiled as SOURCE
# fails in the compiler, saying NEEDLE (a regular expression).
refused() {
    printf '%s\n' "$3" >"$T/planted.cpp"
    if compile_as "$2" "$T/planted.cpp" "${@:5}"; then
        not_ok "$1: the compiler accepted it"; cat "$T/cc.out"
    elif grep -Eq "$4" "$T/cc.out"; then
        ok "$1: the compiler refuses it"
    else
        not_ok "$1: the compile failed, but not for the include"; cat "$T/cc.out"
    fi
}
# accepted LABEL SOURCE INCLUDE...: a file of those includes compiled as SOURCE compiles.
accepted() {
    printf '%s\n' "${@:3}" >"$T/planted.cpp"
    if compile_as "$2" "$T/planted.cpp"; then ok "$1"; else not_ok "$1"; cat "$T/cc.out"; fi
}
# GCC: "X: No such file or directory"; clang: "'X' file not found".
no_such() { printf "(%s: No such file or directory|'%s' file not found)" "$1" "$1"; }
tree=$EMURUN_BUILD_DIR/lib
if [ ! -f "$db" ]; then
    not_ok "no $db: lib/CMakeLists.txt exports the modules' compile commands (reconfigure)"
else
    accepted "arch compiles what it uses" arch/arch.cpp '#include <emurun/elf.hpp>' \
        '#include <emurun/error.hpp>' '#include "util/fd.hpp"' '#include "arch/elf_image.hpp"'
    refused "arch includes a public header above it" arch/arch.cpp '#include <emurun/runner.hpp>' \
        "module 'arch' may not include <emurun/runner.hpp>: module 'runner' is not in what it USES"
    refused "arch, in quotes" arch/arch.cpp '#include "emurun/runner.hpp"' "module 'arch' may not include"
    refused "util includes a private header above it" util/error.cpp \
        '#include "process/process_exec.hpp"' "$(no_such process/process_exec.hpp)"
    refused "qemu includes its sibling sysroot's private header" qemu/qemu.cpp \
        '#include "sysroot/sysroot_internal.hpp"' "$(no_such sysroot/sysroot_internal.hpp)"
    refused "qemu includes its sibling sysroot's public header" qemu/qemu.cpp \
        '#include <emurun/sysroot.hpp>' "module 'qemu' may not include <emurun/sysroot.hpp>"
    refused "a doubled slash" util/error.cpp '#include <emurun//runner.hpp>' "module 'util' may not include"
    accepted "runner compiles what it uses" runner/runner.cpp '#include <emurun/root.hpp>' \
        '#include <emurun/artifacts.hpp>' '#include "sandbox/sandbox_internal.hpp"' '#include "util/fd.hpp"'
    refused "runner includes the doctor beside it" runner/runner.cpp \
        '#include "doctor/doctor_internal.hpp"' "$(no_such doctor/doctor_internal.hpp)"
    # A public header that includes upward: process's tree with process.hpp planted.
    rm -rf "$T/include-process" && cp -a "$tree/include-process" "$T/" &&
        rm "$T/include-process/emurun/process.hpp" &&
        { echo '#include <emurun/pipeline.hpp>'; cat "$src/include/emurun/process.hpp"; } >"$T/include-process/emurun/process.hpp"
    refused "a public header including upward" process/process.cpp '#include <emurun/process.hpp>' \
        "module 'process' may not include <emurun/pipeline.hpp>" "$tree/include-process" "$T/include-process"
    accepted "emurun_ci (as the CLI) compiles the public headers" ci.cpp '#include <emurun/runner.hpp>' \
        '#include <emurun/doctor.hpp>'
    refused "emurun_ci (as the CLI) includes a private header" ci.cpp \
        '#include "runner/runner_internal.hpp"' "$(no_such runner/runner_internal.hpp)"
fi

# The real build runs the same check before compiling anything.
expect_contains "the build runs the check" "$(cat "$EMURUN_BUILD_DIR/build.ninja" "$EMURUN_BUILD_DIR"/lib/Makefile 2>/dev/null | grep -o 'EmurunCheckLayers.cmake' | head -n1)" "EmurunCheckLayers.cmake"
finish
