#!/bin/bash
# ctest-tier: network
# QEMU versions: 'emurun qemu fetch --suite trixie aarch64 s390x' takes Debian trixie's static
# emulators (QEMU 10.0, from qemu-user-static's dependency qemu-user) into emurun's cache without
# installing anything; 'emurun qemu list' shows them beside the host's (Debian 12: 7.2) with
# version and source; a pipeline whose steps say "qemu": "trixie" (a sandbox step), "qemu": "10.0"
# (an exec step) or nothing runs each under that QEMU, and the report records which (path,
# version); a choice that matches nothing fails its step saying what there is; 'report compare'
# of two runs that differ only in QEMU names the change; doctor shows the fetched QEMU when
# EMURUN_QEMU_DIR names its dir. A second fetch of another arch keeps the first.
# The fetched emulators and apt's state live in a cache of this test's own, kept between runs
# (${EMURUN_TEST_QEMU_CACHE:-~/.cache/emurun-tests/qemu}).
. "$(dirname "$0")/lib/common.sh"
need_fixture_arch aarch64
need_fixture_arch s390x
command -v python3 >/dev/null || skip "python3 needed to read the reports"
[ -x /usr/bin/qemu-aarch64-static ] && [ -x /usr/bin/qemu-s390x-static ] ||
    skip "the host's qemu-user-static is not installed (tools/install-deps)"
"$EMURUN" sandbox --arch aarch64 -- true >"$T/probe.log" 2>&1 ||
    skip "the sandbox is unavailable here: $(tail -n1 "$T/probe.log")"
cache=${EMURUN_TEST_QEMU_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/emurun-tests/qemu}
mkdir -p "$cache" && chmod 700 "$cache"
export EMURUN_CACHE_DIR=$cache
host_version=$("$EMURUN" qemu list aarch64 | awk '$NF == "/usr/bin/qemu-aarch64-static" { print $2 }')
[ -n "$host_version" ] || { not_ok "qemu list shows no /usr/bin/qemu-aarch64-static"; "$EMURUN" qemu list aarch64; }

# The fetch: one arch, then another (the first stays).
rc=0
"$EMURUN" qemu fetch --suite trixie aarch64 >"$T/fetch1.txt" 2>"$T/fetch1.err" || rc=$?
[ "$rc" -ne 3 ] || skip "the Debian archive cannot be reached: $(tail -n1 "$T/fetch1.err")"
expect_eq "qemu fetch --suite trixie aarch64 exits 0" 0 "$rc"
[ "$rc" = 0 ] || cat "$T/fetch1.err"
"$EMURUN" qemu fetch --suite trixie s390x >"$T/fetch2.txt" 2>"$T/fetch2.err" ||
    not_ok "qemu fetch --suite trixie s390x: $(tail -n3 "$T/fetch2.err")"
cat "$T/fetch1.txt" "$T/fetch2.txt"
dir=$cache/qemu/trixie
for cpu in aarch64 s390x; do
    f=$dir/qemu-$cpu-static
    [ -x "$f" ] && ok "fetched $f" || not_ok "no $f after the fetches"
    if readelf -lW "$f" 2>/dev/null | grep -q INTERP; then not_ok "$f is dynamic"; else ok "$f is static"; fi
    expect_contains "$cpu: the .source names trixie's package" "$(cat "$f.source" 2>/dev/null)" "qemu-user 1:10.0"
done
expect_eq "nothing was installed: the host's dpkg knows no qemu 10" "" \
    "$(dpkg-query -W -f='${Version}\n' qemu-user-static qemu-user 2>/dev/null | grep '^1:10' || true)"
list=$("$EMURUN" qemu list aarch64 s390x)
echo "$list"
expect_contains "qemu list: the host's aarch64 emulator" "$list" "/usr/bin/qemu-aarch64-static"
expect_contains "qemu list: trixie's, with version and source" \
    "$(grep "$dir/qemu-aarch64-static" <<<"$list")" "trixie: qemu-user 1:10.0"
trixie_version=$(awk -v f="$dir/qemu-aarch64-static" '$NF == f { print $2 }' <<<"$list")
case $trixie_version in 10.0.*) ok "trixie's QEMU is 10.0 ($trixie_version)" ;; *) not_ok "trixie's QEMU: [$trixie_version]" ;; esac
expect_contains "qemu list --json" "$("$EMURUN" qemu list --json s390x)" '"suite": "trixie"'

