#!/bin/bash
# ctest-tier: quick
# emurun run: all report formats, flags against a baseline, a timed-out tree leaving no process,
# SIGINT mid-pipeline giving a valid report and exit 130, report show/compare/merge, shards.
. "$(dirname "$0")/lib/common.sh"
H=$EMURUN_HELPER_DIR
[ -x "$H/sleep_for" ] || skip "helper programs not built ($H)"
command -v python3 >/dev/null || skip "python3 needed to validate the JSON and XML reports"
cd "$T"

cat > p.json <<JSON
{"name": "it", "steps": [
  {"name": "build", "kind": "build", "argv": ["$H/burn_cpu", "0.2"]},
  {"name": "out", "kind": "test", "argv": ["$H/print_bytes", "1000", "500"], "needs": ["build"]},
  {"name": "slow", "kind": "test", "argv": ["$H/sleep_for", "0.4"], "budget": "100ms",
   "needs": ["build"]},
  {"name": "bad<&>", "kind": "test", "argv": ["$H/exit_with", "3"]},
  {"name": "after", "argv": ["true"], "needs": ["bad<&>"]}
]}
JSON
cat > base.json <<JSON
{"schema_version": 1, "pipeline": "it", "started": "2026-01-01T00:00:00Z", "wall": 0.02,
 "host_arch": "x86_64", "shard": {"index": 1, "count": 1}, "job_limit": null,
 "interrupted_by": null, "flags": [], "steps": [
  {"name": "slow", "kind": "other", "arch": "", "emulation": "native", "status": "passed",
   "exit_code": 0, "signal": null, "wall": 0.02, "user": 0, "sys": 0, "max_rss_kib": 0,
   "budget": null, "baseline_wall": null, "log": "", "message": "", "flags": []}]}
JSON
set +e
GITHUB_ACTIONS=true GITHUB_STEP_SUMMARY=$T/summary.md "$EMURUN" run p.json -j 2 -q \
    --baseline base.json --junit j.xml --markdown m.md --report r.json >stdout.txt 2>stderr.txt
rc=$?
set -e
expect_eq "exit code 1 when a step failed" 1 "$rc"
python3 - <<'PY' && ok "JSON report: statuses, exit code, log sizes" || not_ok "JSON report"
import json, os
r = json.load(open("r.json"))
s = {x["name"]: x for x in r["steps"]}
assert r["schema_version"] == 1
assert s["build"]["status"] == "passed" and s["build"]["user"] > 0.1, s["build"]
assert s["bad<&>"]["status"] == "failed" and s["bad<&>"]["exit_code"] == 3
assert s["after"]["status"] == "skipped"
# A skipped step's log, named in the report, exists and says why (it named a missing file).
assert open(s["after"]["log"]).read() == "skipped: needs bad<&>, which did not pass\n", s["after"]
assert os.path.getsize(s["out"]["log"]) == 1500
rules = sorted(f["rule"] for f in s["slow"]["flags"])
# 20x its baseline, but it ran natively: no emulation factor, no baseline flag.
assert rules == ["budget"], rules
assert s["slow"]["baseline_wall"] is None and s["slow"]["baseline_cpu"] is None, s["slow"]
assert r["factor_basis"] == "wall", r["factor_basis"]
PY
python3 -c 'import xml.dom.minidom,sys; xml.dom.minidom.parse("j.xml")' \
    && ok "JUnit XML well-formed" || not_ok "JUnit XML"
expect_contains "markdown summary" "$(cat m.md)" "FAILED"
expect_contains "GITHUB_STEP_SUMMARY appended" "$(cat summary.md)" "| slow |"
expect_contains "error annotation" "$(cat stdout.txt)" "::error title=emurun%3A bad<&>::"
expect_contains "warning annotation" "$(cat stdout.txt)" "::warning title=emurun%3A slow::"
expect_contains "terminal table" "$(cat stdout.txt)" "x baseline"
expect_contains "report show" "$("$EMURUN" report show r.json)" "slow"
expect_contains "report compare" "$("$EMURUN" report compare r.json r.json)" "+0%"

