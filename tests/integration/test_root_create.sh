#!/bin/bash
# ctest-tier: root
# The shared arm64 root of the root suites (ctest fixture emurun_root, run before them): created
# once per build tree with `emurun root create` (mmdebstrap, minutes when not cached; the time is
# printed), then a second create of the same spec only unpacks the cached tarball. The root is
# an arm64 Debian root with the build essentials. Interrupting a create (SIGTERM to emurun, or
# Ctrl-C to its process group) while mmdebstrap runs or while it unpacks leaves no root behind
# and says so (exit 130 or 143: 128 + the signal), but keeps the packages downloaded so far; a create killed outright leaves no half
# root; a target file system too small is refused up front. zlib's source
# is fetched here too, so the suites after it do not download anything.
. "$(dirname "$0")/lib/common.sh"
. "$(dirname "$0")/lib/root.sh"
root_probe aarch64
command -v dpkg-source >/dev/null || skip "dpkg-source missing (apt-get install dpkg-dev)"

cold=1
have_cached_root arm64 && cold=0
start=$(date +%s)
make_root aarch64 "$T/first"
secs=$(($(date +%s) - start))
if [ "$cold" = 1 ]; then
    echo "root create (cold: mmdebstrap + unpack): ${secs} s"
else
    echo "root create (from the cache of an earlier run): ${secs} s"
fi
expect_eq "the root is arm64" arm64 "$(cat "$T/first/var/lib/dpkg/arch")"
for f in usr/bin/aarch64-linux-gnu-gcc-12 usr/bin/make usr/include/stdio.h usr/bin/python3; do
    [ -e "$T/first/$f" ] && ok "the root has /$f" || not_ok "the root has no /$f"
done

# A second create of the same spec: an unpack of the cached tarball, in seconds.
start=$(date +%s)
out=$(XDG_CACHE_HOME=$ROOT_CACHE "$EMURUN" root create --arch aarch64 --include "$ROOT_INCLUDE" \
    "$T/second" 2>&1)
secs=$(($(date +%s) - start))
expect_contains "second create is from the cache" "$out" "from the cached"
[ "$secs" -lt 120 ] && ok "second create took ${secs} s" || not_ok "second create took ${secs} s"
rm -rf "$T/second"
# --json: one document on stdout saying what was made and from where.
XDG_CACHE_HOME=$ROOT_CACHE "$EMURUN" root create --arch aarch64 --include "$ROOT_INCLUDE" --json \
    "$T/second" >"$T/second.json" 2>/dev/null || true
expect_eq "root create --json: dir, arches, suite, from the cache, nothing pinned" \
    "$T/second aarch64 arm64 bookworm True []" \
    "$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["dir"], d["arch"], d["debian_arch"], d["suite"], d["from_cache"], d["pinned"])' "$T/second.json" 2>&1)"
rm -rf "$T/second"

# wait_unpacking DIR: until a create into DIR has begun to unpack (at most 20 s): it unpacks
# into a hidden sibling and renames that to DIR when complete.
wait_unpacking() {
    local i
    for i in $(seq 1 400); do
        compgen -G "$(dirname "$1")/.$(basename "$1").emurun-partial-*/etc" >/dev/null && break
        sleep 0.05
    done
}

# code_of SIGNAL: what an interrupted create exits with, as `run` and a shell do (128 + N).
code_of() { case $1 in INT) echo 130 ;; TERM) echo 143 ;; HUP) echo 129 ;; esac; }

# interrupt SIGNAL KILL_TARGET: start a create, wait until it is unpacking, send SIGNAL.
interrupt() {
    local sig=$1 target=$2 dir=$T/int-$1 pid rc=0 i
    setsid bash -c 'XDG_CACHE_HOME=$1 exec "$2" root create --arch aarch64 --include "$3" "$4"' \
        _ "$ROOT_CACHE" "$EMURUN" "$ROOT_INCLUDE" "$dir" >"$T/int-$sig.log" 2>&1 &
    pid=$!
    wait_unpacking "$dir"
    if [ "$target" = group ]; then kill -"$sig" -- -"$pid"; else kill -"$sig" "$pid"; fi
    wait "$pid" || rc=$?
    expect_eq "create interrupted by SIG$sig ($target): exit 128 + the signal" "$(code_of "$sig")" "$rc"
    expect_contains "create interrupted by SIG$sig: says so" "$(cat "$T/int-$sig.log")" \
        "interrupted by SIG$sig"
    [ ! -e "$dir" ] && ok "create interrupted by SIG$sig: nothing left behind" ||
        not_ok "create interrupted by SIG$sig left $dir ($(ls "$dir" | head -n3 | tr '\n' ' '))"
}
interrupt TERM emurun
interrupt INT group # what Ctrl-C does: the terminal signals the whole foreground group
expect_eq "no partial tarball in the cache" "" \
    "$(ls "$ROOT_CACHE/emurun/roots" | grep -v '\.tar$\|\.lock$' || true)"
