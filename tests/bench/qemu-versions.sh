#!/bin/bash
# Two QEMU versions side by side: the host's qemu-user-static (Debian 12: 7.2) against the one
# 'emurun qemu fetch --suite SUITE' took from another release (default trixie: 10.0), with
# EMURUN_QEMU_DIR naming each emulator's dir (A: /usr/bin, B: the fetched one). Three groups of
# rows:
#   workload   a unit-test-like workload (tests/bench/qemu_workload.c, built static per arch:
#              process start-up, computing, small files) run in 'emurun sandbox' (binfmt_misc,
#              so the workload's own children are emulated too); A's and B's output must agree,
#              else the benchmark stops (exit 1)
#   dogfood    emurun's own unit tests cross-built per arch, run as the dogfood runs them: the
#              pipeline tests/dogfood/pipeline.json ('emurun run --arch ARCH --jobs 1'; its
#              configure and build steps cross-build $BUILD_DIR/dogfood/ARCH once, natively, and
#              are not timed), each row the unit step's wall or CPU (user + sys) time from the
#              report, whose emulator version must be the side's. The suite's outcome (status,
#              doctest's counts, the test cases failed or skipped) is compared, not enforced: the
#              lines after the table say what each side gave, and what only one side gave in how
#              many rounds (the warm-up included)
#   calibrate  'emurun calibrate --arch ARCH... --json' (its file in a temporary directory):
#              its wall time, and the slowdown it measured per arch and per phase
# Every round runs A and B once per row group, B first in every other round, so drift and load
# hit both alike; one warm-up round is not counted. Each row: the median of A and of B, and the
# median of the per-round ratios B/A with their min and max (< 1: B is faster, or measured less).
# Usage: tests/bench/qemu-versions.sh [BUILD_DIR] [ROUNDS] [SUITE] [ARCH...]
#        (default: build, 7 rounds, trixie, aarch64 s390x); fetches SUITE's emulators first.
#   BENCH_ROWS=workload,dogfood,calibrate   which groups (default: all three); the dogfood rows
#        need the cross compilers (tools/install-deps) and cost ~4 CPU-minutes per arch to build
set -eu
die() { echo "qemu-versions.sh: $*" >&2; exit 2; }
root=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "${1:-$root/build}" 2>/dev/null && pwd) || die "no build directory ${1:-$root/build}"
rounds=${2:-7}
suite=${3:-trixie}
shift $(($# < 3 ? $# : 3))
arches=${*:-aarch64 s390x}
rows=" ${BENCH_ROWS:-workload,dogfood,calibrate} " && rows=${rows//,/ }
for r in $rows; do
    case $r in workload | dogfood | calibrate) ;;
        *) die "BENCH_ROWS: '$r' is none of workload, dogfood, calibrate" ;; esac
done
emurun=$build/bin/emurun
[ -x "$emurun" ] || die "no $emurun (tools/build first)"

triplet() {
    case $1 in
        aarch64) echo aarch64-linux-gnu ;; s390x) echo s390x-linux-gnu ;;
        ppc64le) echo powerpc64le-linux-gnu ;; riscv64) echo riscv64-linux-gnu ;;
        *) return 1 ;;
    esac
}

# The arguments checked before anything is fetched or built (a mistake fails in a second, not
# after the fetch or a cross build).
[[ $rounds =~ ^[1-9][0-9]*$ ]] || die "ROUNDS '$rounds': a number of rounds, 1 or more"
[[ $rows =~ [a-z] ]] || die "BENCH_ROWS: no row group (workload, dogfood, calibrate)"
if [[ $rows == *" dogfood "* ]]; then
    dogfood_arches=" $(python3 -c 'import json, sys; print(*json.load(open(sys.argv[1]))["arches"])' \
        "$root/tests/dogfood/pipeline.json") "
fi
for arch in $arches; do
    if [[ $rows == *" workload "* ]]; then
        t=$(triplet "$arch") || die "workload rows: no cross compiler known for $arch (aarch64, s390x, ppc64le, riscv64)"
        command -v "$t-gcc" >/dev/null || die "workload rows: $t-gcc not installed (tools/install-deps)"
    fi
    if [[ $rows == *" dogfood "* && $dogfood_arches != *" $arch "* ]]; then
        die "dogfood rows: the dogfood pipeline has no $arch (its arches:$dogfood_arches)"
    fi
done

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

"$emurun" qemu fetch --suite "$suite" $arches >"$work/fetch.txt" || die "emurun qemu fetch --suite $suite failed"
fetched=$(dirname "$(awk 'NR == 2 { print $NF }' "$work/fetch.txt")")

# version DIR ARCH: the version of DIR's emulator for ARCH, as 'emurun qemu list' reads it.
version() { "$emurun" qemu list "$2" | awk -v d="$1/" 'index($NF, d) == 1 { print $2; exit }'; }

