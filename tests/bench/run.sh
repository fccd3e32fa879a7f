#!/bin/bash
# The start-up and runner benchmark (issue 15's table), measured side by side in one run:
# every variant of a group runs once per round, the order rotated each round so drift and
# noise hit all alike; one warm-up round is not counted; each row is the median of the
# per-round ratios A/B, with their min and max, and the median time per run of A and B. A row's
# A and B alternate run by run within each sample (the helper's `repeat -p`; B first in every
# other round, `-P`), so a burst of load on a shared machine hits both sides alike. A run that
# fails stops the benchmark (exit 1): a table of failed runs would look like a fast one.
# Needs a build with fixtures and helpers (tools/build) and qemu-user(-static).
# Usage: tests/bench/run.sh [BUILD_DIR] [ROUNDS]        (default: build, 5 counted rounds)
#   BENCH_STEPS_BIG=5000 BENCH_REPS=20 BENCH_BIG_RSS=1   to change sizes (defaults shown)
#   BENCH_ROWS=runner   only the runner rows (emurun run against the bash loop)
#   BENCH_ROWS=startup  only the start-up rows (exec replayed and first runs, shims, sandbox
#                       against direct qemu)
#   BENCH_LOGS=DIR      where the runner rows write their logs (default: a directory in
#                       /dev/shm when it is a writable tmpfs, else in $TMPDIR). Why a tmpfs:
#                       on an ext4 without a journal (this VM's /) every file creation scans the
#                       inodes deleted in the last 30 s (ext4's recently_deleted), so each side
#                       paid for the logs the other had just removed, depending on which block
#                       group its directory landed in: the 500-step ratio swung 1.06-1.34
#                       between rounds. Both sides still create, write and close a log per step.
set -eu
die() { echo "run.sh: $*" >&2; exit 2; }
root=$(cd "$(dirname "$0")/../.." && pwd)
[ -d "${1:-$root/build}" ] || die "no build directory ${1:-$root/build} (build first: tools/build)"
build=$(cd "${1:-$root/build}" && pwd)
rounds=${2:-5}
reps=${BENCH_REPS:-20}          # runs per sample for the start-up rows
steps_big=${BENCH_STEPS_BIG:-5000}
emurun=$build/bin/emurun
H=$build/tests/helpers
ps=$build/tests/fixtures/aarch64/probe-static
pd=$build/tests/fixtures/aarch64/probe
sr=/usr/aarch64-linux-gnu
qs=/usr/bin/qemu-aarch64-static
for f in "$emurun" "$H/repeat" "$H/print_bytes" "$ps" "$pd" "$qs"; do
    [ -x "$f" ] || die "missing $f (build first: tools/build; tools/install-deps)"
