#!/bin/bash
# ctest-tier: quick
# Per-test results of an emulated CTest suite (docs/guides/pipelines.md: Per-test results): data/run-junit's four
# tests built natively and run through `emurun run` for the baseline, then cross-built for
# aarch64 and run in the sandbox with --baseline, ctest writing its JUnit file (docs/guides/pipelines.md's
# recipe). The busy test must come out slow against its own baseline time, the test that fails
# only under emulation flagged emulation_only_failure, the disabled one skipped — in the JSON
# report, the JUnit XML, the Markdown summary, the end-of-run table, report show and compare.
. "$(dirname "$0")/lib/common.sh"
need_fixture_arch aarch64
command -v python3 >/dev/null || skip "python3 needed to read the JSON and XML reports"
command -v bc >/dev/null || skip "bc needed by the recipe's timeout arithmetic"
triplet=$(sed -n 's/^set(EMURUN_TRIPLET \(.*\))$/\1/p' "$EMURUN_SOURCE_DIR/cmake/toolchains/aarch64.cmake")
command -v "$triplet-gcc" >/dev/null || skip "no cross compiler $triplet-gcc for aarch64"
"$EMURUN" sandbox --arch aarch64 -- true >"$T/probe.log" 2>&1 ||
    skip "the sandbox is unavailable here: $(tail -n1 "$T/probe.log")"
cd "$T"
data=$EMURUN_SOURCE_DIR/tests/integration/data/run-junit
fill_pipelines "$data"
export CMAKE_BUILD_PARALLEL_LEVEL=2
run_native_baseline

set +e
"$EMURUN" run pipeline.json -q --baseline native.json --threshold 2 \
    --report r.json --junit j.xml --markdown m.md --log-dir logs >stdout.txt 2>stderr.txt
rc=$?
set -e
expect_eq "emulated run exits 1 (ctest failed the emulated-only test)" 1 "$rc"
cat stdout.txt

python3 - <<'PY' && ok "JSON: per-test times, baseline times, slow and emulation_only_failure" || not_ok "JSON report"
import json
native = {t["name"]: t for t in next(s for s in json.load(open("native.json"))["steps"]
                                     if s["name"] == "unit")["tests"]}
assert sorted(native) == ["busy", "disabled", "emulated_only", "quick"], native
assert native["emulated_only"]["status"] == "passed" and native["busy"]["time"] > 0, native
unit = next(s for s in json.load(open("r.json"))["steps"] if s["name"] == "unit")
assert unit["status"] == "failed" and unit["emulation"] == "sandbox", unit
t = {x["name"]: x for x in unit["tests"]}
assert sorted(t) == ["busy", "disabled", "emulated_only", "quick"], t
assert [t[n]["status"] for n in ("quick", "busy", "emulated_only", "disabled")] == \
    ["passed", "passed", "failed", "skipped"], t
busy = t["busy"]
assert busy["baseline_time"] == native["busy"]["time"], busy
assert busy["time"] > 2 * busy["baseline_time"], busy
assert [f["rule"] for f in busy["flags"]] == ["slow"], busy
assert [f["rule"] for f in t["emulated_only"]["flags"]] == ["emulation_only_failure"], t
assert not t["quick"]["flags"] and not t["disabled"]["flags"], t
PY
python3 - <<'PY' && ok "JUnit XML: the suite's tests as testcases of a testsuite for the step" || not_ok "JUnit XML"
import json, xml.etree.ElementTree as ET
t = {x["name"]: x for x in next(s for s in json.load(open("r.json"))["steps"]
                                if s["name"] == "unit")["tests"]}
suite = next(s for s in ET.parse("j.xml").getroot().findall("testsuite")
             if s.get("name") == "run-junit/unit")
cases = {c.get("name"): c for c in suite.findall("testcase")}
assert sorted(cases) == ["busy", "disabled", "emulated_only", "quick"], cases
assert abs(float(cases["busy"].get("time")) - t["busy"]["time"]) < 0.001
assert suite.get("tests") == "4" and suite.get("failures") == "1" and suite.get("skipped") == "1"
assert "emulation_only_failure" in cases["emulated_only"].find("failure").text
assert cases["disabled"].find("skipped") is not None
props = [p.get("name") for p in cases["busy"].iter("property")]
assert props == ["emurun.flag.slow"], props
PY
md=$(cat m.md)
expect_contains "Markdown: the step's test counts" "$md" "#### Tests of unit: 2 passed, 1 failed, 1 skipped"
expect_contains "Markdown: busy with its factor and flag" "$md" "| slow |"
expect_contains "Markdown: the emulation-only failure" "$md" "| emulated_only | failed |"
table=$(cat stdout.txt)
expect_contains "table: the step's test counts" "$table" "tests: unit: 2 passed, 1 failed, 1 skipped"
expect_contains "table: the emulation-only failure's flag" "$table" "flag emulation_only_failure: failed here, passed in the baseline"
python3 - <<'PY' && ok "table: busy's time and factor vs its baseline time" || not_ok "table factor"
import json, re
busy = next(x for x in next(s for s in json.load(open("r.json"))["steps"]
                            if s["name"] == "unit")["tests"] if x["name"] == "busy")
line = next(l for l in open("stdout.txt") if l.startswith("  passed  busy  "))
factor = float(re.search(r"(\d+\.\d)x baseline", line).group(1))
assert abs(factor - busy["time"] / busy["baseline_time"]) < 0.06, (line, busy)
PY
# The run prints the table, then where the report went; show prints a title line, then the table.
expect_eq "report show prints the same table" "$(grep -v -e '^report: ' -e '^$' stdout.txt)" \
    "$("$EMURUN" report show r.json | tail -n +2 | grep -v '^$')"
expect_contains "report compare: the test whose status changed" \
    "$("$EMURUN" report compare native.json r.json)" "test unit: emulated_only: passed -> failed"
validate r.json pipeline.json
validate native.json baseline.json
finish
