#!/bin/bash
# ctest-tier: quick
# Launch records (issue 28): `emurun exec [OPTIONS] -- PROG ARGS` is planned once by the C++ CLI,
# which leaves a record in emurun's cache; the launcher (bin/emurun) then only checks the
# record's key and replays it. A replay must hand qemu what a fresh plan hands it, and a record
# whose key no longer holds (or that is corrupt, or not ours) must be handed over to the CLI.
#   same:   every case run through the launcher (planned, then replayed) against a fresh plan of
#           the CLI (bin/emurun-cli, which never reads records): the same emulator argv, pid,
#           environment, exit code and errors; and whether the second run was a replay
#   change: a changed sysroot, a replaced program (also rewritten in place with its size and
#           mtime kept, or replaced while the first run plans), a library gone, a replaced emulator, a new emulator or program earlier
#           in the search: the key no longer holds, the CLI plans again (a hand-over), and the
#           result is a fresh plan's
#   trust:  a corrupt record (cut short, a byte changed) or another request's record in its
#           place is planned again and rewritten; a record others could have written
#           (group/other-writable, another owner) is never replayed, nor one in a cache dir
#           the CLI refuses (writable by others, below such a dir, a symlink)
# ctest-parts: same change trust
. "$(dirname "$0")/lib/common.sh"

need_fixture_arch aarch64
command -v aarch64-linux-gnu-gcc >/dev/null || skip "no aarch64-linux-gnu-gcc: cases build their own programs"
strace=$(command -v strace) || skip "strace is not installed: it tells a replay from a hand-over"
S=$EMURUN_FIXTURE_DIR/aarch64/probe-static
D=$EMURUN_FIXTURE_DIR/aarch64/probe
CLI=$(dirname "$EMURUN")/emurun-cli
export EMURUN_CACHE_DIR=$T/cache
unset EMURUN_VERBOSE XDG_CACHE_HOME
# In the sanitizer build: LeakSanitizer cannot run under ptrace (strace), so it is off for every
# run of this script alike (the environment the runs show must not differ); ASan stays on.
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"

# A fake emulator that reports what it was given: its pid, argv, and the environment sorted.
mkdir -p "$T/q" "$T/bin" "$T/rel/q2"
cat >"$T/q/qemu-aarch64-static" <<'SH'
#!/bin/sh
echo "pid=$$"
echo "exe=$0"
for a in "$@"; do echo "arg=<$a>"; done
env | LC_ALL=C sort | grep -v '^_=' | sed 's/^/env=/'
exit 3
SH
chmod +x "$T/q/qemu-aarch64-static"
cp "$S" "$T/bin/tool"

# run PROGRAM TRACE ENVS ARGS...: `PROGRAM exec ARGS` under strace (the main process only; the
# exec calls it makes) by a shell that prints its pid first; then its exit code. TRACE "": no
# strace, and the program runs in the shell's process.
run() {
    local prog=$1 trace=$2 envs=$3 rc=0
    shift 3
    if [ -n "$trace" ]; then
        rm -f "$trace"
        env $envs "$strace" -qq -o "$trace" -e trace=execve -e signal=none "$prog" exec "$@" 2>&1 || rc=$?
    else
        env $envs sh -c 'echo "shell=$$"; exec "$@"' sh "$prog" exec "$@" 2>&1 || rc=$?
    fi
    echo "rc=$rc"
}
# Whether the run traced in FILE went through the CLI (a hand-over) or not (a replay).
how() {
    if [ ! -s "$1" ]; then echo "no trace"; elif grep -q 'emurun-cli' "$1"; then echo handover; else echo replay; fi
}
# What qemu (or the CLI's error) shows, without the pids.
shown() { grep -v '^shell=\|^pid=' <<<"$1" || true; }

