#!/bin/bash
# The accelerated foreign root against the host's cross toolchain and against full emulation,
# phase by phase (configure, build, check), for an autotools and a CMake project, measured side
# by side in one run (variants rotated each round, so machine noise hits them alike) and reported
# as medians of per-round ratios, of wall and of CPU time (user + sys of the whole tree: steadier
# on a shared machine):
#   accelerated  in an arm64 root, --accelerate --allow-revision-mismatch: the default list,
#                compilers, binutils and the native tools (sh, sed, grep, coreutils, ...)
#   toolchain    the same with --accelerate=toolchain: compilers and binutils only (the
#                default before issue 32)
#   opt-in       the default list and the opt-in native tools, make and cmake
#                (--accelerate=toolchain,shell,make,cmake): what a project that reads neither
#                $(MAKE_HOST) nor cmake_host_system_information can ask for
#   emulated     the same root, --accelerate=none (QEMU runs everything)
#   cross        on the host: ./configure --host=aarch64-linux-gnu, or CMake with the cross
#                compiler; the check in `emurun sandbox` (the tests are aarch64 programs)
# Every variant gets Debian's hardening flags for arm64 (dpkg-buildflags, hardening=+all).
# Projects (Debian sources, fetched by tools/emurun-sysroot): hello (GNU hello, autotools),
# jansson (CMake + Ninja), zlib (its own configure). Goal (issue 32): accelerated configure +
# build <= 1.3x cross; the check runs emulated in both, compared separately.
# Usage: tests/bench/root.sh [BUILD_DIR] [ROUNDS]       (default: build, 3)
#   BENCH_PROJECTS="hello jansson" (default), BENCH_VARIANTS="accelerated opt-in toolchain
#   emulated cross" (default: accelerated emulated cross); ratios of absent variants are not printed.
#   BENCH_CREATE=1 first times a cold `root create` (gcc, g++, libc6-dev, make) in a fresh cache.
# The root comes from `emurun root create` (cached in XDG_CACHE_HOME, default ~/.cache/emurun).
set -eu
src=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "${1:-$src/build}" && pwd) # absolute: the cross check runs it from the source dir
rounds=${2:-3}
emurun=$build/bin/emurun
[ -x "$emurun" ] || { echo "root.sh: missing $emurun (build first: tools/build)" >&2; exit 2; }
command -v /usr/bin/time >/dev/null || { echo "root.sh: /usr/bin/time missing (apt-get install time)" >&2; exit 2; }
t=$(mktemp -d "${TMPDIR:-/tmp}/bench-root.XXXXXX")
trap 'rm -rf "$t"' EXIT
cache=${XDG_CACHE_HOME:-$HOME/.cache}
read -r -a projects <<<"${BENCH_PROJECTS:-hello jansson}"
read -r -a variants <<<"${BENCH_VARIANTS:-accelerated emulated cross}"

if [ "${BENCH_CREATE:-0}" = 1 ]; then # a cold create: its own empty cache
    /usr/bin/time -f '%e %U %S' -o "$t/create.time" \
        env XDG_CACHE_HOME="$t/cold-cache" "$emurun" root create --arch aarch64 "$t/cold" >"$t/create.log" 2>&1 ||
        { tail -n 20 "$t/create.log" >&2; exit 1; }
    read -r w u s <"$t/create.time"
    printf 'cold create (gcc, g++, libc6-dev, make)  wall %.1f s  cpu %.1f s\n' "$w" "$(echo "$u + $s" | bc)"
    rm -rf "$t/cold" "$t/cold-cache"
fi
# The same spec as the test suites (tests/integration/lib/root.sh): one cached root for all.
"$emurun" root create --arch aarch64 \
    --include python3-dev,python3-setuptools,python3-wheel,python3-pip,cmake,ninja-build "$t/root" >&2

# The first accelerated run with a given host cross toolchain compiles the probe corpus (then
# cached): paid here, not in round 1.
"$emurun" root run --accelerate --allow-revision-mismatch "$t/root" -- true 2>/dev/null
# Debian's hardening flags for arm64, as a list of NAME=VALUE.
flags=()
for v in CFLAGS CPPFLAGS CXXFLAGS LDFLAGS; do
    flags+=("$v=$(DEB_HOST_ARCH=arm64 DEB_BUILD_MAINT_OPTIONS=hardening=+all dpkg-buildflags --get "$v" |
        sed 's/ *-ffile-prefix-map=[^ ]*//')")
done

# The phase's command: PROJECT PHASE CROSS(0/1).
phase_cmd() {
    local cross=$3
    case $1:$2 in
        hello:configure) [ "$cross" = 1 ] && echo './configure --host=aarch64-linux-gnu' || echo ./configure ;;
        zlib:configure) [ "$cross" = 1 ] && echo 'CHOST=aarch64-linux-gnu ./configure' || echo ./configure ;;
        hello:build | zlib:build) echo 'make -j2' ;;
        hello:check | zlib:check) echo 'make -j2 check' ;;
        jansson:configure)
            local x=""
            [ "$cross" = 1 ] && x=" -DCMAKE_SYSTEM_NAME=Linux -DCMAKE_SYSTEM_PROCESSOR=aarch64 -DCMAKE_C_COMPILER=aarch64-linux-gnu-gcc"
            echo "cmake -G Ninja -S . -B build -DCMAKE_BUILD_TYPE=None$x" ;;
        jansson:build) echo 'ninja -C build -j2' ;;
        jansson:check) echo 'ctest --test-dir build' ;;
    esac
}

