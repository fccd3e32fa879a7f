#!/bin/bash
# ctest-tier: quick
# The build refuses an include that breaks the module graph (ARCHITECTURE.md): the checker passes
# on the tree as it is and fails, naming the file and the rule, on copies with a planted violation.
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
# The real build runs the same check before compiling anything.
expect_contains "the build runs the check" "$(cat "$EMURUN_BUILD_DIR/build.ninja" "$EMURUN_BUILD_DIR"/lib/Makefile 2>/dev/null | grep -o 'EmurunCheckLayers.cmake' | head -n1)" "EmurunCheckLayers.cmake"
finish
