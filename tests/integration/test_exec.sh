#!/bin/bash
# ctest-tier: quick
# `emurun exec` runs cross-compiled fixtures of every arch through the real binary and passes
# argv, env, stdin, exit codes and signals through untouched.
. "$(dirname "$0")/lib/common.sh"

arches=$(fixture_arches)
[ -n "$arches" ] || skip "no cross compilers: no fixtures were built"
for a in aarch64 ppc64le s390x riscv64 arm; do need_fixture_arch "$a"; done

declare -A uname_of=([aarch64]=aarch64 [ppc64le]=ppc64le [s390x]=s390x [riscv64]=riscv64 [arm]=armv7l)
for arch in aarch64 ppc64le s390x riscv64 arm; do
    for kind in probe probe-static; do
        p="$EMURUN_FIXTURE_DIR/$arch/$kind"
        expect_eq "$arch/$kind uname" "${uname_of[$arch]}" "$("$EMURUN" exec -- "$p" uname)"
    done
    p="$EMURUN_FIXTURE_DIR/$arch/probe"
    out=$("$EMURUN" exec -- "$p" argv "a b" "'q'" '"dq"' "" 'x\y')
    expect_eq "$arch argv" "[0]=<$p>
[1]=<argv>
[2]=<a b>
[3]=<'q'>
[4]=<\"dq\">
[5]=<>
[6]=<x\\y>" "$out"
    expect_eq "$arch argv0" "[0]=<myname>" "$("$EMURUN" exec --argv0 myname -- "$p" argv | head -n1)"
    expect_eq "$arch env" "hello world" "$(EMURUN_T_VAR='hello world' "$EMURUN" exec -- "$p" env EMURUN_T_VAR)"
    expect_eq "$arch --env" "v=1" "$("$EMURUN" exec --env EMURUN_T_X=v=1 -- "$p" env EMURUN_T_X)"
    expect_eq "$arch stdin" "$(seq 1 2000)" "$(seq 1 2000 | "$EMURUN" exec -- "$p" cat)"
    expect_eq "$arch cwd" "$T" "$(cd "$T" && "$EMURUN" exec -- "$p" cwd)"
    for code in 0 1 42 255; do
        rc=0; "$EMURUN" exec -- "$p" exit "$code" || rc=$?
        expect_eq "$arch exit $code" "$code" "$rc"
    done
    for sig in SEGV:139 ABRT:134 KILL:137; do
        rc=0; { "$EMURUN" exec -- "$p" signal "${sig%%:*}"; } 2>/dev/null || rc=$?
        expect_eq "$arch signal ${sig%%:*}" "${sig##*:}" "$rc"
    done
done

# Big-endian really is big-endian under emulation; little stays little.
expect_eq "s390x endian" "big 01020304" "$("$EMURUN" exec -- "$EMURUN_FIXTURE_DIR/s390x/probe-static" endian)"
expect_eq "ppc64le endian" "little 04030201" "$("$EMURUN" exec -- "$EMURUN_FIXTURE_DIR/ppc64le/probe" endian)"
# --arch given explicitly, and the C++ fixture with libstdc++ from the cross sysroot.
expect_contains "aarch64 hello" "$("$EMURUN" exec --arch arm64 -- "$EMURUN_FIXTURE_DIR/aarch64/hello" x)" "hello from x"
# exec in place: emurun becomes qemu (or the native program), so the pid is the caller's and
# a fatal signal of the guest is a real death by that signal (qemu re-raises it), not exit 128+N.
ws="$EMURUN_HELPER_DIR/wait_status"
for kind in probe probe-static; do
    p="$EMURUN_FIXTURE_DIR/aarch64/$kind"
    pids=$(sh -c 'echo $$; exec "$1" exec -- "$2" exec /bin/sh -c "echo \$\$"' sh "$EMURUN" "$p")
    expect_eq "aarch64/$kind same pid" "$(echo "$pids" | head -n1)" "$(echo "$pids" | tail -n1)"
    expect_eq "aarch64/$kind one line per pid" 2 "$(echo "$pids" | wc -l)"
    for sig in SEGV:11 ABRT:6 KILL:9; do
        expect_eq "aarch64/$kind dies of SIG${sig%%:*}" "signaled ${sig##*:}" \
            "$("$ws" "$EMURUN" exec -- "$p" signal "${sig%%:*}" 2>/dev/null)"
    done
    expect_eq "aarch64/$kind exit 3 is an exit" "exited 3" "$("$ws" "$EMURUN" exec -- "$p" exit 3)"
done
pids=$(sh -c 'echo $$; exec "$1" exec -- /bin/sh -c "echo \$\$"' sh "$EMURUN")
expect_eq "native same pid" "$(echo "$pids" | head -n1)" "$(echo "$pids" | tail -n1)"
expect_eq "native dies of SIGTERM" "signaled 15" "$("$ws" "$EMURUN" exec -- "$EMURUN_HELPER_DIR/kill_self" 15)"
# Nothing of emurun's is left open in the program: the same fds as without emurun.
expect_eq "no leaked fds" "$(ls /proc/self/fd | wc -l)" "$("$EMURUN" exec -- /bin/ls /proc/self/fd | wc -l)"
# Native binaries run natively.
expect_eq "native uname" "$(uname -m)" "$("$EMURUN" exec -- "$EMURUN_FIXTURE_DIR/native/probe" uname)"
finish