# both LABEL HOW ENVS ARGS...: the launcher twice (the first plans or replays, the second must
# be HOW: replay or handover), the CLI's fresh plan once; the second run must show what the
# fresh plan shows, in the process the shell started (no fork).
both() {
    local label=$1 want=$2 envs=$3 second fresh sp qp
    shift 3
    run "$EMURUN" "" "$envs" "$@" >/dev/null
    run "$EMURUN" "$T/tr2" "$envs" "$@" >/dev/null
    expect_eq "$label: the second run is a $want" "$want" "$(how "$T/tr2")"
    second=$(run "$EMURUN" "" "$envs" "$@")
    fresh=$(run "$CLI" "" "$envs" "$@")
    expect_eq "$label: a replay = a fresh plan" "$(shown "$fresh")" "$(shown "$second")"
    qp=$(sed -n 's/^pid=//p' <<<"$second" | head -n1)
    if [ -n "$qp" ]; then
        sp=$(sed -n 's/^shell=//p' <<<"$second" | head -n1)
        expect_eq "$label: the emulator keeps emurun's pid" "$sp" "$qp"
    fi
}

part_same() {
    local q="EMURUN_QEMU_DIR=$T/q" x=/usr/aarch64-linux-gnu
    both "arguments with spaces and empty" replay "$q" -- "$S" "a b" "" '$x' -x --
    expect_contains "the fake emulator ran" "$(EMURUN_QEMU_DIR=$T/q "$EMURUN" exec -- "$S" || true)" "exe=$T/q/qemu-aarch64-static"
    both "no -- before the program (always the CLI's)" handover "$q" "$S" exit 1
    both "program found in PATH" replay "$q PATH=$T/bin:/usr/bin:/bin" -- tool one
    (cd "$T" && both "relative PATH entry with a slash" replay "$q PATH=bin/:/usr/bin:/bin" -- tool)
    (cd "$T" && both "empty PATH entry (the cwd)" replay "$q PATH=:/usr/bin:/bin" -- bin/tool)
    cp "$T/q/qemu-aarch64-static" "$T/rel/q2/"
    (cd "$T/rel" && both "relative EMURUN_QEMU_DIR" replay "EMURUN_QEMU_DIR=q2" -- "$S")
    both "empty EMURUN_QEMU_DIR is unset" replay "EMURUN_QEMU_DIR= PATH=$T/q:/usr/bin:/bin" -- "$S"
    mkdir -p "$T/dyn" && cp "$T/q/qemu-aarch64-static" "$T/dyn/qemu-aarch64"
    both "a dynamic qemu-aarch64 earlier in the search" replay "EMURUN_QEMU_DIR=$T/dyn" -- "$S" exit 4
    both "dynamic, default sysroots" replay "$q" -- "$D" x
    both "dynamic, --sysroot SR" replay "$q" --sysroot "$x" -- "$D" x
    both "dynamic, --sysroot=SR" replay "$q" --sysroot="$x" -- "$D"
    both "dynamic, QEMU_LD_PREFIX already set" replay "$q QEMU_LD_PREFIX=/elsewhere" --sysroot "$x" -- "$D"
    both "dynamic, a sysroot with a trailing /" replay "$q" --sysroot "$x/" -- "$D"
    mkdir -p "$T/esr"
    both "dynamic, two sysroots (a merged prefix)" replay "$q" --sysroot "$T/esr" --sysroot "$x" -- "$D"
    both "dynamic, a sysroot that is a file" handover "$q" --sysroot "$S" -- "$D"
    both "dynamic, a sysroot that does not exist" handover "$q" --sysroot "$T/none" -- "$D"
    both "static, a sysroot that does not exist" handover "$q" --sysroot "$T/none" -- "$S"
    mkdir -p "$T/sr/lib" "$T/sr/lib/aarch64-linux-gnu"
    cp -L "$x/lib/ld-linux-aarch64.so.1" "$x/lib/libc.so.6" "$T/sr/lib/"
    (cd "$T" && both "dynamic, a relative sysroot of our own" replay "$q" --sysroot sr -- "$D")
    echo "not a library" >"$T/sr/lib/aarch64-linux-gnu/libc.so.6"
    both "dynamic, a non-object found first" replay "$q" --sysroot "$T/sr" -- "$D"
    rm "$T/sr/lib/libc.so.6"
    both "dynamic, libc missing (the CLI's error)" handover "$q" --sysroot "$T/sr" -- "$D"
    both "dynamic with libstdc++ (libraries of libraries)" replay "$q" --sysroot "$x" -- "$EMURUN_FIXTURE_DIR/aarch64/hello"
    aarch64-linux-gnu-gcc -static-pie -o "$T/spie" "$EMURUN_SOURCE_DIR/tests/fixtures/probe.c"
    both "static PIE" replay "$q" -- "$T/spie" uname
    aarch64-linux-gnu-gcc -o "$T/rp" -Wl,-rpath,/opt/x "$EMURUN_SOURCE_DIR/tests/fixtures/probe.c"
    both "dynamic with a RUNPATH" replay "$q" --sysroot "$x" -- "$T/rp"
    both "no emulator in the search" handover "$q PATH=/nonexistent" -- /nonexistent/x
    both "missing program" handover "$q" -- "$T/nope"
    both "program not in PATH" handover "$q" -- no-such-program-here
    both "directory" handover "$q" -- "$T"
    printf 'not a program\n' >"$T/text" && chmod +x "$T/text"
    both "not ELF" handover "$q" -- "$T/text"
    head -c 60 "$S" >"$T/trunc" && chmod +x "$T/trunc"
    both "truncated ELF" handover "$q" -- "$T/trunc"
    cp "$S" "$T/noexec" && chmod -x "$T/noexec"
    both "not executable" handover "$q" -- "$T/noexec"
    both "native program (the CLI runs it)" handover "" -- "$(command -v true)"
    both "--arch aarch64" replay "$q" --arch aarch64 -- "$S" x
    both "--arch ARM64 (alias, upper case)" replay "$q" --arch ARM64 -- "$S"
    both "--cpu, --env, --argv0" replay "$q" --cpu max --env A=1 --argv0 zero -- "$S"
    both "--arch of another arch" handover "$q" --arch ppc64le -- "$S"
    both "--arch unknown" handover "$q" --arch vax -- "$S"
    both "--argv0 -- (the launcher's -- is not the CLI's)" handover "$q" --argv0 -- -- "$S"
    aarch64-linux-gnu-gcc -Wl,--dynamic-linker=/../aarch64-linux-gnu/lib/ld-linux-aarch64.so.1 \
        -o "$T/climb" "$EMURUN_SOURCE_DIR/tests/fixtures/probe.c"
    both "interpreter path with /../" replay "$q" --sysroot "$x" -- "$T/climb"
    mkdir -p "$T/own"
    printf 'int own(void) { return 42; }\n' >"$T/own/own.c"
    printf 'int own(void);\nint main(void) { return own(); }\n' >"$T/own/app.c"
    aarch64-linux-gnu-gcc -shared -fPIC -o "$T/own/libown.so" "$T/own/own.c"
    aarch64-linux-gnu-gcc -o "$T/own/app" "$T/own/app.c" -L"$T/own" -lown -Wl,-rpath,"$T/own"
    both "a RUNPATH outside the sysroot" replay "$q" --sysroot "$x" -- "$T/own/app"
    both "the same, default sysroots" replay "$q" -- "$T/own/app"
    aarch64-linux-gnu-gcc -o "$T/own/app-rpath" "$T/own/app.c" -L"$T/own" -lown \
        -Wl,--disable-new-dtags,-rpath,"$T/own"
    both "an RPATH (old dtags)" replay "$q" --sysroot "$x" -- "$T/own/app-rpath"
    aarch64-linux-gnu-gcc -o "$T/own/app-origin" "$T/own/app.c" -L"$T/own" -lown '-Wl,-rpath,$ORIGIN'
    both "a RUNPATH with \$ORIGIN" replay "$q" --sysroot "$x" -- "$T/own/app-origin"
    aarch64-linux-gnu-gcc -o "$T/own/app-colon" "$T/own/app.c" -L"$T/own" -lown \
        -Wl,-rpath,"/nonexistent::$T/own:"
    both "a RUNPATH with empty entries" replay "$q" --sysroot "$x" -- "$T/own/app-colon"
    # An environment no shell passes: a name twice (the first wins), an entry without '=', an
    # empty name; with and without the QEMU_LD_PREFIX the plan sets.
    local xe=$EMURUN_HELPER_DIR/exec_with_env f c
    for args in "-- $S" "--sysroot /usr/aarch64-linux-gnu -- $D"; do
        "$xe" EMURUN_QEMU_DIR="$T/q" A=1 A=2 NOEQ =x QEMU_LD_PREFIX=/a QEMU_LD_PREFIX=/b -- \
            "$EMURUN" exec $args >/dev/null 2>&1 || true
        f=$("$xe" EMURUN_QEMU_DIR="$T/q" A=1 A=2 NOEQ =x QEMU_LD_PREFIX=/a QEMU_LD_PREFIX=/b -- \
            "$EMURUN" exec $args 2>&1 | grep '^env=' | sort)
        c=$("$xe" EMURUN_QEMU_DIR="$T/q" A=1 A=2 NOEQ =x QEMU_LD_PREFIX=/a QEMU_LD_PREFIX=/b -- \
            "$CLI" exec $args 2>&1 | grep '^env=' | sort)
        expect_eq "odd environment ($args): the same variables replayed" "$c" "$f"
    done
    expect_contains "odd environment: the first A wins" "$f" "env=A=1"
    # With the real emulator: exit codes, fatal signals and stdin, replayed.
    "$EMURUN" exec -- "$S" exit 0
    for code in 0 7 255; do
        rc=0; "$EMURUN" exec -- "$S" exit "$code" || rc=$?
        expect_eq "real qemu: exit $code" "$code" "$rc"
    done
    rc=0; { "$EMURUN" exec -- "$S" signal SEGV; } 2>/dev/null || rc=$?
    expect_eq "real qemu: SIGSEGV" 139 "$rc"
    expect_eq "real qemu: stdin" "$(seq 1 500)" "$(seq 1 500 | "$EMURUN" exec -- "$S" cat)"
    # EMURUN_VERBOSE=1 shows whether a run was replayed (the launcher's debug line) or planned
    # (the CLI's: what it planned, and the record it wrote).
    expect_contains "EMURUN_VERBOSE=1: a replay says so" \
        "$(EMURUN_VERBOSE=1 "$EMURUN" exec -- "$S" exit 0 2>&1)" ".rec: replayed"
    rm -rf "$EMURUN_CACHE_DIR"
    out=$(EMURUN_VERBOSE=2 "$EMURUN" exec -- "$S" exit 0 2>&1)
    expect_contains "EMURUN_VERBOSE=2, no record: the launcher says why" "$out" ".rec: not replayed: none yet"
    expect_contains "EMURUN_VERBOSE=2, no record: the CLI's debug line" "$out" "exec $S"
    expect_contains "EMURUN_VERBOSE=2, no record: the CLI writes it" "$out" ".rec: written"
    expect_contains "EMURUN_VERBOSE=1, then: replayed" \
        "$(EMURUN_VERBOSE=1 "$EMURUN" exec -- "$S" exit 0 2>&1)" ".rec: replayed"
    expect_eq "EMURUN_VERBOSE unset: the launcher says nothing" "" "$("$EMURUN" exec -- "$S" exit 0 2>&1)"
}

