#!/bin/bash
# ctest-tier: quick
# Hostile input through the real binary (issue 14): each part is one row group of docs/reference/bad-input.md's
# "Bad input" table. Every refusal is exit 125 with an error naming what, why and what to do;
# nothing aborts (exit 134) and no run's results are lost.
# ctest-parts: numbers utf8 merge logs fullfs outputs readonly late_write multiplier sandbox_host small
. "$(dirname "$0")/lib/common.sh"

cd "$T"
# expect_refusal LABEL NEEDLE CMD...: exit 125, NEEDLE in stderr, no abort.
expect_refusal() {
    local label=$1 needle=$2 rc=0
    shift 2
    "$@" >out.txt 2>err.txt </dev/null || rc=$?
    if [ "$rc" -ne 125 ]; then
        not_ok "$label: exit $rc, expected 125; stderr: $(head -c 400 err.txt)"
    elif ! grep -qF -- "$needle" err.txt; then
        not_ok "$label: [$needle] not in stderr: $(head -c 400 err.txt)"
    else
        ok "$label"
    fi
}

report() { # report FILE WALL [SIGNAL-JSON [SHARD COUNT]]: a one-step report with the given wall
    local sig=${3:-', "signal": null'}
    cat >"$1" <<JSON
{"schema_version": 1, "pipeline": "p", "started": "2026-01-01T00:00:00Z", "wall": $2,
 "host_arch": "x86_64", "shard": {"index": ${4:-1}, "count": ${5:-1}}, "job_limit": null,
 "interrupted_by": null, "flags": [],
 "steps": [{"name": "t${4:-1}", "kind": "other", "arch": "", "emulation": "native",
            "status": "passed", "wall": 1, "user": 0, "sys": 0, "max_rss_kib": 0,
            "budget": null, "baseline_wall": null, "log": "", "message": "", "flags": [],
            "exit_code": 0 $sig}]}
JSON
}

part_numbers() {
    cat >big.json <<'JSON'
{"name": "p", "steps": [{"name": "a", "argv": ["true"], "timeout": 1e400}]}
JSON
    expect_refusal "1e400 in a pipeline" "big.json:1:" "$EMURUN" run big.json
    expect_refusal "1e400 message names the number" "number 1e400 is too large" "$EMURUN" run big.json
    report ok.json 1
    report huge.json 1e400
    expect_refusal "1e400 in report show" "huge.json:1:83:" "$EMURUN" report show huge.json
    expect_refusal "1e400 in report compare" "too large" "$EMURUN" report compare ok.json huge.json
    expect_refusal "1e400 in report merge" "too large" "$EMURUN" report merge -o m.json huge.json
    printf '{"name": "p", "steps": [{"name": "a", "argv": ["true"]}]}\n' >p.json
    expect_refusal "1e400 in --previous" "too large" "$EMURUN" run p.json --previous huge.json
    expect_refusal "1e400 in --baseline" "too large" "$EMURUN" run p.json --baseline huge.json
    printf '{"arches": {"aarch64": {"slowdown": 1e400}}}\n' >cal.json
    expect_refusal "1e400 in --calibration" "too large" \
        "$EMURUN" run p.json --timeout-multiplier auto --calibration cal.json
    printf '{"arches": {"aarch64": {"slowdown": "fast"}}}\n' >cal2.json
    expect_refusal "a string slowdown in --calibration" "arches.aarch64.slowdown: expected a number" \
        "$EMURUN" run p.json --timeout-multiplier auto --calibration cal2.json
    printf '{"name": "p", "name": "q", "steps": [{"name": "a", "argv": ["true"]}]}\n' >dup.json
    expect_refusal "duplicate keys" "dup.json: name: duplicate key" "$EMURUN" run dup.json
}

