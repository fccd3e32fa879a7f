#!/bin/bash
# ctest-tier: quick
# QEMU in the report: each emulated step records the emulator's path, version and CPU model; a
# step's `cpu` reaches the real qemu (exec: -cpu; sandbox: QEMU_CPU), checked by a model qemu
# refuses; `report compare` names a changed emulator; `emurun sandbox --cpu` takes one arch.
# ctest-parts: exec sandbox compare sandbox_cli
. "$(dirname "$0")/lib/common.sh"
command -v python3 >/dev/null || skip "python3 needed to read the reports"
probe=$EMURUN_FIXTURE_DIR/aarch64/probe-static

# run_pipeline NAME STEPS_JSON: run it; emurun's exit code in $rc.
run_pipeline() {
    printf '{"name": "%s", "steps": %s}\n' "$1" "$2" >"$T/$1.json"
    rc=0
    "$EMURUN" run "$T/$1.json" -q --report "$T/$1-r.json" --log-dir "$T/$1-logs" \
        >"$T/$1.out" 2>"$T/$1.err" || rc=$?
}

# emulator NAME STEP KEY: a field of the step's emulator record ("None" when null).
emulator() {
    python3 -c 'import json,sys
s = next(x for x in json.load(open(sys.argv[1]))["steps"] if x["name"] == sys.argv[2])
e = s["emulator"]
print(e if e is None else e[sys.argv[3]])' "$T/$1-r.json" "$2" "$3"
}

status() {
    python3 -c 'import json,sys
print(next(x for x in json.load(open(sys.argv[1]))["steps"] if x["name"] == sys.argv[2])["status"])' \
        "$T/$1-r.json" "$2"
}

part_exec() {
    need_probe aarch64 || return 0
    local qemu version
    qemu=$(command -v qemu-aarch64-static || command -v qemu-aarch64) ||
        { skip_part "no qemu-aarch64 in PATH"; return 0; }
    version=$("$qemu" --version | head -1 | awk '{print $3}')
    run_pipeline exec '[
  {"name": "default", "kind": "test", "arch": "aarch64", "emulation": "exec",
   "argv": ["'"$probe"'", "uname"]},
  {"name": "a57", "kind": "test", "arch": "aarch64", "emulation": "exec", "cpu": "cortex-a57",
   "argv": ["'"$probe"'", "uname"]},
  {"name": "bogus", "kind": "test", "arch": "aarch64", "emulation": "exec",
   "cpu": "no-such-cpu", "argv": ["'"$probe"'", "uname"]},
  {"name": "native", "kind": "test", "argv": ["true"]}]'
    expect_eq "exec: the bogus model fails the run" 1 "$rc"
    expect_eq "exec: default model passes" passed "$(status exec default)"
    expect_eq "exec: cortex-a57 passes" passed "$(status exec a57)"
    expect_eq "exec: the bogus model reached qemu's -cpu" failed "$(status exec bogus)"
    expect_contains "exec: qemu refused it" "$(cat "$T/exec-logs/bogus.log")" "no-such-cpu"
    expect_eq "exec: the emulator path is the one PATH finds" "$qemu" \
        "$(emulator exec default path)"
    expect_eq "exec: its version is what --version says" "$version" \
        "$(emulator exec default version)"
    expect_eq "exec: the default model" "max True" \
        "$(emulator exec default cpu) $(emulator exec default cpu_default)"
    expect_eq "exec: the asked-for model" "cortex-a57 False" \
        "$(emulator exec a57 cpu) $(emulator exec a57 cpu_default)"
    expect_eq "exec: a native step has no emulator" None "$(emulator exec native path)"
    validate "$T/exec-r.json" "$T/exec.json"
}