# after LABEL ENVS ARGS...: the request planned and replayed before; now (after a change) the
# next run must be a hand-over with a fresh plan's result, and the run after it a replay again
# when the fresh plan succeeds.
after() {
    local label=$1 envs=$2 out fresh
    shift 2
    out=$(run "$EMURUN" "$T/tr4" "$envs" "$@")
    fresh=$(run "$CLI" "" "$envs" "$@")
    expect_eq "$label: handed over" handover "$(how "$T/tr4")"
    expect_eq "$label: a fresh plan's result" "$(shown "$fresh")" "$(shown "$out")"
}

part_change() {
    local q="EMURUN_QEMU_DIR=$T/q" x=/usr/aarch64-linux-gnu
    mkdir -p "$T/sr/lib"
    cp -L "$x/lib/ld-linux-aarch64.so.1" "$x/lib/libc.so.6" "$T/sr/lib/"
    both "own sysroot" replay "$q" --sysroot "$T/sr" -- "$D"
    # A package unpacked into the sysroot: a directory of it changes.
    mkdir -p "$T/sr/usr/lib/aarch64-linux-gnu" && touch "$T/sr/usr/lib/aarch64-linux-gnu/libnew.so.1"
    after "a changed sysroot" "$q" --sysroot "$T/sr" -- "$D"
    both "a changed sysroot, planned again" replay "$q" --sysroot "$T/sr" -- "$D"
    # Two sysroots, one changed: the merged prefix is made again.
    both "two sysroots" replay "$q" --sysroot "$T/sr" --sysroot "$x" -- "$D"
    cp -L "$x/lib/libm.so.6" "$T/sr/lib/"
    after "two sysroots, one changed" "$q" --sysroot "$T/sr" --sysroot "$x" -- "$D"
    # The program replaced (another file, then the same one rewritten in place).
    cp "$S" "$T/prog"
    both "a program" replay "$q" -- "$T/prog"
    cp "$D" "$T/prog.new" && mv "$T/prog.new" "$T/prog"
    after "a replaced program (now dynamic)" "$q" -- "$T/prog"
    both "a replaced program, planned again" replay "$q" -- "$T/prog"
    # Rewritten in place, size and mtime kept (cp over it, touch -r): only its ctime tells.
    cp "$S" "$T/prog" && touch -r "$S" "$T/prog" && cp -p "$T/prog" "$T/prog.ref"
    both "a program of a known mtime" replay "$q" -- "$T/prog"
    cp "$S" "$T/prog.v2" && printf 'emurun' | dd of="$T/prog.v2" bs=1 seek=4096 conv=notrunc status=none
    local inode; inode=$(stat -c %i "$T/prog")
    cp "$T/prog.v2" "$T/prog" && touch -r "$T/prog.ref" "$T/prog"
    expect_eq "rewritten in place: same inode" "$inode" "$(stat -c %i "$T/prog")"
    expect_eq "rewritten in place: same size" "$(stat -c %s "$T/prog.ref")" "$(stat -c %s "$T/prog")"
    expect_eq "rewritten in place: same mtime" "$(stat -c %Y.%y "$T/prog.ref")" "$(stat -c %Y.%y "$T/prog")"
    after "a program rewritten in place (size, mtime kept)" "$q" -- "$T/prog"
    # Replaced while the first run plans (after the plan read it, before the record is written:
    # strace holds the CLI at its first mkdir, the cache dir's): no record of the old plan is
    # written under the new program's identity; the next run plans again.
    if [ -x "$EMURUN_FIXTURE_DIR/s390x/probe-static" ]; then
        cp "$S" "$T/racy"
        (sleep 0.5 && cp "$EMURUN_FIXTURE_DIR/s390x/probe-static" "$T/racy.new" && mv "$T/racy.new" "$T/racy") &
        env $q "$strace" -f -qq -o /dev/null -e trace=mkdir,mkdirat \
            -e inject=mkdir,mkdirat:delay_enter=1500000:when=1 "$EMURUN" exec -- "$T/racy" >/dev/null 2>&1 || true
        wait
        after "a program replaced while planned" "$q" -- "$T/racy"
    fi
    # A library found by RUNPATH, then gone: the CLI's error, not a replay qemu would fail in.
    mkdir -p "$T/own"
    printf 'int own(void) { return 42; }\n' >"$T/own/own.c"
    printf 'int own(void);\nint main(void) { return own(); }\n' >"$T/own/app.c"
    aarch64-linux-gnu-gcc -shared -fPIC -o "$T/own/libown.so" "$T/own/own.c"
    aarch64-linux-gnu-gcc -o "$T/own/app" "$T/own/app.c" -L"$T/own" -lown '-Wl,-rpath,$ORIGIN'
    both "a \$ORIGIN library" replay "$q" --sysroot "$x" -- "$T/own/app"
    mv "$T/own/libown.so" "$T/libown.so.away"
    after "a missing library" "$q" --sysroot "$x" -- "$T/own/app"
    expect_contains "a missing library: named" "$(run "$EMURUN" "" "$q" --sysroot "$x" -- "$T/own/app")" "libown.so"
    # A library found in a later RUNPATH entry, then put in an earlier one: the loader would
    # now take the earlier one, so the plan is made again (an empty dir made there changes
    # nothing the loader finds: still a replay).
    mv "$T/libown.so.away" "$T/own/libown.so"
    aarch64-linux-gnu-gcc -o "$T/own/app-two" "$T/own/app.c" -L"$T/own" -lown \
        -Wl,-rpath,"$T/first:$T/second:$T/own"
    both "a library in the third RUNPATH entry" replay "$q" --sysroot "$x" -- "$T/own/app-two"
    mkdir -p "$T/first" "$T/second"
    both "an earlier RUNPATH dir made since, empty" replay "$q" --sysroot "$x" -- "$T/own/app-two"
    cp "$T/own/libown.so" "$T/second/"
    after "the library put in an earlier RUNPATH dir" "$q" --sysroot "$x" -- "$T/own/app-two"
    mv "$T/own/libown.so" "$T/libown.so.away"
    # The emulator replaced.
    both "an emulator" replay "$q" -- "$S"
    cp "$T/q/qemu-aarch64-static" "$T/q/new" && printf 'echo new\n' >>"$T/q/new" && mv "$T/q/new" "$T/q/qemu-aarch64-static"
    after "a replaced emulator" "$q" -- "$S"
    # A new emulator where the search looks first: EMURUN_QEMU_DIR's first entry (an empty dir,
    # then one that does not exist yet), a PATH entry before the recorded one.
    local early="EMURUN_QEMU_DIR=$T/early:$T/late:$T/q"
    mkdir -p "$T/early"
    both "an emulator searched after an empty dir" replay "$early" -- "$S"
    sed 's/^echo "exe=/echo "early exe=/' "$T/q/qemu-aarch64-static" >"$T/early/qemu-aarch64-static"
    chmod +x "$T/early/qemu-aarch64-static"
    after "a new emulator in a dir searched before" "$early" -- "$S"
    expect_contains "the new emulator runs" "$(run "$EMURUN" "" "$early" -- "$S")" "early exe=$T/early/"
    rm -r "$T/early"
    both "an emulator searched after a missing dir" replay "$early" -- "$S"
    mkdir -p "$T/early" && cp "$T/q/qemu-aarch64-static" "$T/early/"
    after "a new emulator in a dir made since" "$early" -- "$S"
    local p="PATH=$T/p1:$T/p2:/usr/bin:/bin"
    mkdir -p "$T/p1" "$T/p2" "$T/pq"
    cp "$T/q/qemu-aarch64-static" "$T/p2/"
    both "an emulator found in PATH" replay "$p" -- "$S"
    cp "$T/q/qemu-aarch64-static" "$T/p1/"
    after "a new emulator earlier in PATH" "$p" -- "$S"
    # A dynamic qemu-aarch64 found: a static one anywhere in the search is preferred.
    rm "$T/p1/qemu-aarch64-static" && mv "$T/p2/qemu-aarch64-static" "$T/p1/qemu-aarch64"
    both "a dynamic emulator" replay "EMURUN_QEMU_DIR= $p" -- "$S"
    cp "$T/p1/qemu-aarch64" "$T/p2/qemu-aarch64-static"
    after "a static emulator later in the search" "EMURUN_QEMU_DIR= $p" -- "$S"
    # The program itself found through PATH: a new one earlier in PATH.
    cp "$S" "$T/p2/ptool"
    both "a program found in PATH" replay "$q $p" -- ptool
    cp "$D" "$T/p1/ptool"
    after "a new program earlier in PATH" "$q $p" -- ptool
    # $ORIGIN is the program's real directory (ld.so's): a symlink to it elsewhere runs it.
    mkdir -p "$T/elsewhere" && ln -sf "$T/own/app" "$T/elsewhere/app"
    mv "$T/libown.so.away" "$T/own/libown.so"
    both "a symlink to a program whose RUNPATH is \$ORIGIN" replay "$q" --sysroot "$x" -- "$T/elsewhere/app"
    expect_contains "a symlink to an \$ORIGIN program: runs" \
        "$(run "$CLI" "" "$q" --sysroot "$x" -- "$T/elsewhere/app")" "arg=<$T/elsewhere/app>"
    rc=0; "$EMURUN" exec --sysroot "$x" -- "$T/elsewhere/app" || rc=$?
    expect_eq "a symlink to an \$ORIGIN program: real qemu finds its library (exit 42)" 42 "$rc"
}

