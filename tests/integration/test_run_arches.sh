#!/bin/bash
# ctest-tier: quick
# One pipeline for every arch (docs/guides/pipelines.md "One pipeline for every arch"): the page's pipeline, a
# static probe cross-built and run for aarch64 and s390x in the sandbox, is run as the native
# baseline (--native), per arch (--arch, one job each) and whole; the per-arch reports merge into
# one (the native baseline's report is refused there), and the table and the Markdown summary
# have a column per arch with the factor vs native.
. "$(dirname "$0")/lib/common.sh"
. "$(dirname "$0")/lib/docs.sh"
need_fixture_arch aarch64
need_fixture_arch s390x
command -v python3 >/dev/null || skip "python3 needed to read the reports"
command -v cc >/dev/null || skip "no host cc for the native baseline"
for t in aarch64-linux-gnu s390x-linux-gnu; do
    command -v "$t-gcc" >/dev/null || skip "no cross compiler $t-gcc"
done
case $(uname -m) in aarch64 | s390x) skip "the page's arches must both be foreign here" ;; esac
"$EMURUN" sandbox --arch aarch64 -- true >"$T/probe.log" 2>&1 ||
    skip "the sandbox is unavailable here: $(tail -n1 "$T/probe.log")"
cd "$T"
cp "$EMURUN_SOURCE_DIR/tests/fixtures/probe.c" .
# The page's pipeline and commands as written.
doc_block docs/guides/pipelines.md arches-pipeline >arches.json || true
doc_block docs/guides/pipelines.md arches-commands >recipe.sh || true
[ -s arches.json ] && [ "$(wc -l <recipe.sh)" -eq 5 ] ||
    { not_ok "docs/guides/pipelines.md has no arches-pipeline block and five-line arches-commands block"; finish; exit 1; }
PATH=$(dirname "$EMURUN"):$PATH # the recipe says emurun
n=0
while IFS= read -r line; do
    n=$((n + 1))
    bash -c "set -e; $line" >"recipe$n.out" 2>&1 && rc=0 || rc=$?
    expect_eq "the page's line $n ($line) exits 0" 0 "$rc"
    [ "$rc" -eq 0 ] || tail -n 20 "recipe$n.out"
done <recipe.sh

python3 - <<'PY' && ok "native baseline: each template once, natively, for the host" || not_ok "native report"
import json, platform
r = json.load(open("native.json"))
host = r["host_arch"]
s = {x["name"]: x for x in r["steps"]}
assert sorted(s) == sorted(["build[%s]" % host, "test[%s]" % host]), s
assert all(x["emulation"] == "native" and x["status"] == "passed" for x in s.values()), s
assert s["test[%s]" % host]["template"] == "test", s
PY
python3 - <<'PY' && ok "per-arch reports: the arch's steps, emulated, matched to the baseline by template" || not_ok "per-arch reports"
import json
for arch in ("aarch64", "s390x"):
    r = json.load(open(arch + ".json"))
    s = {x["name"]: x for x in r["steps"]}
    assert sorted(s) == ["build[%s]" % arch, "test[%s]" % arch], s
    t = s["test[%s]" % arch]
    assert t["arch"] == arch and t["emulation"] == "sandbox" and t["status"] == "passed", t
    assert t["template"] == "test" and t["baseline_wall"] is not None, t
    assert open(t["log"]).read().split()[0] == arch, open(t["log"]).read()
