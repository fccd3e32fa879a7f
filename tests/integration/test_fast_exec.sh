#!/bin/bash
# ctest-tier: quick
# The fast exec entry (tools/emurun/fast_exec.c): `emurun exec [--sysroot SR] [--] PROG ARGS` for
# a foreign program execs qemu before emurun's C++ image starts. It must hand qemu what
# the CLI hands it, in every case it takes, and leave every other case to the CLI.
#   same:     fast form vs the CLI's (`exec --color never ...`: that option is always the CLI's)
#             give the emulator the same argv, pid, environment, exit code, the same errors;
#             static and dynamic programs, with and without --sysroot
#   fast:     the fast form is really taken (strace: no glibc start-up before qemu's execve)
#   fallback: what it must leave to the CLI (an old shim named emurun, EMURUN_VERBOSE, ...)
# ctest-parts: same fast fallback
. "$(dirname "$0")/lib/common.sh"

need_fixture_arch aarch64
# Some cases build programs of their own (static PIE, RUNPATH, odd interpreters).
command -v aarch64-linux-gnu-gcc >/dev/null || skip "no aarch64-linux-gnu-gcc: cases build their own programs"
S=$EMURUN_FIXTURE_DIR/aarch64/probe-static
D=$EMURUN_FIXTURE_DIR/aarch64/probe

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

# `emurun exec ARGS...` both ways, each run by a shell that prints its pid first, with the exit
# code; ENVS (VAR=VALUE words) is the environment both run with.
both() {
    local label=$1 envs=$2 fast cli sp qp
    shift 2
    fast=$(env $envs sh -c 'echo "shell=$$"; exec "$@"' sh "$EMURUN" exec "$@" 2>&1; echo "rc=$?")
    cli=$(env $envs sh -c 'echo "shell=$$"; exec "$@"' sh "$EMURUN" exec --color never "$@" 2>&1; echo "rc=$?")
    expect_eq "$label: fast form = CLI" "$(grep -v '^shell=\|^pid=' <<<"$cli")" \
        "$(grep -v '^shell=\|^pid=' <<<"$fast")"
    # Where the fake emulator ran: in the process emurun was started as (no fork), both ways.
    qp=$(sed -n 's/^pid=//p' <<<"$fast" | head -n1)
    if [ -n "$qp" ]; then
        sp=$(sed -n 's/^shell=//p' <<<"$fast" | head -n1)
        expect_eq "$label: the emulator keeps emurun's pid" "$sp" "$qp"
    fi
}