# The record of one request: the only one in a cache dir of its own.
record_of() { ls "$EMURUN_CACHE_DIR"/launch/*.rec; }

part_trust() {
    local q="EMURUN_QEMU_DIR=$T/q" rec planted out
    export EMURUN_CACHE_DIR=$T/cache-planted
    env $q "$EMURUN" exec --env PLANTED=1 -- "$S" >/dev/null || true
    planted=$(record_of)
    export EMURUN_CACHE_DIR=$T/cache-trust
    both "a request" replay "$q" -- "$S"
    rec=$(record_of)
    # Corrupt: cut short. Planned again, and the record rewritten whole.
    head -c 40 "$rec" >"$rec.cut" && mv "$rec.cut" "$rec"
    after "a corrupt record" "$q" -- "$S"
    expect_eq "a corrupt record: rewritten" 1 "$(($(stat -c %s "$rec") > 40))"
    both "a rewritten record" replay "$q" -- "$S"
    # A byte of the body changed (the program's name in the argv, same size): the checksum
    # refuses it.
    local at; at=$(grep -abo 'probe-static' "$rec" | head -n1 | cut -d: -f1)
    printf 'X' | dd of="$rec" bs=1 seek=$((at + 11)) conv=notrunc status=none
    after "a record with a byte changed" "$q" -- "$S"
    both "a rewritten record, again" replay "$q" -- "$S"
    # Another request's record under this request's name, ours and well formed: it answers
    # another request, so it is planned again and replaced.
    cp "$planted" "$rec" && chmod 600 "$rec"
    after "another request's record" "$q" -- "$S"
    out=$(run "$EMURUN" "" "$q" -- "$S")
    expect_eq "another request's record: never run" "" "$(grep PLANTED <<<"$out" || true)"
    cp "$planted" "$rec" && chmod 666 "$rec"
    after "a record others may write" "$q" -- "$S"
    expect_eq "a record others may write: replaced by ours" 600 "$(stat -c %a "$rec")"
    if [ "$(id -u)" = 0 ]; then
        cp "$planted" "$rec" && chmod 600 "$rec" && chown 65534 "$rec"
        after "a record of another user" "$q" -- "$S"
    fi
    cp "$planted" "$rec" && chmod 600 "$rec" && chmod 777 "$(dirname "$rec")"
    after "a record dir others may write" "$q" -- "$S"
    chmod 700 "$(dirname "$rec")"
    rm -f "$rec" && ln -s "$planted" "$rec"
    after "a record that is a symlink" "$q" -- "$S"
    # A cache dir the CLI refuses (others may write it or a dir above it; a symlink): its
    # records are not replayed, so a plan that needs it (a merged prefix) fails as a fresh one.
    local two="--sysroot $T/sr1 --sysroot /usr/aarch64-linux-gnu"
    mkdir -p "$T/sr1/lib" "$T/outer" && cp -L /usr/aarch64-linux-gnu/lib/ld-linux-aarch64.so.1 "$T/sr1/lib/"
    export EMURUN_CACHE_DIR=$T/outer/cache
    both "a merged prefix in the cache" replay "$q" $two -- "$D"
    chmod 777 "$EMURUN_CACHE_DIR"
    after "a cache dir others may write" "$q" $two -- "$D"
    expect_contains "a cache dir others may write: refused" "$(run "$EMURUN" "" "$q" $two -- "$D")" "writable by others"
    chmod 700 "$EMURUN_CACHE_DIR" && chmod 777 "$T/outer"
    after "a cache dir below a dir others may write" "$q" $two -- "$D"
    chmod 755 "$T/outer" && mv "$EMURUN_CACHE_DIR" "$T/outer/real" && ln -s real "$EMURUN_CACHE_DIR"
    after "a cache dir that is a symlink" "$q" $two -- "$D"
    rm "$EMURUN_CACHE_DIR" && mv "$T/outer/real" "$EMURUN_CACHE_DIR"
    mv "$EMURUN_CACHE_DIR/launch" "$T/outer/launch" && ln -s ../launch "$EMURUN_CACHE_DIR/launch"
    after "a records dir that is a symlink" "$q" -- "$S"
}

run_parts same change trust
finish