part_utf8() {
    printf '{"name": "p", "steps": [{"name": "a", "argv": ["touch", "ran"]}]}\n' >p.json
    expect_refusal "--log-dir that is not UTF-8" "JSON text (choose a log directory whose path is UTF-8 (--log-dir))" \
        "$EMURUN" run p.json --log-dir $'logs\xff'
    [ ! -e ran ] && ok "nothing ran before the refusal" || not_ok "a step ran before the refusal"
    # A pipeline in a directory whose name is not UTF-8, with an error message holding the path.
    mkdir -p $'d\xfe'
    printf '{"name": "p", "steps": [{"name": "a", "argv": ["true"], "cwd": "missing"}]}\n' \
        >$'d\xfe/p.json'
    rc=0
    "$EMURUN" run $'d\xfe/p.json' --report r.json -q >/dev/null 2>err.txt || rc=$?
    expect_eq "run with a non-UTF-8 path in a message exits 1" 1 "$rc"
    if python3 -c 'import json,sys; d = json.load(open("r.json")); assert d["steps"][0]["status"] == "failed"; assert "\ufffd" in d["steps"][0]["message"], d' 2>/dev/null; then
        ok "the report is written, bad bytes as U+FFFD"
    else
        not_ok "no valid report: $(head -c 300 r.json 2>&1) $(cat err.txt)"
    fi
    # inspect --json on an ELF whose interpreter name holds a byte >= 0x80.
    python3 - "$EMURUN_HELPER_DIR/exit_with" elf <<'PY'
import sys
data = bytearray(open(sys.argv[1], 'rb').read())
at = data.find(b'/lib64/ld-linux-x86-64.so.2')
if at < 0:
    at = data.find(b'ld-linux')
data[at + 1] = 0xff
open(sys.argv[2], 'wb').write(data)
PY
    rc=0
    "$EMURUN" inspect --json elf >inspect.json 2>err.txt || rc=$?
    if [ "$rc" -le 1 ] && python3 -c 'import json; json.load(open("inspect.json"))' 2>/dev/null; then
        ok "inspect --json on a non-UTF-8 interpreter name (exit $rc)"
    else
        not_ok "inspect --json exited $rc: $(head -c 300 err.txt)"
    fi
    # One file that is no ELF among others: the others are still shown, the bad one named.
    printf 'int main;\n' >f.c
    rc=0; "$EMURUN" inspect /bin/true f.c /bin/ls >out.txt 2>err.txt || rc=$?
    expect_eq "inspect of a non-ELF among ELF files: 125" 125 "$rc"
    expect_contains "...the ELF files still shown" "$(cat out.txt)" "/bin/ls: x86_64"
    expect_contains "...the bad one named" "$(cat err.txt)" "f.c"
}

part_merge() {
    report s1.json 1 "" 1 3
    report s3.json 1 "" 3 3
    report s2.json 1 "" 2 3
    report t2.json 1 "" 2 2
    expect_refusal "a missing shard" "shard 2 of 3 is missing" "$EMURUN" report merge -o m.json s1.json s3.json
    [ ! -e m.json ] && ok "nothing written" || not_ok "m.json written anyway"
    expect_refusal "a shard twice" "shard 1 of 3 is given twice" \
        "$EMURUN" report merge -o m.json s1.json s1.json s2.json s3.json
    expect_refusal "shards of different counts" "shards of different runs" \
        "$EMURUN" report merge -o m.json s1.json t2.json
    "$EMURUN" report merge -o m.json s3.json s1.json s2.json >/dev/null &&
        ok "all three shards merge" || not_ok "all three shards did not merge"
}

part_logs() {
    cat >p.json <<'JSON'
{"name": "p", "steps": [
  {"name": "a/b", "argv": ["echo", "slash"]},
  {"name": "a_b", "argv": ["echo", "underscore"]},
  {"name": "a b", "argv": ["echo", "space"]}]}
JSON
    "$EMURUN" run p.json -q --report r.json --log-dir logs >/dev/null 2>&1 || true
    expect_eq "three steps, three logs" 3 "$(ls logs | wc -l)"
    for word in slash underscore space; do
        expect_eq "the $word step's log holds its own output" 1 "$(cat logs/* | grep -c "^$word\$")"
    done
    cp p.json p.orig
    expect_refusal "--report equal to the pipeline" "it is the pipeline file" \
        "$EMURUN" run p.json --report ./p.json --log-dir logs
    cmp -s p.json p.orig && ok "the pipeline is intact" || not_ok "the pipeline was overwritten"
    expect_refusal "--report equal to a step log" "it is the log of step \"a_b\"" \
        "$EMURUN" run p.json --report logs/a_b.log --log-dir logs
    expect_refusal "--junit equal to --report" "it is also the output" \
        "$EMURUN" run p.json --report r.json --junit r.json --log-dir logs
}