part_same() {
    local q="EMURUN_QEMU_DIR=$T/q"
    both "relative program path, arguments with spaces and empty" "$q" -- "$S" "a b" "" '$x' -x --
    expect_contains "the fake emulator ran" "$(EMURUN_QEMU_DIR=$T/q "$EMURUN" exec -- "$S" || true)" "exe=$T/q/qemu-aarch64-static"
    both "no -- before the program" "$q" "$S" exit 1
    both "program found in PATH" "$q PATH=$T/bin:/usr/bin:/bin" -- tool one
    (cd "$T" && both "relative PATH entry with a slash" "$q PATH=bin/:/usr/bin:/bin" -- tool)
    (cd "$T" && both "empty PATH entry (the cwd)" "$q PATH=:/usr/bin:/bin" -- bin/tool)
    # The emulator found through a relative dir is passed as an absolute path.
    cp "$T/q/qemu-aarch64-static" "$T/rel/q2/"
    (cd "$T/rel" && both "relative EMURUN_QEMU_DIR" "EMURUN_QEMU_DIR=q2" -- "$S")
    both "empty EMURUN_QEMU_DIR is unset" "EMURUN_QEMU_DIR= PATH=$T/q:/usr/bin:/bin" -- "$S"
    # A dynamic qemu-aarch64 first in line loses to any qemu-aarch64-static (in /usr/bin here).
    mkdir -p "$T/dyn" && cp "$T/q/qemu-aarch64-static" "$T/dyn/qemu-aarch64"
    both "a dynamic qemu-aarch64 earlier in the search" "EMURUN_QEMU_DIR=$T/dyn" -- "$S" exit 4
    # Dynamic programs: the libraries checked as the CLI checks them, QEMU_LD_PREFIX the same.
    local x=/usr/aarch64-linux-gnu
    both "dynamic, default sysroots" "$q" -- "$D" x
    both "dynamic, --sysroot SR" "$q" --sysroot "$x" -- "$D" x
    both "dynamic, --sysroot=SR, no --" "$q" --sysroot="$x" "$D"
    both "dynamic, QEMU_LD_PREFIX already set" "$q QEMU_LD_PREFIX=/elsewhere" --sysroot "$x" -- "$D"
    both "dynamic, a sysroot with a trailing /" "$q" --sysroot "$x/" -- "$D"
    both "dynamic, two sysroots (a merged prefix)" "$q" --sysroot "$T" --sysroot "$x" -- "$D"
    both "dynamic, a sysroot that is a file" "$q" --sysroot "$S" -- "$D"
    both "dynamic, a sysroot that does not exist" "$q" --sysroot "$T/none" -- "$D"
    both "static, a sysroot that does not exist" "$q" --sysroot "$T/none" -- "$S"
    both "dynamic, --sysroot with no value" "$q" -- --sysroot
    # A sysroot of our own: the loader and libc, then with libc missing, then with a
    # non-object named libc.so.6 first in the search (skipped as the CLI skips it).
    mkdir -p "$T/sr/lib" "$T/sr/lib/aarch64-linux-gnu"
    cp -L "$x/lib/ld-linux-aarch64.so.1" "$x/lib/libc.so.6" "$T/sr/lib/"
    (cd "$T" && both "dynamic, a relative sysroot of our own" "$q" --sysroot sr -- "$D")
    echo "not a library" >"$T/sr/lib/aarch64-linux-gnu/libc.so.6"
    both "dynamic, a non-object found first" "$q" --sysroot "$T/sr" -- "$D"
    rm "$T/sr/lib/libc.so.6"
    both "dynamic, libc missing (the CLI's error)" "$q" --sysroot "$T/sr" -- "$D"
    both "dynamic with libstdc++ (libraries of libraries)" "$q" --sysroot "$x" -- "$EMURUN_FIXTURE_DIR/aarch64/hello"
    aarch64-linux-gnu-gcc -static-pie -o "$T/spie" "$EMURUN_SOURCE_DIR/tests/fixtures/probe.c"
    both "static PIE" "$q" -- "$T/spie" uname
    aarch64-linux-gnu-gcc -o "$T/rp" -Wl,-rpath,/opt/x "$EMURUN_SOURCE_DIR/tests/fixtures/probe.c"
    both "dynamic with a RUNPATH" "$q" --sysroot "$x" -- "$T/rp"
    both "no emulator in the search" "$q PATH=/nonexistent" -- /nonexistent/x
    both "missing program" "$q" -- "$T/nope"
    both "program not in PATH" "$q" -- no-such-program-here
    both "directory" "$q" -- "$T"
    printf 'not a program\n' >"$T/text" && chmod +x "$T/text"
    both "not ELF" "$q" -- "$T/text"
    head -c 60 "$S" >"$T/trunc" && chmod +x "$T/trunc"
    both "truncated ELF" "$q" -- "$T/trunc"
    cp "$S" "$T/noexec" && chmod -x "$T/noexec"
    both "not executable" "$q" -- "$T/noexec"
    # --arch, as emurun's toolchain files and meson cross files pass it: the file's own arch
    # (any alias, any case) is the fast form; another or an unknown one the CLI's error.
    both "--arch aarch64" "$q" --arch aarch64 -- "$S" x
    both "--arch ARM64 (alias, upper case)" "$q" --arch ARM64 -- "$S"
    both "--arch=aarch64 --sysroot=SR, dynamic" "$q" --arch=aarch64 --sysroot="$x" -- "$D"
    both "--sysroot SR --arch aarch64, dynamic" "$q" --sysroot "$x" --arch aarch64 "$D"
    both "--arch of another arch" "$q" --arch ppc64le -- "$S"
    both "--arch unknown" "$q" --arch vax -- "$S"
    both "--arch twice" "$q" --arch aarch64 --arch aarch64 -- "$S"
    both "--arch with no value" "$q" --arch
    both "--arch=" "$q" --arch= -- "$S"
    # An interpreter whose path climbs out of the sysroot and back in; a RUNPATH outside it
    # (a build tree's own library, found on the host as qemu finds it).
    aarch64-linux-gnu-gcc -Wl,--dynamic-linker=/../aarch64-linux-gnu/lib/ld-linux-aarch64.so.1 \
        -o "$T/climb" "$EMURUN_SOURCE_DIR/tests/fixtures/probe.c"
    both "interpreter path with /../" "$q" --sysroot "$x" -- "$T/climb"
    expect_contains "interpreter path with /../: runs" "$("$EMURUN" exec --sysroot "$x" -- "$T/climb" uname)" aarch64
    mkdir -p "$T/own"
    printf 'int own(void) { return 42; }\n' >"$T/own/own.c"
    printf 'int own(void);\nint main(void) { return own(); }\n' >"$T/own/app.c"
    aarch64-linux-gnu-gcc -shared -fPIC -o "$T/own/libown.so" "$T/own/own.c"
    aarch64-linux-gnu-gcc -o "$T/own/app" "$T/own/app.c" -L"$T/own" -lown -Wl,-rpath,"$T/own"
    rc=0; "$EMURUN" exec --sysroot "$x" -- "$T/own/app" || rc=$?
    expect_eq "a RUNPATH outside the sysroot: the build tree's library is found" 42 "$rc"
    both "a RUNPATH outside the sysroot" "$q" --sysroot "$x" -- "$T/own/app"
    both "the same, default sysroots" "$q" -- "$T/own/app"
    aarch64-linux-gnu-gcc -o "$T/own/app-rpath" "$T/own/app.c" -L"$T/own" -lown \
        -Wl,--disable-new-dtags,-rpath,"$T/own"
    both "an RPATH (old dtags)" "$q" --sysroot "$x" -- "$T/own/app-rpath"
    aarch64-linux-gnu-gcc -o "$T/own/app-origin" "$T/own/app.c" -L"$T/own" -lown \
        '-Wl,-rpath,$ORIGIN'
    both "a RUNPATH with \$ORIGIN" "$q" --sysroot "$x" -- "$T/own/app-origin"
    aarch64-linux-gnu-gcc -o "$T/own/app-colon" "$T/own/app.c" -L"$T/own" -lown \
        -Wl,-rpath,"/nonexistent::$T/own:"
    both "a RUNPATH with empty entries" "$q" --sysroot "$x" -- "$T/own/app-colon"
    mv "$T/own/libown.so" "$T/own/libown.so.away"
    both "a RUNPATH whose library is missing" "$q" --sysroot "$x" -- "$T/own/app"
    mv "$T/own/libown.so.away" "$T/own/libown.so"
    # Started by a name that is not emurun's (a symlink, exec -a): the CLI refuses it, so must
    # the fast form; an empty argv[0] too.
    local f c
    f=$(EMURUN_QEMU_DIR=$T/q bash -c 'exec -a foo "$@"' _ "$EMURUN" exec -- "$S" 2>&1; echo "rc=$?")
    c=$(EMURUN_QEMU_DIR=$T/q bash -c 'exec -a foo "$@"' _ "$EMURUN" exec --color never -- "$S" 2>&1; echo "rc=$?")
    expect_eq "argv[0] 'foo': refused both ways" "$c" "$f"
    expect_contains "argv[0] 'foo': the CLI's error" "$f" "not named emurun"
    f=$(EMURUN_QEMU_DIR=$T/q bash -c 'exec -a "" "$@"' _ "$EMURUN" exec -- "$S" 2>&1; echo "rc=$?")
    expect_contains "empty argv[0]: refused" "$f" "rc=125"
    # An environment no shell passes: a name twice (the first wins), an entry without '=', an
    # empty name; with and without the QEMU_LD_PREFIX the plan sets.
    local xe=$EMURUN_HELPER_DIR/exec_with_env
    for args in "-- $S" "--sysroot /usr/aarch64-linux-gnu -- $D"; do
        f=$("$xe" EMURUN_QEMU_DIR="$T/q" A=1 A=2 NOEQ =x QEMU_LD_PREFIX=/a QEMU_LD_PREFIX=/b -- \
            "$EMURUN" exec $args 2>&1 | grep '^env=' | sort)
        c=$("$xe" EMURUN_QEMU_DIR="$T/q" A=1 A=2 NOEQ =x QEMU_LD_PREFIX=/a QEMU_LD_PREFIX=/b -- \
            "$EMURUN" exec --color never $args 2>&1 | grep '^env=' | sort)
        expect_eq "odd environment ($args): the same variables both ways" "$c" "$f"
    done
    expect_contains "odd environment: the first A wins" "$f" "env=A=1"
    # A program over read_elf's 2 GiB limit (sparse): the CLI's error both ways.
    if cp "$S" "$T/big" && truncate -s $((2 ** 31 + 1)) "$T/big" 2>/dev/null; then
        both "a program over 2 GiB" "$q" -- "$T/big"
        rm -f "$T/big"
    fi
    # A small stack limit: the fast form leaves it to the CLI rather than risk its buffers.
    f=$(EMURUN_QEMU_DIR=$T/q bash -c 'ulimit -s 64; exec "$@"' _ "$EMURUN" exec -- "$S" 2>&1; echo "rc=$?")
    expect_contains "stack limit 64 KiB: runs" "$f" "rc=3"
    # With the real emulator: exit codes and fatal signals as the guest ends.
    for code in 0 7 255; do
        rc=0; "$EMURUN" exec -- "$S" exit "$code" || rc=$?
        expect_eq "real qemu: exit $code" "$code" "$rc"
    done
    rc=0; { "$EMURUN" exec -- "$S" signal SEGV; } 2>/dev/null || rc=$?
    expect_eq "real qemu: SIGSEGV" 139 "$rc"
    expect_eq "real qemu: stdin" "$(seq 1 500)" "$(seq 1 500 | "$EMURUN" exec "$S" cat)"
}

