#!/bin/bash
# Emulation "auto" (the default for foreign steps) and `emurun sandbox` on a kernel without a
# private binfmt_misc (simulated: EMURUN_TEST_SANDBOX_UNSUPPORTED=1), with and without
# host-style handlers (the exact lines Debian 12's qemu-user-static and tonistiigi/binfmt write)
# in a private binfmt_misc of a user namespace standing in for the host's: the host's own table
# is never touched. Where the sandbox works, auto runs in it, and the report says so.
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
cat >"$T/p.json" <<JSON
{"name": "auto", "steps": [
  {"name": "probe", "kind": "test", "arch": "aarch64", "argv": ["$probe", "uname"]}]}
JSON
magic='\x7f\x45\x4c\x46\x02\x01\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x02\x00\xb7\x00'
mask='\xff\xff\xff\xff\xff\xff\xff\x00\xff\xff\xff\xff\xff\xff\xff\xff\xfe\xff\xff\xff'
debian=":qemu-aarch64:M::$magic:$mask:/usr/libexec/qemu-binfmt/aarch64-binfmt-P:OPF"
toni=":qemu-aarch64:M::$magic:$mask:/usr/bin/qemu-aarch64:POCF"
mode() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["steps"][0]["emulation"])' "$1"; }

# in_ns LINE CMD...: CMD in a user namespace whose binfmt_misc holds LINE (none if empty),
# on a simulated old kernel.
in_ns() {
    unshare --user --map-root-user --mount bash -c '
        mount -t binfmt_misc binfmt_misc '"$BM"' || exit 99
        [ -z "$1" ] || printf "%s\n" "$1" >'"$BM"'/register || exit 98
        shift; EMURUN_TEST_SANDBOX_UNSUPPORTED=1 exec "$@"' _ "$@"
}

# Where the sandbox works (this kernel), auto runs in it.
rc=0
"$EMURUN" run "$T/p.json" -q --report "$T/r0.json" --log-dir "$T/l0" >/dev/null 2>&1 || rc=$?
expect_eq "auto with a sandbox: passes" 0 "$rc"
expect_eq "auto with a sandbox: report says sandbox" sandbox "$(mode "$T/r0.json")"

for who in debian toni; do
    line=$debian
    [ $who = toni ] && line=$toni
    rc=0
    in_ns "$line" "$EMURUN" run "$T/p.json" -q --report "$T/r-$who.json" --log-dir "$T/l-$who" \
        >/dev/null 2>"$T/e-$who" || rc=$?
    expect_eq "old kernel, $who handlers: the step passes" 0 "$rc"
    expect_eq "old kernel, $who handlers: report says host" host "$(mode "$T/r-$who.json")"
    expect_contains "old kernel, $who handlers: it ran the aarch64 probe" \
        "$(cat "$T/l-$who/probe.log")" aarch64
    rc=0
    out=$(in_ns "$line" "$EMURUN" sandbox --arch aarch64 -- "$probe" uname 2>"$T/s-$who") || rc=$?
    expect_eq "old kernel, $who handlers: emurun sandbox runs CMD" "0 aarch64" "$rc $out"
    expect_contains "old kernel, $who handlers: with a note" "$(cat "$T/s-$who")" \
        "running through the host's binfmt_misc handlers"
done

# No handlers: the step fails and names the fixes; emurun sandbox keeps its own error.
rc=0
in_ns "" "$EMURUN" run "$T/p.json" -q --report "$T/r-none.json" --log-dir "$T/l-none" \
    >/dev/null 2>&1 || rc=$?
expect_eq "old kernel, no handlers: the run fails" 1 "$rc"
msg=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["steps"][0]["message"])' "$T/r-none.json")
expect_contains "no handlers: names registration as root" "$msg" "emurun binfmt register aarch64"
expect_contains "no handlers: names the kernel" "$msg" "Linux >= 6.7"
expect_eq "no handlers: report says auto" auto "$(mode "$T/r-none.json")"
rc=0
in_ns "" "$EMURUN" sandbox --arch aarch64 -- "$probe" uname >/dev/null 2>&1 || rc=$?
expect_eq "old kernel, no handlers: emurun sandbox fails 125" 125 "$rc"

# A dynamic emulator without F is not sane for auto: no fallback.
rc=0
in_ns ":qemu-aarch64:M::$magic:$mask:/usr/bin/qemu-aarch64:P" "$EMURUN" run "$T/p.json" -q \
    --report "$T/r-dyn.json" --log-dir "$T/l-dyn" >/dev/null 2>&1 || rc=$?
expect_eq "old kernel, dynamic emulator without F: the run fails" 1 "$rc"
finish
