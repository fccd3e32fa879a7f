#!/bin/bash
# ctest-tier: quick
# own_locked_dir (tests/integration/lib/own_dir.sh; test_debian_source.sh's build place under a
# shared TMPDIR): a symlink planted at the place is refused and what it points at left alone (the
# earlier mkdir -p, chmod, -O, rm -rf DIR/* emptied a directory of the user's through it), so are a
# file and another user's dir; an absent place is made mode 700 (its TMPDIR too, spaces and all),
# one of ours made 700; a second run waits, saying so, until the first ends; a lock left by a
# dead run holds nothing.
. "$(dirname "$0")/lib/common.sh"
. "$(dirname "$0")/lib/own_dir.sh"
command -v flock >/dev/null || skip "flock not installed (util-linux)"
lib=$(cd "$(dirname "$0")" && pwd)/lib/own_dir.sh

# take DIR [SECONDS]: own_locked_dir DIR in a shell of its own, holding the lock SECONDS (0).
take() { bash -c '. "$1"; own_locked_dir "$2" || exit $?; sleep "${3:-0}"' _ "$lib" "$@"; }

mkdir "$T/mine" && touch "$T/mine/precious"
ln -s "$T/mine" "$T/planted"
rc=0 && err=$(take "$T/planted" 2>&1) || rc=$?
expect_eq "a symlink to a dir of ours: refused" 1 "$rc"
expect_contains "... saying why" "$err" "$T/planted is not a directory of $(id -un)'s own"
[ -e "$T/mine/precious" ] && [ ! -e "$T/mine/.lock" ] && [ "$(stat -c %a "$T/mine")" != 700 ] &&
    ok "... what it points at is left as it was" || not_ok "... the symlink's target was changed: $(ls -la "$T/mine")"
touch "$T/file"
rc=0 && take "$T/file" 2>/dev/null || rc=$?
expect_eq "a file: refused" 1 "$rc"
if [ "$(id -u)" = 0 ]; then
    mkdir "$T/theirs" && chown 65534 "$T/theirs"
    other=$T/theirs
else
    other=/usr
fi
rc=0 && take "$other" 2>/dev/null || rc=$?
expect_eq "another user's dir: refused" 1 "$rc"

take "$T/new" && expect_eq "an absent place: made mode 700" 700 "$(stat -c %a "$T/new")"
take "$T/a tmp dir/with spaces/place" &&
    expect_eq "a place in a TMPDIR with spaces, not there yet: made mode 700" 700 \
        "$(stat -c %a "$T/a tmp dir/with spaces/place")"
mkdir -m 755 "$T/open"
take "$T/open" && expect_eq "a dir of ours: made mode 700" 700 "$(stat -c %a "$T/open")"

take "$T/new" 3 >"$T/first.out" &
first=$!
sleep 0.5
start=$(date +%s%N)
out=$(take "$T/new")
waited=$((($(date +%s%N) - start) / 1000000))
wait "$first"
expect_contains "a second run waits ..." "$out" "# waiting for the run that holds $T/new/.lock"
[ "$waited" -ge 2000 ] && ok "... until the first ends (${waited} ms)" || not_ok "... only ${waited} ms"
out=$(take "$T/new")
expect_eq "the first run's lock file left behind holds nothing" "" "$out"
grep -q '^own_locked_dir "$base"' "$(dirname "$lib")/../test_debian_source.sh" &&
    ok "test_debian_source.sh takes its TMPDIR place through own_locked_dir" ||
    not_ok "test_debian_source.sh no longer takes its place through own_locked_dir"
finish