now_ms() { echo $(($(date +%s%N) / 1000000)); }

median() { sort -n | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }

# A row group's measurement: FN SIDE DIR ARG... runs once under DIR's QEMU (SIDE a or b), prints
# one line per figure, "ARCH|WHAT|UNIT|VALUE", and writes what it did into $work/outcome-SIDE.

# workload SIDE DIR ARCH MODE N: the workload's wall time in 'emurun sandbox'; outcome: its output.
workload() {
    local t0 t1
    t0=$(now_ms)
    (cd "$work/run" && EMURUN_QEMU_DIR=$2 "$emurun" sandbox --arch "$3" -- "$work/$3/qw" "$4" "$5" >"$work/outcome-$1")
    t1=$(now_ms)
    echo "$3|$4 $5|ms|$((t1 - t0))"
}

# dogfood SIDE DIR ARCH: the dogfood pipeline for ARCH; its unit step's wall and CPU seconds;
# outcome: a line with the step's status and doctest's counts, then a line per test case that
# failed ("failed: NAME") or skipped ("skipped: NAME: why").
dogfood() {
    local r=$work/dogfood-$1
    rm -rf "$r" && mkdir -p "$r"
    EMURUN_QEMU_DIR=$2 "$emurun" run "$work/dogfood.json" --arch "$3" --jobs 1 --quiet --no-history \
        --report "$r/report.json" --log-dir "$r/logs" >"$r/out.txt" 2>&1 || true # 1: a step failed
    python3 - "$r/report.json" "$3" "$(version "$2" "$3")" "$work/outcome-$1" <<'PY' ||
import json, re, sys
report, arch, want, outcome = sys.argv[1:]
step = next(s for s in json.load(open(report))["steps"] if s["name"] == "unit-" + arch)
if step["status"] not in ("passed", "failed", "emulator_crash"):
    sys.exit(f"unit-{arch} {step['status']}: {step['message']}")
got = (step.get("emulator") or {}).get("version")
if got != want:
    sys.exit(f"unit-{arch} ran under QEMU {got}, not {want}")
log = open(step["log"], errors="replace").read()
counts = re.findall(r"\[doctest\] test cases:.*", log)
skipped = re.findall(r"\[emurun\] (\d+ of \d+ test cases skipped)", log)
skips = re.findall(r"^(?:\[[^]]*\] )?\[emurun\]   (.*)$", log, re.M)
failed = set()
for block in log.split("=" * 79):
    case = re.search(r"^TEST CASE:\s+(.*)$", block, re.M)
    if case and re.search(r"^(.*: )?(ERROR|FATAL ERROR)|TEST CASE FAILED|CRASHED", block, re.M):
        failed.add(case.group(1).strip())
with open(outcome, "w") as f:
    f.write(f"{step['status']}; {counts[-1] if counts else 'no doctest count'}; ")
    f.write(f"{skipped[-1] if skipped else 'none skipped'}\n")
    f.write("".join(f"failed: {c}\n" for c in sorted(failed)))
    f.write("".join(f"skipped: {c}\n" for c in sorted(skips)))
print(f"{arch}|dogfood unit tests, wall|s|{step['wall']:.1f}")
print(f"{arch}|dogfood unit tests, CPU|s|{step['user'] + step['sys']:.1f}")
PY
        die "dogfood $3 under $2: the report of $r/out.txt says no usable unit step (above)"
}

# calibrate SIDE DIR ARCH...: 'emurun calibrate' of the arches; its wall time and measurements.
calibrate() {
    local side=$1 dir=$2 t0 t1 a args=()
    shift 2
    for a in "$@"; do args+=(--arch "$a"); done
    t0=$(now_ms)
    EMURUN_QEMU_DIR=$dir "$emurun" calibrate "${args[@]}" --json -o "$work/calibration-$side.json" \
        >"$work/calibrate-$side.json" || die "emurun calibrate failed under $dir's QEMU"
    t1=$(now_ms)
    rm -f "$work/calibration-$side.json"
    echo ok >"$work/outcome-$side"
    echo "$*|calibrate, wall|s|$(awk -v t=$((t1 - t0)) 'BEGIN { printf "%.1f", t / 1000 }')"
    python3 - "$work/calibrate-$side.json" <<'PY'
import json, sys
for c in json.load(open(sys.argv[1]))["calibrations"]:
    print(f"{c['arch']}|calibrate: slowdown|x|{c['slowdown']:.2f}")
    for p in c["phases"]:
        print(f"{c['arch']}|calibrate: {p['name']} phase|x|{p['slowdown']:.2f}")
PY
}

