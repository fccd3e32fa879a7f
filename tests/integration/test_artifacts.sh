#!/bin/bash
# ctest-tier: quick
# Build once, test in two shards (docs/guides/ci.md "Build once, test in many jobs"): a build job packs its
# step's outputs, two shard jobs in fresh checkouts unpack them and run only their test steps,
# which read the outputs, and a reused step's log is the build's, unpacked into the shard's log
# dir; report merge joins the three reports and refuses a missing shard or build report. With
# "arches", --pack and --unpack take --arch: an archive serves its own arch's jobs only.
# Archives that do not match the pipeline, or whose members or symlinks would land outside, are
# refused with 125 and nothing unpacked; a missing output packs nothing.
. "$(dirname "$0")/lib/common.sh"
. "$(dirname "$0")/lib/docs.sh"
for tool in tar zstd python3; do
    command -v "$tool" >/dev/null || skip "$tool needed (archives, tampered archives)"
done
cd "$T"

# The checkout: a build step making a program's output (a file, a symlink, a directory) and
# two test steps that read it. The build step leaves a marker to show where it ran.
mkdir src
cat > src/p.json <<'JSON'
{"name": "once", "steps": [
  {"name": "build", "kind": "build", "shell": true,
   "argv": "mkdir -p build/bin build/data && echo built > build/bin/tool.txt && ln -s tool.txt build/bin/alias && seq 1 3 > build/data/n && touch build-ran && echo the build step says hello",
   "outputs": ["build/bin", "build/data/*"]},
  {"name": "t1", "kind": "test", "shell": true, "needs": ["build"],
   "argv": "grep -qx built build/bin/tool.txt && test -L build/bin/alias"},
  {"name": "t2", "kind": "test", "shell": true, "needs": ["build"],
   "argv": "test \"$(cat build/bin/alias)\" = built && test \"$(wc -l < build/data/n)\" = 3"}
]}
JSON
checkout() { rm -rf "$1" && cp -r src "$1"; }

# Job 1: the build.
checkout job-build
(cd job-build && "$EMURUN" run p.json --pack ../build.tar.zst --report ../build.json -q) \
    >build.out 2>build.err && rc=0 || rc=$?
expect_eq "the build job passes" 0 "$rc"
python3 - <<'PY' && ok "the build job ran the build only and names its archive" || not_ok "build report"
import json
r = json.load(open("build.json"))
assert [s["name"] for s in r["steps"]] == ["build"], r["steps"]
assert r["artifacts"]["packed"] is True and len(r["artifacts"]["id"]) == 16, r["artifacts"]
PY
members=$(tar -tf build.tar.zst | LC_ALL=C sort | tr '\n' ' ')
expect_eq "the archive holds the manifest, the build step's log and the outputs" \
    ".emurun-artifacts.json .emurun-logs/ .emurun-logs/build.log build/bin/ build/bin/alias build/bin/tool.txt build/data/n " "$members"

# Jobs 2 and 3: the shards, each in a fresh checkout.
for k in 1 2; do
    checkout "job-s$k"
    (cd "job-s$k" && "$EMURUN" run p.json --unpack ../build.tar.zst --shard "$k/2" \
        --report "../s$k.json" -q) >"s$k.out" 2>"s$k.err" && rc=0 || rc=$?
    expect_eq "shard $k/2 passes on the unpacked outputs" 0 "$rc"
    [ ! -e "job-s$k/build-ran" ] && ok "shard $k did not run the build step" ||
        not_ok "shard $k ran the build step"
    [ -z "$(ls -A "job-s$k" | grep emurun-unpack || true)" ] &&
        ok "shard $k left no unpack directory" || not_ok "shard $k left its staging dir"
done
python3 - <<'PY' && ok "each shard reused the build and ran one test step" || not_ok "shard reports"
import json, os
b = json.load(open("build.json"))
tests = []
for k in (1, 2):
    r = json.load(open(f"s{k}.json"))
    s = {x["name"]: x for x in r["steps"]}
    assert s["build"]["status"] == "reused", s["build"]
    # The reused step's log is the build job's, unpacked into this job's own log directory.
    assert s["build"]["log"] == "emurun-logs/build.log", s["build"]["log"]
    log = open(os.path.join(f"job-s{k}", s["build"]["log"])).read()
    assert log == open(os.path.join("job-build", b["steps"][0]["log"])).read(), log
    assert "the build step says hello" in log, log
    assert s["build"]["wall"] == b["steps"][0]["wall"], (s["build"], b["steps"][0])
    assert r["artifacts"] == {"id": b["artifacts"]["id"], "packed": False}, r["artifacts"]
    tests += [n for n in s if n != "build" and s[n]["status"] == "passed"]
