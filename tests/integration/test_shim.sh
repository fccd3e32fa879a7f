#!/bin/bash
# ctest-tier: quick
# Shim fidelity: a shim (the small static launcher emurun-shim) runs a foreign tool exactly as
# if it were native — argv[0] as invoked, arguments byte for byte, env, stdin/stdout, exit codes,
# signals, cwd, PATH lookup, env -i, nested shims, a moved shim dir — bad input fails at creation
# with a precise message, a record that cannot be replayed is planned again from the sidecar,
# and a broken sidecar or emulator is named.
set -u
probe=$EMURUN_FIXTURE_DIR/aarch64/probe
probe2=$EMURUN_FIXTURE_DIR/ppc64le/probe
for f in "$probe" "$probe2"; do
    [ -x "$f" ] || { echo "skipped: fixture $f not built (cross compiler missing)"; exit 125; }
done
command -v qemu-aarch64 >/dev/null || command -v qemu-aarch64-static >/dev/null ||
    { echo "skipped: qemu-aarch64 not installed"; exit 125; }

mkdir -p "$EMURUN_TESTDIR_ROOT"
t=$(mktemp -d "$EMURUN_TESTDIR_ROOT/shim.XXXXXX")
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
expect() { # name expected actual
    [ "$2" == "$3" ] || fail "$1: expected <$2>, got <$3>"
}

s=$t/shims
"$EMURUN" shim add probe --target "$probe" --dir "$s" >/dev/null || { echo "FAIL: shim add"; exit 1; }
"$EMURUN" shim add probe2 --target "$probe2" --arch ppc64el --env SHIM_VAR=set \
    --env 'SHIM_Q=a "b" \ é/x' --dir "$s" >/dev/null ||
    { echo "FAIL: shim add probe2"; exit 1; }

expect "runs emulated" aarch64 "$("$s/probe" uname)"
expect "argv[0] by path" "[0]=<$s/probe>" "$("$s/probe" argv | head -n1)"
expect "argv[0] through PATH" "[0]=<probe>" "$(PATH=$s:$PATH probe argv | head -n1)"
expect "args" $'[2]=<a b>\n[3]=<>\n[4]=<"q\' \\\\>\n[5]=<*>' \
    "$("$s/probe" argv 'a b' '' "\"q' \\\\" '*' | tail -n4)"
expect "env" 'x y=z' "$(FOO='x y=z' "$s/probe" env FOO)"
expect "--env" set "$("$s/probe2" env SHIM_VAR)"
expect "no QEMU_LD_PREFIX leaks into the tool" '<unset>' "$("$s/probe" env QEMU_LD_PREFIX)"
head -c 100000 /dev/urandom >"$t/blob"
"$s/probe" cat <"$t/blob" >"$t/blob.out"
cmp -s "$t/blob" "$t/blob.out" || fail "stdin/stdout not byte-identical"
for code in 0 3 255; do
    "$s/probe" exit $code
    expect "exit $code" $code $?
done
for sig in SEGV:139 ABRT:134 KILL:137; do
    { "$s/probe" signal "${sig%:*}"; } 2>/dev/null
    expect "signal ${sig%:*}" "${sig#*:}" $?
done
mkdir -p "$t/some where"
expect "cwd" "$(cd "$t/some where" && pwd -P)" "$(cd "$t/some where" && "$s/probe" cwd)"
expect "env -i" aarch64 "$(env -i "$s/probe" uname)"
expect "env -i keeps the environment empty" '<unset>' "$(env -i "$s/probe" env PATH)"
expect "nested shims" ppc64le "$("$s/probe" exec "$s/probe2" uname)"
expect "nested shims under env -i" ppc64le "$(env -i "$s/probe" exec "$s/probe2" uname)"

# Same pid: the process that runs is the emulator itself, no wrapper stays alive.
mkfifo "$t/fifo"
"$s/probe" cat <"$t/fifo" >/dev/null &
pid=$!
exec 3>"$t/fifo"
sleep 0.5
exe=$(readlink "/proc/$pid/exe")
case "$exe" in */qemu-aarch64*) ;; *) fail "pid $pid runs $exe, not qemu-aarch64" ;; esac
exec 3>&-
wait $pid

# The shim is the small static launcher (built beside emurun), not emurun: no dynamic loader,
# no libstdc++ on the hot path; a hard link on the same file system, else a small copy.
launcher=$(dirname "$EMURUN")/emurun-shim
cmp -s "$launcher" "$s/probe" || fail "shim is not a copy of $launcher"
if [ "$(stat -c %d "$launcher")" = "$(stat -c %d "$s")" ]; then
    expect "shim is a hard link of the launcher" "$(stat -c %i "$launcher")" "$(stat -c %i "$s/probe")"
