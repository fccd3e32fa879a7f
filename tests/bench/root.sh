#!/bin/bash
# The accelerated foreign root, measured side by side in one run (variants alternated each
# round, so machine noise hits them alike) and reported as medians of per-round ratios:
#   accelerated  zlib ./configure && make -j2 && make check inside an arm64 root, --accelerate
#   emulated     the same inside the same root, --accelerate=none (QEMU runs the compiler too)
#   shell        --accelerate=toolchain,shell: sh, make, sed, grep, awk, coreutils native too
#   cross        a plain cross build on the host (CHOST=aarch64-linux-gnu), its make check in
#                `emurun sandbox` (the tests are aarch64 programs)
# Goals (issue 10): emulated/accelerated >= 5, accelerated/cross <= 2.
# Usage: tests/bench/root.sh [BUILD_DIR] [ROUNDS]       (default: build, 3)
# BENCH_VARIANTS="accelerated shell cross" measures a subset (the ratios of absent ones are
# not printed).
# The root comes from `emurun root create` (cached in XDG_CACHE_HOME, default ~/.cache/emurun).
set -eu
src=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$src/build}
rounds=${2:-3}
emurun=$build/bin/emurun
[ -x "$emurun" ] || { echo "root.sh: missing $emurun (build first: tools/build)" >&2; exit 2; }
t=$(mktemp -d "${TMPDIR:-/tmp}/bench-root.XXXXXX")
trap 'rm -rf "$t"' EXIT
# The same spec as the test suites (tests/integration/lib/root.sh): one cached root for all.
"$emurun" root create --arch aarch64 --include python3-dev,python3-setuptools,python3-wheel,python3-pip "$t/root" >&2
zlib=$("$src/tools/emurun-sysroot" source --dir "${XDG_CACHE_HOME:-$HOME/.cache}/emurun/src" zlib)
build_in() { # VARIANT DIR
    case $1 in
        accelerated | emulated | shell)
            local acc=default
            [ "$1" = emulated ] && acc=none
            [ "$1" = shell ] && acc=toolchain,shell
            "$emurun" root run --accelerate=$acc --bind "$2:/src" --cwd /src "$t/root" -- \
                sh -c './configure && make -j2 && make check' ;;
        cross)
            (cd "$2" && CHOST=aarch64-linux-gnu ./configure && make -j2 &&
                "$emurun" sandbox --arch aarch64 -- make check) ;;
    esac
}
read -r -a variants <<<"${BENCH_VARIANTS:-accelerated shell emulated cross}"
declare -A secs
for r in $(seq 1 "$rounds"); do
    n=${#variants[@]}
    for i in $(seq 0 $((n - 1))); do
        v=${variants[$(((i + r - 1) % n))]} # rotate the order each round
        rm -rf "$t/$v" && cp -a "$zlib" "$t/$v"
        s=$(date +%s.%N)
        build_in "$v" "$t/$v" >"$t/$v.log" 2>&1 || { echo "$v failed:" >&2; tail -n 20 "$t/$v.log" >&2; exit 1; }
        grep -q 'test OK' "$t/$v.log" || { echo "$v: make check printed no OK" >&2; exit 1; }
        secs[$v,$r]=$(echo "$(date +%s.%N) - $s" | bc)
        printf 'round %d %-12s %7.1f s\n' "$r" "$v" "${secs[$v,$r]}" >&2
    done
done
median() { sort -g | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }
echo "rounds: $rounds; load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
for v in "${variants[@]}"; do
    printf '%-12s median %7.1f s\n' "$v" "$(for r in $(seq 1 "$rounds"); do echo "${secs[$v,$r]}"; done | median)"
done
ratio() { # A B GOAL
    [ -n "${secs[$1,1]:-}" ] && [ -n "${secs[$2,1]:-}" ] || return 0
    printf '%-22s median of ratios %.2fx (%s)\n' "$1 / $2" \
        "$(for r in $(seq 1 "$rounds"); do echo "${secs[$1,$r]} / ${secs[$2,$r]}" | bc -l; done | median)" "$3"
}
ratio emulated accelerated "goal >= 5"
ratio accelerated cross "goal <= 2"
ratio shell cross "goal <= 2"
ratio accelerated shell "the shell group's gain"