PY
python3 - <<'PY' && ok "report merge joins the per-arch reports" || not_ok "merge of per-arch reports"
import json
r = json.load(open("all.json"))
names = [x["name"] for x in r["steps"]]
assert names == ["build[aarch64]", "test[aarch64]", "build[s390x]", "test[s390x]"], names
assert all(x["status"] == "passed" for x in r["steps"])
PY
show=$(cat recipe5.out)
# The page's output of `emurun report show all.json` is what it prints, numbers and padding
# aside: the same rows, columns, flags and flag lines (a native test of a few ms is under the
# 50 ms of timer noise: however slow emulated, it gets no baseline flag).
norm() { sed -E 's/[0-9]+(\.[0-9]+)?( ?(ms|s|x|MiB|KiB|GiB|B))?/N/g; s/ +/ /g; s/ $//'; }
page_out=$(awk '/^## One pipeline for every arch/ { f = 1 }
    f && /^\$ emurun report show all.json/ { g = 1; next } g && /^```/ { exit } g { print }' \
    "$EMURUN_SOURCE_DIR/docs/guides/pipelines.md")
[ -n "$page_out" ] || not_ok "docs/guides/pipelines.md's arches section shows no report show output"
expect_eq "the page's report show output is what it prints (numbers aside)" \
    "$(norm <<<"$page_out")" "$(norm <recipe5.out)"
expect_contains "table: a column per arch" "$show" "per arch (wall, x baseline wall):"
header=$(grep -A1 '^per arch' recipe5.out | tail -n1 | tr -s ' ')
expect_eq "table header" "step aarch64 s390x" "$header"
row=$(grep -A3 '^per arch' recipe5.out | grep '^test ' | tr -s ' ')
[[ $row =~ ^test\ [0-9.]+m?s\ [0-9.]+x\ [0-9.]+m?s\ [0-9.]+x$ ]] &&
    ok "table row test: wall and factor per arch ($row)" || not_ok "table row test: '$row'"

# The whole pipeline at once, with a Markdown summary; the same arch twice is refused by merge.
"$EMURUN" run arches.json -j 2 -q --baseline native.json --report both.json --markdown m.md \
    --log-dir logs-both >both.out 2>&1 && rc=0 || rc=$?
expect_eq "both arches in one run exit 0" 0 "$rc"
expect_contains "Markdown: per-arch table" "$(cat m.md)" "| step | aarch64 | s390x |"
grep -Eq '^\| test \| [0-9.]+m?s [0-9.]+x \| [0-9.]+m?s [0-9.]+x \|$' m.md &&
    ok "Markdown row test: wall and factor per arch" || not_ok "Markdown row: $(grep '^| test' m.md)"
validate both.json arches.json
"$EMURUN" report merge aarch64.json aarch64.json -o twice.json >twice.out 2>&1 && rc=0 || rc=$?
expect_eq "merge refuses the same arch twice" 125 "$rc"
expect_contains "it says why" "$(cat twice.out)" "given twice"
# Factors on CPU time: the header says so, the report too, and each emulated step keeps both
# baseline times; `report show --factor-basis wall` shows the other basis from the same report.
"$EMURUN" run arches.json -j 2 -q --baseline native.json --factor-basis cpu --report cpu.json \
    --log-dir logs-cpu >cpu.out 2>&1 && rc=0 || rc=$?
expect_eq "a run with --factor-basis cpu exits 0" 0 "$rc"
expect_contains "table: the factor column is on CPU time" "$(cat cpu.out)" "x baseline CPU"
expect_contains "per-arch table too" "$(cat cpu.out)" "per arch (wall, x baseline CPU):"
python3 - <<'PY' && ok "report: factor_basis cpu, baseline_cpu of each emulated step" || not_ok "cpu report"
import json
r = json.load(open("cpu.json"))
assert r["factor_basis"] == "cpu", r["factor_basis"]
native = {x["template"]: x for x in json.load(open("native.json"))["steps"]}
for s in r["steps"]:
    base = native[s["template"]]
    assert s["baseline_cpu"] == base["user"] + base["sys"], (s, base)
    assert s["baseline_wall"] == base["wall"], s
PY
shown=$("$EMURUN" report show --factor-basis wall cpu.json)
expect_contains "report show --factor-basis wall" "$shown" "x baseline wall"
# The native baseline's report is the per-arch reports' baseline, not one more arch.
python3 -c 'import json; assert json.load(open("native.json"))["native_baseline"] is True' &&
    ok "the --native report says it is the native baseline" || not_ok "native_baseline not true"
"$EMURUN" report merge aarch64.json native.json s390x.json -o mixed.json >mixed.out 2>&1 &&
    rc=0 || rc=$?
expect_eq "merge refuses the native baseline's report among the per-arch ones" 125 "$rc"
expect_contains "it names the file and says what to do" "$(cat mixed.out)" \
    "native.json is the native baseline's report (each per-arch step once, natively), not one arch's run (merge the other reports without it: it is their baseline, given to each arch's run (--baseline))"
[ ! -e mixed.json ] && ok "a refused merge writes nothing" || not_ok "mixed.json written"
"$EMURUN" run arches.json --arch riscv64 --report x.json >bad.out 2>&1 && rc=0 || rc=$?
expect_eq "--arch outside the pipeline's arches is refused" 125 "$rc"
expect_contains "it names the arches" "$(cat bad.out)" "is not in the pipeline's arches (aarch64, s390x) (pick some of those (--arch))"
[ ! -e x.json ] && ok "nothing written" || not_ok "x.json written"
finish