[ -z "$(ls -A "$T" | grep emurun-partial || true)" ] && ok "interrupted unpacks left no partial root" ||
    not_ok "an interrupted unpack left $(ls -A "$T" | grep emurun-partial)"

# Killed outright while unpacking (no cleanup can run): the root appears whole or not at all, so
# a half root is never taken for one.
# The unpack of a cached root takes about a second here: killed as soon as it is seen, and
# tried again (at most 3 times) when the create was quicker than the test.
for attempt in 1 2 3; do
    rm -rf "$T/killed"
    setsid bash -c 'XDG_CACHE_HOME=$1 exec "$2" root create --arch aarch64 --include "$3" "$4"' \
        _ "$ROOT_CACHE" "$EMURUN" "$ROOT_INCLUDE" "$T/killed" >"$T/killed.log" 2>&1 &
    pid=$!
    wait_unpacking "$T/killed"
    killed=0
    kill -KILL "$pid" 2>/dev/null && killed=1
    wait "$pid" || true
    [ "$killed" = 0 ] || break
done
[ "$killed" = 1 ] || not_ok "three creates finished before they could be killed while unpacking"
sleep 1 # the namespace's processes die with their pid 1 (parent-death signal)
[ ! -e "$T/killed" ] && ok "a create killed while unpacking left no root at its directory" ||
    not_ok "a create killed while unpacking left $T/killed ($(ls "$T/killed" | head -n3 | tr '\n' ' '))"
expect_refused_run() { local rc=0; "$EMURUN" root run "$1" -- true 2>/dev/null || rc=$?; echo $rc; }
expect_eq "the killed create's directory is no root" 125 "$(expect_refused_run "$T/killed")"
rm -rf "$T"/.killed.emurun-partial-*

