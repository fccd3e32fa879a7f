#!/bin/bash
# ctest-tier: quick
# The native root cache (tests/integration/lib/native_root.sh) with a stub mmdebstrap that takes a
# second to write its tarball: two runs making the same root at once (two checkouts share the
# cache) each write a part of their own, so the cached root is one whole tarball, both unpack it,
# and no part is left behind; a failed create leaves no part either, a killed run's a day later.
# A cached root older than 30 days is made again; while the archive cannot be reached the old one
# is used, and with none cached the script skips.
. "$(dirname "$0")/lib/common.sh"
command -v dpkg >/dev/null || skip "dpkg missing (the cache key names dpkg's arch)"
lib=$(cd "$(dirname "$0")" && pwd)/lib
mkdir -p "$T/bin" "$T/content/etc"
echo 'PRETTY_NAME="stub"' >"$T/content/etc/os-release"
# mmdebstrap ... SUITE TARGET MIRROR: the stub root, written slowly, into TARGET.
cat >"$T/bin/mmdebstrap" <<'STUB'
#!/bin/bash
t=${*: -2:1}
echo "$t" >>"$STUB_LOG"
case ${STUB_FAIL:-} in
    net) echo "E: Temporary failure resolving 'deb.debian.org'" >&2; exit 1 ;;
    ?*) echo "E: stub failure" >&2; : >"$t"; exit 1 ;;
esac
tar -cf - -C "$STUB_ROOT" . | { sleep 1; cat; } >>"$t"
STUB
chmod +x "$T/bin/mmdebstrap"
export STUB_LOG=$T/mmdebstrap.log STUB_ROOT=$T/content EMURUN_ROOT_CACHE=$T/cache PATH=$T/bin:$PATH
# make_root DIR: native_root trixie DIR in a script of its own (its own exit and cleanup).
make_root() { bash -c '. "$1/common.sh"; . "$1/native_root.sh"; native_root trixie "$2"' _ "$lib" "$1"; }

make_root "$T/r1" >"$T/r1.out" 2>&1 &
p1=$!
make_root "$T/r2" >"$T/r2.out" 2>&1 &
p2=$!
rc1=0 && wait "$p1" || rc1=$?
rc2=0 && wait "$p2" || rc2=$?
expect_eq "two runs making the root at once: both succeed" "0 0" "$rc1 $rc2"
expect_eq "... mmdebstrap wrote two distinct parts" 2 "$(sort -u "$STUB_LOG" | wc -l)"
for r in r1 r2; do
    expect_eq "... $r unpacked the whole root" 'PRETTY_NAME="stub"' "$(cat "$T/$r/etc/os-release" 2>/dev/null)"
done
expect_eq "... the cache holds the root and no part" "1 0" \
    "$(find "$T/cache/native" -name '*.tar' | wc -l) $(find "$T/cache/native" -name '*.part*' | wc -l)"
tarball=$(find "$T/cache/native" -name '*.tar')
touch -d '40 days ago' "$tarball"
rc=0 && STUB_FAIL=net make_root "$T/r4" >"$T/r4.out" 2>&1 || rc=$?
expect_eq "a root older than 30 days, the archive unreachable: the old one is used" \
    "0 $(date -d '40 days ago' +%F)" "$rc $(sed -n 's/^# using the cached trixie root of //p' "$T/r4.out")"
expect_eq "... unpacked" 'PRETTY_NAME="stub"' "$(cat "$T/r4/etc/os-release" 2>/dev/null)"
: >"$STUB_LOG"
make_root "$T/r5" >"$T/r5.out" 2>&1
expect_eq "a root older than 30 days: made again" 1 "$(wc -l <"$STUB_LOG")"
expect_eq "... the cache's tarball is new" "" "$(find "$tarball" -mtime +1)"
: >"$tarball.part.99999" && touch -d '2 days ago' "$tarball.part.99999"
: >"$tarball.part.99998"
touch -d '40 days ago' "$tarball"
make_root "$T/r7" >"$T/r7.out" 2>&1
expect_eq "a killed run's part a day old is removed, a newer one (a run still writing) kept" \
    "$tarball.part.99998" "$(find "$T/cache/native" -name '*.part.*')"
rm -rf "$T/cache"
rc=0 && STUB_FAIL=net make_root "$T/r6" >"$T/r6.out" 2>&1 || rc=$?
expect_eq "no root cached, the archive unreachable: skips" 125 "$rc"
rc=0 && STUB_FAIL=1 make_root "$T/r3" >"$T/r3.out" 2>&1 || rc=$?
expect_eq "a failed create: the script fails" 1 "$rc"
expect_eq "... leaving no part in the cache" 0 "$(find "$T/cache/native" -name '*.part*' | wc -l)"
finish