assert sorted(tests) == ["t1", "t2"], tests
PY
validate s1.json src/p.json
validate build.json src/p.json

"$EMURUN" report merge build.json s1.json s2.json -o merged.json >merge.out 2>&1 && rc=0 || rc=$?
expect_eq "report merge of the three jobs passes" 0 "$rc"
python3 - <<'PY' && ok "the merged report has the build once, then both tests" || not_ok "merged"
import json
r = json.load(open("merged.json"))
assert [(s["name"], s["status"]) for s in r["steps"]] == \
    [("build", "passed"), ("t1", "passed"), ("t2", "passed")], r["steps"]
assert r["shard"] == {"index": 1, "count": 1} and r["artifacts"] is None
PY
validate merged.json src/p.json
"$EMURUN" report merge build.json s1.json -o m.json >m.out 2>&1 && rc=0 || rc=$?
expect_eq "merge refuses a missing shard (exit 125)" 125 "$rc"
expect_contains "it names the shard" "$(cat m.out)" "shard 2 of 2 is missing"
"$EMURUN" report merge s1.json s2.json -o m.json >m.out 2>&1 && rc=0 || rc=$?
expect_eq "merge refuses shards without their build report" 125 "$rc"
expect_contains "it says what is missing" "$(cat m.out)" "no report of the build job"
[ ! -e m.json ] && ok "a refused merge writes nothing" || not_ok "m.json written"