# A pipeline choosing per step.
cp "$EMURUN_FIXTURE_DIR/aarch64/probe-static" "$T/probe-aarch64"
cp "$EMURUN_FIXTURE_DIR/s390x/probe-static" "$T/probe-s390x"
write_pipeline() { # NAME QEMU-OF-THE-SANDBOX-STEP
    cat >"$T/$1.json" <<EOF
{"name": "qemu-versions", "defaults": {"cwd": "$T"}, "steps": [
  {"name": "sandbox-aarch64", "kind": "test", "arch": "aarch64", "emulation": "sandbox", $2
   "argv": ["./probe-aarch64", "uname"]},
  {"name": "exec-s390x", "kind": "test", "arch": "s390x", "emulation": "exec", "qemu": "10.0",
   "argv": ["./probe-s390x", "endian"]},
  {"name": "host-qemu", "kind": "test", "arch": "aarch64", "emulation": "exec",
   "argv": ["./probe-aarch64", "uname"]}]}
EOF
}
write_pipeline trixie '"qemu": "trixie",'
write_pipeline plain ''
(cd "$T" && "$EMURUN" run trixie.json -q --report r-trixie.json --log-dir logs-t >/dev/null 2>"$T/run.err") &&
    ok "the pipeline with \"qemu\" passes" || not_ok "emurun run: $(tail -n5 "$T/run.err")"
emu() { python3 -c 'import json,sys; s={x["name"]: x for x in json.load(open(sys.argv[1]))["steps"]}; e=s[sys.argv[2]]["emulator"]; print(e["path"], e["version"])' "$T/$1" "$2"; }
expect_eq "\"qemu\": \"trixie\": the report says trixie's emulator" "$dir/qemu-aarch64-static $trixie_version" "$(emu r-trixie.json sandbox-aarch64)"
expect_contains "\"qemu\": \"10.0\": the report says 10.0" "$(emu r-trixie.json exec-s390x)" "$dir/qemu-s390x-static 10.0."
expect_eq "no \"qemu\": the host's" "/usr/bin/qemu-aarch64-static $host_version" "$(emu r-trixie.json host-qemu)"
expect_eq "the sandbox step ran on aarch64" aarch64 "$(cat "$T/logs-t/sandbox-aarch64.log")"
expect_contains "the exec step ran big-endian" "$(cat "$T/logs-t/exec-s390x.log")" "big 01020304"

# The same pipeline under the host's QEMU, compared: the change is named per step.
(cd "$T" && "$EMURUN" run plain.json -q --report r-plain.json --log-dir logs-p >/dev/null 2>&1) ||
    not_ok "the plain pipeline failed"
cmp=$("$EMURUN" report compare "$T/r-plain.json" "$T/r-trixie.json" 2>&1 || true)
echo "$cmp"
expect_contains "report compare names the emulator change" "$cmp" "emulator changed: sandbox-aarch64"
expect_contains "... from the host's version to trixie's" "$cmp" "$trixie_version"

# A choice that matches nothing fails its step, naming what there is.
write_pipeline none '"qemu": "99.1",'
rc=0
(cd "$T" && "$EMURUN" run none.json -q --report r-none.json --log-dir logs-n >/dev/null 2>&1) || rc=$?
expect_eq "\"qemu\": \"99.1\" fails the run" 1 "$rc"
msg=$(python3 -c 'import json,sys; s={x["name"]: x for x in json.load(open(sys.argv[1]))["steps"]}; print(s["sandbox-aarch64"]["status"], s["sandbox-aarch64"]["message"])' "$T/r-none.json")
expect_contains "its step failed, naming the versions there are" "$msg" "qemu 99.1 for aarch64"
expect_contains "... and the fetch" "$msg" "emurun qemu fetch --suite"
rc=0
out=$("$EMURUN" qemu fetch --suite ../x aarch64 2>&1) || rc=$?
expect_eq "a suite name with .. is refused" 125 "$rc"
expect_contains "saying why" "$out" "not a Debian suite name"

# doctor shows the QEMU EMURUN_QEMU_DIR names.
expect_contains "doctor shows the fetched QEMU" "$(EMURUN_QEMU_DIR=$dir "$EMURUN" doctor --no-probe 2>&1)" "$trixie_version"
finish
