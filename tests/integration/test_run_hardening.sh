#!/bin/bash
# ctest-tier: quick
# emurun run against hostile conditions (issue 14 items 4, 5, 6): a step that kills its own
# supervisor leaves nothing alive; stdout closed early (| head -1) or never read (a stalled FIFO)
# loses neither later steps, timeouts nor the report; SIGTERM to a 5,000-step run is honoured at
# once and leaves no step behind; SIGHUP (a closed terminal or SSH session) is taken as SIGTERM.
# ctest-parts: supervisor_killed supervisor_stopped closed_stdout stalled_stdout sigterm_5000 sighup
. "$(dirname "$0")/lib/common.sh"
H=$EMURUN_HELPER_DIR
[ -x "$H/sleep_for" ] || skip "helper programs not built ($H)"
command -v python3 >/dev/null || skip "python3 needed to read the reports"
cd "$T"

now_ms() { echo $(($(date +%s%N) / 1000000)); }

# A step runs `kill -9 $PPID` (its supervisor process) after starting a setsid'd daemon that
# ignores SIGTERM. emurun must notice, kill the daemon and go on with the other steps.
part_supervisor_killed() {
    cat > k.json <<JSON
{"name": "k", "steps": [
  {"name": "killer", "argv": ["/bin/sh", "-c", "$H/daemonize $T/d.pid; kill -9 \$PPID; exec $H/sleep_for 30"]},
  {"name": "after", "argv": ["true"], "needs": ["killer"]},
  {"name": "other", "argv": ["$H/sleep_for", "0.5"]}
]}
JSON
    set +e
    timeout -k 5 40 "$EMURUN" run k.json -j 2 -q --grace 300ms --report rk.json >out.txt 2>err.txt
    rc=$?
    set -e
    expect_eq "exit code 1 (the killer step failed)" 1 "$rc"
    if [ -s d.pid ] && kill -0 "$(cat d.pid)" 2>/dev/null; then
        not_ok "the setsid'd TERM-ignoring daemon survived its step (pid $(cat d.pid))"
        kill -9 "$(cat d.pid)" 2>/dev/null || true
    elif [ -s d.pid ]; then
        ok "the daemon of the step that killed its supervisor is gone"
    else
        not_ok "the daemon never wrote its pid file"
    fi
    python3 - <<'PY' && ok "report: killer failed, naming its supervisor; after skipped; other passed" \
        || not_ok "report of the supervisor-killing run: $(cat rk.json 2>/dev/null | head -c 2000)"
import json
r = json.load(open("rk.json"))
s = {x["name"]: x for x in r["steps"]}
assert s["killer"]["status"] == "failed", s["killer"]
assert "supervisor" in s["killer"]["message"], s["killer"]
assert "leftover" in s["killer"]["message"], s["killer"]
assert s["after"]["status"] == "skipped", s["after"]
assert s["other"]["status"] == "passed", s["other"]
PY
}

# A step stops its supervisor (kill -STOP $PPID) and leaves a setsid'd TERM-ignoring daemon:
# the 1 s timeout still ends the step and nothing survives.
part_supervisor_stopped() {
    cat > st.json <<JSON
{"name": "st", "steps": [
  {"name": "stopper", "argv": ["/bin/sh", "-c", "$H/daemonize $T/s.pid; kill -STOP \$PPID; exec $H/sleep_for 30"],
   "timeout": "1s"}
]}
JSON
    local t0 t1
    t0=$(now_ms)
    set +e
    timeout -k 5 40 "$EMURUN" run st.json -q --grace 300ms --report rst.json >out.txt 2>err.txt
    rc=$?
    set -e
    t1=$(now_ms)
    expect_eq "exit code 124 (the timeout fired)" 124 "$rc"
    [ $((t1 - t0)) -lt 10000 ] && ok "ended in $((t1 - t0)) ms" || not_ok "took $((t1 - t0)) ms"
    if [ -s s.pid ] && kill -0 "$(cat s.pid)" 2>/dev/null; then
        not_ok "the daemon survived (pid $(cat s.pid))"
        kill -9 "$(cat s.pid)" 2>/dev/null || true
    else
        ok "the daemon is gone"
    fi
}