# The page's recipe as written, one command a job, each job in a fresh checkout; the archive
# and the reports travel between them as CI artifacts would.
doc_block docs/guides/ci.md build-once >recipe.sh || true
if [ "$(wc -l <recipe.sh)" -eq 4 ] && grep -q -- '--pack' recipe.sh; then
    mkdir readme readme/merge
    PATH=$(dirname "$EMURUN"):$PATH # the recipe says emurun
    job() { # job N: the recipe's Nth line in readme/jN
        [ -d "readme/j$1" ] || checkout "readme/j$1"
        (cd "readme/j$1" && bash -c "set -e; $(sed -n "${1}p" "$T/recipe.sh")") >"readme/$1.out" 2>&1
    }
    job 1 && rc=0 || rc=$?
    for k in 2 3; do
        checkout "readme/j$k"
        cp readme/j1/build.tar.zst "readme/j$k/" 2>/dev/null || true
        job "$k" || rc=$?
    done
    cp readme/j1/build.json readme/j2/s1.json readme/j3/s2.json readme/merge/ 2>/dev/null || true
    (cd readme/merge && bash -c "set -e; $(sed -n 4p "$T/recipe.sh")") >readme/4.out 2>&1 || rc=$?
    expect_eq "the page's four commands pass, each in its own job" 0 "$rc"
    [ "$rc" = 0 ] || cat readme/*.out
    python3 -c 'import json; r = json.load(open("readme/merge/merged.json")); assert [s["status"] for s in r["steps"]] == ["passed"] * 3, r' &&
        ok "the page's merged report has every step passed once" || not_ok "the page's merge"
else
    not_ok "no four-line build-once block in docs/guides/ci.md"
fi

# A shard checkout that already has the outputs: nothing is overwritten.
(cd job-s1 && "$EMURUN" run p.json --unpack ../build.tar.zst --shard 1/2 --report ../again.json) \
    >again.out 2>&1 && rc=0 || rc=$?
expect_eq "unpacking over existing outputs is refused" 125 "$rc"
expect_contains "it names the path" "$(cat again.out)" "build/bin already exists"

# unpack_refused NAME ARCHIVE WHY [PIPELINE-EDIT]: a fresh checkout refuses ARCHIVE with 125,
# saying WHY, and holds no output afterwards.
unpack_refused() {
    checkout "job-$1"
    [ -z "${4:-}" ] || sed -i "$4" "job-$1/p.json"
    (cd "job-$1" && "$EMURUN" run p.json --unpack "../$2" --shard 1/2 --report ../x.json) \
        >"$1.out" 2>&1 && rc=0 || rc=$?
    expect_eq "$1: refused with 125" 125 "$rc"
    expect_contains "$1: says why" "$(cat "$1.out")" "$3"
    [ ! -e "job-$1/build" ] && [ ! -e outside ] && ok "$1: nothing unpacked" ||
        not_ok "$1: something was unpacked"
}
unpack_refused changed build.tar.zst "packed from another version of pipeline" 's/grep -qx/grep -x/'
unpack_refused renamed build.tar.zst 'packed for pipeline "once", not "twice"' 's/"once"/"twice"/'

# Tampered archives, built from the real manifest.
tar -xOf build.tar.zst .emurun-artifacts.json > manifest.json
python3 - <<'PY'
import io, json, tarfile
manifest = open("manifest.json", "rb").read()
def archive(name, members, manifest=manifest):
    with tarfile.open(name, "w", format=tarfile.GNU_FORMAT) as t:
        info = tarfile.TarInfo(".emurun-artifacts.json"); info.size = len(manifest)
        t.addfile(info, io.BytesIO(manifest))
        for m in members:
            t.addfile(m, io.BytesIO(b"x" * m.size) if m.isfile() else None)
def file(name):
    i = tarfile.TarInfo(name); i.size = 1; return i
def link(name, target):
    i = tarfile.TarInfo(name); i.type = tarfile.SYMTYPE; i.linkname = target; return i
def hard(name, target):
    i = tarfile.TarInfo(name); i.type = tarfile.LNKTYPE; i.linkname = target; return i
archive("dotdot.tar", [file("build/bin/tool.txt"), file("build/bin/../../../outside")])
archive("absolute.tar", [file("/tmp/outside-emurun-test")])
archive("extra.tar", [file("build/bin/tool.txt"), file("build/other")])
archive("symlink.tar", [link("build/bin/escape", "../../../outside"), file("build/data/n")])
archive("hardlink.tar", [hard("build/bin/h", "../../outside"), file("build/data/n")])
m = json.loads(manifest); m["paths"].append("build/more")
archive("edited.tar", [file("build/data/n")], json.dumps(m).encode())
# The report entries are hashed into the id too: a step's wall or message edited, id kept.
m = json.loads(manifest); m["report"]["steps"][0]["wall"] = 9999
archive("edited-wall.tar", [file("build/data/n")], json.dumps(m).encode())
m = json.loads(manifest); m["report"]["steps"][0]["message"] = "edited"
archive("edited-message.tar", [file("build/data/n")], json.dumps(m).encode())
PY
unpack_refused dotdot dotdot.tar 'member "build/bin/../../../outside" is not a plain relative path'
unpack_refused absolute absolute.tar 'member "/tmp/outside-emurun-test" is not a plain relative path'
unpack_refused extra extra.tar 'member "build/other" is not one of the manifest'
unpack_refused symlink symlink.tar "is a symlink to ../../../outside, outside the archive"
unpack_refused hardlink hardlink.tar "refused: tar: "
unpack_refused edited edited.tar "the archive was edited after packing, or written by another emurun version"
unpack_refused edited-wall edited-wall.tar "does not match its content: the archive was edited"
unpack_refused edited-message edited-message.tar "does not match its content: the archive was edited"
[ ! -e /tmp/outside-emurun-test ] && ok "no absolute member written" || not_ok "/tmp written"

# A build step that does not make a declared output: the pack fails, nothing is written.
checkout job-missing
sed -i 's|"build/data/\*"|"build/data/*", "build/lib.so"|' job-missing/p.json
(cd job-missing && "$EMURUN" run p.json --pack ../missing.tar.zst --report ../missing.json) \
    >missing.out 2>&1 && rc=0 || rc=$?
expect_eq "a missing output fails the build job with 125" 125 "$rc"
expect_contains "it names step and path" "$(cat missing.out)" 'step build: output "build/lib.so"'
[ ! -e missing.tar.zst ] && [ -z "$(ls -A . | grep '\.tmp-' || true)" ] &&
    ok "no archive and no temporary file" || not_ok "an archive or temporary was left"
[ -e missing.json ] && ok "the report is still written" || not_ok "no report"

# One pipeline for every arch, built once per arch: aarch64's build job packs with --arch
# aarch64 and its test job unpacks with --arch aarch64; a ppc64le or native baseline test job
# refuses that archive, saying whose it is. The steps run host tools (emulation native).
mkdir arches
cat >arches/p.json <<'JSON'
{"name": "per-arch", "arches": ["aarch64", "ppc64le"], "steps": [
  {"name": "build", "kind": "build", "emulation": "native", "shell": true,
   "argv": "mkdir -p out/${arch} && echo ${triplet} > out/${arch}/triplet && echo built for ${arch}",
   "outputs": ["out/${arch}"]},
  {"name": "test", "kind": "test", "emulation": "native", "shell": true, "needs": ["build"],
   "argv": "grep -qx ${triplet} out/${arch}/triplet"}]}
JSON
arch_job() { # arch_job DIR ARGS...: `emurun run p.json -q ARGS` in DIR, a fresh checkout
    local dir=$1
    shift
    rm -rf "$dir" && cp -r arches "$dir"
    (cd "$dir" && "$EMURUN" run p.json -q "$@") >"$dir.out" 2>&1
}
arch_job arm-build --arch aarch64 --pack ../arm.tar.zst --report ../arm-build.json && rc=0 ||
    rc=$?
expect_eq "--arch aarch64 --pack: aarch64's build job passes" 0 "$rc"
tar -tf arm.tar.zst >arm.members
expect_eq "its archive holds aarch64's outputs only" "out/aarch64" \
    "$(grep '^out/' arm.members | cut -d/ -f1-2 | sort -u)"
expect_eq "and build[aarch64]'s log" 1 "$(grep -c '^\.emurun-logs/build_aarch64_-.*\.log$' arm.members)"
arch_job arm-test --arch aarch64 --unpack ../arm.tar.zst --report ../arm-test.json && rc=0 ||
    rc=$?
expect_eq "--arch aarch64 --unpack: aarch64's test job passes on the unpacked build" 0 "$rc"
python3 - <<'PY' && ok "aarch64's test job reused build[aarch64], its log there, and ran test[aarch64]" || not_ok "arm-test.json: $(cat arm-test.out)"
import json, os
s = {x["name"]: x for x in json.load(open("arm-test.json"))["steps"]}
assert sorted(s) == ["build[aarch64]", "test[aarch64]"], s
assert s["build[aarch64]"]["status"] == "reused" and s["test[aarch64]"]["status"] == "passed", s
log = open(os.path.join("arm-test", s["build[aarch64]"]["log"])).read()
assert "built for aarch64" in log, log
PY
arch_job ppc-test --arch ppc64le --unpack ../arm.tar.zst --report ../ppc-test.json && rc=0 ||
    rc=$?
expect_eq "--arch ppc64le --unpack of aarch64's archive is refused with 125" 125 "$rc"
expect_contains "it names both arches" "$(cat ppc-test.out)" \
    "packed for arch aarch64, and this run selects ppc64le (pack one archive in each arch's build job, or unpack it in the run of the arches it was packed for (--arch))"
[ ! -e ppc-test/out ] && ok "ppc64le's job unpacked nothing" || not_ok "ppc-test/out exists"
arch_job native-test --native --unpack ../arm.tar.zst --report ../native-test.json && rc=0 ||
    rc=$?
expect_eq "--native --unpack of aarch64's archive is refused with 125" 125 "$rc"
expect_contains "it says why" "$(cat native-test.out)" \
    "packed by a run that was not the native baseline, and this run is one"

# --matrix auto from the merged report: one shard fits an hour.
(cd src && "$EMURUN" run p.json --matrix auto --job-limit 1h --previous ../merged.json) \
    >matrix.json 2>matrix.err && rc=0 || rc=$?
expect_eq "--matrix auto passes" 0 "$rc"
python3 -c 'import json,sys; m=json.load(open("matrix.json")); assert [i["shard"] for i in m["include"]] == ["1/1"], m' &&
    ok "--matrix auto picks one shard" || not_ok "--matrix auto: $(cat matrix.json)"
expect_contains "--matrix auto says its projection" "$(cat matrix.err)" "matrix auto: 1 shard(s)"
(cd src && "$EMURUN" run p.json --matrix auto --job-limit 1h) >/dev/null 2>matrix.err && rc=0 ||
    rc=$?
expect_eq "--matrix auto without history is refused" 125 "$rc"
expect_contains "it says what to give" "$(cat matrix.err)" "no history for any step"
finish
