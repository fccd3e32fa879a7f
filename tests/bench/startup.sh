#!/bin/bash
# Start-up cost, measured side by side in one run (rounds interleaved, so machine noise hits
# every variant alike) and reported as ratios:
#   dynamic qemu-aarch64 vs qemu-aarch64-static, emurun exec vs qemu direct, shim vs qemu direct.
# Usage: tests/bench/startup.sh [BUILD_DIR] [ROUNDS]      (default: build, 200)
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build}
rounds=${2:-200}
emurun=$build/bin/emurun
prog=$build/tests/fixtures/aarch64/probe-static
for f in "$emurun" "$prog" /usr/bin/qemu-aarch64 /usr/bin/qemu-aarch64-static; do
    [ -x "$f" ] || { echo "startup.sh: missing $f (build first: tools/build)" >&2; exit 2; }
done
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
"$emurun" shim add probe --target "$prog" --arch aarch64 --dir "$t/shims" >/dev/null

variants="static dynamic exec shim"
run_variant() {
    case $1 in
        static) /usr/bin/qemu-aarch64-static "$prog" exit 0 ;;
        dynamic) /usr/bin/qemu-aarch64 "$prog" exit 0 ;;
        exec) "$emurun" exec -- "$prog" exit 0 ;;
        shim) "$t/shims/probe" exit 0 ;;
    esac
}
now_ns() { date +%s%N; }
declare -A total
for v in $variants; do total[$v]=0; run_variant "$v"; done   # warm the page cache
for ((i = 0; i < rounds; i++)); do
    for v in $variants; do
        s=$(now_ns); run_variant "$v"; e=$(now_ns)
        total[$v]=$((total[$v] + e - s))
    done
done
mean_us() { echo $((total[$1] / rounds / 1000)); }
ratio() { awk -v a="${total[$1]}" -v b="${total[$2]}" 'BEGIN { printf "%.3f", a / b }'; }
echo "rounds: $rounds (each variant once per round, interleaved)"
for v in $variants; do printf '%-8s mean %6d us\n' "$v" "$(mean_us "$v")"; done
echo "dynamic / static qemu : $(ratio dynamic static)"
echo "emurun exec / static  : $(ratio exec static)"
echo "shim / static         : $(ratio shim static)"