# run VARIANT PROJECT PHASE DIR: the phase timed into $t/time ("wall user sys").
run() {
    local cmd acc
    case $1 in
        cross)
            cmd=$(phase_cmd "$2" "$3" 1)
            [ "$3" = check ] && cmd="'$emurun' sandbox --arch aarch64 -- $cmd"
            (cd "$4" && env "${flags[@]}" /usr/bin/time -f '%e %U %S' -o "$t/time" sh -c "$cmd") ;;
        *)
            acc=--accelerate
            [ "$1" = emulated ] && acc=--accelerate=none
            [ "$1" = toolchain ] && acc=--accelerate=toolchain
            [ "$1" = opt-in ] && acc=--accelerate=toolchain,shell,make,cmake
            local env=()
            for f in "${flags[@]}"; do env+=(--env "$f"); done
            /usr/bin/time -f '%e %U %S' -o "$t/time" "$emurun" root run "$acc" --allow-revision-mismatch \
                "${env[@]}" --bind "$4:/src" --cwd /src "$t/root" -- sh -c "$(phase_cmd "$2" "$3" 0)" ;;
    esac
}

declare -A wall cpu
for p in "${projects[@]}"; do
    srcdir=$("$src/tools/emurun-sysroot" source --dir "$cache/emurun/src" "$p")
    for r in $(seq 1 "$rounds"); do
        n=${#variants[@]}
        for i in $(seq 0 $((n - 1))); do
            v=${variants[$(((i + r - 1) % n))]} # rotate the order each round
            rm -rf "$t/$v" && cp -a "$srcdir" "$t/$v"
            for ph in configure build check; do
                run "$v" "$p" "$ph" "$t/$v" >>"$t/$p-$v.log" 2>&1 ||
                    { echo "$p $v $ph failed:" >&2; tail -n 30 "$t/$p-$v.log" >&2; exit 1; }
                read -r w u s <"$t/time"
                wall[$p,$v,$ph,$r]=$w
                cpu[$p,$v,$ph,$r]=$(echo "$u + $s" | bc)
                printf 'round %d %-8s %-12s %-9s wall %7.1f s  cpu %7.1f s\n' "$r" "$p" "$v" "$ph" "$w" "${cpu[$p,$v,$ph,$r]}" >&2
            done
        done
    done
done

median() { sort -g | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }
# sum FIGURE P V R PHASES...: the figure summed over the phases.
sum() {
    local -n fig=$1
    local p=$2 v=$3 r=$4 total=0 ph
    shift 4
    for ph in "$@"; do total=$(echo "$total + ${fig[$p,$v,$ph,$r]}" | bc -l); done
    echo "$total"
}
echo "rounds: $rounds; load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-8s %-19s %-12s %10s %10s\n' project phase variant "wall (s)" "cpu (s)"
for p in "${projects[@]}"; do
    for phases in configure build "configure build" check; do
        for v in "${variants[@]}"; do
            # shellcheck disable=SC2086
            printf '%-8s %-19s %-12s %10.1f %10.1f\n' "$p" "${phases// /+}" "$v" \
                "$(for r in $(seq 1 "$rounds"); do sum wall "$p" "$v" "$r" $phases; done | median)" \
                "$(for r in $(seq 1 "$rounds"); do sum cpu "$p" "$v" "$r" $phases; done | median)"
        done
    done
done
# ratio P A B GOAL PHASES...: medians of the per-round ratios A/B, wall and cpu.
ratio() {
    local p=$1 a=$2 b=$3 goal=$4 r
    shift 4
    [[ " ${variants[*]} " == *" $a "* && " ${variants[*]} " == *" $b "* ]] || return 0
    # shellcheck disable=SC2068
    printf '%-8s %-19s %-24s wall %5.2fx  cpu %5.2fx  (%s)\n' "$p" "$(echo "$@" | tr ' ' +)" "$a / $b" \
        "$(for r in $(seq 1 "$rounds"); do echo "$(sum wall "$p" "$a" "$r" $@) / $(sum wall "$p" "$b" "$r" $@)" | bc -l; done | median)" \
        "$(for r in $(seq 1 "$rounds"); do echo "$(sum cpu "$p" "$a" "$r" $@) / $(sum cpu "$p" "$b" "$r" $@)" | bc -l; done | median)" \
        "$goal"
}
for p in "${projects[@]}"; do
    ratio "$p" accelerated cross "" configure
    ratio "$p" accelerated cross "" build
    ratio "$p" accelerated cross "goal <= 1.3" configure build
    ratio "$p" accelerated cross "both emulated tests" check
    ratio "$p" opt-in cross "goal <= 1.3, with make and cmake native" configure build
    ratio "$p" opt-in cross "" configure
    ratio "$p" accelerated opt-in "the opt-in tools' gain" configure build
    ratio "$p" toolchain accelerated "the native tools' gain" configure build
    ratio "$p" emulated accelerated "" configure
    ratio "$p" emulated accelerated "" build
    ratio "$p" emulated accelerated "" configure build
    ratio "$p" emulated accelerated "" check
done