part_fullfs() {
    need_userns_mount size=16k || return 0
    mkdir full
    printf '{"name": "p", "steps": [{"name": "big", "argv": ["%s", "200000"]}]}\n' \
        "$EMURUN_HELPER_DIR/print_bytes" >p.json
    rc=0
    unshare -rm sh -c 'mount -t tmpfs -o size=16k t full && exec "$@"' sh \
        "$EMURUN" run p.json -q --report r.json --log-dir full >out.txt 2>err.txt || rc=$?
    expect_eq "a step whose log hit a full disk fails the run" 1 "$rc"
    if python3 -c 'import json; s = json.load(open("r.json"))["steps"][0]; assert s["status"] == "failed", s; assert "its log is incomplete" in s["message"] and "No space left" in s["message"], s' 2>/dev/null; then
        ok "the report says the log is incomplete"
    else
        not_ok "report: $(head -c 500 r.json 2>&1)"
    fi
}

# An output or log directory emurun could not write in was found out after every step had run
# (the report lost, no JUnit, no table) or failed every step: now refused before anything runs.
part_outputs() {
    printf '{"name": "p", "steps": [{"name": "a", "argv": ["touch", "ran"]}]}\n' >p.json
    expect_refusal "--report in a missing directory" \
        "output $T/nonexistent/dir/r.json: its directory $T/nonexistent/dir does not exist" \
        "$EMURUN" run p.json --report "$T/nonexistent/dir/r.json" --junit j.xml --markdown m.md
    [ ! -e j.xml ] && [ ! -e m.md ] && ok "no other output written" || not_ok "an output was written"
    echo text >file
    expect_refusal "--junit below a regular file" "output file/j.xml: file is not a directory" \
        "$EMURUN" run p.json --report r.json --junit file/j.xml
    expect_refusal "--log-dir below a device" \
        "log directory /dev/null/x: /dev/null is not a directory (choose a log directory emurun can write to (--log-dir))" \
        "$EMURUN" run p.json --report r.json --log-dir /dev/null/x
    expect_refusal "--log-dir below a regular file" "log directory file/logs/x: file is not a directory" \
        "$EMURUN" run p.json --report r.json --log-dir file/logs/x
    expect_refusal "--log-dir naming a regular file" "log directory file: it is not a directory" \
        "$EMURUN" run p.json --report r.json --log-dir file
    [ ! -e ran ] && [ ! -e r.json ] && ok "nothing ran, nothing written" ||
        not_ok "a step ran or a report was written before the refusal"
}

# need_userns_mount OPTS: a tmpfs with OPTS can be mounted in a user namespace (unshare -rm),
# else the part skips (false).
need_userns_mount() {
    command -v unshare >/dev/null && unshare -rm sh -c "mount -t tmpfs -o $1 t /mnt" 2>/dev/null &&
        return 0
    skip_part "no user namespace with mounts here (unshare -rm)"
    return 1
}

# As root, access(2) grants writing in a mode 0555 directory; a read-only file system refuses
# root too, and user namespaces give one without privileges.
part_readonly() {
    need_userns_mount ro || return 0
    mkdir ro
    printf '{"name": "p", "steps": [{"name": "a", "argv": ["touch", "%s/ran"]}]}\n' "$T" >p.json
    inside_ro() { unshare -rm sh -c 'mount -t tmpfs -o ro t ro && exec "$@"' sh "$@"; }
    expect_refusal "--log-dir on a read-only file system" \
        "log directory ro: cannot write in it: Read-only file system" \
        inside_ro "$EMURUN" run p.json --report r.json --log-dir ro
    expect_refusal "--log-dir to create on a read-only file system" \
        "log directory ro/logs: cannot create it in ro: Read-only file system" \
        inside_ro "$EMURUN" run p.json --report r.json --log-dir ro/logs
    expect_refusal "--markdown on a read-only file system" \
        "output ro/m.md: cannot write in ro: Read-only file system" \
        inside_ro "$EMURUN" run p.json --report r.json --log-dir logs --markdown ro/m.md
    [ ! -e ran ] && [ ! -e r.json ] && ok "nothing ran, nothing written" ||
        not_ok "a step ran or a report was written before the refusal"
}

