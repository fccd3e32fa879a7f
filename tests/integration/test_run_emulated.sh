#!/bin/bash
# ctest-tier: quick
# emurun run, emulated: a tiny CMake project (data/run-emulated) configured, built and tested
# for aarch64 and ppc64le with its CTest suite in the sandbox (one test uses the old
# add_test(name command) signature, so only binfmt_misc can start it), plus an exec-mode step;
# a native run of the same suite is the baseline, so the emulated test steps are flagged slow.
# Checks the exit code, the JSON report, the JUnit XML, the Markdown summary and the table.
. "$(dirname "$0")/lib/common.sh"
need_fixture_arch aarch64
need_fixture_arch ppc64le
command -v python3 >/dev/null || skip "python3 needed to validate the JSON and XML reports"
for a in aarch64 ppc64le; do
    triplet=$(sed -n 's/^set(EMURUN_TRIPLET \(.*\))$/\1/p' "$EMURUN_SOURCE_DIR/cmake/toolchains/$a.cmake")
    command -v "$triplet-gcc" >/dev/null || skip "no cross compiler $triplet-gcc for $a"
done
"$EMURUN" sandbox --arch aarch64 -- true >"$T/probe.log" 2>&1 ||
    skip "the sandbox is unavailable here: $(tail -n1 "$T/probe.log")"
cd "$T"
data=$EMURUN_SOURCE_DIR/tests/integration/data/run-emulated
fill_pipelines "$data"
export CMAKE_BUILD_PARALLEL_LEVEL=2
run_native_baseline

set +e
"$EMURUN" run pipeline.json -j 2 -q --baseline native.json --threshold 1.5 \
    --report r.json --junit j.xml --markdown m.md --log-dir logs >stdout.txt 2>stderr.txt
rc=$?
set -e
expect_eq "emulated run exits 0 (flags do not fail it)" 0 "$rc"
[ "$rc" -eq 0 ] || { cat stderr.txt; tail -n 20 logs/*.log; }
cat stdout.txt

python3 - <<'PY' && ok "JSON report: steps, statuses, modes, baseline flags" || not_ok "JSON report"
import json
r = json.load(open("r.json"))
s = {x["name"]: x for x in r["steps"]}
assert r["schema_version"] == 1 and r["pipeline"] == "run-emulated", r
assert sorted(s) == sorted(["configure-aarch64", "configure-ppc64le", "build-aarch64",
                            "build-ppc64le", "test-aarch64", "test-ppc64le", "probe-aarch64"]), s
assert all(x["status"] == "passed" for x in s.values()), {k: x["status"] for k, x in s.items()}
for a in ("aarch64", "ppc64le"):
    t = s["test-" + a]
    assert t["arch"] == a and t["emulation"] == "sandbox", t
    assert t["baseline_wall"] and t["wall"] > 1.5 * t["baseline_wall"], t
    assert [f["rule"] for f in t["flags"]] == ["baseline"], t["flags"]
    assert s["build-" + a]["emulation"] == "native" and not s["build-" + a]["flags"]
assert s["probe-aarch64"]["emulation"] == "exec", s["probe-aarch64"]
PY
log() { python3 -c 'import json,sys; print(next(x["log"] for x in json.load(open("r.json"))["steps"] if x["name"] == sys.argv[1]))' "$1"; }
expect_eq "exec-mode step ran the aarch64 probe" aarch64 "$(cat "$(log probe-aarch64)")"
for a in aarch64 ppc64le; do
    expect_contains "$a: ctest ran all 3 tests" "$(cat "$(log test-$a)")" "100% tests passed, 0 tests failed out of 3"
done
python3 - <<'PY' && ok "JUnit XML: one testcase per step, no failures" || not_ok "JUnit XML"
import xml.etree.ElementTree as ET
root = ET.parse("j.xml").getroot()
cases = root.findall(".//testcase")
assert len(cases) == 7, [c.get("name") for c in cases]
assert not root.findall(".//failure") and not root.findall(".//error")
assert {c.get("name") for c in cases} >= {"test-aarch64", "test-ppc64le", "probe-aarch64"}
PY
[ -s m.md ] && ok "Markdown summary written" || not_ok "Markdown summary missing"
expect_contains "Markdown names the slow step" "$(cat m.md)" "test-aarch64"
table=$(cat stdout.txt)
for step in configure-aarch64 build-ppc64le test-aarch64 test-ppc64le probe-aarch64; do
    expect_contains "table row $step" "$table" "$step"
done
python3 - <<'PY' && ok "table rows show each test step's factor vs baseline" || not_ok "table factor"
import json, re
steps = {x["name"]: x for x in json.load(open("r.json"))["steps"]}
rows = {l.split()[0]: l for l in open("stdout.txt") if l.strip()}
for name in ("test-aarch64", "test-ppc64le"):
    want = steps[name]["wall"] / steps[name]["baseline_wall"]
    shown = [float(m) for m in re.findall(r"\b(\d+(?:\.\d+)?)x\b", rows[name])]
    assert any(abs(f - want) < 0.15 for f in shown), (name, want, rows[name])
    assert "baseline" in rows[name], rows[name]
PY
finish
