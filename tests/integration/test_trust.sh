#!/bin/bash
# Trust boundaries (issue 27) through the real binary: what a command writes to stdout must
# arrive (a full disk is an error, not a lost matrix), and the JUnit of a report read from a
# file carries no file the report names outside the log dir.
# ctest-tier: quick
# ctest-parts: stdout junit_logs
. "$(dirname "$0")/lib/common.sh"
cd "$T"

report() { # report FILE LOG: a one-step failed report whose step names LOG as its log
    cat >"$1" <<JSON
{"schema_version": 1, "pipeline": "p", "started": "2026-01-01T00:00:00Z", "wall": 1,
 "host_arch": "x86_64", "shard": {"index": 1, "count": 1}, "job_limit": null,
 "interrupted_by": null, "flags": [],
 "steps": [{"name": "t", "kind": "other", "arch": "", "emulation": "native",
            "status": "failed", "wall": 1, "user": 0, "sys": 0, "max_rss_kib": 0,
            "budget": null, "baseline_wall": null, "message": "", "flags": [],
            "signal": null, "exit_code": 1, "log": "$2"}]}
JSON
}

# trust 9 and trust review 3: every command's stdout write error is an error (run, help and
# version too): exit 125 and the real errno, once.
part_stdout() {
    [ -w /dev/full ] || { skip_part "no /dev/full"; return; }
    report r.json logs/t.log
    echo '{"name": "p", "steps": [{"name": "t", "kind": "test", "argv": ["true"]}]}' >p.json
    local label rc
    while IFS='|' read -r label cmd; do
        rc=0
        # shellcheck disable=SC2086
        "$EMURUN" $cmd >/dev/full 2>err.txt || rc=$?
        if [ "$rc" -ne 125 ]; then
            not_ok "$label > /dev/full: exit $rc, expected 125; stderr: $(head -c 300 err.txt)"
        elif ! grep -qx "emurun: error: writing standard output: No space left on device" err.txt; then
            not_ok "$label > /dev/full: stderr: $(head -c 300 err.txt)"
        else
            ok "$label > /dev/full: exit 125, said why"
        fi
        rc=0
        # shellcheck disable=SC2086
        "$EMURUN" $cmd >out.txt 2>err.txt || rc=$?
        # (doctor exits 1 when a check of this machine FAILs: its JSON still arrives)
        { [ "$rc" -eq 0 ] || { [ "$label" = "doctor --json" ] && [ "$rc" -eq 1 ]; }; } &&
            [ -s out.txt ] && ok "$label to a file: exit $rc" ||
            not_ok "$label to a file: exit $rc; $(head -c 300 err.txt)"
    done <<'CMDS'
report show|report show r.json
report show junit|report show --format junit r.json
report show json|report show --format json r.json
report compare --json|report compare --json r.json r.json
run --matrix 1|run p.json --matrix 1
inspect --json|inspect --json /bin/true
run|run p.json --report run-r.json --log-dir run-logs
run -q|run p.json -q --report run-q.json --log-dir run-logs-q
doctor --json|doctor --json
version|--version
help|--help
report show --help|report show --help
CMDS
    # trust review 3: run writes its report before it exits 125; the warning names the errno.
    [ -s run-r.json ] && ok "run > /dev/full: its report is written" ||
        not_ok "run > /dev/full: no report"
    rc=0
    "$EMURUN" run p.json --report run-w.json --log-dir run-logs >/dev/full 2>err.txt || rc=$?
    if grep -q "closed by its reader" err.txt; then
        not_ok "run > /dev/full: says the reader closed stdout: $(head -c 300 err.txt)"
    else
        ok "run > /dev/full: no word of a reader that went away"
    fi
    # A reader that went away: the same rule for run (it ignores SIGPIPE): 125, Broken pipe.
    rc=0
    { "$EMURUN" run p.json --report run-p.json --log-dir run-logs-p 2>err.txt || rc=$?; echo "$rc" >rc.txt; } | true
    rc=$(cat rc.txt)
    if [ "$rc" -eq 125 ] && grep -qx "emurun: error: writing standard output: Broken pipe" err.txt &&
        [ -s run-p.json ]; then
        ok "run | (reader gone): report written, exit 125, Broken pipe"
    else
        not_ok "run | (reader gone): exit $rc; $(head -c 300 err.txt)"
    fi
}

# trust 2: report show/merge --junit read no log outside the log dir, and none without one.
part_junit_logs() {
    command -v python3 >/dev/null || { skip_part "python3 not installed (reads the XML)"; return; }
    mkdir -p logs
    echo "the step own output" >logs/t.log
    export EMURUN_TRUST_SECRET=s3cr3t-token
    report env.json /proc/self/environ
    report up.json logs/../secret.txt
    echo "s3cr3t-token in a file" >secret.txt
    report own.json logs/t.log
    local f out
    for f in env.json up.json; do
        out=$("$EMURUN" report show --format junit --log-dir logs "$f")
        case "$out" in
            *s3cr3t-token*) not_ok "$f: the secret is in the JUnit" ;;
            *"log not included: outside the run&apos;s log dir"*) ok "$f: log outside the log dir left out" ;;
            *) not_ok "$f: no note: $out" ;;
        esac
    done
    out=$("$EMURUN" report show --format junit own.json)
    expect_contains "no log dir: no log read, said why" "$out" "log not included: this report was read from a file"
    out=$("$EMURUN" report show --format junit --log-dir logs own.json)
    expect_contains "the log dir given: its own log's tail" "$out" "the step own output"
    "$EMURUN" report merge env.json -o merged.json --junit merged.xml >/dev/null || true
    if grep -q s3cr3t-token merged.xml; then not_ok "merge: the secret is in the JUnit"; else ok "merge: no secret"; fi
}

run_parts stdout junit_logs
finish
