#!/bin/bash
# ctest-tier: quick
# Emulation "auto" (the default for foreign steps) and `emurun sandbox` on a kernel without a
# private binfmt_misc (a user namespace whose user.max_user_namespaces is 0: the kernel refuses
# the sandbox's namespace, as an old or locked-down one does), with and without host-style
# handlers (the exact lines Debian 12's qemu-user-static and tonistiigi/binfmt write) in a
# private binfmt_misc of a user namespace standing in for the host's: the host's own table is
# never touched. Where the sandbox works, auto runs in it, and the report says so.
# ctest-parts: kernel debian tonistiigi sysroot no_handlers dynamic_emulator
. "$(dirname "$0")/lib/common.sh"
BM=/proc/sys/fs/binfmt_misc
need_fixture_arch aarch64
for f in /usr/bin/qemu-aarch64-static /usr/bin/qemu-aarch64 /usr/libexec/qemu-binfmt/aarch64-binfmt-P; do
    [ -e "$f" ] || skip "$f missing (apt-get install qemu-user-static qemu-user)"
done
unshare --user --map-root-user --mount sh -c "mount -t binfmt_misc binfmt_misc $BM" 2>/dev/null ||
    skip "this kernel cannot mount binfmt_misc in a user namespace (needs Linux >= 6.7)"
command -v python3 >/dev/null || skip "python3 needed to read the report"

probe=$EMURUN_FIXTURE_DIR/aarch64/probe-static
dyn_probe=$EMURUN_FIXTURE_DIR/aarch64/probe
pipeline() { # pipeline FILE PROGRAM: one aarch64 step, emulation left to its default (auto)
    cat >"$1" <<JSON
{"name": "auto", "steps": [
  {"name": "probe", "kind": "test", "arch": "aarch64", "argv": ["$2", "uname"]}]}
JSON
}
pipeline "$T/p.json" "$probe"
magic='\x7f\x45\x4c\x46\x02\x01\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x02\x00\xb7\x00'
mask='\xff\xff\xff\xff\xff\xff\xff\x00\xff\xff\xff\xff\xff\xff\xff\xff\xfe\xff\xff\xff'
debian=":qemu-aarch64:M::$magic:$mask:/usr/libexec/qemu-binfmt/aarch64-binfmt-P:OPF"
toni=":qemu-aarch64:M::$magic:$mask:/usr/bin/qemu-aarch64:POCF"
field() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["steps"][0][sys.argv[2]])' "$1" "$2"; }

# in_ns LINE CMD...: CMD in a user namespace whose binfmt_misc holds LINE (none if empty),
# where the kernel refuses new user namespaces (no sandbox, as on an old kernel).
in_ns() {
    unshare --user --map-root-user --mount bash -c '
        mount -t binfmt_misc binfmt_misc '"$BM"' || exit 99
        [ -z "$1" ] || printf "%s\n" "$1" >'"$BM"'/register || exit 98
        echo 0 >/proc/sys/user/max_user_namespaces || exit 97
        shift; exec "$@"' _ "$@"
}

# old_kernel_passes WHO LINE PIPELINE PROGRAM: the step and `emurun sandbox` run PROGRAM
# through LINE's handler, the report says host, the sandbox says why on stderr only.
old_kernel_passes() {
    local rc=0 out
    in_ns "$2" "$EMURUN" run "$3" -q --report "$T/r-$1.json" --log-dir "$T/l-$1" \
        >/dev/null 2>"$T/e-$1" || rc=$?
    expect_eq "old kernel, $1: the step passes" 0 "$rc"
    expect_eq "old kernel, $1: report says host" host "$(field "$T/r-$1.json" emulation)"
    expect_contains "old kernel, $1: it ran the aarch64 probe" "$(cat "$T/l-$1/probe.log")" aarch64
    rc=0
    out=$(in_ns "$2" "$EMURUN" sandbox --arch aarch64 -- "$4" uname 2>"$T/s-$1") || rc=$?
    expect_eq "old kernel, $1: emurun sandbox runs CMD, stdout is its own" "0 aarch64" "$rc $out"
    expect_contains "old kernel, $1: with a note on stderr" "$(cat "$T/s-$1")" \
        "running through the host's binfmt_misc handlers"
}

