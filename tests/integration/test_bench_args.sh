#!/bin/bash
# ctest-tier: quick
# tests/bench/qemu-versions.sh given a wrong argument fails at once (exit 2, saying which)
# before it fetches or builds anything: a build dir without emurun, a round count that is no
# number of 1 or more, an unknown row group or none, an arch without a known cross compiler for
# the workload rows, an arch the dogfood pipeline lacks for the dogfood rows. The build dir's
# emurun is a stub that records every call: none may happen. Right arguments go on to the fetch.
. "$(dirname "$0")/lib/common.sh"
command -v python3 >/dev/null || skip "python3 not installed (the script reads the dogfood pipeline with it)"
bench=$EMURUN_SOURCE_DIR/tests/bench/qemu-versions.sh
mkdir -p "$T/build/bin"
printf '#!/bin/sh\necho "$*" >>"%s/calls"\n' "$T" >"$T/build/bin/emurun"
chmod +x "$T/build/bin/emurun"

# refused WHAT EXPECTED-MESSAGE ROWS ARG...: the script with BENCH_ROWS=ROWS exits 2 in seconds
# saying EXPECTED-MESSAGE, having called emurun not once.
refused() {
    local what=$1 want=$2 rows=$3 rc=0 err
    shift 3
    rm -f "$T/calls"
    err=$(BENCH_ROWS=$rows timeout 30 bash "$bench" "$@" 2>&1 >/dev/null) || rc=$?
    expect_eq "$what: exit 2" 2 "$rc"
    expect_contains "$what: says why" "$err" "$want"
    expect_eq "$what: nothing fetched or run" "" "$(cat "$T/calls" 2>/dev/null)"
}
mkdir -p "$T/nothing"
refused "a build dir without emurun" "no $T/nothing/bin/emurun" "" "$T/nothing"
refused "no build dir" "no build directory $T/absent" "" "$T/absent"
refused "ROUNDS x" "ROUNDS 'x'" calibrate "$T/build" x
refused "ROUNDS 0" "ROUNDS '0'" calibrate "$T/build" 0
refused "ROUNDS -3" "ROUNDS '-3'" calibrate "$T/build" -3
refused "an unknown row group" "BENCH_ROWS: 'speed'" speed "$T/build" 1
refused "no row group" "BENCH_ROWS: no row group" , "$T/build" 1
refused "workload rows, an arch without a cross compiler" "no cross compiler known for mips" \
    workload "$T/build" 1 trixie aarch64 mips
refused "dogfood rows, an arch the pipeline lacks" "the dogfood pipeline has no riscv64" \
    dogfood "$T/build" 1 trixie riscv64
# Right arguments pass the checks: the script goes on to fetch (the stub's empty answer then
# stops it).
rm -f "$T/calls"
BENCH_ROWS=calibrate timeout 30 bash "$bench" "$T/build" 3 trixie aarch64 s390x >/dev/null 2>&1 || true
expect_eq "right arguments: on to the fetch" "qemu fetch --suite trixie aarch64 s390x" "$(head -n1 "$T/calls" 2>/dev/null)"
finish
