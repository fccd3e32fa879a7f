#!/bin/bash
# ctest-tier: quick
# A reused step's log, unpacked into the test job's --log-dir (docs/guides/ci.md "Build once, test in many
# jobs"): written as a new file renamed over its name, never through a symlink there; a
# directory there replaced when empty, refused when not; an unpack that fails leaves no partial
# log and no --log-dir it made, exits 125 before any step runs and writes no report. On a full
# disk (a 200 KiB tmpfs as --log-dir, root only) the error says so and what to do.
# ctest-parts: links full
. "$(dirname "$0")/lib/common.sh"
for tool in tar python3; do
    command -v "$tool" >/dev/null || skip "$tool needed (archives, tampered archives)"
done
cd "$T"

# A build step whose log is ~350 KB (more than the tmpfs holds) and a test step.
mkdir src
cat > src/p.json <<'JSON'
{"name": "logs", "steps": [
  {"name": "build", "kind": "build", "shell": true,
   "argv": "mkdir -p build && echo built > build/out && seq 1 60000", "outputs": ["build"]},
  {"name": "t1", "kind": "test", "shell": true, "needs": ["build"], "argv": "test -f build/out"}
]}
JSON
checkout() { rm -rf "$1" && cp -r src "$1"; }
checkout job-build
(cd job-build && "$EMURUN" run p.json --pack ../build.tar --report ../build.json -q) \
    >build.out 2>&1 || { cat build.out; skip "the build job failed: nothing to unpack"; }

# unpack NAME ARGS...: the test job in a fresh checkout job-NAME; its exit code in $rc.
unpack() {
    local name=$1
    shift
    checkout "job-$name"
    (cd "job-$name" && "$EMURUN" run p.json --unpack ../build.tar --report ../"$name".json -q "$@") \
        >"$name.out" 2>&1 && rc=0 || rc=$?
}

part_links() {
    mkdir outside
    echo "keep me" >outside/victim.txt
    checkout job-link
    mkdir job-link/L
    ln -s "$T/outside/victim.txt" job-link/L/build.log
    (cd job-link && "$EMURUN" run p.json --unpack ../build.tar --log-dir L --report ../link.json -q) \
        >link.out 2>&1 && rc=0 || rc=$?
    expect_eq "a symlink at the log's name: the unpack passes" 0 "$rc"
    expect_eq "the file the symlink named is untouched" "keep me" "$(cat outside/victim.txt)"
    [ -f job-link/L/build.log ] && [ ! -L job-link/L/build.log ] &&
        ok "the log replaced the symlink" || not_ok "L/build.log is still a symlink"
    expect_eq "the log is the build's" 60000 "$(tail -n 1 job-link/L/build.log)"
    expect_eq "nothing else in the log dir" "build.log t1.log" "$(ls -A job-link/L | tr '\n' ' ' | sed 's/ $//')"

    checkout job-dir
    mkdir -p job-dir/L/build.log/inside
    (cd job-dir && "$EMURUN" run p.json --unpack ../build.tar --log-dir L --report ../dir.json -q) \
        >dir.out 2>&1 && rc=0 || rc=$?
    expect_eq "a non-empty directory at the log's name is refused with 125" 125 "$rc"
    expect_contains "it says what is there and what to do" "$(cat dir.out)" \
        "L/build.log is a directory, and not empty (a run fails the step whose log it is: open failed: Is a directory) (nothing was unpacked and no step ran; remove it, or choose another log directory (--log-dir))"
    [ ! -e job-dir/build ] && [ ! -e dir.json ] && ok "nothing unpacked, no report" ||
        not_ok "something was unpacked or a report written"
    rmdir job-dir/L/build.log/inside
    (cd job-dir && "$EMURUN" run p.json --unpack ../build.tar --log-dir L --report ../dir.json -q) \
        >dir.out 2>&1 && rc=0 || rc=$?
    expect_eq "an empty directory there is replaced, as a plain run replaces it" 0 "$rc"
    [ -f job-dir/L/build.log ] && ok "the log is a file" || not_ok "no log file"

    # An archive whose manifest lists the log it lacks: refused once the log dir was made.
    python3 - <<'PY'
import tarfile
with tarfile.open("build.tar") as src, tarfile.open("nolog.tar", "w", format=tarfile.GNU_FORMAT) as dst:
    for m in src.getmembers():
        if m.name != ".emurun-logs/build.log":
            dst.addfile(m, src.extractfile(m) if m.isfile() else None)
PY
    checkout job-nolog
    (cd job-nolog && "$EMURUN" run p.json --unpack ../nolog.tar --log-dir new/L --report ../nolog.json -q) \
        >nolog.out 2>&1 && rc=0 || rc=$?
    expect_eq "an archive without its listed log is refused with 125" 125 "$rc"
    expect_contains "it says why" "$(cat nolog.out)" "the archive holds no such file"
    [ ! -e job-nolog/new ] && ok "the refused unpack left no log dir" ||
        not_ok "it left $(find job-nolog/new)"
    [ ! -e job-nolog/build ] && [ ! -e nolog.json ] && ok "nothing unpacked, no report" ||
        not_ok "something was unpacked or a report written"
}

part_full() {
    mkdir full
    if ! mount -t tmpfs -o size=200k tmpfs full 2>mount.err; then
        skip_part "cannot mount a 200 KiB tmpfs (root needed): $(cat mount.err)"
        return
    fi
    unpack full --log-dir "$T/full/L"
    local left
    left=$(ls -A full)
    umount full
    expect_eq "a full --log-dir: refused with 125" 125 "$rc"
    expect_contains "it names the real cause" "$(cat full.out)" "No space left on device"
    expect_contains "and what to do" "$(cat full.out)" \
        "(nothing was unpacked and no step ran; free space in $T/full/L or choose another log directory (--log-dir))"
    expect_eq "no partial log, no log dir left on the full disk" "" "$left"
    [ ! -e job-full/build ] && [ ! -e full.json ] && ok "nothing unpacked, no report" ||
        not_ok "something was unpacked or a report written"
    [ -z "$(ls -A job-full | grep emurun-unpack || true)" ] && ok "no staging dir left" ||
        not_ok "a staging dir was left"
}

run_parts links full
finish