# A target on a file system too small for the root: refused before unpacking, nothing made.
if [ "$(id -u)" = 0 ]; then
    mkdir -p "$T/small"
    out=$(unshare -m sh -c 'mount -t tmpfs -o size=50m tmpfs "$1" || exit 99
        XDG_CACHE_HOME=$2 "$3" root create --arch aarch64 --include "$4" "$1/r"
        echo "rc=$? left=[$(ls -A "$1")]"' _ "$T/small" "$ROOT_CACHE" "$EMURUN" "$ROOT_INCLUDE" 2>&1) ||
        true
    expect_contains "too small a file system: refused with the sizes" "$out" "MiB free"
    expect_contains "too small a file system: exit 125, nothing left" "$out" "rc=125 left=[]"
fi

# Interrupted while mmdebstrap runs (a cache of its own, so not a cache hit): SIGTERM to emurun,
# or SIGINT to the whole process group as Ctrl-C sends it. Every process in the namespace is
# stopped (dpkg and mmdebstrap's worker would otherwise finish minutes of work first); its temp
# dirs, the partial tarball and the target directory are removed; it is not retried.
cold_interrupt() { # SIG TARGET
    local sig=$1 target=$2 c=$T/cold-$1 pid rc=0 i start
    setsid bash -c 'XDG_CACHE_HOME=$1 exec "$2" root create --arch aarch64 "$3"' \
        _ "$c" "$EMURUN" "$T/cold-dir-$sig" >"$T/cold-$sig.log" 2>&1 &
    pid=$!
    for i in $(seq 1 600); do # until the essential set is kept, during the extract (at most 120 s)
        grep -q "^I: running special hook: sync-out /var/cache/apt/archives" "$T/cold-$sig.log" &&
            break
        sleep 0.2
    done
    sleep 3 # into the emulated install of the essential set
    start=$(date +%s)
    if [ "$target" = group ]; then kill -"$sig" -- -"$pid"; else kill -"$sig" "$pid"; fi
    wait "$pid" || rc=$?
    local secs=$(($(date +%s) - start))
    expect_eq "SIG$sig in mmdebstrap ($target): exit 128 + the signal" "$(code_of "$sig")" "$rc"
    [ "$secs" -le 30 ] && ok "SIG$sig in mmdebstrap: stopped in ${secs} s" ||
        not_ok "SIG$sig in mmdebstrap: took ${secs} s to stop"
    expect_contains "SIG$sig in mmdebstrap: says so" "$(cat "$T/cold-$sig.log")" \
        "interrupted by SIG$sig"
    grep -q "retrying" "$T/cold-$sig.log" && not_ok "SIG$sig: an interrupted mmdebstrap was retried" ||
        ok "SIG$sig: an interrupted mmdebstrap is not retried"
    left=$(ls "$c/emurun/tmp" "$c/emurun/roots" 2>/dev/null | grep -v '^/\|^$\|\.lock$' || true)
    expect_eq "SIG$sig in mmdebstrap: no temp dir or partial tarball left" "" "$left"
    [ ! -e "$T/cold-dir-$sig" ] && ok "SIG$sig in mmdebstrap: no target dir" ||
        not_ok "SIG$sig in mmdebstrap left $T/cold-dir-$sig"
    # The packages it had downloaded (the essential set, kept when extracted) are kept for the
    # next create (synced into its temp root).
    local debs
    debs=$(find "$c/emurun/debs/arm64" -name '*.deb' 2>/dev/null | wc -l)
    [ "$debs" -ge "${debs_before:-1}" ] && [ "$debs" -gt 0 ] &&
        ok "SIG$sig in mmdebstrap: the $debs packages downloaded so far stay in the cache" ||
        not_ok "SIG$sig in mmdebstrap: $debs packages in the cache (before: ${debs_before:-0})"
    debs_before=$debs
}
cold_interrupt TERM emurun
# mmdebstrap's progress lines say the stage and the time so far; no estimate without a
# previous create of the arch (a cache of its own).
grep -qE "^I: .*apt-get update.* \[stage 1/6, 0:[0-9]{2}\]$" "$T/cold-TERM.log" &&
    ok "the stage and the time on mmdebstrap's lines" ||
    not_ok "no stage on the apt-get update line: $(grep '^I: ' "$T/cold-TERM.log" | head -n5)"
grep -q "min left\]" "$T/cold-TERM.log" && not_ok "an estimate without any previous create" ||
    ok "no estimate without a previous create"
# The second one in the first one's cache: it starts from the packages kept (and keeps them).
cp -a "$T/cold-TERM" "$T/cold-INT"
echo 3000 >"$T/cold-INT/emurun/roots/.create-seconds-arm64" # a create of arm64 took 50 min
cold_interrupt INT group
grep -qE "I: downloading packages.* \[stage 2/6, [0-9]+:[0-9]{2}; about (4[0-9]|50) min left\]" "$T/cold-INT.log" &&
    ok "...about how long is left" || not_ok "no estimate: $(grep '^I: ' "$T/cold-INT.log" | head -n3)"
expect_contains "a create after an interrupted one syncs the kept packages in" \
    "$(cat "$T/cold-INT.log")" "sync-in $T/cold-INT/emurun/debs/arm64"

# Requests that cannot work fail at once, each saying why and none retried as a mirror mid-sync:
# a suite the mirror does not have (apt's Release 404), a package apt cannot find, and a pin to
# a revision the archive no longer has (bookworm: the host's cross gcc is built from gcc-12
# 12.2.0-14, the archive has only 12.2.0-14+deb12u1) — all found once apt has the index, before
# minutes of emulated dpkg. A cache of their own: no cached tarball answers them.
refused_create() { # NAME TEXT ARGS...: root create ARGS must fail within 180 s saying TEXT
    local name=$1 want=$2 rc=0 start secs
    shift 2
    start=$(date +%s)
    XDG_CACHE_HOME=$T/req-cache "$EMURUN" root create --arch aarch64 "$@" "$T/req-$name" \
        >"$T/req-$name.log" 2>&1 || rc=$?
    secs=$(($(date +%s) - start))
    expect_eq "$name: refused (125)" 125 "$rc"
    expect_contains "$name: says why" "$(cat "$T/req-$name.log")" "$want"
    grep -q "retrying" "$T/req-$name.log" && not_ok "$name: retried as if the mirror were mid-sync" ||
        ok "$name: not retried"
    [ "$secs" -le 180 ] && ok "$name: refused in ${secs} s" || not_ok "$name: refused only after ${secs} s"
    [ ! -e "$T/req-$name" ] && ok "$name: no directory left" || not_ok "$name: left $T/req-$name"
}
refused_create suite "the mirror has no suite nosuch" --suite nosuch
refused_create include "Unable to locate package emurun-no-such-package" \
    --include emurun-no-such-package
host_rev=$(dpkg-query -W -f '${Built-Using}' gcc-12-aarch64-linux-gnu 2>/dev/null |
    sed -n 's/.*gcc-12 (= \([^)]*\)).*/\1/p')
if [ -n "$host_rev" ] && ! apt-cache madison gcc-12 | grep -q " $host_rev "; then
    refused_create pin "has no gcc-12 $host_rev for arm64, the revision the host's cross toolchain is built from (it has: " \
        --pin-toolchain
    expect_contains "pin: the way out named" "$(cat "$T/req-pin.log")" "snapshot.debian.org"
else
    echo "# --pin-toolchain refusal not checked: the archive has the host cross gcc's revision" \
        "${host_rev:-(none installed)} (a pinned create would take minutes)"
fi

zlib_source
ok "zlib's source is in the cache"
finish