# The report's file system fills up during the run: the other outputs and the table still come,
# then exit 125 naming the report; no part of a report is left behind.
part_late_write() {
    need_userns_mount size=16k || return 0
    mkdir full
    cat >p.json <<'JSON'
{"name": "p", "steps": [{"name": "fill", "argv": ["dd", "if=/dev/zero", "of=full/fill", "bs=1k",
  "count=64", "status=none"]}, {"name": "ok", "argv": ["true"]}]}
JSON
    rc=0
    # The tmpfs lives as long as the namespace: what is left in it is listed before it goes.
    unshare -rm sh -c 'mount -t tmpfs -o size=16k t full || exit 99; "$@"; rc=$?
        ls -A full >left.txt; exit $rc' sh \
        "$EMURUN" run p.json -q --report full/r.json --junit j.xml --markdown m.md \
        --log-dir logs >out.txt 2>err.txt || rc=$?
    expect_eq "a report that cannot be written at the end: exit 125" 125 "$rc"
    expect_contains "the error names the report" "$(cat err.txt)" "full/r.json"
    expect_contains "the error says why" "$(cat err.txt)" "No space left on device"
    expect_contains "the table is printed" "$(cat out.txt)" "fill"
    [ -s j.xml ] && [ -s m.md ] && ok "JUnit and Markdown written" || not_ok "JUnit or Markdown missing"
    expect_contains "the Markdown has the run" "$(cat m.md)" "fill"
    expect_eq "no report line for a report not written" 0 "$(grep -c '^report:' out.txt || true)"
    expect_eq "no part of a report left on the full file system" "fill" "$(cat left.txt)"
}

part_multiplier() {
    printf '{"name": "p", "steps": [{"name": "a", "argv": ["touch", "ran"]}]}\n' >p.json
    for m in 1e308 inf nan 0 -2; do
        expect_refusal "--timeout-multiplier $m" "expected a number from 0 (exclusive) to 1000" \
            "$EMURUN" run p.json --timeout-multiplier "$m"
    done
    [ ! -e ran ] && ok "nothing ran" || not_ok "a step ran"
}

part_sandbox_host() {
    host=$(uname -m)
    if ! command -v unshare >/dev/null ||
        ! unshare --user --map-root-user --mount sh -c \
            'mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc' 2>/dev/null; then
        skip_part "no private binfmt_misc here (kernel < 6.7 or user namespaces off)"
        return
    fi
    rc=0
    "$EMURUN" sandbox --arch "$host" -- sh -c 'echo inside' >out.txt 2>err.txt || rc=$?
    expect_eq "sandbox --arch $host (the host's) runs the command" "0 inside" "$rc $(cat out.txt)"
    expect_contains "and says why nothing was registered" "$(cat err.txt)" "runs natively here"
}