# A timed-out tree: a SIGTERM-ignoring grandchild and a daemon; nothing may survive.
cat > t.json <<JSON
{"name": "timeout", "steps": [
  {"name": "tree", "argv": ["$H/fork_grandchild", "--wait", "$T/gc.pid"], "timeout": "500ms"},
  {"name": "daemon", "argv": ["/bin/sh", "-c", "$H/daemonize $T/d.pid; exec $H/sleep_for 30"],
   "timeout": "500ms"}
]}
JSON
set +e
"$EMURUN" run t.json -j 2 -q --grace 300ms --report rt.json >/dev/null 2>&1
rc=$?
set -e
expect_eq "exit code 124 when only timeouts" 124 "$rc"
sleep 0.3
for f in gc.pid d.pid; do
    if [ -s "$f" ] && kill -0 "$(cat "$f")" 2>/dev/null; then
        not_ok "process from $f survived"; else ok "no process left from $f"; fi
done

# SIGINT mid-pipeline: report with finished, interrupted and not-run steps; exit 130.
cat > i.json <<JSON
{"name": "int", "steps": [
  {"name": "quick", "argv": ["true"]},
  {"name": "long", "argv": ["$H/sleep_for", "30"], "needs": ["quick"]},
  {"name": "later", "argv": ["true"], "needs": ["long"]}
]}
JSON
"$EMURUN" run i.json -q --grace 300ms --report ri.json >/dev/null 2>ri.err &
pid=$!
sleep 1
kill -INT "$pid"
set +e
wait "$pid"
rc=$?
set -e
expect_eq "exit code 130 on SIGINT" 130 "$rc"
expect_eq "-q: one line on stderr says so" \
    "emurun: warning: interrupted by SIGINT: 1 step(s) stopped, 1 not run; the reports list them" \
    "$(cat ri.err)"
python3 - <<'PY' && ok "interrupted report" || not_ok "interrupted report"
import json
r = json.load(open("ri.json"))
s = {x["name"]: x["status"] for x in r["steps"]}
assert r["interrupted_by"] == 2, r
assert s == {"quick": "passed", "long": "interrupted", "later": "not_run"}, s
PY

# Shards: each test step in exactly one shard; merge joins them.
"$EMURUN" run p.json --matrix 2 > matrix.json
python3 - <<'PY' && ok "matrix covers each test once" || not_ok "matrix"
import json
m = json.load(open("matrix.json"))["include"]
steps = [s for e in m for s in e["steps"]]
assert sorted(steps) == sorted(["out", "slow", "bad<&>"]), steps
PY
set +e
"$EMURUN" run p.json -q --shard 1/2 --report s1.json >/dev/null 2>&1
"$EMURUN" run p.json -q --shard 2/2 --report s2.json >/dev/null 2>&1
"$EMURUN" report merge s1.json s2.json -o merged.json >/dev/null
set -e
python3 - <<'PY' && ok "merged shards" || not_ok "merged shards"
import json
r = json.load(open("merged.json"))
names = [x["name"] for x in r["steps"]]
assert sorted(names) == sorted(["build", "out", "slow", "bad<&>", "after"]), names
PY
# A step that failed: its finished line says how it ended and where its log is.
printf '{"name": "f", "steps": [{"name": "three", "argv": ["sh", "-c", "exit 3"]}, {"name": "killed", "argv": ["sh", "-c", "kill -9 $$"]}]}\n' >f.json
rc=0; "$EMURUN" run f.json --report f-report.json --log-dir f-logs >/dev/null 2>f.err || rc=$?
expect_eq "a failed step fails the run" 1 "$rc"
expect_contains "the exit code on its line" "$(cat f.err)" "emurun: three failed (exit 3) in "
expect_contains "the signal on its line" "$(cat f.err)" "emurun: killed failed (signal 9) in "
expect_contains "and where its log is" "$(cat f.err)" "emurun: three: its log is f-logs/three.log"
finish
