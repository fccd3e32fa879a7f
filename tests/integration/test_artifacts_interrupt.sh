#!/bin/bash
# ctest-tier: quick
# SIGTERM while `emurun run` packs (--pack) or unpacks (--unpack) an artifact archive: tar is
# stopped with its process group, the temporary archive or staging directory is removed, the
# reports say the run was interrupted and emurun exits 143, as anywhere else in a run. A tar
# first in PATH that says it started and then sleeps makes the moment certain.
. "$(dirname "$0")/lib/common.sh"
for tool in tar python3 timeout; do
    command -v "$tool" >/dev/null || skip "$tool needed"
done
cd "$T"
mkdir slow-bin
cat > slow-bin/tar <<SH
#!/bin/sh
echo \$\$ > "$T/tar-started"
exec sleep 60
SH
chmod +x slow-bin/tar

mkdir src
cat > src/p.json <<'JSON'
{"name": "big", "steps": [
  {"name": "build", "kind": "build", "shell": true, "argv": "mkdir -p out && seq 1 1000 > out/n",
   "outputs": ["out"]},
  {"name": "t", "kind": "test", "shell": true, "needs": ["build"], "argv": "test -s out/n"}
]}
JSON

# interrupt NAME DIR ARGS...: runs `emurun run p.json ARGS` in DIR with the slow tar, sends
# SIGTERM once tar started; the exit code in NAME.rc (timeout's 124 if SIGTERM was ignored).
interrupt() {
    local name=$1 dir=$2 pid
    shift 2
    rm -f tar-started
    (cd "$dir" && PATH="$T/slow-bin:$PATH" exec timeout -s KILL 30 "$EMURUN" run p.json "$@" \
        --report "../$name.json") >"$name.out" 2>&1 &
    pid=$!
    for _ in $(seq 1 200); do [ -e tar-started ] && break; sleep 0.05; done
    [ -e tar-started ] || not_ok "$name: tar never started: $(cat "$name.out")"
    kill -TERM "$(pgrep -P "$pid" -x emurun || echo "$pid")"
    wait "$pid" && echo 0 >"$name.rc" || echo $? >"$name.rc"
    kill -0 "$(cat tar-started)" 2>/dev/null && not_ok "$name: tar still runs" ||
        ok "$name: tar was stopped"
}

cp -r src job-pack
interrupt pack job-pack --pack ../b.tar
expect_eq "SIGTERM while packing: exit 143" 143 "$(cat pack.rc)"
[ ! -e b.tar ] && [ -z "$(ls -A . | grep '\.tmp-' || true)" ] &&
    ok "no archive and no temporary left" || not_ok "left: $(ls -A)"
python3 -c 'import json; r=json.load(open("pack.json")); assert r["interrupted_by"] == 15, r["interrupted_by"]; assert "artifacts" not in r or not r["artifacts"], r["artifacts"]' &&
    ok "the report says interrupted_by 15" || not_ok "pack report: $(cat pack.json)"
expect_contains "it says tar was interrupted" "$(cat pack.out)" "interrupted by SIGTERM"

cp -r src job-build
(cd job-build && "$EMURUN" run p.json --pack ../b.tar --report ../build.json -q) >build.out 2>&1 ||
    not_ok "the build job failed: $(cat build.out)"
cp -r src job-test
interrupt unpack job-test --unpack ../b.tar
expect_eq "SIGTERM while unpacking: exit 143" 143 "$(cat unpack.rc)"
[ ! -e job-test/out ] && [ -z "$(ls -A job-test | grep emurun-unpack || true)" ] &&
    ok "nothing unpacked, no staging left" || not_ok "left: $(ls -A job-test)"
python3 -c 'import json; r=json.load(open("unpack.json")); assert r["interrupted_by"] == 15, r; assert all(s["status"] == "not_run" for s in r["steps"]), r["steps"]' &&
    ok "the report: interrupted_by 15, nothing run" || not_ok "unpack report: $(cat unpack.json)"
finish
