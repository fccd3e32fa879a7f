#!/bin/bash
# ctest-tier: quick
# Hang diagnosis: a step silent for its idle_timeout is stopped (timed_out, reason idle) after
# its process tree (pid, ppid, state, wchan, CPU, command line, read from /proc) went into the
# report and the end of its log; a step that keeps printing is not; a plain timeout records the
# tree too. --heartbeat says on stderr which steps still run, even under -q.
# ctest-parts: idle busy timeout heartbeat bad_input
. "$(dirname "$0")/lib/common.sh"
command -v python3 >/dev/null || skip "python3 needed to read the reports"

# run_pipeline NAME STEPS_JSON [RUN OPTIONS...]: emurun's exit code in $rc.
run_pipeline() {
    local name=$1 steps=$2
    shift 2
    printf '{"name": "%s", "steps": %s}\n' "$name" "$steps" >"$T/$name.json"
    rc=0
    "$EMURUN" run "$T/$name.json" --report "$T/$name-r.json" --log-dir "$T/$name-logs" \
        --grace 2s "$@" >"$T/$name.out" 2>"$T/$name.err" || rc=$?
}

# step NAME STEP EXPR: a Python expression over the step `s` of NAME's report.
step() {
    python3 -c 'import json,sys
s = next(x for x in json.load(open(sys.argv[1]))["steps"] if x["name"] == sys.argv[2])
print(eval(sys.argv[3]))' "$T/$1-r.json" "$2" "$3"
}

part_idle() {
    local t0=$SECONDS
    run_pipeline idle '[
  {"name": "stuck", "kind": "test", "idle_timeout": "1s", "timeout": "5m", "shell": true,
   "argv": "echo starting; sleep 601 & wait"}]'
    expect_eq "idle: only timeouts: exit 124" 124 "$rc"
    [ $((SECONDS - t0)) -lt 30 ] && ok "idle: stopped within seconds, not at the 5m timeout" ||
        not_ok "idle: took $((SECONDS - t0)) s"
    expect_eq "idle: timed_out, reason idle" "timed_out idle" \
        "$(step idle stuck 's["status"] + " " + s["timeout_reason"]')"
    expect_contains "idle: the message says so" "$(step idle stuck 's["message"]')" \
        "no output for 1.0s (idle_timeout"
    expect_eq "idle: the tree holds the sleeping child, with its state" "S" \
        "$(step idle stuck 'next(p["state"] for p in s["processes"] if p["cmdline"] == "sleep 601")')"
    expect_eq "idle: ... and its parent shell, listed first" "True" \
        "$(step idle stuck '[p["cmdline"] for p in s["processes"]].index("/bin/sh -c echo starting; sleep 601 & wait") < [p["cmdline"] for p in s["processes"]].index("sleep 601")')"
    expect_eq "idle: the sleeper's parent is the shell" "True" \
        "$(step idle stuck '(lambda d: d["sleep 601"]["ppid"] == d["/bin/sh -c echo starting; sleep 601 & wait"]["pid"])({p["cmdline"]: p for p in s["processes"]})')"
    local log
    log=$(cat "$T/idle-logs/stuck.log")
    expect_contains "idle: the log ends with the tree" "$log" \
        "emurun: the step's processes when it was stopped:"
    expect_contains "idle: ... the sleeper's line" "$log" " sleep 601"
    pgrep -x -f "sleep 601" >/dev/null && not_ok "idle: the sleeper survived" ||
        ok "idle: nothing survived the stop"
    validate "$T/idle-r.json" "$T/idle.json"
}

# Steps printing every 0.3 s for 4.8 s, over twice their 2 s idle limit: never stopped (a 1 s
# limit failed once at a load of 60, beside the fork-bomb test).
part_busy() {
    run_pipeline busy '[
  {"name": "chatty", "kind": "test", "idle_timeout": "2s", "shell": true,
   "argv": "for i in $(seq 16); do echo $i; sleep 0.3; done"},
  {"name": "to-stderr", "kind": "test", "idle_timeout": "2s", "shell": true,
   "argv": "for i in $(seq 16); do echo $i >&2; sleep 0.3; done"}]'
    expect_eq "busy: steps that keep printing (either stream) pass" 0 "$rc"
    expect_eq "busy: no tree for a step that was not stopped" "[] None" \
        "$(step busy chatty 'str(s["processes"]) + " " + str(s["timeout_reason"])')"
}

part_timeout() {
    run_pipeline timeout '[
  {"name": "slow", "kind": "test", "timeout": "1s", "argv": ["sleep", "602"]}]'
    expect_eq "timeout: exit 124" 124 "$rc"
    expect_eq "timeout: reason timeout" timeout "$(step timeout slow 's["timeout_reason"]')"
    expect_eq "timeout: the tree was taken before the stop" "True" \
        "$(step timeout slow 'any(p["cmdline"] == "sleep 602" for p in s["processes"])')"
}

part_heartbeat() {
    run_pipeline heartbeat '[
  {"name": "quiet-one", "kind": "test", "shell": true, "argv": "echo hello; sleep 3.5"}]' \
        -q --heartbeat 1
    expect_eq "heartbeat: the step passes" 0 "$rc"
    local beats
    beats=$(grep -c "^emurun: still running: step quiet-one, " "$T/heartbeat.err" || true)
    [ "$beats" -ge 2 ] && [ "$beats" -le 4 ] && ok "heartbeat: about one line a second ($beats)" ||
        not_ok "heartbeat: $beats lines in: $(cat "$T/heartbeat.err")"
    expect_contains "heartbeat: the age of the last output" "$(cat "$T/heartbeat.err")" \
        "last output "
    run_pipeline no-heartbeat '[{"name": "q", "kind": "test", "argv": ["sleep", "1.5"]}]' -q
    expect_eq "heartbeat: none without the flag" "" "$(cat "$T/no-heartbeat.err")"
}

part_bad_input() {
    local v
    printf '{"name": "p", "steps": [{"name": "a", "argv": ["true"]}]}' >"$T/ok.json"
    for v in 0 abc 1x; do
        rc=0
        "$EMURUN" run "$T/ok.json" --report "$T/ok-r.json" --heartbeat "$v" >"$T/bad.out" 2>"$T/bad.err" || rc=$?
        expect_eq "--heartbeat $v: exit 125" 125 "$rc"
        expect_contains "--heartbeat $v: names the flag" "$(cat "$T/bad.err")" "heartbeat"
    done
    printf '{"name": "p", "steps": [{"name": "a", "argv": ["true"], "idle_timeout": "0s"}]}' \
        >"$T/zero.json"
    rc=0
    "$EMURUN" run "$T/zero.json" --report "$T/zero-r.json" 2>"$T/zero.err" || rc=$?
    expect_eq "idle_timeout 0: exit 125" 125 "$rc"
    expect_contains "idle_timeout 0: names the key" "$(cat "$T/zero.err")" "steps[0].idle_timeout"
}

run_parts idle busy timeout heartbeat bad_input
finish