fi
# Across file systems the launcher is copied (small now), executable, and runs.
if [ -d /dev/shm ] && [ -w /dev/shm ] && [ "$(stat -c %d /dev/shm)" != "$(stat -c %d "$launcher")" ] &&
    ! findmnt -no OPTIONS /dev/shm | grep -qw noexec; then
    x=$(mktemp -d /dev/shm/emurun-shim.XXXXXX)
    "$EMURUN" shim add probe --target "$probe" --dir "$x" >/dev/null || fail "shim add across file systems"
    cmp -s "$launcher" "$x/probe" || fail "the shim across file systems is not a copy of the launcher"
    expect "copied shim mode" 755 "$(stat -c %a "$x/probe")"
    expect "copied shim runs" aarch64 "$("$x/probe" uname)"
    rm -rf "$x"
fi
size=$(stat -c %s "$s/probe")
[ "$size" -lt 1048576 ] || fail "shim launcher is $size bytes, want < 1 MiB"
[[ "$("$EMURUN" inspect "$s/probe")" == *static* ]] || fail "shim launcher is not static"
expect "JSON escapes in --env reach the tool" 'a "b" \ é/x' "$("$s/probe2" env SHIM_Q)"

# Launcher failures: exit 125, "emurun-shim: SHIM: ..." naming the culprit, and never a hang.
e=$t/errs
mkdir -p "$e/.emurun-shims"
launch_err() { # name expected-substring shim-name [record-text]
    local name=$1 want=$2 shim=$e/$3 err rc
    cp "$launcher" "$shim"
    [ $# -lt 4 ] || printf '%s' "$4" >"$e/.emurun-shims/$3.rec"
    err=$(timeout 10 "$shim" exit 0 2>&1 >/dev/null)
    rc=$?
    [ $rc -eq 125 ] || fail "$name: exit $rc, want 125"
    [[ "$err" == *"$want"* ]] || fail "$name: error <$err> lacks <$want>"
}
launch_err "no record, no emurun beside" "$e/lone: not a shim (no .emurun-shims/lone.rec beside it)" lone
# Without the link to emurun (a shim dir from before it, or files lost), a record that cannot
# be replayed is named with its reason.
mkfifo "$e/.emurun-shims/fifo.rec"
launch_err "FIFO record, no emurun link" "emurun-shim: $e/fifo: launch record: not a regular file (no emurun link beside it" fifo
launch_err "garbage record, no emurun link" "emurun-shim: $e/junk: launch record: size out of range (no emurun link beside it" junk 'EMURUNLR junk'
printf '{"format": 1}' >"$e/.emurun-shims/old.json"
launch_err "a sidecar without a record or link" "emurun-shim: $e/old: launch record: none yet (no emurun link beside it" old
# A record that is corrupt, of another version, missing, or another shim's: the shim hands
# over to emurun (its .emurun link), which plans it again from its sidecar, runs it and
# rewrites the record; the next run replays the fresh record.
"$EMURUN" shim add rp --target "$probe" --dir "$e" >/dev/null || fail "shim add rp"
"$EMURUN" shim add rp2 --target "$probe2" --dir "$e" >/dev/null || fail "shim add rp2"
r=$e/.emurun-shims/rp.rec
refreshed() { # name: rp runs its own tool, and the next run replays the record rewritten
    expect "$1: runs the shim's own tool" aarch64 "$(timeout 10 "$e/rp" uname 2>&1)"
    expect "$1: then replayed" "emurun-shim: $e/rp: debug: launch record $r: replayed" \
        "$(EMURUN_VERBOSE=1 "$e/rp" exit 0 2>&1)"
}
head -c 40 "$r" >"$r.cut" && mv "$r.cut" "$r"
refreshed "a record cut short"
printf 'X' | dd of="$r" bs=1 seek=$(($(stat -c %s "$r") - 2)) conv=notrunc status=none
refreshed "a record with a byte changed"
printf '\001' | dd of="$r" bs=1 seek=8 conv=notrunc status=none
refreshed "a record of another version"
cp "$e/.emurun-shims/rp2.rec" "$r"
expect "another shim's record: said so" \
    "emurun-shim: $e/rp: debug: launch record $r: not replayed: of another request" \
    "$(EMURUN_VERBOSE=1 "$e/rp" exit 0 2>&1 | head -n1)"
cp "$e/.emurun-shims/rp2.rec" "$r"
refreshed "another shim's record"
rm "$r"
refreshed "a missing record"
# The sidecar is the shim's request: edited (here: another --env), the shim is planned again.
sed -i 's/"env": {}/"env": {"EDITED": "yes"}/' "$e/.emurun-shims/rp.json"
expect "an edited sidecar is planned again" yes "$("$e/rp" env EDITED)"
# The target rewritten in place with its size and mtime kept (cp over it, touch -r): planned
# again (only its ctime tells).
cp "$probe" "$e/tgt-bin" && "$EMURUN" shim add tgt --target "$e/tgt-bin" --dir "$e" >/dev/null || fail "shim add tgt"
expect "a target of a known mtime: replayed" "emurun-shim: $e/tgt: debug: launch record $e/.emurun-shims/tgt.rec: replayed" \
    "$(EMURUN_VERBOSE=1 "$e/tgt" exit 0 2>&1)"
cp -p "$e/tgt-bin" "$e/tgt.ref" && cp "$e/tgt.ref" "$e/tgt-bin" && touch -r "$e/tgt.ref" "$e/tgt-bin"
expect "a target rewritten in place: planned again" \
    "emurun-shim: $e/tgt: debug: launch record $e/.emurun-shims/tgt.rec: not replayed: changed: $e/tgt-bin" \
    "$(EMURUN_VERBOSE=1 "$e/tgt" exit 0 2>&1 | head -n1)"
# The target replaced (static by dynamic) while a stale shim is planned again, after the plan
# read it and before its files are written (strace holds the replan at its first fsync): no
# record of the old plan keyed on the new target; the next run plans again and runs it.
if command -v strace >/dev/null; then
    cp "$probe-static" "$e/swap-bin" && "$EMURUN" shim add swap --target "$e/swap-bin" --dir "$e" >/dev/null ||
        fail "shim add swap"
    touch "$e/swap-bin"
    (sleep 0.5 && cp "$probe" "$e/swap.new" && mv "$e/swap.new" "$e/swap-bin") &
    strace -f -qq -o /dev/null -e trace=fsync -e inject=fsync:delay_enter=1500000:when=1 \
        "$e/swap" exit 0 >/dev/null 2>&1
    wait
    expect "a target replaced while planned again: the next run runs it" aarch64 "$("$e/swap" uname 2>&1)"
fi
# A stale record (the emulator went away): handed to emurun, which plans the shim again (the
# emulator searched as `emurun exec` searches) and refreshes the record.
mkdir -p "$e/tmpq"
cp "$(command -v qemu-aarch64-static || command -v qemu-aarch64)" "$e/tmpq/qemu-aarch64-static"
EMURUN_QEMU_DIR=$e/tmpq "$EMURUN" shim add moved-qemu --target "$probe-static" --dir "$e" >/dev/null ||
    fail "shim add moved-qemu"
rm -r "$e/tmpq"
expect "emulator searched again" aarch64 "$("$e/moved-qemu" uname)"
# (the gone dir stays in the record's key, by its absence: the shim's emulator dir is searched first)
! grep '"emulator"' "$e/.emurun-shims/moved-qemu.json" | grep -q tmpq || fail "the sidecar still names the gone emulator"
# Planned again by emurun's one PATH rule: an empty PATH entry is the current directory.
mkdir -p "$e/cwd" "$e/tmpq"
printf '#!/bin/sh\necho cwd-qemu\n' >"$e/cwd/qemu-aarch64-static"
chmod +x "$e/cwd/qemu-aarch64-static"
cp "$(command -v qemu-aarch64-static || command -v qemu-aarch64)" "$e/tmpq/qemu-aarch64-static"
EMURUN_QEMU_DIR=$e/tmpq "$EMURUN" shim add moved-qemu --target "$probe-static" --dir "$e" >/dev/null
rm -r "$e/tmpq"
expect "a stale shim: an empty PATH entry is the current dir" cwd-qemu \
    "$(cd "$e/cwd" && PATH=":/nonexistent" "$e/moved-qemu" uname)"
expect "emurun exec: the same rule" cwd-qemu \
    "$(cd "$e/cwd" && PATH=":/nonexistent" "$EMURUN" exec -- "$probe-static" uname)"
# The emulator replaced where the shim found it (EMURUN_QEMU_DIR at creation, unset now): the
# shim planned again keeps that directory's emulator, not the first one this run's PATH has.
mkdir -p "$e/ownqdir"
cp "$(command -v qemu-aarch64-static || command -v qemu-aarch64)" "$e/ownqdir/qemu-aarch64-static"
EMURUN_QEMU_DIR=$e/ownqdir "$EMURUN" shim add ownq --target "$probe-static" --dir "$e" >/dev/null ||
    fail "shim add ownq"
printf '#!/bin/sh\necho own-qemu\n' >"$e/ownqdir/new" && chmod +x "$e/ownqdir/new"
mv "$e/ownqdir/new" "$e/ownqdir/qemu-aarch64-static"
expect "a replaced emulator: the shim's own emulator dir first" own-qemu \
    "$(env -u EMURUN_QEMU_DIR "$e/ownq" uname)"
# An emulator that cannot be executed: the replay fails, emurun plans again and names it.
mkdir -p "$e/badq"
printf '#!/nonexistent/interpreter\n' >"$e/badq/qemu-aarch64-static"
chmod +x "$e/badq/qemu-aarch64-static"
EMURUN_QEMU_DIR=$e/badq "$EMURUN" shim add badqemu --target "$probe-static" --dir "$e" >/dev/null ||
    fail "shim add badqemu"
err=$(EMURUN_QEMU_DIR=$e/badq timeout 10 "$e/badqemu" uname 2>&1 >/dev/null)
rc=$?
[ $rc -eq 125 ] || fail "exec failure: exit $rc, want 125"
[[ "$err" == *"execve $e/badq/qemu-aarch64-static"*"No such file or directory"* ]] ||
    fail "exec failure: error <$err>"

# A moved shim dir still works (config is found next to the shim, not by absolute path).
mv "$s" "$t/moved"
expect "moved shim dir" aarch64 "$("$t/moved/probe" uname)"
s=$t/moved

expect "list" "probe probe2" "$("$EMURUN" shim list --dir "$s" | awk '{print $1}' | xargs)"
"$EMURUN" shim remove probe2 --dir "$s" || fail "shim remove"
[ ! -e "$s/probe2" ] || fail "shim remove left $s/probe2"

# A PATH dir that is a symlink loop (the emulator search passes over it): shim add works and
# the record replays.
ln -s loop2 "$t/loop1" && ln -s loop1 "$t/loop2"
PATH="$t/loop1:$PATH" "$EMURUN" shim add looped --target "$probe" --dir "$t/looped" >/dev/null ||
    fail "shim add with a PATH dir that loops"
expect "a PATH dir that loops: the record replays" \
    "emurun-shim: $t/looped/looped: debug: launch record $t/looped/.emurun-shims/looped.rec: replayed" \
    "$(EMURUN_VERBOSE=1 "$t/looped/looped" exit 0 2>&1)"

# Bad input: exit 125 and the culprit named.
bad() { # name expected-substring args...
    local name=$1 want=$2
    shift 2
    local err
    err=$("$EMURUN" shim add x "$@" --dir "$t/bad" 2>&1 >/dev/null)
    local rc=$?
    [ $rc -eq 125 ] || fail "$name: exit $rc, want 125"
    [[ "$err" == *"$want"* ]] || fail "$name: error <$err> does not mention <$want>"
}
bad "missing target" "$t/nope" --target "$t/nope"
printf 'not a program\n' >"$t/text" && chmod +x "$t/text"
bad "not ELF" "ELF" --target "$t/text"
bad "wrong arch" "program for aarch64" --target "$probe" --arch s390x
mkdir -p "$t/emptyroot"
bad "sysroot missing libraries" "ld-linux-aarch64.so.1" --target "$probe" --sysroot "$t/emptyroot"
[ ! -e "$t/bad/x" ] || fail "a failed shim add left $t/bad/x"

# A record or .emurun-shims that others can write is never replayed: the shim refuses (125)
# and says why; shim add makes .emurun-shims 0755 whatever the umask.
(umask 000 && "$EMURUN" shim add w --target "$probe" --dir "$t/loose" >/dev/null) ||
    fail "shim add under umask 000"
expect "umask 000: .emurun-shims is 755" 755 "$(stat -c %a "$t/loose/.emurun-shims")"
expect "umask 000: the record is 644" 644 "$(stat -c %a "$t/loose/.emurun-shims/w.rec")"
expect "a record of its owner alone runs" aarch64 "$("$t/loose/w" uname)"
for mode in "666 .emurun-shims/w.rec" "777 .emurun-shims"; do
    chmod "${mode% *}" "$t/loose/${mode#* }"
    err=$("$t/loose/w" uname 2>&1)
    rc=$?
    [ $rc -eq 125 ] || fail "chmod $mode: exit $rc, want 125 ($err)"
    [[ "$err" == *"writable by others than its owner"* ]] || fail "chmod $mode: <$err>"
    chmod go-w "$t/loose/${mode#* }"
done
expect "chmod go-w again: it runs" aarch64 "$("$t/loose/w" uname)"
# The shim dir itself writable by others (made under umask 000), without the sticky bit:
# anyone could replace the shim, so shim add refuses it and says what to do.
expect "umask 000: the shim dir is 777" 777 "$(stat -c %a "$t/loose")"
err=$("$EMURUN" shim add w2 --target "$probe" --dir "$t/loose" 2>&1 >/dev/null)
rc=$?
[ $rc -ne 0 ] || fail "shim add in a dir others may write: exit 0"
[[ "$err" == *"writable by others (no sticky bit)"*"chmod o-w $t/loose"* ]] ||
    fail "shim add in a dir others may write: <$err>"
[ ! -e "$t/loose/w2" ] || fail "a refused shim add left $t/loose/w2"
chmod +t "$t/loose"
"$EMURUN" shim add w2 --target "$probe" --dir "$t/loose" >/dev/null || fail "shim add with the sticky bit"
chmod 755 "$t/loose"
# Another user's .emurun-shims (made first in a dir both may write): its owner could replace
# any record in it, so shim add refuses it rather than leave a shim that runs what they chose.
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
    mkdir -p "$t/shared" && chmod 1777 "$t/shared" && chmod o+x "$t"
    setpriv --reuid=65534 --regid=65534 --clear-groups mkdir "$t/shared/.emurun-shims" ||
        fail "uid 65534 cannot make a dir in $t/shared (a parent closed to others?)"
    err=$("$EMURUN" shim add x --target "$probe" --dir "$t/shared" 2>&1 >/dev/null)
    rc=$?
    [ $rc -eq 125 ] || fail "another user's .emurun-shims: exit $rc, want 125 ($err)"
    [[ "$err" == *"is not a directory of this user"* ]] || fail "another user's .emurun-shims: <$err>"
    [ ! -e "$t/shared/x" ] && [ -z "$(ls -A "$t/shared/.emurun-shims")" ] ||
        fail "another user's .emurun-shims: shim add wrote files"
    # Another user's stale shim run by root: planned and run, its files left as they were
    # (root's files among them would make the launcher refuse the shim for its owner).
    cp "$probe" "$t/shared/tgt" && chown 65534 "$t/shared/tgt"
    setpriv --reuid=65534 --regid=65534 --clear-groups env PATH=/usr/bin:/bin \
        "$EMURUN" shim add theirs --target "$t/shared/tgt" --dir "$t/shared" >/dev/null ||
        fail "shim add as uid 65534"
    # A PATH dir it cannot search (the emulator search passes over it): shim add works, and
    # the record replays.
    mkdir -p "$t/closed" && chmod 700 "$t/closed"
    setpriv --reuid=65534 --regid=65534 --clear-groups env PATH="$t/closed:/usr/bin:/bin" \
        "$EMURUN" shim add closed --target "$t/shared/tgt" --dir "$t/shared" >/dev/null ||
        fail "shim add as uid 65534 with a PATH dir it cannot search"
    expect "a PATH dir it cannot search: the shim's record replays" \
        "emurun-shim: $t/shared/closed: debug: launch record $t/shared/.emurun-shims/closed.rec: replayed" \
        "$(setpriv --reuid=65534 --regid=65534 --clear-groups env EMURUN_VERBOSE=1 "$t/shared/closed" exit 0 2>&1)"
    touch "$t/shared/tgt"
    expect "another user's stale shim, run by root" aarch64 "$("$t/shared/theirs" uname 2>&1)"
    expect "another user's stale shim: its files still theirs" 65534 \
        "$(stat -c %u "$t/shared/.emurun-shims/theirs.rec")"
    expect "another user's stale shim: then runs for its owner" aarch64 \
        "$(setpriv --reuid=65534 --regid=65534 --clear-groups "$t/shared/theirs" uname 2>&1)"
fi

[ $failures -eq 0 ] || { echo "$failures failure(s); files in $t"; exit 1; }
rm -rf "$t"
echo "shim: all checks passed"
