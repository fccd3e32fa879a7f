#!/bin/bash
# Emulator crashes told apart: emulated steps whose stderr carries QEMU's crash messages (the
# helper qemu_crash prints them and kills itself, as qemu-user does) are `emulator_crash` with
# the line as evidence in the JSON report, the JUnit XML, the Markdown summary and the table;
# the same output from a native step, or QEMU's words on stdout, stay `failed`.
# ctest-parts: crash control
. "$(dirname "$0")/lib/common.sh"
command -v python3 >/dev/null || skip "python3 needed to read the reports"
crash=$EMURUN_HELPER_DIR/qemu_crash
uncaught="qemu: uncaught target signal 11 (Segmentation fault) - core dumped"

# run_pipeline NAME STEPS_JSON: run it with every report form; emurun's exit code in $rc.
run_pipeline() {
    printf '{"name": "%s", "steps": %s}\n' "$1" "$2" >"$T/$1.json"
    rc=0
    "$EMURUN" run "$T/$1.json" --report "$T/$1-r.json" --junit "$T/$1.xml" \
        --markdown "$T/$1.md" --log-dir "$T/$1-logs" >"$T/$1.out" 2>"$T/$1.err" || rc=$?
}

# field NAME STEP KEY: a step's field in NAME's JSON report.
field() {
    python3 -c 'import json,sys
s = next(x for x in json.load(open(sys.argv[1]))["steps"] if x["name"] == sys.argv[2])
print(s[sys.argv[3]])' "$T/$1-r.json" "$2" "$3"
}

part_crash() {
    run_pipeline crash '[
  {"name": "segv", "kind": "test", "arch": "aarch64", "emulation": "host",
   "argv": ["'"$crash"'", "uncaught"]},
  {"name": "in-tree", "kind": "test", "arch": "aarch64", "emulation": "host", "shell": true,
   "argv": "'"$crash"' cpu; echo the harness goes on; exit 3"}]'
    expect_eq "a run with emulator crashes exits 1" 1 "$rc"
    expect_eq "segv: status" emulator_crash "$(field crash segv status)"
    expect_eq "segv: evidence is QEMU's line" "$uncaught" "$(field crash segv evidence)"
    expect_eq "segv: the signal is kept" 11 "$(field crash segv signal)"
    expect_eq "in-tree: a crash below a harness counts" emulator_crash "$(field crash in-tree status)"
    expect_eq "in-tree: evidence" "qemu: unhandled CPU exception 0x8 - aborting" \
        "$(field crash in-tree evidence)"
    python3 - "$T/crash.xml" "$uncaught" <<'PY' && ok "JUnit: failures of type emulator_crash with the evidence" || not_ok "JUnit"
import sys, xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
f = {c.get("name"): c.find("failure") for c in root.iter("testcase")}
assert f["segv"].get("type") == "emulator_crash", f["segv"].attrib
assert sys.argv[2] in f["segv"].get("message"), f["segv"].get("message")
assert f["in-tree"].get("type") == "emulator_crash"
PY
    expect_contains "Markdown: the evidence" "$(cat "$T/crash.md")" "\`segv\` emulator crash: $uncaught"
    expect_contains "table: the status" "$(cat "$T/crash.out")" "emulator_crash"
    expect_contains "table: the evidence" "$(cat "$T/crash.out")" "emulator crash: segv: $uncaught"
    local validate=$EMURUN_BUILD_DIR/tests/validate_json
    if [ -x "$validate" ]; then
        "$validate" "$EMURUN_SOURCE_DIR/cmake/schema/report.schema.json" "$T/crash-r.json" >/dev/null &&
            ok "the report validates against report.schema.json" || not_ok "schema"
    fi
}

part_control() {
    run_pipeline control '[
  {"name": "native", "kind": "test", "argv": ["'"$crash"'", "uncaught"]},
  {"name": "on-stdout", "kind": "test", "arch": "aarch64", "emulation": "host",
   "argv": ["'"$crash"'", "stdout"]}]'
    expect_eq "control: exits 1" 1 "$rc"
    expect_eq "a native step with QEMU's words is failed" failed "$(field control native status)"
    expect_eq "QEMU's words on stdout are not QEMU's" failed "$(field control on-stdout status)"
    expect_eq "no evidence" "None None" \
        "$(field control native evidence) $(field control on-stdout evidence)"
}

run_parts crash control
finish
