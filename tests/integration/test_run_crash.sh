#!/bin/bash
# ctest-tier: quick
# Emulator crashes told apart: emulated steps whose stderr carries QEMU's crash messages (the
# helper qemu_crash prints them and kills itself, as qemu-user does) are `emulator_crash` with
# the line as evidence in the JSON report, the JUnit XML, the Markdown summary and the table;
# the same output from a native step, or QEMU's words on stdout, stay `failed`. A real aarch64
# program that dies of a signal under the real qemu (NULL dereference, raise(SIGSEGV), an
# undefined instruction) is the program's own failure: `failed`, with QEMU's line in the
# message; an emulator that dies of SIGSEGV without naming a guest signal is a crash.
# `retries` runs a crashed step again: every attempt is kept (report, own logs, JUnit), a late
# pass is flaky.
# ctest-parts: crash control guest killed retry retry_exhausted
. "$(dirname "$0")/lib/common.sh"
command -v python3 >/dev/null || skip "python3 needed to read the reports"
crash=$EMURUN_HELPER_DIR/qemu_crash
uncaught="qemu: uncaught target signal 11 (Segmentation fault) - core dumped"
unhandled="qemu: unhandled CPU exception 0x8 - aborting"

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
   "argv": ["'"$crash"'", "cpu"]},
  {"name": "in-tree", "kind": "test", "arch": "aarch64", "emulation": "host", "shell": true,
   "argv": "'"$crash"' cpu; echo the harness goes on; exit 3"}]'
    expect_eq "a run with emulator crashes exits 1" 1 "$rc"
    expect_eq "segv: status" emulator_crash "$(field crash segv status)"
    expect_eq "segv: evidence is QEMU's line" "$unhandled" "$(field crash segv evidence)"
    expect_eq "segv: the signal is kept" 6 "$(field crash segv signal)"
    expect_eq "in-tree: a crash below a harness counts" emulator_crash "$(field crash in-tree status)"
    expect_eq "in-tree: evidence" "$unhandled" "$(field crash in-tree evidence)"
    python3 - "$T/crash.xml" "$unhandled" <<'PY' && ok "JUnit: failures of type emulator_crash with the evidence" || not_ok "JUnit"
import sys, xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
f = {c.get("name"): c.find("failure") for c in root.iter("testcase")}
assert f["segv"].get("type") == "emulator_crash", f["segv"].attrib
assert sys.argv[2] in f["segv"].get("message"), f["segv"].get("message")
assert f["in-tree"].get("type") == "emulator_crash"
PY
    expect_contains "Markdown: the evidence" "$(cat "$T/crash.md")" "\`segv\` emulator crash: $unhandled"
    expect_contains "table: the status" "$(cat "$T/crash.out")" "emulator_crash"
    expect_contains "table: the evidence" "$(cat "$T/crash.out")" "emulator crash: segv: $unhandled"
    local validate=$EMURUN_BUILD_DIR/tests/validate_json
    if [ -x "$validate" ]; then
        "$validate" "$EMURUN_SOURCE_DIR/cmake/schema/report.schema.json" "$T/crash-r.json" >/dev/null &&
            ok "the report validates against report.schema.json" || not_ok "schema"
    fi
}

part_control() {
    run_pipeline control '[
  {"name": "native", "kind": "test", "argv": ["'"$crash"'", "cpu"]},
  {"name": "on-stdout", "kind": "test", "arch": "aarch64", "emulation": "host",
   "argv": ["'"$crash"'", "stdout"]},
  {"name": "guest-signal", "kind": "test", "arch": "aarch64", "emulation": "host",
   "argv": ["'"$crash"'", "uncaught"]}]'
    expect_eq "control: exits 1" 1 "$rc"
    expect_eq "a native step with QEMU's words is failed" failed "$(field control native status)"
    expect_eq "QEMU's words on stdout are not QEMU's" failed "$(field control on-stdout status)"
    expect_eq "no evidence" "None None" \
        "$(field control native evidence) $(field control on-stdout evidence)"
    expect_eq "QEMU's report of a guest's SIGSEGV is a failure" failed \
        "$(field control guest-signal status)"
    expect_contains "... with QEMU's line in the message" \
        "$(field control guest-signal message)" "$uncaught"
}

# The real qemu-user and real aarch64 programs: a guest that dies of a signal is its own failure.
part_guest() {
    need_probe aarch64 || return 0
    local probe=$EMURUN_FIXTURE_DIR/aarch64/probe-static
    run_pipeline guest '[
  {"name": "null-deref", "kind": "test", "arch": "aarch64", "emulation": "exec",
   "argv": ["'"$probe"'", "signal", "SEGV"]},
  {"name": "raise-segv", "kind": "test", "arch": "aarch64", "emulation": "exec",
   "argv": ["'"$probe"'", "signal", "RAISE"]},
  {"name": "illegal", "kind": "test", "arch": "aarch64", "emulation": "exec",
   "argv": ["'"$probe"'", "signal", "ILL"]},
  {"name": "in-harness", "kind": "test", "arch": "aarch64", "emulation": "host", "shell": true,
   "argv": "'"$EMURUN"' exec --arch aarch64 -- '"$probe"' signal SEGV; exit 8"}]'
    expect_eq "guest: exits 1" 1 "$rc"
    local step sig
    for step in null-deref:11 raise-segv:11 illegal:4 in-harness:11; do
        sig=${step#*:} step=${step%:*}
        expect_eq "guest $step: failed, not emulator_crash" failed "$(field guest "$step" status)"
        expect_eq "guest $step: no evidence" None "$(field guest "$step" evidence)"
        expect_contains "guest $step: the message names the guest's signal and QEMU's line" \
            "$(field guest "$step" message)" "a guest program died of signal $sig"
        expect_contains "guest $step: QEMU printed the line" "$(cat "$T/guest-logs/$step.log")" \
            "qemu: uncaught target signal $sig"
    done
    expect_eq "guest: qemu re-raised SIGSEGV on itself" 11 "$(field guest null-deref signal)"
    expect_eq "guest: ... and SIGILL" 4 "$(field guest illegal signal)"
    expect_contains "guest: SIGILL may be a CPU model's missing instruction" \
        "$(field guest illegal message)" "CPU model"
}