part_small() {
    printf '{"name": "p", "steps": [{"name": "t", "kind": "test", "argv": ["touch", "ran"]}]}\n' >p.json
    for n in 0 -1 100000; do
        expect_refusal "--matrix $n" "matrix of $n shards" "$EMURUN" run p.json --matrix "$n"
    done
    expect_refusal "--threshold nan" "flag rule baseline factor" "$EMURUN" run p.json --threshold nan
    expect_refusal "--threshold -1 names its flag" "got -1 (--threshold, e.g. 10)" \
        "$EMURUN" run p.json --threshold -1
    expect_refusal "--threshold 2e9 gives the bound" "expected a number > 0 and <= 1e9, got 2000000000" \
        "$EMURUN" run p.json --threshold 2e9
    local rc=0
    "$EMURUN" run p.json --threshold '' >out.txt 2>err.txt || rc=$?
    expect_eq "--threshold '': a usage error" 2 "$rc"
    expect_contains "...saying the value is empty, not that it is 0" "$(cat err.txt)" \
        "--threshold: an empty value, not a number"
    rc=0; "$EMURUN" report show --threshold 5 p.json >out.txt 2>err.txt || rc=$?
    expect_eq "report show --threshold without --baseline: a usage error, not ignored" 2 "$rc"
    expect_contains "...naming what it needs" "$(cat err.txt)" "--baseline"
    expect_refusal "--job-limit-share 0 names its flag and unit" \
        "flag rule job limit share: expected a fraction in (0, 1], got 0 (--job-limit-share, in percent" \
        "$EMURUN" run p.json --job-limit-share 0
    expect_refusal "-j 0 names the option" "--jobs 0: must be at least 1" "$EMURUN" run p.json -j 0
    expect_refusal "--jobs -3 names the option" "--jobs -3: must be at least 1" \
        "$EMURUN" run p.json --jobs -3
    expect_refusal "--grace -1s names the option" "--grace: expected a duration like \"90s\", got \"-1s\"" \
        "$EMURUN" run p.json --grace -1s
    expect_refusal "--job-limit 6x names the option" "--job-limit: expected a duration" \
        "$EMURUN" run p.json --job-limit 6x
    [ ! -e ran ] && ok "nothing ran" || not_ok "a step ran"
    expect_refusal "shim list of a dir that is not there" \
        "shim dir $T/nonexistent: no such directory (" "$EMURUN" shim list --dir "$T/nonexistent"
    expect_refusal "shim list --json of a dir that is not there" "no such directory" \
        "$EMURUN" shim list --json --dir "$T/nonexistent"
    report both.json 1 ', "signal": 9'
    expect_refusal "exit_code and signal" "has both exit_code and signal" "$EMURUN" report show both.json
    mkfifo fifo
    expect_refusal "inspect a FIFO" "a FIFO" timeout 10 "$EMURUN" inspect fifo
    expect_refusal "run a FIFO" "a FIFO" timeout 10 "$EMURUN" run fifo
    printf '{"name": "p", "steps": [{"name": "a", "argv": ["true"]}]}\n' >ok.json
    rc=0
    GITHUB_STEP_SUMMARY=fifo timeout 20 "$EMURUN" run ok.json -q --report ok-r.json >/dev/null 2>err.txt || rc=$?
    expect_eq "GITHUB_STEP_SUMMARY naming a FIFO: no hang, a warning" "0 1" \
        "$rc $(grep -c 'warning: GITHUB_STEP_SUMMARY: ' err.txt)"
    expect_refusal "--report naming a FIFO" "it is a FIFO" timeout 10 "$EMURUN" run ok.json --report fifo
    # The launcher (bin/emurun) copied under another name: no shim record, no emurun-cli beside.
    mkdir -p bin && cp "$EMURUN" bin/gcc
    expect_refusal "emurun under another name, without a shim config" \
        "bin/gcc: not a shim (no .emurun-shims/gcc.rec beside it)" bin/gcc --version
    # A missing report: emurun's own message and 125 everywhere (CLI11 said "File does not
    # exist" with exit 2 for compare and merge).
    report r.json 0 ''
    for args in "report show missing.json" "report compare r.json missing.json" \
        "report compare missing.json r.json" "report merge -o m.json r.json missing.json" \
        "run p.json --previous missing.json" "run p.json --baseline missing.json"; do
        # shellcheck disable=SC2086
        expect_refusal "a missing file: $args" "open missing.json failed: No such file or directory" \
            "$EMURUN" $args
    done
    # Files far past any real report or pipeline (sparse): refused before they are read.
    truncate -s 4G huge.json
    for args in "report show huge.json" "report compare r.json huge.json" \
        "report merge -o m.json r.json huge.json" "run p.json --previous huge.json" \
        "run p.json --baseline huge.json"; do
        # shellcheck disable=SC2086
        expect_refusal "a 4 GiB report: $args" \
            "read huge.json: file is 4294967296 bytes, more than the limit of 268435456" \
            timeout 10 "$EMURUN" $args
    done
    expect_refusal "a 4 GiB pipeline" \
        "read huge.json: file is 4294967296 bytes, more than the limit of 67108864" \
        timeout 10 "$EMURUN" run huge.json
    rm -f huge.json
    printf '{"name": "p", "steps": [{"name": "a\\nb", "argv": ["true"]}]}\n' >nl.json
    expect_refusal "a newline in a step name" "contains a control character (U+000A)" "$EMURUN" run nl.json
}

run_parts numbers utf8 merge logs fullfs outputs readonly late_write multiplier sandbox_host small
finish
