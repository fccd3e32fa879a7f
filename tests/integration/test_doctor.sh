#!/bin/bash
# ctest-tier: quick
# `emurun doctor` tells the truth: every fact it reports is checked against what this script
# observes itself, on the host, on a fake mount, and inside a sandbox (a part of its own, which
# skips where the kernel has no sandboxed binfmt_misc or the aarch64 fixtures are missing).
# ctest-parts: host sandbox
. "$(dirname "$0")/lib/common.sh"
command -v python3 >/dev/null || skip "python3 is needed to read doctor's JSON"
BM=/proc/sys/fs/binfmt_misc

# Print "$2" evaluated as a Python expression over the JSON document `j` read from file $1.
jq_py() { python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$@"; }

part_host() {
    rc=0
    "$EMURUN" doctor --json >"$T/d.json" || rc=$?
    expect_eq "exit 0 unless a FAIL" \
        "$(jq_py "$T/d.json" '1 if any(c["status"] == "fail" for c in j["checks"]) else 0')" "$rc"
    expect_eq "schema" 1 "$(jq_py "$T/d.json" 'j["schema"]')"
    expect_eq "kernel release" "$(uname -r)" "$(jq_py "$T/d.json" 'j["facts"]["kernel"]["release"]')"
    mounted=False
    [ -e "$BM/register" ] && [ -e "$BM/status" ] && mounted=True
    expect_eq "mount state" "$mounted" "$(jq_py "$T/d.json" 'j["facts"]["binfmt"]["mounted"]')"
    host_entries=$(ls "$BM" 2>/dev/null | grep -vx -e register -e status | sort | tr '\n' ' ' || true)
    expect_eq "host entries" "$host_entries" \
        "$(jq_py "$T/d.json" '"".join(e["name"] + " " for e in j["facts"]["binfmt"]["entries"])')"
    expect_eq "max_user_namespaces" "$(cat /proc/sys/user/max_user_namespaces)" \
        "$(jq_py "$T/d.json" 'j["facts"]["userns"]["max_user_namespaces"]')"

    # Every emulator doctor lists exists, and "static" agrees with the file's program headers.
    for arch in aarch64 ppc64le s390x; do
        want=$(command -v "qemu-$arch-static" || command -v "qemu-$arch" || true)
        [ -n "$want" ] || continue
        got=$(jq_py "$T/d.json" "[e['path'] for e in j['facts']['emulators'] if e['arch'] == '$arch'][0]")
        expect_eq "emulator for $arch" "$want" "$got"
        is_static=True
        readelf -l "$want" 2>/dev/null | grep -q 'Requesting program interpreter' && is_static=False
        expect_eq "$arch emulator static?" "$is_static" \
            "$(jq_py "$T/d.json" "[e['static'] for e in j['facts']['emulators'] if e['arch'] == '$arch'][0]")"
    done

    # The sandbox probe agrees with an actual attempt made here.
    probe=False
    unshare --user --map-root-user --mount sh -c "mount -t binfmt_misc binfmt_misc $BM" 2>/dev/null && probe=True
    expect_eq "sandbox probe" "$probe" "$(jq_py "$T/d.json" 'j["facts"]["userns"]["sandbox_probe"]')"

    # Human output with -v: one OK/WARN/FAIL line per check, each WARN/FAIL followed by its fix.
    "$EMURUN" -v doctor >"$T/d.txt" 2>/dev/null || true
    expect_eq "-v: one line per check" "$(jq_py "$T/d.json" 'len(j["checks"])')" \
        "$(grep -cE '^(OK|WARN|FAIL) ' "$T/d.txt")"
    expect_eq "a fix per problem" "$(grep -cE '^(WARN|FAIL) ' "$T/d.txt")" "$(grep -c '^      fix: ' "$T/d.txt")"
    # Without -v the emulators that passed are one line per kind, naming every arch the JSON has.
    "$EMURUN" doctor >"$T/g.txt" || true
    expect_eq "the passing emulators: one line per kind" \
        "$(jq_py "$T/d.json" 'len(set(" ".join(c["summary"].split(" ")[1:]) + c["summary"].split("qemu-")[0] for c in j["checks"] if c["id"].startswith("emulator.") and c["status"] == "ok"))')" \
        "$(grep -c '^OK    emulators: ' "$T/g.txt")"
    expect_eq "every passing emulator's arch named" \
        "$(jq_py "$T/d.json" '" ".join(sorted(c["id"][9:] for c in j["checks"] if c["id"].startswith("emulator.") and c["status"] == "ok"))')" \
        "$(sed -n 's/^OK    emulators: [0-9]* arches, [^:]*: \(.*\) (-v: a line each)$/\1/p' "$T/g.txt" | tr ' ' '\n' | LC_ALL=C sort | tr '\n' ' ' | sed 's/ $//')"
    expect_eq "no emulator.* line without -v" 0 "$(grep -c '^OK    emulator\.' "$T/g.txt" || true)"

    # A fake mount: a conflicting qemu-aarch64 (other flags, interpreter missing, no F) is a FAIL.
    mkdir "$T/mnt"
    : >"$T/mnt/register"
    echo enabled >"$T/mnt/status"
    printf 'enabled\ninterpreter /nonexistent/qemu-aarch64\nflags: P\noffset 0\nmagic 7f454c460201010000000000000000000200b700\nmask ffffffffffffff00fffffffffffffffffeffffff\n' >"$T/mnt/qemu-aarch64"
    rc=0
    "$EMURUN" doctor --no-probe --mount "$T/mnt" >"$T/f.txt" || rc=$?
    expect_eq "missing interpreter fails doctor" 1 "$rc"
    expect_contains "names the entry" "$(cat "$T/f.txt")" "FAIL  binfmt.entry.qemu-aarch64"
    expect_contains "gives the fix" "$(cat "$T/f.txt")" "fix: put emurun's entry in its place: 'emurun binfmt register aarch64' (--replace)"
    "$EMURUN" doctor --no-probe --json --mount "$T/mnt" >"$T/f.json" || true
    expect_eq "the JSON's fix spells the option as a flag too" \
        "put emurun's entry in its place: 'emurun binfmt register aarch64' (--replace)" \
        "$(jq_py "$T/f.json" '[c["fix"] for c in j["checks"] if c["id"] == "binfmt.entry.qemu-aarch64"][0]')"

    # The same conflict refuses a registration, and the hint names the option that replaces it.
    rc=0
    err=$("$EMURUN" binfmt register --mount "$T/mnt" --interpreter /bin/true aarch64 2>&1) || rc=$?
    expect_eq "a conflicting entry refuses register" 125 "$rc"
    expect_contains "and says how to replace it" "$err" \
        "unregister it first, or replace it on purpose (--replace))"
}

part_sandbox() {
    # Inside a sandbox, doctor sees the private table, and it is exactly what emurun registers.
    unshare --user --map-root-user --mount sh -c "mount -t binfmt_misc binfmt_misc $BM" 2>/dev/null ||
        { skip_part "no binfmt_misc in a user namespace here (Linux >= 6.7 needed)"; return 0; }
    need_probe aarch64 || return 0
    "$EMURUN" sandbox --arch aarch64 -- "$EMURUN" doctor --json --no-probe >"$T/s.json" || true
    expect_eq "sandbox entry seen by doctor" "qemu-aarch64 PF True" \
        "$(jq_py "$T/s.json" '" ".join(str(x) for e in j["facts"]["binfmt"]["entries"] for x in (e["name"], e["flags"], e["enabled"]))')"
    expect_eq "and it is as emurun registers it" ok \
        "$(jq_py "$T/s.json" '[c["status"] for c in j["checks"] if c["id"] == "binfmt.entry.qemu-aarch64"][0]')"
}

run_parts host sandbox
finish