part_kernel() { # where the sandbox works (this kernel), auto runs in it
    local rc=0
    "$EMURUN" run "$T/p.json" -q --report "$T/r0.json" --log-dir "$T/l0" >/dev/null 2>&1 || rc=$?
    expect_eq "auto with a sandbox: passes" 0 "$rc"
    expect_eq "auto with a sandbox: report says sandbox" sandbox "$(field "$T/r0.json" emulation)"
}

part_debian() {
    old_kernel_passes debian "$debian" "$T/p.json" "$probe"
    # Through the host's handlers, `emurun sandbox` exits as the sandbox does: 127 for a missing
    # command, 126 for one that is not executable, the command's own status otherwise.
    local rc=0
    in_ns "$debian" "$EMURUN" sandbox --arch aarch64 -- "$T/missing" 2>/dev/null || rc=$?
    expect_eq "old kernel, debian: a missing command exits 127" 127 "$rc"
    : >"$T/not-executable"
    rc=0
    in_ns "$debian" "$EMURUN" sandbox --arch aarch64 -- "$T/not-executable" 2>/dev/null || rc=$?
    expect_eq "old kernel, debian: a non-executable command exits 126" 126 "$rc"
    rc=0
    in_ns "$debian" "$EMURUN" sandbox --arch aarch64 -- sh -c 'exit 7' 2>/dev/null || rc=$?
    expect_eq "old kernel, debian: the command's exit status" 7 "$rc"
}
part_tonistiigi() { old_kernel_passes tonistiigi "$toni" "$T/p.json" "$probe"; }

part_sysroot() { # a dynamic program finds its libraries through the host's qemu (QEMU_LD_PREFIX)
    [ -e /usr/aarch64-linux-gnu/lib/ld-linux-aarch64.so.1 ] || {
        skip_part "no aarch64 sysroot (apt-get install libc6-arm64-cross)"; return; }
    pipeline "$T/dyn.json" "$dyn_probe"
    old_kernel_passes sysroot "$debian" "$T/dyn.json" "$dyn_probe"
}

part_no_handlers() { # the step fails and names the fixes; emurun sandbox keeps its own error
    local rc=0 msg
    in_ns "" "$EMURUN" run "$T/p.json" -q --report "$T/r-none.json" --log-dir "$T/l-none" \
        >/dev/null 2>&1 || rc=$?
    expect_eq "old kernel, no handlers: the run fails" 1 "$rc"
    msg=$(field "$T/r-none.json" message)
    expect_contains "no handlers: names registration as root" "$msg" "emurun binfmt register aarch64"
    expect_contains "no handlers: names the kernel" "$msg" "Linux >= 6.7"
    expect_eq "no handlers: report says auto" auto "$(field "$T/r-none.json" emulation)"
    rc=0
    in_ns "" "$EMURUN" sandbox --arch aarch64 -- "$probe" uname >/dev/null 2>&1 || rc=$?
    expect_eq "old kernel, no handlers: emurun sandbox fails 125" 125 "$rc"
}

part_dynamic_emulator() { # a dynamic emulator without F is not sane for auto: no fallback
    local rc=0
    in_ns ":qemu-aarch64:M::$magic:$mask:/usr/bin/qemu-aarch64:P" "$EMURUN" run "$T/p.json" -q \
        --report "$T/r-dyn.json" --log-dir "$T/l-dyn" >/dev/null 2>&1 || rc=$?
    expect_eq "old kernel, dynamic emulator without F: the run fails" 1 "$rc"
}

run_parts kernel debian tonistiigi sysroot no_handlers dynamic_emulator
finish
