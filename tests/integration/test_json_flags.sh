#!/bin/bash
# ctest-tier: quick
# --json on report compare, calibrate, binfmt verify and binfmt register --dry-run: one JSON
# document on stdout with the documented fields (checked with python3's json module). Each part
# is its own ctest; one whose precondition is missing here is reported as skipped.
# ctest-parts: compare verify calibrate register
. "$(dirname "$0")/lib/common.sh"
command -v python3 >/dev/null || skip "python3 not installed (used to read the JSON)"

# check LABEL FILE PYTHON-ASSERTIONS (the document is `d`)
check() {
    if out=$(python3 -c "import json,sys; d = json.load(open(sys.argv[1])); $3" "$2" 2>&1); then
        ok "$1"
    else
        not_ok "$1: $(echo "$out" | tail -n1); document: $(head -c 300 "$2")"
    fi
}

cd "$T"
cat >p.json <<JSON
{"name": "json-flags", "steps": [{"name": "a", "argv": ["true"]}, {"name": "b", "argv": ["false"]}]}
JSON
probe=$EMURUN_FIXTURE_DIR/aarch64/probe-static

part_compare() {
    "$EMURUN" run p.json -q --report r1.json --log-dir logs >/dev/null 2>&1 || true
    "$EMURUN" run p.json -q --report r2.json --log-dir logs >/dev/null 2>&1 || true
    "$EMURUN" report compare --json r1.json r2.json >cmp.json
    check "report compare --json" cmp.json \
        "assert [s['name'] for s in d['steps']] == ['a', 'b'], d; assert d['steps'][1]['after_status'] == 'failed'; assert 'change' in d['total']"
}

part_verify() {
    need_probe aarch64 || return 0
    rc=0
    "$EMURUN" binfmt verify --json --probe-dir "$EMURUN_FIXTURE_DIR" aarch64 >verify.json 2>/dev/null || rc=$?
    check "binfmt verify --json" verify.json \
        "assert d['arches'][0]['arch'] == 'aarch64'; assert d['ok'] == d['arches'][0]['ok'] == ($rc == 0); assert d['arches'][0]['detail']"
}

part_calibrate() {
    need_probe aarch64 || return 0
    rc=0
    "$EMURUN" calibrate --json -o cal.json --arch aarch64 --native-program "$EMURUN_HELPER_DIR/burn_cpu" \
        --emulated-program "$probe" >calibrate.json 2>calibrate.err || rc=$?
    if [ "$rc" -eq 0 ]; then
        check "calibrate --json" calibrate.json \
            "c = d['calibrations'][0]; assert c['arch'] == 'aarch64' and c['emulated_seconds'] > 0 and c['slowdown'] > 0; assert [p['name'] for p in c['phases']] == ['program']; assert d['file'].endswith('cal.json')"
    else
        not_ok "calibrate --json exited $rc: $(cat calibrate.err)"
    fi
}

# register --dry-run --json in a private binfmt_misc (user + mount namespace; the host's table
# is never touched), with one conflicting entry already there.
part_register() {
    if ! command -v unshare >/dev/null || ! command -v qemu-aarch64-static >/dev/null ||
        ! unshare --user --map-root-user --mount sh -c \
            'mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc' 2>/dev/null; then
        skip_part "no private binfmt_misc here (kernel < 6.7 or user namespaces off) or no qemu-aarch64-static"
        return
    fi
    rc=0
    unshare --user --map-root-user --mount bash -c '
        mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc || exit 99
        echo ":qemu-ppc64le:M::XYZZY::/bin/false:" >/proc/sys/fs/binfmt_misc/register
        "$1" binfmt register --dry-run --json aarch64 ppc64le' _ "$EMURUN" >plan.json 2>plan.err || rc=$?
    expect_eq "register --dry-run --json with a conflict exits 125" 125 "$rc"
    check "binfmt register --dry-run --json" plan.json \
        "p = {i['name']: i for i in d['plan']}; assert d['applied'] is False and d['conflict'] is True; assert p['qemu-aarch64']['action'] == 'add' and p['qemu-aarch64']['current'] is None; assert p['qemu-aarch64']['wanted']['arch'] == 'aarch64'; assert p['qemu-ppc64le']['action'] == 'conflict' and p['qemu-ppc64le']['current']['interpreter'] == '/bin/false' and p['qemu-ppc64le']['detail']"
}

run_parts compare verify calibrate register
finish