# pair CHECK FN ARG...: the rounds of one row group (CHECK strict: A's and B's outcomes must agree;
# note: after the table, each side's first outcome line, and the other lines only one side gave).
pair() {
    local check=$1 fn=$2 i
    shift 2
    : >"$work/figures" && : >"$work/outcomes" && : >"$work/differ"
    for i in $(seq 0 "$rounds"); do
        if [ $((i % 2)) = 0 ]; then
            "$fn" a /usr/bin "$@" >"$work/fa"
            "$fn" b "$fetched" "$@" >"$work/fb"
        else
            "$fn" b "$fetched" "$@" >"$work/fb"
            "$fn" a /usr/bin "$@" >"$work/fa"
        fi
        if ! cmp -s "$work/outcome-a" "$work/outcome-b"; then
            [ "$check" = strict ] && { echo "qemu-versions.sh: $fn $*: the outputs differ" >&2; exit 1; }
            only a b "only under A" >>"$work/differ" && only b a "only under B" >>"$work/differ"
        fi
        echo "A: $(head -n1 "$work/outcome-a")" >>"$work/outcomes"
        echo "B: $(head -n1 "$work/outcome-b")" >>"$work/outcomes"
        [ "$i" = 0 ] && continue
        paste -d'|' "$work/fa" "$work/fb" | awk -F'|' '{ print $1 "|" $2 "|" $3 "|" $4 "|" $8 }' >>"$work/figures"
    done
    rows_of "$work/figures"
    [ "$check" = strict ] && return
    sort "$work/outcomes" | uniq -c | sed "s/^ *\([0-9]*\) /# $fn $*, \1 of $((rounds + 1)) runs: /" >>"$work/notes"
    sort "$work/differ" | uniq -c | sed "s/^ *\([0-9]*\) /# $fn $*, \1 of $((rounds + 1)) rounds: /" >>"$work/notes"
}

# only X Y LABEL: the lines past the first of outcome-X that outcome-Y lacks, as "LABEL: LINE".
only() {
    comm -23 <(tail -n +2 "$work/outcome-$1" | sort) <(tail -n +2 "$work/outcome-$2" | sort) | sed "s/^/$3: /"
}

# rows_of FILE: a table row per figure (ARCH|WHAT|UNIT|A|B lines, in the order first seen).
rows_of() {
    local arch what unit
    awk -F'|' '!seen[$1 "|" $2 "|" $3]++ { print $1 "|" $2 "|" $3 }' "$1" | while IFS='|' read -r arch what unit; do
        awk -F'|' -v k="$arch|$what|$unit" -v w="$work" '$1 "|" $2 "|" $3 == k {
            print $4 >(w "/a"); print $5 >(w "/b"); printf "%.3f\n", $5 / $4 >(w "/r") }' "$1"
        printf '| %s | %s | %s %s (%s) | %s %s (%s) | %s (%s-%s) |\n' "$arch" "$what" \
            "$(median <"$work/a")" "$unit" "$(version /usr/bin "${arch%% *}")" \
            "$(median <"$work/b")" "$unit" "$(version "$fetched" "${arch%% *}")" \
            "$(median <"$work/r")" "$(sort -n "$work/r" | head -n1)" "$(sort -n "$work/r" | tail -n1)"
    done
}

mkdir -p "$work/run"
: >"$work/notes"
echo "# $(date -u +%F), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg), $rounds rounds (+1 warm-up), rows: $(echo $rows)"
echo "# A: $(version /usr/bin aarch64) (/usr/bin, the host's qemu-user-static); B: $suite's, fetched into $fetched"
printf '| arch | row | A (host QEMU) | B (%s) | B/A median (min-max) |\n|---|---|---|---|---|\n' "$suite"
if [[ $rows == *" workload "* ]]; then
    for arch in $arches; do
        mkdir -p "$work/$arch"
        "$(triplet "$arch")-gcc" -O2 -static -o "$work/$arch/qw" "$root/tests/bench/qemu_workload.c"
        for w in "spawn 150" "compute 30" "files 400"; do
            pair strict workload "$arch" $w
        done
    done
fi
if [[ $rows == *" dogfood "* ]]; then
    . "$root/tools/lib/ccache.sh"
    . "$root/tools/lib/dogfood-pipeline.sh"
    command -v ninja >/dev/null 2>&1 && export CMAKE_GENERATOR=Ninja
    export EMURUN_EXE=$emurun # as tools/dogfood: sandbox steps re-enter this emurun
    mkdir -p "$build/dogfood"
    dogfood_pipeline "$root" "$build" "$build/dogfood" "$emurun" >"$work/dogfood.json"
    for arch in $arches; do
        pair note dogfood "$arch"
    done
fi
if [[ $rows == *" calibrate "* ]]; then
    pair strict calibrate $arches
fi
echo "# load after the run: $(cut -d' ' -f1-3 /proc/loadavg)"
cat "$work/notes"