part_sandbox() {
    need_probe aarch64 || return 0
    need_sandbox || return 0
    run_pipeline sandbox '[
  {"name": "a57", "kind": "test", "arch": "aarch64", "emulation": "sandbox", "cpu": "cortex-a57",
   "argv": ["'"$probe"'", "env", "QEMU_CPU"]},
  {"name": "bogus", "kind": "test", "arch": "aarch64", "emulation": "sandbox",
   "cpu": "no-such-cpu", "argv": ["'"$probe"'", "uname"]}]'
    expect_eq "sandbox: the bogus model fails the run" 1 "$rc"
    expect_eq "sandbox: cortex-a57 passes" passed "$(status sandbox a57)"
    expect_eq "sandbox: the program sees QEMU_CPU" cortex-a57 "$(cat "$T/sandbox-logs/a57.log")"
    expect_contains "sandbox: qemu started by binfmt refused the bogus model" \
        "$(cat "$T/sandbox-logs/bogus.log")" "no-such-cpu"
    expect_eq "sandbox: the model is recorded" cortex-a57 "$(emulator sandbox a57 cpu)"
}

part_compare() {
    python3 - "$T" <<'PY'
import json, sys
t = sys.argv[1]
def report(version):
    step = {"name": "unit", "kind": "test", "arch": "aarch64", "emulation": "exec",
            "status": "passed", "exit_code": 0, "signal": None, "wall": 2, "user": 1, "sys": 0,
            "max_rss_kib": 1, "budget": None, "baseline_wall": None, "log": "l", "message": "",
            "flags": [], "emulator": {"path": "/usr/bin/qemu-aarch64-static",
                                      "version": version, "cpu": "max", "cpu_default": True}}
    return {"schema_version": 1, "pipeline": "p", "started": "2026-01-01T00:00:00Z", "wall": 2,
            "host_arch": "x86_64", "shard": {"index": 1, "count": 1}, "job_limit": None,
            "interrupted_by": None, "flags": [], "steps": [step]}
json.dump(report("7.2.21"), open(t + "/before.json", "w"))
json.dump(report("7.2.22"), open(t + "/after.json", "w"))
PY
    local out
    out=$("$EMURUN" report compare "$T/before.json" "$T/after.json")
    expect_contains "compare: the table names the changed emulator" "$out" \
        "emulator changed: unit: /usr/bin/qemu-aarch64-static 7.2.21 (cpu max, the default) -> /usr/bin/qemu-aarch64-static 7.2.22"
    out=$("$EMURUN" report compare --json "$T/before.json" "$T/after.json")
    expect_eq "compare --json: emulator_changes" "unit 7.2.21 7.2.22" "$(python3 -c 'import json,sys
c = json.load(sys.stdin)["emulator_changes"][0]
print(c["name"], c["before"]["version"], c["after"]["version"])' <<<"$out")"
    out=$("$EMURUN" report compare "$T/before.json" "$T/before.json")
    case "$out" in
        *"emulator changed"*) not_ok "compare: the same emulator is no change" ;;
        *) ok "compare: the same emulator is no change" ;;
    esac
}

part_sandbox_cli() {
    local rc=0 err
    err=$("$EMURUN" sandbox --arch aarch64 --arch s390x --cpu max -- true 2>&1) || rc=$?
    expect_eq "sandbox --cpu with two arches: exit 125" 125 "$rc"
    expect_contains "... says why" "$err" "a model belongs to one arch"
    need_probe aarch64 || return 0
    need_sandbox || return 0
    rc=0
    err=$("$EMURUN" sandbox --arch aarch64 --cpu no-such-cpu -- "$probe" uname 2>&1) || rc=$?
    expect_eq "sandbox --cpu reaches qemu: the bogus model fails" 1 "$rc"
    expect_contains "... in qemu's words" "$err" "no-such-cpu"
    expect_eq "sandbox --cpu: the program sees QEMU_CPU" cortex-a72 \
        "$("$EMURUN" sandbox --arch aarch64 --cpu cortex-a72 -- "$probe" env QEMU_CPU)"
}

run_parts exec sandbox compare sandbox_cli
finish
