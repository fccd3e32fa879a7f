#!/bin/sh
# Build the libFuzzer targets with ASan + UBSan (clang from Debian) and run each for a while.
#   tests/fuzz/run.sh BUILD_DIR SECONDS [NAME...]
# NAME is a target (elf, binfmt, pipeline, report, manifest, shim, json, launch_record: tests/fuzz/fuzz_NAME.cpp); all of
# them when none is given. BUILD_DIR is a build tree of its own, configured here on first use
# with EMURUN_FUZZ, EMURUN_ASAN and EMURUN_UBSAN (any UBSan report aborts). Each target starts
# from its seed corpus tests/fuzz/corpus/NAME/ and keeps what it finds in BUILD_DIR/fuzz/NAME/.
# Exits 1 on any crash, sanitizer report, leak, hang (an input running over 10 s) or an input
# needing over 2 GiB, printing the reproducer's path and the command that replays it.
# Environment: EMURUN_FUZZ_CC, EMURUN_FUZZ_CXX (default clang-15, clang++-15), EMURUN_FUZZ_JOBS
# (build parallelism, default nproc), EMURUN_FUZZ_NO_BUILD=1 (run the binaries as they are built:
# a long run while the sources change), EMURUN_FUZZ_BUILD_ONLY=1 (configure and build, run
# nothing: tools/sanitize --tests-only makes its tree so).
set -eu
if [ $# -lt 2 ]; then
    echo "usage: $0 BUILD_DIR SECONDS [NAME...]" >&2
    exit 2
fi
root=$(cd "$(dirname "$0")/../.." && pwd)
build=$1
seconds=$2
shift 2
names=$*
if [ -z "$names" ]; then
    names=$(cd "$root/tests/fuzz" && ls fuzz_*.cpp | sed 's/^fuzz_//; s/\.cpp$//')
fi

if [ ! -f "$build/CMakeCache.txt" ]; then
    launcher=""
    command -v ccache >/dev/null 2>&1 &&
        launcher="-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache"
    gen=""
    command -v ninja >/dev/null 2>&1 && gen="-G Ninja"
    # -O1 and line tables only: a sanitizer report still names files and lines, and the tree
    # is spared the compile time of full debug info (CONTRIBUTING.md, "Measured").
    flags="-O1 -gline-tables-only -DNDEBUG"
    # shellcheck disable=SC2086
    CC=${EMURUN_FUZZ_CC:-clang-15} CXX=${EMURUN_FUZZ_CXX:-clang++-15} \
        cmake -S "$root" -B "$build" $gen $launcher -DCMAKE_BUILD_TYPE=RelWithDebInfo \
        "-DCMAKE_C_FLAGS_RELWITHDEBINFO=$flags" "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=$flags" \
        -DEMURUN_FUZZ=ON -DEMURUN_ASAN=ON -DEMURUN_UBSAN=ON >/dev/null
fi
targets=""
for n in $names; do
    targets="$targets fuzz_${n}_libfuzzer"
done
# shellcheck disable=SC2086
[ "${EMURUN_FUZZ_NO_BUILD:-0}" = 1 ] ||
    cmake --build "$build" --parallel "${EMURUN_FUZZ_JOBS:-$(nproc)}" --target $targets

[ "${EMURUN_FUZZ_BUILD_ONLY:-0}" != 1 ] || exit 0

export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
status=0
for n in $names; do
    bin="$build/tests/fuzz/fuzz_${n}_libfuzzer"
    out="$build/fuzz/$n"
    mkdir -p "$out/corpus"
    rm -f "$out"/crash-* "$out"/leak-* "$out"/timeout-* "$out"/oom-* "$out"/slow-unit-*
    rc=0
    "$bin" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
        -artifact_prefix="$out/" "$out/corpus" "$root/tests/fuzz/corpus/$n" >"$out/log" 2>&1 ||
        rc=$?
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$out/log" | tail -n 1)
    artifacts=$(ls "$out"/crash-* "$out"/leak-* "$out"/timeout-* "$out"/oom-* 2>/dev/null || true)
    if [ "$rc" -eq 0 ] && [ -z "$artifacts" ]; then
        echo "fuzz: $n: ${runs:-?} runs in ${seconds}s, no crash, leak or hang"
        continue
    fi
    status=1
    tail -n 40 "$out/log"
    echo "fuzz: $n: FAILED (exit $rc) after ${runs:-?} runs; log $out/log"
    for a in $artifacts; do
        echo "fuzz: $n: reproducer $a (replay: $bin $a)"
    done
done
exit $status
