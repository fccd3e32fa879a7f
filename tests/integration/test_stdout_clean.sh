#!/bin/bash
# ctest-tier: quick
# stdout belongs to the program: whatever emurun says (debug, trace, warnings) goes to stderr, so
# `emurun exec -- tool > out.bin`, a shim and `emurun sandbox` give the program's own bytes at
# every verbosity. Each case compares with the program run directly (natively, or by qemu itself).
# Parts: native; foreign, shim, sandbox need qemu-aarch64 and the aarch64 fixture, sandbox also a
# working `emurun sandbox`, host_handlers a private binfmt_misc holding Debian's aarch64 line (the
# fallback on a simulated old kernel); a part whose precondition is missing is reported as skipped.
# ctest-parts: native foreign shim sandbox host_handlers
. "$(dirname "$0")/lib/common.sh"

native=$EMURUN_HELPER_DIR/print_bytes
[ -x "$native" ] || skip "helper print_bytes not built"

# check LABEL EXPECTED_FILE -- COMMAND...: stdout of COMMAND must equal EXPECTED_FILE byte for byte.
check() {
    local label=$1 expected=$2
    shift 3
    "$@" >"$T/out" 2>"$T/err" || true
    if cmp -s "$expected" "$T/out"; then ok "$label"; else
        not_ok "$label: stdout differs from the program's own ($(wc -c <"$T/out") vs $(wc -c <"$expected") bytes; first line: $(head -c 200 "$T/out" | head -n1))"
    fi
}

"$native" 70000 300 >"$T/native.want" 2>/dev/null
verbosities=("" "-v" "-vv" "-q" "--color=always -vv")
qemu=$(command -v qemu-aarch64-static || command -v qemu-aarch64 || true)
probe=$EMURUN_FIXTURE_DIR/aarch64/probe-static

part_native() {
    for v in "${verbosities[@]}"; do
        # shellcheck disable=SC2086
        check "exec native ${v:-default}" "$T/native.want" -- "$EMURUN" $v exec -- "$native" 70000 300
    done
    # -v must really produce diagnostics (on stderr), or the test above proves nothing.
    "$EMURUN" -vv exec -- "$native" 1 0 >/dev/null 2>"$T/err"
    expect_contains "-vv exec writes its debug lines to stderr" "$(cat "$T/err")" "emurun["
    EMURUN_VERBOSE=2 "$EMURUN" exec -- "$native" 1 0 >/dev/null 2>"$T/err"
    expect_contains "EMURUN_VERBOSE=2 has the effect of -vv" "$(cat "$T/err")" "emurun["
}

# need_foreign: false (the part skipped, or failed: need_probe) without qemu-aarch64 or the aarch64
# probe, or when qemu cannot run it; else writes what it prints under qemu to $T/foreign.want.
need_foreign() {
    [ -n "$qemu" ] || { skip_part "no qemu-aarch64 (qemu-user-static; tools/install-deps)"; return 1; }
    need_probe aarch64 || return 1
    "$qemu" "$probe" argv "a b" "" x >"$T/foreign.want" ||
        { not_ok "$qemu $probe exited $? (the reference output)"; return 1; }
}

part_foreign() {
    need_foreign || return 0
    for v in "${verbosities[@]}"; do
        # shellcheck disable=SC2086
        check "exec foreign ${v:-default}" "$T/foreign.want" -- "$EMURUN" $v exec -- "$probe" argv "a b" "" x
    done
}

part_shim() {
    need_foreign || return 0
    "$EMURUN" shim add probe --target "$probe" --dir "$T/shims" >/dev/null
    "$T/shims/probe" argv "a b" "" x >"$T/shim.want.raw" 2>/dev/null
    sed "s|^\[0\]=.*|[0]=<$probe>|" "$T/shim.want.raw" >"$T/shim.want"
    for level in -1 0 1 2; do # the launcher ignores EMURUN_VERBOSE; whatever it is, stdout stays clean
        EMURUN_VERBOSE=$level "$T/shims/probe" argv "a b" "" x >"$T/out" 2>/dev/null || true
        sed -i "s|^\[0\]=.*|[0]=<$probe>|" "$T/out"
        if cmp -s "$T/foreign.want" "$T/out"; then ok "shim EMURUN_VERBOSE=$level"; else
            not_ok "shim EMURUN_VERBOSE=$level: stdout differs: $(head -n2 "$T/out")"
        fi
    done
}

part_sandbox() {
    need_foreign || return 0
    need_sandbox || return 0
    for v in "${verbosities[@]}"; do
        # shellcheck disable=SC2086
        check "sandbox ${v:-default}" "$T/foreign.want" -- "$EMURUN" $v sandbox --arch aarch64 -- "$probe" argv "a b" "" x
        # shellcheck disable=SC2086
        check "sandbox native command ${v:-default}" "$T/native.want" -- "$EMURUN" $v sandbox --arch aarch64 -- "$native" 70000 300
    done
    # The issue's own example: an arch without a sysroot makes emurun warn; not on stdout.
    : >"$T/empty"
    check "sandbox mips64el warning stays off stdout" "$T/empty" -- "$EMURUN" -vv sandbox --arch mips64el -- true
    expect_contains "sandbox -vv: diagnostics reach stderr" "$(cat "$T/err")" "emurun"
}

# `emurun sandbox` on a kernel without a private binfmt_misc (simulated) runs through the host's
# handlers, with a warning: on stderr, whatever the verbosity.
part_host_handlers() {
    need_foreign || return 0
    [ -e /usr/libexec/qemu-binfmt/aarch64-binfmt-P ] || {
        skip_part "no /usr/libexec/qemu-binfmt/aarch64-binfmt-P (qemu-user-static)"; return; }
    unshare --user --map-root-user --mount sh -c \
        'mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc' 2>/dev/null || {
        skip_part "cannot mount binfmt_misc in a user namespace (needs Linux >= 6.7)"; return; }
    local m='\x7f\x45\x4c\x46\x02\x01\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x02\x00\xb7\x00'
    local k='\xff\xff\xff\xff\xff\xff\xff\x00\xff\xff\xff\xff\xff\xff\xff\xff\xfe\xff\xff\xff'
    local line=":qemu-aarch64:M::$m:$k:/usr/libexec/qemu-binfmt/aarch64-binfmt-P:OPF"
    in_ns() {
        unshare --user --map-root-user --mount bash -c '
            mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc || exit 99
            printf "%s\n" "$1" >/proc/sys/fs/binfmt_misc/register || exit 98
            echo 0 >/proc/sys/user/max_user_namespaces || exit 97 # no sandbox: host handlers
            shift; exec "$@"' _ "$line" "$@"
    }
    for v in "${verbosities[@]}"; do
        # shellcheck disable=SC2086
        check "host handlers ${v:-default}" "$T/foreign.want" -- in_ns "$EMURUN" $v sandbox --arch aarch64 -- "$probe" argv "a b" "" x
    done
    in_ns "$EMURUN" sandbox --arch aarch64 -- true >/dev/null 2>"$T/err"
    expect_contains "host handlers: the warning reaches stderr" "$(cat "$T/err")" "host's binfmt_misc handlers"
}

run_parts native foreign shim sandbox host_handlers
finish