# An emulator that dies of SIGSEGV without naming a guest signal crashed itself: a stand-in for
# qemu-aarch64 (found first through EMURUN_QEMU_DIR) that kills itself so.
part_killed() {
    need_probe aarch64 || return 0
    local fake=$T/fake-qemu
    mkdir -p "$fake"
    printf '#!/bin/sh\necho emulating >&2\nkill -SEGV $$\n' >"$fake/qemu-aarch64-static"
    chmod +x "$fake/qemu-aarch64-static"
    EMURUN_QEMU_DIR=$fake run_pipeline killed '[
  {"name": "qemu-segv", "kind": "test", "arch": "aarch64", "emulation": "exec",
   "argv": ["'"$EMURUN_FIXTURE_DIR/aarch64/probe-static"'", "uname"]}]'
    expect_eq "killed: exits 1" 1 "$rc"
    expect_eq "killed: an emulator dead of SIGSEGV on its own is a crash" emulator_crash \
        "$(field killed qemu-segv status)"
    expect_contains "killed: the evidence says so" "$(field killed qemu-segv evidence)" \
        "killed by signal 11 (SIGSEGV) and reported no guest signal"
}

part_retry() {
    run_pipeline retry '[
  {"name": "flaky", "kind": "test", "arch": "aarch64", "emulation": "host",
   "argv": ["'"$crash"'", "cpu", "'"$T/crashed-once"'"], "retries": {"count": 2}}]'
    expect_eq "retry: passes on the second attempt, exit 0" 0 "$rc"
    expect_eq "retry: status" passed "$(field retry flaky status)"
    python3 - "$T/retry-r.json" "$unhandled" "$T/retry-logs" <<'PY' && ok "retry: both attempts in the report, flagged flaky" || not_ok "retry report"
import json, sys
s = json.load(open(sys.argv[1]))["steps"][0]
a = s["attempts"]
assert [x["status"] for x in a] == ["emulator_crash", "passed"], a
assert a[0]["evidence"] == sys.argv[2] and a[0]["signal"] == 6, a[0]
assert a[0]["log"] == sys.argv[3] + "/flaky@attempt1.log" and a[1]["log"] == s["log"], a
assert [f["rule"] for f in s["flags"]] == ["flaky"], s["flags"]
PY
    expect_contains "retry: attempt 1's output kept in its own log" \
        "$(cat "$T/retry-logs/flaky@attempt1.log")" "$unhandled"
    expect_contains "retry: the last attempt's log" "$(cat "$T/retry-logs/flaky.log")" "not this time"
    python3 - "$T/retry.xml" <<'PY' && ok "retry: JUnit passes with a flakyFailure" || not_ok "retry JUnit"
import sys, xml.etree.ElementTree as ET
c = next(ET.parse(sys.argv[1]).getroot().iter("testcase"))
assert c.find("failure") is None
f = c.findall("flakyFailure")
assert len(f) == 1 and f[0].get("type") == "emulator_crash", [x.attrib for x in f]
PY
    expect_contains "retry: the table shows the flag" "$(cat "$T/retry.out")" "flag flaky: flaky"
    expect_contains "retry: emurun says it retries" "$(cat "$T/retry.err")" \
        "emurun: flaky emulator_crash (signal 6) in"
    expect_contains "retry: ... which attempt" "$(cat "$T/retry.err")" "retrying: attempt 2 of 3"
    local validate=$EMURUN_BUILD_DIR/tests/validate_json schema=$EMURUN_SOURCE_DIR/cmake/schema
    if [ -x "$validate" ]; then
        "$validate" "$schema/report.schema.json" "$T/retry-r.json" >/dev/null &&
            "$validate" "$schema/pipeline.schema.json" "$T/retry.json" >/dev/null &&
            ok "retry: report and pipeline validate against their schemas" || not_ok "schemas"
    fi
}

part_retry_exhausted() {
    run_pipeline exhausted '[
  {"name": "crashes", "kind": "test", "arch": "aarch64", "emulation": "host",
   "argv": ["'"$crash"'", "cpu"], "retries": {"count": 1, "on": ["emulator_crash", "failed"]}}]'
    expect_eq "exhausted: exits 1" 1 "$rc"
    expect_eq "exhausted: status of the last attempt" emulator_crash "$(field exhausted crashes status)"
    python3 - "$T/exhausted-r.json" "$T/exhausted.xml" <<'PY' && ok "exhausted: 2 attempts, a failure and a rerunFailure, not flaky" || not_ok "exhausted"
import json, sys, xml.etree.ElementTree as ET
s = json.load(open(sys.argv[1]))["steps"][0]
assert [x["status"] for x in s["attempts"]] == ["emulator_crash"] * 2, s["attempts"]
assert not s["flags"], s["flags"]
c = next(ET.parse(sys.argv[2]).getroot().iter("testcase"))
assert c.find("failure").get("type") == "emulator_crash"
assert [x.get("type") for x in c.findall("rerunFailure")] == ["emulator_crash"]
PY
}

run_parts crash control guest killed retry retry_exhausted
finish
