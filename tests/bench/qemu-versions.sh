#!/bin/bash
# Two QEMU versions side by side: the host's qemu-user-static (Debian 12: 7.2) against the one
# 'emurun qemu fetch --suite SUITE' took from another release (default trixie: 10.0), on a
# unit-test-like workload (tests/bench/qemu_workload.c, built static per arch: process start-up,
# computing, small files) run in 'emurun sandbox' (binfmt_misc, so the workload's own children
# are emulated too) with EMURUN_QEMU_DIR naming each emulator's dir. Every round runs A and B
# once per workload, B first in every other round, so drift and load hit both alike; one
# warm-up round is not counted. Each row: the median wall time of A and of B, and the median of
# the per-round ratios B/A with their min and max (< 1: B is faster). The checksums of A's and
# B's output must agree, else the benchmark stops (exit 1).
# Usage: tests/bench/qemu-versions.sh [BUILD_DIR] [ROUNDS] [SUITE] [ARCH...]
#        (default: build, 7 rounds, trixie, aarch64 s390x); fetches SUITE's emulators first.
set -eu
die() { echo "qemu-versions.sh: $*" >&2; exit 2; }
root=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "${1:-$root/build}" 2>/dev/null && pwd) || die "no build directory ${1:-$root/build}"
rounds=${2:-7}
suite=${3:-trixie}
shift $(($# < 3 ? $# : 3))
arches=${*:-aarch64 s390x}
emurun=$build/bin/emurun
[ -x "$emurun" ] || die "no $emurun (tools/build first)"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

"$emurun" qemu fetch --suite "$suite" $arches >"$work/fetch.txt" || die "emurun qemu fetch --suite $suite failed"
fetched=$(dirname "$(awk 'NR == 2 { print $NF }' "$work/fetch.txt")")

triplet() {
    case $1 in
        aarch64) echo aarch64-linux-gnu ;; s390x) echo s390x-linux-gnu ;;
        ppc64le) echo powerpc64le-linux-gnu ;; riscv64) echo riscv64-linux-gnu ;;
        *) die "no cross compiler known for $1" ;;
    esac
}

now_ms() { echo $(($(date +%s%N) / 1000000)); }

# run DIR ARCH MODE N: one run's wall time in ms (its output in $work/out-DIR-ARCH-MODE).
run() {
    local dir=$1 arch=$2 mode=$3 n=$4 t0 t1 out
    out=$work/out-$(basename "$dir")-$arch-$mode
    t0=$(now_ms)
    (cd "$work/run" && EMURUN_QEMU_DIR=$dir "$emurun" sandbox --arch "$arch" -- "$work/$arch/qw" "$mode" "$n" >"$out")
    t1=$(now_ms)
    echo $((t1 - t0))
}

median() { sort -n | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }

mkdir -p "$work/run"
echo "# $(date -u +%F), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg), $rounds rounds (+1 warm-up)"
echo "# A: $("$emurun" qemu list aarch64 | awk '$NF ~ /^\/usr\/bin\// { print $2; exit }') (/usr/bin, the host's qemu-user-static); B: $suite's, fetched into $fetched"
printf '| arch | workload | A (host QEMU) | B (%s) | B/A median (min-max) |\n|---|---|---|---|---|\n' "$suite"
for arch in $arches; do
    mkdir -p "$work/$arch"
    "$(triplet "$arch")-gcc" -O2 -static -o "$work/$arch/qw" "$root/tests/bench/qemu_workload.c"
    va=$("$emurun" qemu list "$arch" | awk '$NF ~ /^\/usr\/bin\// { print $2; exit }')
    vb=$("$emurun" qemu list "$arch" | awk -v d="$fetched/" 'index($NF, d) == 1 { print $2; exit }')
    for w in "spawn 150" "compute 30" "files 400"; do
        set -- $w
        : >"$work/a" && : >"$work/b" && : >"$work/r"
        for i in $(seq 0 "$rounds"); do
            if [ $((i % 2)) = 0 ]; then
                a=$(run /usr/bin "$arch" "$1" "$2"); b=$(run "$fetched" "$arch" "$1" "$2")
            else
                b=$(run "$fetched" "$arch" "$1" "$2"); a=$(run /usr/bin "$arch" "$1" "$2")
            fi
            cmp -s "$work/out-bin-$arch-$1" "$work/out-$(basename "$fetched")-$arch-$1" ||
                { echo "qemu-versions.sh: $arch $1: the outputs differ" >&2; exit 1; }
            [ "$i" = 0 ] && continue
            echo "$a" >>"$work/a"; echo "$b" >>"$work/b"
            awk -v a="$a" -v b="$b" 'BEGIN { printf "%.3f\n", b / a }' >>"$work/r"
        done
        printf '| %s | %s %s | %s ms (%s) | %s ms (%s) | %s (%s-%s) |\n' "$arch" "$1" "$2" \
            "$(median <"$work/a")" "$va" "$(median <"$work/b")" "$vb" "$(median <"$work/r")" \
            "$(sort -n "$work/r" | head -n1)" "$(sort -n "$work/r" | tail -n1)"
    done
done