done
case $rounds in '' | *[!0-9]*) die "ROUNDS must be a number >= 5, not '$rounds'" ;; esac
rounds=$((10#$rounds))
[ "$rounds" -ge 5 ] || die "ROUNDS must be >= 5"
for n in "$reps" "$steps_big"; do
    case $n in '' | *[!0-9]*) die "BENCH_REPS and BENCH_STEPS_BIG must be numbers >= 1" ;; esac
    [ $((10#$n)) -ge 1 ] || die "BENCH_REPS and BENCH_STEPS_BIG must be numbers >= 1"
done
reps=$((10#$reps)) steps_big=$((10#$steps_big))
case ${BENCH_ROWS:-all} in all | runner | startup) ;;
    *) die "BENCH_ROWS must be runner or startup (or unset for every row), not '$BENCH_ROWS'" ;; esac
if [ -n "${BENCH_LOGS:-}" ]; then
    [ -d "$BENCH_LOGS" ] && [ -w "$BENCH_LOGS" ] ||
        die "BENCH_LOGS=$BENCH_LOGS is not a writable directory"
fi
t='' logs_root='' interrupted=''
trap 'rm -rf "$t" "$logs_root"' EXIT
# Ctrl-C reaches the commands too; the trap lets the one running finish (bash runs it after)
# before the clean-up removes the directories it writes to.
trap 'interrupted=1' INT TERM
t=$(mktemp -d)
if [ -n "${BENCH_LOGS:-}" ]; then
    logs_root=$(mktemp -d "$BENCH_LOGS/emurun-bench.XXXXXX")
elif [ "$(stat -f -c %T /dev/shm 2>/dev/null)" = tmpfs ] && [ -w /dev/shm ]; then
    logs_root=$(mktemp -d /dev/shm/emurun-bench.XXXXXX)
else
    logs_root=$(mktemp -d)
fi
# The file system of the runner rows' logs, as mount names it (stat -f says ext2/ext3 for ext4).
logs_fs=$(findmnt -n -o FSTYPE -T "$logs_root" 2>/dev/null | head -n1)
[ -n "$logs_fs" ] || logs_fs=$(stat -f -c %T "$logs_root")

# --- set-up ------------------------------------------------------------------------------------
# emurun's launch records (issue 28) in a cache of the benchmark's own: `emurun exec` rows
# replay a record made in the warm-up round; the first-run rows cut theirs before each run.
export EMURUN_CACHE_DIR=$t/cache
"$emurun" shim add ps --target "$ps" --dir "$t/shims" >/dev/null
"$emurun" shim add pd --target "$pd" --sysroot "$sr" --dir "$t/shims" >/dev/null
# The loader prefix emurun builds for SR (a dir of symlinks): every dynamic variant uses it, so
# the rows compare launchers, not qemu's path lookups under two different prefixes.
lp=$("$emurun" shim list --dir "$t/shims" --json | sed -n 's/^ *"ld_prefix": "\(.*\)",*$/\1/p' | head -n1)
[ -d "$lp" ] || { echo "run.sh: no loader prefix for $pd (got '$lp')" >&2; exit 2; }
printf '#!/bin/sh\nexec %s -L %s %s "$@"\n' "$qs" "$lp" "$pd" >"$t/wrapper"
chmod +x "$t/wrapper"
# The record a command leaves: the one file it adds to the cache's launch dir.
record_of() {
    local before
    before=$(ls "$t/cache/launch" 2>/dev/null || true)
    "$@" >/dev/null
    comm -13 <(echo "$before") <(ls "$t/cache/launch") | sed "s|^|$t/cache/launch/|" | head -n1
}
# First runs: a request of their own (--arch: another record than the exec rows'), its record
# cut to nothing before each run (a corrupt record is planned again, as a missing one is); the
# qemu side truncates a file too, so both pay the same shell.
rec_s=$(record_of "$emurun" exec --arch aarch64 -- "$ps" exit 0)
rec_d=$(record_of "$emurun" exec --arch aarch64 --sysroot "$sr" -- "$pd" exit 0)
[ -f "$rec_s" ] && [ -f "$rec_d" ] || die "emurun exec left no launch record in $t/cache/launch"
: >"$t/dummy"
cut_sh=': >"$0"; exec "$@"'
pipeline() { # FILE N: N steps running `true`
    { printf '{"name": "bench", "steps": ['
      for ((i = 0; i < $2; i++)); do
          printf '%s{"name": "s%d", "argv": ["/bin/true"]}' "$([ $i -gt 0 ] && echo ,)" "$i"
      done
      printf ']}\n'; } >"$1"
}
pipeline "$t/p500.json" 500
pipeline "$t/pbig.json" "$steps_big"
cat >"$t/loop.sh" <<'EOF'
# what emurun run replaces: a bash loop running each step with its output in a log
n=$1 logs=$2
mkdir -p "$logs"
for ((i = 0; i < n; i++)); do /bin/true >"$logs/s$i.log" 2>&1; done
EOF
sandbox_ok=0
"$emurun" sandbox --arch aarch64 -- "$ps" exit 0 >/dev/null 2>&1 && sandbox_ok=1

# --- variants: each prints "WALL_NS CPU_NS MAXRSS_KIB" of A, then of B, for one sample ------
# Each is a pair: A and B run in turn, run by run (`repeat $pflag`: -p A B A B ..., -P B A B A
# ...). A start costs 8-14 ms; samples of one side at a time (~0.2 s each) let a burst of load
# on this shared machine hit one side only.
pflag=-p
alternate() { "$H/repeat" "$pflag" "$@"; }
v_exec_s() { alternate "$reps" "$emurun" exec -- "$ps" exit 0 ::: "$qs" "$ps" exit 0; }
v_exec_d() { alternate "$reps" "$emurun" exec --sysroot "$sr" -- "$pd" exit 0 ::: "$qs" -L "$lp" "$pd" exit 0; }
v_first_s() { alternate "$reps" sh -c "$cut_sh" "$rec_s" "$emurun" exec --arch aarch64 -- "$ps" exit 0 ::: sh -c "$cut_sh" "$t/dummy" "$qs" "$ps" exit 0; }
v_first_d() { alternate "$reps" sh -c "$cut_sh" "$rec_d" "$emurun" exec --arch aarch64 --sysroot "$sr" -- "$pd" exit 0 ::: sh -c "$cut_sh" "$t/dummy" "$qs" -L "$lp" "$pd" exit 0; }
v_shim_s() { alternate "$reps" "$t/shims/ps" exit 0 ::: "$qs" "$ps" exit 0; }
v_shim_d() { alternate "$reps" "$t/shims/pd" exit 0 ::: "$qs" -L "$lp" "$pd" exit 0; }
v_shim_w() { alternate "$reps" "$t/shims/pd" exit 0 ::: "$t/wrapper" exit 0; }
# Both inside one sandbox: a program run through its binfmt_misc entry, and qemu run directly.
v_sandbox() {
    "$emurun" sandbox --arch aarch64 -- "$H/repeat" "$pflag" "$reps" "$ps" exit 0 ::: "$qs" "$ps" exit 0
}
# The runner rows: emurun run -j1 -q and the bash loop, each in a fresh directory of its own
# (mktemp, paid by both); sh in front of emurun only drops its table, and the loop it is
# compared with pays a bash start too. 500-step samples are 3 pairs, 5,000-step ones 1.
run_sh='d=$(mktemp -d -p "$0") && cd "$d" && exec "$1" run "$2" -j 1 -q --report r.json --log-dir logs >/dev/null'
loop_sh='d=$(mktemp -d -p "$0") && exec bash "$1" "$2" "$d/logs"'
runner_pair() { # COUNT STEPS PIPELINE
    local rc=0
    alternate "$1" sh -c "$run_sh" "$logs_root" "$emurun" "$3" ::: sh -c "$loop_sh" "$logs_root" "$t/loop.sh" "$2" || rc=$?
    rm -rf "${logs_root:?}"/tmp.*
    return $rc
}
v_run500() { runner_pair 3 500 "$t/p500.json"; }
v_runbig() { runner_pair 1 "$steps_big" "$t/pbig.json"; }

declare -A sample
# measure ROUNDS VARIANT...: warm-up round 0, then ROUNDS counted rounds, order rotated.
measure() {
    local n=$1
    shift
    local k=$# vs=("$@") r i
    local out
    for ((r = 0; r <= n; r++)); do
        [ $((r % 2)) = 0 ] && pflag=-p || pflag=-P
        for ((i = 0; i < k; i++)); do
            local v=${vs[$(((i + r) % k))]}
            out=$("$v") || [ -n "$interrupted" ] ||
                { echo "run.sh: $v failed in round $r: a run exited non-zero (its messages are above)" >&2; exit 1; }
            if [ -n "$interrupted" ]; then
                echo "run.sh: interrupted" >&2
                exit 130
            fi
            out=$(tail -n1 <<<"$out")
            [[ $out =~ ^[0-9]+( [0-9]+){5}$ ]] || { echo "run.sh: $v printed '$out', not six numbers" >&2; exit 1; }
            sample[$v,$r]=$out
        done
    done
}
# stats: min, median, max of the numbers on stdin
stats() { sort -g | awk '{ a[NR] = $1 } END { m = NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2; printf "%.3f %.3f %.3f\n", a[1], m, a[NR] }'; }
# pair A B ROUND: the six figures of A's and B's samples of a round (B empty: A is a pair)
pair() { echo "${sample[$1,$3]}${2:+ ${sample[$2,$3]}}"; }
# per_run_ms A B FIELD PER: median wall per run in ms of field FIELD (1 A's, 4 B's)
per_run_ms() {
    local r
    for ((r = 1; r <= rounds; r++)); do
        pair "$1" "$2" "$r" | awk -v f="$3" -v per="$4" '{ print $f / per / 1e6 }'
    done | stats | awk '{ print $2 }'
}
# ratios A B FIELD: the per-round ratios of field FIELD (1 wall, 2 cpu) of A's and B's samples
ratios() {
    local r
    for ((r = 1; r <= rounds; r++)); do
        pair "$1" "$2" "$r" | awk -v f="$3" '{ print $f / $(f + 3) }'
    done
}
# row LABEL GOAL A B PER_A PER_B (B "": A is a pair variant)
row() {
    local lo med hi clo cmed chi
    read -r lo med hi < <(ratios "$3" "$4" 1 | stats)
    read -r clo cmed chi < <(ratios "$3" "$4" 2 | stats)
    printf '| %s | %s | **%s** | %s–%s | %s (%s–%s) | %s / %s ms |\n' "$1" "$2" "$med" "$lo" "$hi" \
        "$cmed" "$clo" "$chi" "$(per_run_ms "$3" "$4" 1 "$5")" "$(per_run_ms "$3" "$4" 4 "$6")"
}

echo "emurun benchmark: $(date -u +%Y-%m-%d) on $(uname -m), $(nproc) CPUs, $(uname -r);" \
    "$rounds counted rounds after 1 warm-up, $reps runs per start-up sample;" \
    "SR = $sr, P = emurun's loader prefix for it; runner logs on $logs_fs;" \
    "load average $(cut -d' ' -f1-3 /proc/loadavg)"
startup=1
[ "${BENCH_ROWS:-all}" = runner ] && startup=0
if [ $startup = 1 ]; then
    variants=(v_exec_s v_exec_d v_first_s v_first_d v_shim_s v_shim_d v_shim_w)
    [ $sandbox_ok = 1 ] && variants+=(v_sandbox)
    measure "$rounds" "${variants[@]}"
fi
runner=1
[ "${BENCH_ROWS:-all}" = startup ] && runner=0
[ $runner = 1 ] && measure "$rounds" v_run500 v_runbig
echo
echo "| what (A / B) | goal | wall ratio, median | min–max | CPU ratio, median (min–max) | wall per run, median of A / of B |"
echo "|---|---|---|---|---|---|"
if [ $startup = 1 ]; then
row '`emurun exec` / `qemu-aarch64-static`, static program' '≤ 1.05' v_exec_s '' "$reps" "$reps"
row '`emurun exec --sysroot SR` / `qemu-aarch64-static -L P`, dynamic' '≤ 1.05' v_exec_d '' "$reps" "$reps"
row '`emurun exec`, first run (no valid record: planned, record written) / `qemu-aarch64-static`, static; both behind `sh`' '≤ 1.3' v_first_s '' "$reps" "$reps"
row '`emurun exec --sysroot SR`, first run / `qemu-aarch64-static -L P`, dynamic; both behind `sh`' '≤ 1.3' v_first_d '' "$reps" "$reps"
row 'shim / `qemu-aarch64-static`, static program' '≤ 1.03' v_shim_s '' "$reps" "$reps"
row 'shim / `qemu-aarch64-static -L P`, dynamic' '≤ 1.03' v_shim_d '' "$reps" "$reps"
row 'shim / `#!/bin/sh` + `exec qemu-aarch64-static -L P target "$@"`, dynamic' '≤ 0.85' v_shim_w '' "$reps" "$reps"
if [ $sandbox_ok = 1 ]; then
    row 'sandbox (kernel binfmt, static qemu) / `qemu-aarch64-static` in the same sandbox, per exec' '≤ 1.03' v_sandbox '' "$reps" "$reps"
else
    echo '| sandbox / direct qemu | ≤ 1.03 | n/a: `emurun sandbox` does not work here (see `emurun doctor`) | | | |'
fi
fi
if [ $runner = 1 ]; then
row '`emurun run -j1 -q`, 500 × `true` / bash loop, output to a log each' '≤ 1.15' v_run500 '' 1500 1500
row "\`emurun run -j1 -q\`, $steps_big × \`true\` / bash loop" '≤ 1.15' v_runbig '' "$steps_big" "$steps_big"
linear=$(awk -v n="$steps_big" 'BEGIN { printf "%.3g", n / 500 * 1.05 }')
# emurun's side of the big sample against a third of its side of the 500-step one (3 runs).
for ((r = 1; r <= rounds; r++)); do
    sample[v_lin,$r]=$(echo "${sample[v_runbig,$r]} ${sample[v_run500,$r]}" |
        awk '{ printf "%.0f %.0f %.0f %.0f %.0f %.0f\n", $1, $2, $3, $7 / 3, $8 / 3, $9 }')
done
row "\`emurun run -j1 -q\`, $steps_big steps / 500 steps (linear)" "≤ $linear" v_lin '' 1 1
fi

# Max RSS of emurun while a step writes 1 GiB to each stream (3 runs; not a ratio).
if [ $startup = 0 ] || [ $runner = 0 ]; then
    : # BENCH_ROWS=runner or startup: not this row
elif [ "${BENCH_BIG_RSS:-1}" = 1 ] && [ "$(df -Pk "$t" | awk 'NR == 2 { print $4 }')" -gt 3000000 ]; then
    gib=$((1024 * 1024 * 1024))
    printf '{"name": "big", "steps": [{"name": "flood", "argv": ["%s", "%d", "%d"]}]}\n' \
        "$H/print_bytes" "$gib" "$gib" >"$t/big.json"
    rss=$(for i in 1 2 3; do
        rm -rf "$t/run" && mkdir -p "$t/run" && cd "$t/run"
        "$H/repeat" 1 sh -c 'exec "$0" run "$1" -q --report r.json --log-dir logs >/dev/null' \
            "$emurun" "$t/big.json" | awk '{ print $3 / 1024 }'
        cd "$t" && rm -rf "$t/run"
    done | stats)
    read -r lo med hi <<<"$rss"
    echo "| max RSS of emurun (and its step) while a step writes 1 GiB to each stream | ≤ 16 MiB | **$med MiB** | $lo–$hi | | 3 runs |"
else
    echo '| max RSS with 1 GiB streams | ≤ 16 MiB | not run: BENCH_BIG_RSS=0, or less than 3 GB free in TMPDIR | | | |'
fi
if [ $startup = 1 ]; then
    echo '| hybrid (cross compilers + emulated tests) / full emulation, zlib | ≥ 8× | not run by this command (a foreign Debian root and a fully emulated build, tens of minutes): `tests/bench/root.sh` measures it, docs/benchmarks.md "Foreign roots" (full emulation / cross build with emulated `make check`: 19.7× median of 3 rounds; 12.4× when issue 15 was filed) | | | |'
fi
