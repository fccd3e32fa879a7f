#!/bin/bash
# The shared arm64 root of the root suites (ctest fixture emurun_root, run before them): created
# once per build tree with `emurun root create` (mmdebstrap, minutes when not cached; the time is
# printed), then a second create of the same spec only unpacks the cached tarball. The root is
# an arm64 Debian root with the build essentials. Interrupting a create (SIGTERM to emurun, or
# Ctrl-C to its process group) while it unpacks leaves nothing behind and says so. zlib's source
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

# interrupt SIGNAL KILL_TARGET: start a create, wait until it is unpacking, send SIGNAL.
interrupt() {
    local sig=$1 target=$2 dir=$T/int-$1 pid rc=0 i
    setsid bash -c 'XDG_CACHE_HOME=$1 exec "$2" root create --arch aarch64 --include "$3" "$4"' \
        _ "$ROOT_CACHE" "$EMURUN" "$ROOT_INCLUDE" "$dir" >"$T/int-$sig.log" 2>&1 &
    pid=$!
    for i in $(seq 1 400); do # until the unpack has begun (at most 20 s)
        [ -d "$dir/etc" ] && break
        sleep 0.05
    done
    if [ "$target" = group ]; then kill -"$sig" -- -"$pid"; else kill -"$sig" "$pid"; fi
    wait "$pid" || rc=$?
    expect_eq "create interrupted by SIG$sig ($target): exit 125" 125 "$rc"
    expect_contains "create interrupted by SIG$sig: says so" "$(cat "$T/int-$sig.log")" \
        "interrupted by SIG$sig"
    [ ! -e "$dir" ] && ok "create interrupted by SIG$sig: nothing left behind" ||
        not_ok "create interrupted by SIG$sig left $dir ($(ls "$dir" | head -n3 | tr '\n' ' '))"
}
interrupt TERM emurun
interrupt INT group # what Ctrl-C does: the terminal signals the whole foreground group
expect_eq "no partial tarball in the cache" "" \
    "$(ls "$ROOT_CACHE/emurun/roots" | grep -v '\.tar$\|\.lock$' || true)"

# Interrupted while mmdebstrap runs (a cache of its own, so not a cache hit): SIGTERM reaches
# mmdebstrap through emurun and the namespace's pid 1; its temp dirs, the partial tarball and
# the target directory are removed.
c=$T/cold-cache
setsid bash -c 'XDG_CACHE_HOME=$1 exec "$2" root create --arch aarch64 "$3"' \
    _ "$c" "$EMURUN" "$T/cold" >"$T/cold.log" 2>&1 &
pid=$!
for i in $(seq 1 200); do # until mmdebstrap has started (at most 20 s), then 5 s more
    compgen -G "$c/emurun/tmp/create-*" >/dev/null && break
    sleep 0.1
done
sleep 5
kill -TERM "$pid"
rc=0
wait "$pid" || rc=$?
expect_eq "create interrupted in mmdebstrap: exit 125" 125 "$rc"
expect_contains "create interrupted in mmdebstrap: says so" "$(cat "$T/cold.log")" \
    "interrupted by SIGTERM"
grep -q "retrying" "$T/cold.log" && not_ok "an interrupted mmdebstrap was retried" ||
    ok "an interrupted mmdebstrap is not retried"
left=$(ls "$c/emurun/tmp" "$c/emurun/roots" 2>/dev/null | grep -v '^/\|^$\|\.lock$' || true)
expect_eq "create interrupted in mmdebstrap: no temp dir or partial tarball left" "" "$left"
[ ! -e "$T/cold" ] && ok "create interrupted in mmdebstrap: no target dir" ||
    not_ok "create interrupted in mmdebstrap left $T/cold"

zlib_source
ok "zlib's source is in the cache"
finish