part_fast() {
    [ "${EMURUN_FAST_EXEC:-0}" = 1 ] || { skip_part "this build has no fast exec entry (x86-64 static-PIE builds only)"; return; }
    command -v strace >/dev/null || { skip_part "strace is not installed"; return; }
    # glibc's start-up begins with brk(); the fast form execs qemu before any.
    local tr
    EMURUN_QEMU_DIR=$T/q strace -f -o "$T/st" -e trace=execve,brk "$EMURUN" exec -- "$S" >/dev/null || true
    tr=$(awk '/execve\(/ {n++} n == 1 && /brk\(/ {print "brk"} n >= 2 {exit}' "$T/st")
    expect_eq "fast form: qemu is exec'd before glibc starts" "" "$tr"
    EMURUN_QEMU_DIR=$T/q strace -f -o "$T/st2" -e trace=execve,brk "$EMURUN" exec --color never -- "$S" >/dev/null || true
    tr=$(awk '/execve\(/ {n++} n == 1 && /brk\(/ {print "brk"; exit}' "$T/st2")
    expect_eq "an option: the CLI (glibc starts)" "brk" "$tr"
    EMURUN_QEMU_DIR=$T/q strace -f -o "$T/st3" -e trace=execve,brk "$EMURUN" exec --sysroot /usr/aarch64-linux-gnu -- "$D" >/dev/null || true
    tr=$(awk '/execve\(/ {n++} n == 1 && /brk\(/ {print "brk"} n >= 2 {exit}' "$T/st3")
    expect_eq "fast form, dynamic program with --sysroot: qemu before glibc" "" "$tr"
    EMURUN_QEMU_DIR=$T/q strace -f -o "$T/st4" -e trace=execve,brk "$EMURUN" exec --arch arm64 --sysroot /usr/aarch64-linux-gnu -- "$D" >/dev/null || true
    tr=$(awk '/execve\(/ {n++} n == 1 && /brk\(/ {print "brk"} n >= 2 {exit}' "$T/st4")
    expect_eq "fast form with --arch (emurun's toolchain files): qemu before glibc" "" "$tr"
    # a RUNPATH to a build tree's library
    mkdir -p "$T/own"
    printf 'int own(void) { return 42; }\n' >"$T/own/own.c"
    printf 'int own(void);\nint main(void) { return own(); }\n' >"$T/own/app.c"
    aarch64-linux-gnu-gcc -shared -fPIC -o "$T/own/libown.so" "$T/own/own.c"
    aarch64-linux-gnu-gcc -o "$T/own/app" "$T/own/app.c" -L"$T/own" -lown -Wl,-rpath,"$T/own"
    EMURUN_QEMU_DIR=$T/q strace -f -o "$T/st5" -e trace=execve,brk "$EMURUN" exec --sysroot /usr/aarch64-linux-gnu -- "$T/own/app" >/dev/null || true
    tr=$(awk '/execve\(/ {n++} n == 1 && /brk\(/ {print "brk"} n >= 2 {exit}' "$T/st5")
    expect_eq "fast form, a RUNPATH outside the sysroot: qemu before glibc" "" "$tr"
    expect_contains "... with QEMU_LD_PREFIX" "$(EMURUN_QEMU_DIR=$T/q "$EMURUN" exec --sysroot /usr/aarch64-linux-gnu -- "$D" || true)" "env=QEMU_LD_PREFIX=/usr/aarch64-linux-gnu"
}

