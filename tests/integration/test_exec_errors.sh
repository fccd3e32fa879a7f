#!/bin/bash
# ctest-tier: quick
# emurun's own failures exit 125 with a message saying what to do; usage errors exit 2.
# The foreign part needs the aarch64 fixtures and skips on its own without them.
# ctest-parts: host aarch64
. "$(dirname "$0")/lib/common.sh"

run() { rc=0; err=$("$EMURUN" "$@" 2>&1 >/dev/null) || rc=$?; }

part_host() {
    run exec -- "$T/nope"
    expect_eq "missing program: 125" 125 "$rc"
    expect_contains "missing program: message" "$err" "emurun: error: stat $T/nope failed: No such file or directory"

    printf 'hello' > "$T/data"; chmod +x "$T/data"
    run exec -- "$T/data"
    expect_eq "not ELF: 125" 125 "$rc"
    expect_contains "not ELF: message" "$err" "not an ELF file"

    printf '\177ELF' > "$T/short"; chmod +x "$T/short"
    run exec -- "$T/short"
    expect_eq "truncated ELF: 125" 125 "$rc"

    cp "$EMURUN_FIXTURE_DIR/native/probe" "$T/noexec"; chmod -x "$T/noexec"
    run exec -- "$T/noexec"
    expect_eq "not executable: 125" 125 "$rc"
    expect_contains "not executable: hint" "$err" "chmod +x"

    run exec --arch frobnicator -- /bin/true
    expect_eq "unknown arch: 125" 125 "$rc"
    expect_contains "unknown arch: lists known" "$err" "known: "

    # The library's hint names the option that fixes a failure by its API name, not a flag.
    run exec --arch s390x -- "$EMURUN_FIXTURE_DIR/native/probe"
    expect_eq "native program, other arch asked: 125" 125 "$rc"
    expect_contains "the hint in words" "$err" "(ask for no arch, or for $(uname -m) (--arch))"

    # A repeatable option takes one value per occurrence: the words after it are the command.
    out=$("$EMURUN" exec --sysroot "$T" --env A=1 /bin/sh -c 'echo "$A $0"' zero)
    expect_eq "exec --sysroot D PROG ARGS: PROG runs with its args" "1 zero" "$out"
    out=$("$EMURUN" inspect --sysroot / /bin/sh /bin/true | grep -c '^/bin/')
    expect_eq "inspect --sysroot D FILE FILE: both files inspected" 2 "$out"

    run exec --env NOEQUALS -- /bin/true
    expect_eq "bad --env: usage 2" 2 "$rc"

    run exec --no-such-flag -- /bin/true
    expect_eq "bad flag: usage 2" 2 "$rc"

    run exec
    expect_eq "no program: usage 2" 2 "$rc"
}

part_aarch64() {
    need_probe aarch64 || return 0
    run exec --arch ppc64le -- "$EMURUN_FIXTURE_DIR/aarch64/probe"
    expect_eq "wrong arch: 125" 125 "$rc"
    expect_contains "wrong arch: message" "$err" "is a program for aarch64"
    # exec in place: an emulator that cannot be executed is still emurun's error (125, named).
    mkdir -p "$T/badqemu"
    printf '#!/nonexistent/interpreter\n' > "$T/badqemu/qemu-aarch64-static"
    chmod +x "$T/badqemu/qemu-aarch64-static"
    run exec --qemu-dir "$T/badqemu" -- "$EMURUN_FIXTURE_DIR/aarch64/probe-static"
    expect_eq "emulator exec fails: 125" 125 "$rc"
    expect_contains "emulator exec fails: named" "$err" "execve $T/badqemu/qemu-aarch64-static failed"
    # A dynamic binary with an empty sysroot: the loader is named as missing.
    mkdir -p "$T/empty"
    run exec --sysroot "$T/empty" -- "$EMURUN_FIXTURE_DIR/aarch64/hello"
    expect_eq "missing libs: 125" 125 "$rc"
    expect_contains "missing libs: loader named" "$err" "/lib/ld-linux-aarch64.so.1"
    expect_contains "missing libs: libstdc++ named" "$err" "libstdc++.so.6"
    expect_contains "missing libs: package hint" "$err" "libstdc++6:arm64"
}

run_parts host aarch64
finish