# stdout closed after one line: no SIGPIPE death; later steps run, the report is written.
part_closed_stdout() {
    cat > c.json <<JSON
{"name": "c", "steps": [
  {"name": "lines", "argv": ["/bin/sh", "-c", "seq 1 200000"]},
  {"name": "more", "argv": ["/bin/sh", "-c", "sleep 0.2; seq 1 200000"], "needs": ["lines"]},
  {"name": "last", "argv": ["/bin/sh", "-c", "touch $T/last.ran"], "needs": ["more"]}
]}
JSON
    set +e
    "$EMURUN" run c.json --report rc.json 2>err.txt | head -1 >first.txt
    rc=${PIPESTATUS[0]}
    set -e
    # Not killed by SIGPIPE (141): the run goes on, then exits 125 as for any stdout write
    # error (trust review 3: output lost is never a success).
    expect_eq "emurun exits 125 after the run, not 141 (SIGPIPE)" 125 "$rc"
    expect_contains "it says why" "$(cat err.txt)" "emurun: error: writing standard output: Broken pipe"
    expect_eq "head saw the first line" 1 "$(cat first.txt)"
    [ -e last.ran ] && ok "the last step ran" || not_ok "the last step never ran"
    python3 - <<'PY' && ok "report written, every step passed" || not_ok "report: $(cat rc.json 2>&1 | head -c 1000)"
import json
r = json.load(open("rc.json"))
assert [x["status"] for x in r["steps"]] == ["passed"] * 3, r["steps"]
PY
    expect_eq "the log still has every line" 200000 "$(wc -l < "$(python3 -c 'import json; print(json.load(open("rc.json"))["steps"][1]["log"])')")"
}

# stdout is a FIFO that is opened but never read: a step's 2 s timeout still fires, the run
# finishes and writes its report; the output that could not be printed is in the logs.
part_stalled_stdout() {
    mkfifo stalled
    "$H/sleep_for" 120 < stalled &
    reader=$!
    cat > s.json <<JSON
{"name": "s", "steps": [
  {"name": "flood", "argv": ["$H/print_bytes", "8000000", "0"]},
  {"name": "stuck", "argv": ["$H/sleep_for", "30"], "timeout": "2s"}
]}
JSON
    local t0 t1 rc
    t0=$(now_ms)
    set +e
    timeout -k 5 40 "$EMURUN" run s.json -j 2 --grace 300ms --report rs.json >stalled 2>err.txt
    rc=$?
    set -e
    t1=$(now_ms)
    kill "$reader" 2>/dev/null || true
    wait "$reader" 2>/dev/null || true
    expect_eq "exit code 124 (a timeout), not a hang" 124 "$rc"
    echo "# run with a stalled stdout took $((t1 - t0)) ms"
    [ $((t1 - t0)) -lt 20000 ] && ok "finished in $((t1 - t0)) ms (< 20 s)" \
        || not_ok "took $((t1 - t0)) ms"
    expect_contains "a notice says output is dropped" "$(cat err.txt)" "not being read"
    python3 - <<'PY' && ok "report: flood passed with its whole log, stuck timed out" \
        || not_ok "report: $(cat rs.json 2>&1 | head -c 1000)"
import json, os
r = json.load(open("rs.json"))
s = {x["name"]: x for x in r["steps"]}
assert s["stuck"]["status"] == "timed_out", s["stuck"]
assert 1.9 < s["stuck"]["wall"] < 5, s["stuck"]
assert s["flood"]["status"] == "passed", s["flood"]
assert os.path.getsize(s["flood"]["log"]) == 8000000
PY
}