part_fallback() {
    export EMURUN_QEMU_DIR=$T/q
    # EMURUN_VERBOSE: the CLI, which says what it runs.
    out=$(EMURUN_VERBOSE=2 "$EMURUN" exec -- "$S" 2>&1 || true)
    expect_contains "EMURUN_VERBOSE=2: the CLI's debug line" "$out" "exec $S"
    # An old-style shim named emurun (a link of the binary with a sidecar for 'emurun'): the
    # CLI runs the shim's tool, never the emulator.
    mkdir -p "$T/old/.emurun-shims"
    ln "$EMURUN" "$T/old/emurun" 2>/dev/null || cp "$EMURUN" "$T/old/emurun"
    printf '{"format":1,"name":"emurun","target":"/bin/echo","arch":"x86_64","native":true,"emulator":"","env":{}}\n' \
        >"$T/old/.emurun-shims/emurun.json"
    expect_eq "a shim named emurun runs its tool" "exec -- $S" "$("$T/old/emurun" exec -- "$S")"
    # Another name: not emurun, so not the fast form; the CLI names the problem.
    ln "$EMURUN" "$T/old/other" 2>/dev/null || cp "$EMURUN" "$T/old/other"
    rc=0; out=$("$T/old/other" exec -- "$S" 2>&1) || rc=$?
    expect_eq "a copy under another name: exit 125" 125 "$rc"
    expect_contains "a copy under another name: says so" "$out" "not named emurun"
    # A native program: run directly by the CLI.
    expect_eq "native program" "x86_64" "$("$EMURUN" exec -- "$(command -v uname)" -m)"
    printf '#!/bin/sh\necho script "$@"\n' >"$T/s.sh" && chmod +x "$T/s.sh"
    expect_eq "#! script" "script a" "$("$EMURUN" exec -- "$T/s.sh" a)"
    expect_contains "--help after exec is CLI11's" "$("$EMURUN" exec --help)" "PROGRAM"
}

run_parts same fast fallback
finish
