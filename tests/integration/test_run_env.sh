#!/bin/bash
# ctest-tier: quick
# Tests that know they are emulated: `emurun run` gives every step EMURUN_ARCH, EMURUN_EMULATED
# and EMURUN_TIMEOUT_MULTIPLIER. A real aarch64 program prints what it got, run under qemu
# (exec mode) and in the sandbox; the host's own probe prints what a native step gets.
# ctest-parts: exec sandbox native
. "$(dirname "$0")/lib/common.sh"
probe=$EMURUN_FIXTURE_DIR/aarch64/probe-static
vars="\"EMURUN_ARCH\", \"EMURUN_EMULATED\", \"EMURUN_TIMEOUT_MULTIPLIER\""

# run_step NAME ARCH EMULATION PROGRAM [RUN OPTIONS...]: a one-step pipeline whose step prints
# the three variables; its log is left in $T/NAME.log, emurun's exit code in $rc.
run_step() {
    local name=$1 arch=$2 mode=$3 program=$4
    shift 4
    cat >"$T/$name.json" <<JSON
{"name": "env", "steps": [
  {"name": "$name", "kind": "test", "arch": "$arch", "emulation": "$mode",
   "argv": ["$program", "env", $vars]}]}
JSON
    rc=0
    EMURUN_EMULATED=outer "$EMURUN" run "$T/$name.json" -q --log-dir "$T" "$@" \
        >"$T/$name.out" 2>&1 || rc=$?
}

part_exec() {
    need_probe aarch64 || return 0
    run_step exec aarch64 exec "$probe" --timeout-multiplier aarch64=7.5,ppc64le=3
    expect_eq "exec: the step passes" 0 "$rc"
    expect_eq "exec: the aarch64 program under qemu sees arch, emulated, multiplier" \
        "aarch64 1 7.5" "$(tr '\n' ' ' <"$T/exec.log" | sed 's/ $//')"
}

part_sandbox() {
    need_probe aarch64 || return 0
    need_sandbox || return 0
    run_step sandbox arm64 sandbox "$probe" --timeout-multiplier 4
    expect_eq "sandbox: the step passes" 0 "$rc"
    expect_eq "sandbox: the aarch64 program sees arch (canonical), emulated, multiplier" \
        "aarch64 1 4" "$(tr '\n' ' ' <"$T/sandbox.log" | sed 's/ $//')"
}

part_native() {
    local host
    host=$(uname -m)
    [ "$host" = x86_64 ] || [ "$host" = aarch64 ] || { skip_part "host arch $host: names differ"; return 0; }
    run_step native "$host" native "$EMURUN_FIXTURE_DIR/native/probe" --timeout-multiplier 9
    expect_eq "native: the step passes" 0 "$rc"
    expect_eq "native: told it is not emulated, multiplier 1 (an outer value is replaced)" \
        "$host 0 1" "$(tr '\n' ' ' <"$T/native.log" | sed 's/ $//')"
}

run_parts exec sandbox native
finish