# SIGTERM to a 5,000-step run whose steps need up to 200 others: exit soon after, nothing left.
part_sigterm_5000() {
    local rc
    cp "$H/sleep_for" "$T/napper" # a name no other test uses: survivors are ours
    python3 - "$T/napper" <<'PY'
import json, random, sys
random.seed(5)
steps = []
for i in range(5000):
    needs = [] if i < 200 else ["s%d" % j for j in random.sample(range(i), 200)]
    steps.append({"name": "s%d" % i, "argv": [sys.argv[1], "0.3"], "needs": needs})
json.dump({"name": "big", "steps": steps}, open("big.json", "w"))
PY
    # While the pipeline is still loading: not fatal, the report says nothing ran.
    "$EMURUN" run big.json -j 8 -q --report early.json --log-dir early >/dev/null 2>&1 &
    local early=$!
    sleep 0.2
    kill -TERM "$early"
    set +e
    wait "$early"
    rc=$?
    set -e
    expect_eq "exit code 143 on SIGTERM while loading" 143 "$rc"
    python3 - <<'PY' && ok "report of a run stopped while loading: 5,000 steps, none started" \
        || not_ok "report of a run stopped while loading: $(head -c 300 early.json 2>&1)"
import json
r = json.load(open("early.json"))
assert r["interrupted_by"] == 15 and len(r["steps"]) == 5000, r.get("interrupted_by")
assert all(x["status"] == "not_run" for x in r["steps"])
PY
    "$EMURUN" run big.json -j 8 -q --grace 2s --report rb.json --log-dir logs >out.txt 2>err.txt &
    local pid=$! t0 t1 i
    for ((i = 0; i < 600; i++)); do # until it runs steps (loading takes a while)
        [ "$(find logs -name '*.log' 2>/dev/null | wc -l)" -ge 24 ] && break
        sleep 0.1
    done
    local sent_ns
    sent_ns=$(date +%s%N)
    t0=$((sent_ns / 1000000))
    kill -TERM "$pid"
    set +e
    wait "$pid"
    rc=$?
    set -e
    t1=$(now_ms)
    expect_eq "exit code 143 on SIGTERM" 143 "$rc"
    echo "# SIGTERM to exit of a 5,000-step run: $((t1 - t0)) ms (goal 100 ms)"
    # ~0.3 s here, most of it writing a 5,000-step report; 73 s and more before the fix. The
    # bound is loose for a loaded CI host: the launch check below is the 100 ms goal.
    [ $((t1 - t0)) -lt 5000 ] && ok "exited $((t1 - t0)) ms after SIGTERM (< 5 s on a loaded host)" \
        || not_ok "exited $((t1 - t0)) ms after SIGTERM"
    # Each step's log is created when it starts (these steps write nothing): the newest one
    # says when the last step started.
    local last_ns late_ms
    last_ns=$(find logs -name '*.log' -printf '%T@\n' | sort -n | tail -1 | tr -d . | cut -c1-19)
    late_ms=$(((last_ns - sent_ns) / 1000000))
    echo "# last step started ${late_ms} ms after SIGTERM (goal: none after 100 ms)"
    [ "$late_ms" -lt 500 ] && ok "no step started later than ${late_ms} ms after SIGTERM (< 500 ms loaded)" \
        || not_ok "a step started ${late_ms} ms after SIGTERM"
    sleep 0.2
    if pgrep -f "$T/napper" >/dev/null; then
        not_ok "steps survived: $(pgrep -af "$T/napper" | head -3)"
        pkill -9 -f "$T/napper" || true
    else
        ok "no step survived"
    fi
    python3 - <<'PY' && ok "report: interrupted by 15, the rest not run" || not_ok "report of the interrupted run"
import json, collections
r = json.load(open("rb.json"))
assert r["interrupted_by"] == 15, r.get("interrupted_by")
c = collections.Counter(x["status"] for x in r["steps"])
assert len(r["steps"]) == 5000, len(r["steps"])
assert c["interrupted"] <= 8 and c["passed"] > 0 and c["not_run"] > 4000, c
print("#", dict(c))
PY
}

# SIGHUP killed emurun with no report (exit 129 from the default action): it now stops every
# step, writes the reports and exits 128+1, as SIGTERM does.
part_sighup() {
    cp "$H/sleep_for" "$T/hupnap" # a name no other test uses: survivors are ours
    cat >sig.json <<JSON
{"name": "sig", "steps": [
  {"name": "quick", "argv": ["true"]},
  {"name": "a", "argv": ["$T/hupnap", "30"], "needs": ["quick"]},
  {"name": "b", "argv": ["$T/hupnap", "30"], "needs": ["quick"]},
  {"name": "c", "argv": ["$T/hupnap", "30"], "needs": ["quick"]},
  {"name": "later", "argv": ["true"], "needs": ["a"]}
]}
JSON
    "$EMURUN" run sig.json -j3 -q --grace 300ms --report rh.json --junit rh.xml >out.txt 2>err.txt &
    local pid=$! rc i
    for ((i = 0; i < 100; i++)); do # until the three sleepers run
        [ "$(pgrep -fc "$T/hupnap" || true)" -ge 3 ] && break
        sleep 0.1
    done
    kill -HUP "$pid"
    set +e
    wait "$pid"
    rc=$?
    set -e
    expect_eq "exit code 129 on SIGHUP" 129 "$rc"
    sleep 0.2
    if pgrep -f "$T/hupnap" >/dev/null; then
        not_ok "steps survived SIGHUP: $(pgrep -af "$T/hupnap" | head -3)"
        pkill -9 -f "$T/hupnap" || true
    else
        ok "no step survived SIGHUP"
    fi
    [ -s rh.xml ] && ok "the JUnit report is written" || not_ok "no JUnit report after SIGHUP"
    expect_contains "the table is printed" "$(cat out.txt)" "later"
    python3 - <<'PY' && ok "report: interrupted by 1, sleepers interrupted, later not run" \
        || not_ok "report of the run stopped by SIGHUP: $(head -c 600 rh.json 2>&1)"
import json
r = json.load(open("rh.json"))
s = {x["name"]: x["status"] for x in r["steps"]}
assert r["interrupted_by"] == 1, r.get("interrupted_by")
assert s == {"quick": "passed", "a": "interrupted", "b": "interrupted", "c": "interrupted",
             "later": "not_run"}, s
PY
}

run_parts supervisor_killed supervisor_stopped closed_stdout stalled_stdout sigterm_5000 sighup
finish
