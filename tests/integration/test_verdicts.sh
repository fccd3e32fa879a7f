#!/bin/bash
# ctest-tier: quick
# ctest-parts: inspect build_tree baseline dashdash sysroot_errors sysroot_enospc sysroot_full_cache junit_missing
# Verdicts that must be right (issue 26): inspect calls a shared object without an interpreter a
# shared library; the build tree's bin/ runs the docs' examples (emurun sysroot finds
# emurun-sysroot); a native baseline joined after the run (report show|compare --baseline);
# emurun's options anywhere before `--`; emurun-sysroot tells a 404 from an unreachable archive
# from a failure of this machine (a fake apt-get on PATH plays the archive); a test step whose
# JUnit report never appears is flagged junit_missing, or failed with "junit_missing": "fail".
. "$(dirname "$0")/lib/common.sh"

part_inspect() {
    command -v aarch64-linux-gnu-gcc >/dev/null ||
        { skip_part "no aarch64-linux-gnu-gcc (apt-get install gcc-aarch64-linux-gnu)"; return; }
    printf '#include <math.h>\ndouble f(double x) { return sqrt(x) + 1; }\n' >"$T/lib.c"
    aarch64-linux-gnu-gcc -shared -fPIC -o "$T/libf.so" "$T/lib.c" -lm
    local out rc=0
    out=$("$EMURUN" inspect --sysroot /usr/aarch64-linux-gnu "$T/libf.so") || rc=$?
    expect_contains "a .so without an interpreter: shared library" "$out" "DYN, shared library"
    case $out in *static*) not_ok "a .so is not static: $out" ;; *) ok "not called static" ;; esac
    expect_contains "its needed libraries listed" "$out" "libm.so.6 => /usr/aarch64-linux-gnu/"
    out=$("$EMURUN" inspect --json --sysroot /usr/aarch64-linux-gnu "$T/libf.so") || true
    expect_contains "json linkage" "$out" '"linkage": "shared library"'
    expect_contains "json: not static" "$out" '"static": false'
    # A --sysroot that is not there is bad input, as exec takes it, not a sysroot without
    # libraries (review finding, issue 26).
    rc=0; out=$("$EMURUN" inspect --sysroot "$T/no-such-sysroot" "$T/libf.so" 2>&1) || rc=$?
    expect_eq "inspect --sysroot of a missing dir: exit 125" 125 "$rc"
    expect_contains "it names the dir and why" "$out" "sysroot $T/no-such-sysroot: no such directory"
    rc=0; out=$("$EMURUN" inspect --json --sysroot "$T/lib.c" "$T/libf.so" 2>&1) || rc=$?
    expect_eq "inspect --json --sysroot of a file: exit 125" 125 "$rc"
    expect_contains "it says not a directory" "$out" "sysroot $T/lib.c: not a directory"
    printf 'int main(void) { return 0; }\n' >"$T/p.c"
    aarch64-linux-gnu-gcc -static -o "$T/p-static" "$T/p.c"
    out=$("$EMURUN" inspect "$T/p-static" 2>&1) || true
    expect_contains "a static program is still static" "$out" ", static"
    aarch64-linux-gnu-gcc -static-pie -o "$T/p-static-pie" "$T/p.c"
    out=$("$EMURUN" inspect "$T/p-static-pie" 2>&1) || true
    expect_contains "a static-pie (DYN, no interpreter, needs nothing) is static" "$out" "DYN, static"
}

part_build_tree() {
    local bin
    bin=$(dirname "$EMURUN")
    [ -x "$bin/emurun-sysroot" ] && ok "bin/ holds emurun-sysroot" || not_ok "no $bin/emurun-sysroot"
    cmp -s "$bin/emurun-sysroot" "$EMURUN_SOURCE_DIR/tools/emurun-sysroot" &&
        ok "bin/emurun-sysroot is the current script" || not_ok "bin/emurun-sysroot differs from tools/"
    for h in emurun-shim emurun-supervisor; do
        [ -x "$bin/$h" ] && ok "bin/ holds $h" || not_ok "no $bin/$h"
    done
    # emurun sysroot runs the script beside it (PATH without it): its own help, not "No such file".
    local out rc=0
    out=$(env PATH=/usr/bin:/bin "$EMURUN" sysroot fetch --arch aarch64 --dir "$T/sr" \
        --mirror http://127.0.0.1:9/debian --cache "$T/apt" libc6 2>&1) || rc=$?
    case $out in *"No such file"*) not_ok "emurun sysroot from the build tree: $out" ;;
        *) ok "emurun sysroot from the build tree runs emurun-sysroot" ;; esac
    expect_eq "unreachable archive: exit 3" 3 "$rc"
}

# A report of one emulated step with one test, and a native one (separate jobs).
write_reports() {
    python3 - "$T" <<'EOF'
import json, sys
t = sys.argv[1]
def rep(emulation, wall, tests):
    return {"schema_version": 1, "pipeline": "p", "started": "2026-01-01T00:00:00Z", "wall": wall,
            "host_arch": "x86_64", "shard": {"index": 1, "count": 1}, "job_limit": None,
            "interrupted_by": None, "flags": [],
            "steps": [{"name": "test", "kind": "test", "arch": "aarch64",
            "emulation": emulation, "status": "passed", "exit_code": 0, "signal": None,
            "wall": wall, "user": wall / 2, "sys": 0, "max_rss_kib": 1, "budget": None,
            "baseline_wall": None, "log": "", "message": "", "flags": [], "tests": tests}]}
emu = rep("exec", 30, [{"name": "t", "classname": "c", "time": 2, "status": "passed", "message": ""}])
nat = rep("native", 2, [{"name": "t", "classname": "c", "time": 0.1, "status": "passed", "message": ""}])
json.dump(emu, open(t + "/emulated.json", "w"))
emu["threshold"] = 20 # a run with --threshold 20 records it
json.dump(emu, open(t + "/emulated-20.json", "w"))
json.dump(nat, open(t + "/native.json", "w"))
nat["pipeline"] = "other"
json.dump(nat, open(t + "/namesake-native.json", "w")) # another pipeline, a step named "test"
nat["steps"][0]["name"] = "unit"
json.dump(nat, open(t + "/other-native.json", "w"))
json.dump({"name": "p", "steps": [{"name": "test", "argv": ["true"]}]}, open(t + "/p.json", "w"))
EOF
}

part_baseline() {
    write_reports
    local out
    out=$("$EMURUN" report show "$T/emulated.json")
    case $out in *15.0x*) not_ok "a factor without a baseline" ;; *) ok "no baseline: no factor" ;; esac
    out=$("$EMURUN" report show --baseline "$T/native.json" "$T/emulated.json")
    expect_contains "joined baseline: the factor" "$out" "15.0x"
    expect_contains "joined baseline: the flag" "$out" "flag baseline: test: 15.0x the native baseline's wall time"
    expect_contains "joined baseline: the slow test" "$out" "slow"
    out=$("$EMURUN" report show --format json --baseline "$T/native.json" "$T/emulated.json")
    expect_contains "json: baseline_wall" "$out" '"baseline_wall": 2'
    out=$("$EMURUN" report compare --baseline "$T/native.json" "$T/emulated.json" "$T/emulated.json")
    expect_contains "compare: both factors" "$out" "x baseline: test: 15.0x -> 15.0x"
    local rc=0
    out=$("$EMURUN" report show --baseline "$T/emulated.json" "$T/emulated.json" 2>&1) || rc=$?
    expect_eq "an emulated report is no baseline: 125" 125 "$rc"
    expect_contains "...said why" "$out" "none of its steps ran natively"
    # The run's own --threshold (recorded in its report) is the joined baseline's; a flag wins.
    out=$("$EMURUN" report show --baseline "$T/native.json" "$T/emulated-20.json")
    expect_contains "threshold 20: the factor" "$out" "15.0x"
    case $out in *"flag baseline"*) not_ok "threshold 20 recorded by the run: 15x flagged: $out" ;;
        *) ok "threshold 20 recorded by the run: 15x not flagged" ;; esac
    out=$("$EMURUN" report show --threshold 12 --baseline "$T/native.json" "$T/emulated-20.json")
    expect_contains "--threshold 12 overrides the run's" "$out" "15.0x the native baseline's wall time (2.0s), over 12x"
    out=$("$EMURUN" report show --format json --baseline "$T/native.json" "$T/emulated-20.json")
    expect_contains "json: the threshold kept" "$out" '"threshold": 20'
    # The native run of another pipeline matches no step: refused, not joined into no factors.
    rc=0; out=$("$EMURUN" report show --baseline "$T/other-native.json" "$T/emulated.json" 2>&1) || rc=$?
    expect_eq "a baseline with no step in common: refused" 125 "$rc"
    expect_contains "...saying why" "$out" "none of the report's emulated steps has a native step of the same template or name"
    expect_contains "...and whose it is" "$out" "is a run of the pipeline \"other\", this one of \"p\""
    # Its step has the same name as ours: joined, but said (a native pipeline of its own, as the
    # demo's, or a mistake), in report show and in run alike.
    rc=0; out=$("$EMURUN" report show --baseline "$T/namesake-native.json" "$T/emulated.json" 2>&1) || rc=$?
    expect_eq "a namesake step of another pipeline: joined" 0 "$rc"
    expect_contains "...with a warning naming both pipelines" "$out" \
        "warning: baseline $T/namesake-native.json is a run of the pipeline \"other\", this one of \"p\": its steps are matched"
    rc=0; out=$(cd "$T" && "$EMURUN" run --baseline "$T/namesake-native.json" "$T/p.json" 2>&1) || rc=$?
    expect_eq "run --baseline of another pipeline: runs" 0 "$rc"
    expect_contains "...the same warning" "$out" "is a run of the pipeline \"other\", this one of \"p\": its steps are matched"
    # Comparing the native run with the emulated one measures emulation: said, with the way.
    out=$("$EMURUN" report compare "$T/native.json" "$T/emulated.json" 2>&1)
    expect_contains "compare native vs emulated: a warning" "$out" \
        "warning: $T/native.json is a native run and $T/emulated.json an emulated one: the changes below are emulation's cost"
    expect_contains "...and the command for factors" "$out" "emurun report show --baseline $T/native.json $T/emulated.json"
}

part_dashdash() {
    local out rc=0
    # A fake arm64 root without gcc: accelerating it is refused before anything starts, so
    # `root run DIR --accelerate -- CMD` shows whether --accelerate was read as emurun's option
    # (the refusal) or taken as the command (it would try to run it).
    mkdir -p "$T/r/var/lib/dpkg" "$T/r/bin" "$T/r/usr/bin"
    echo arm64 >"$T/r/var/lib/dpkg/arch"
    : >"$T/r/var/lib/dpkg/status" # a Debian root, so --accelerate asks for its gcc
    touch "$T/r/bin/sh"
    if command -v qemu-aarch64-static >/dev/null; then
        out=$("$EMURUN" root run "$T/r" --accelerate -- true 2>&1) || rc=$?
        expect_eq "root run DIR --accelerate -- true: refused before entering" 125 "$rc"
        expect_contains "...because --accelerate was read: the root has no gcc" "$out" "has no gcc"
        rc=0; out=$("$EMURUN" root run "$T/r" --cwd /x --accelerate=gcc,ld,ar,nm,ranlib --env A=1 -- true 2>&1) || rc=$?
        expect_contains "options with values after DIR" "$out" "has no gcc"
        # Without a '--': the options right after DIR are emurun's too (a command never starts
        # with one), up to the command's first word.
        rc=0; out=$("$EMURUN" root run "$T/r" --cwd /x --accelerate true --accelerate 2>&1) || rc=$?
        expect_contains "root run DIR --accelerate CMD (no --): read as emurun's" "$out" "has no gcc"
    else
        skip_part "no qemu-aarch64-static (apt-get install qemu-user-static)"
    fi
    # Requests refused before the root is looked at (no emulator needed).
    rc=0; out=$("$EMURUN" root run --allow-revision-mismatch "$T/r" -- true 2>&1) || rc=$?
    expect_contains "--allow-revision-mismatch without --accelerate: said, not silently ignored" \
        "$out" "warning: --allow-revision-mismatch without --accelerate allows nothing"
    rc=0; out=$("$EMURUN" root run "$T/r" --accelerate=ld -- true 2>&1) || rc=$?
    expect_eq "--accelerate=ld (binutils without gcc): refused" 125 "$rc"
    expect_contains "...saying gcc must come along" "$out" "gcc would stay emulated"
    expect_contains "...in the CLI's spelling" "$out" \
        "or accelerate gcc too, e.g. gcc,g++,ld,ar,nm,ranlib, or the default list (toolchain) (--accelerate))"
    rc=0; out=$("$EMURUN" root run "$T/r" --bogus true 2>&1) || rc=$?
    expect_eq "root run DIR --bogus CMD: a usage error, not run as the command" 2 "$rc"
    expect_contains "...naming it" "$out" "unknown option '--bogus' (it stands after the root's directory"
    rc=0; out=$("$EMURUN" root run "$T/r" make --cwd /x -- true 2>&1) || rc=$?
    expect_eq "an option after the command began: usage error" 2 "$rc"
    # The option quoted whole, with its value, and the two command lines it may have meant.
    expect_contains "...quoting it with its value" "$out" "the option --cwd /x comes after the command (make) and before '--'"
    expect_contains "...saying where it belongs" "$out" \
        "put it before the command: emurun root run $T/r --cwd /x make -- true;"
    expect_contains "...or the command's own" "$out" \
        "start the command after '--': emurun root run $T/r -- make --cwd /x -- true"
    rc=0; out=$("$EMURUN" exec /bin/true --cpu max -- x 2>&1) || rc=$?
    expect_eq "exec PROG --cpu max -- x: usage error" 2 "$rc"
    expect_contains "...saying where it belongs" "$out" "the option --cpu max comes after the command"
    expect_contains "...exactly" "$out" "put it before the command: emurun exec --cpu max /bin/true -- x;"
    rc=0; out=$("$EMURUN" sandbox true --arch=aarch64 -- x 2>&1) || rc=$?
    expect_eq "sandbox CMD --arch=A -- x: usage error" 2 "$rc"
    expect_contains "...saying where it belongs" "$out" "the option --arch=aarch64 comes after the command (true)"
    expect_contains "...exactly" "$out" "emurun sandbox --arch=aarch64 true -- x;"
    rc=0; out=$("$EMURUN" sandbox true --env 'A=a b' -- x 2>&1) || rc=$?
    expect_contains "a value with a space is quoted" "$out" "emurun sandbox --env 'A=a b' true -- x;"
    expect_contains "...once, not in quotes of its own" "$out" "the option --env 'A=a b' comes after the command (true)"
    # The option's value would be the '--': moved with a VALUE to fill in, not with the command.
    rc=0; out=$("$EMURUN" exec /bin/true --cpu -- x 2>&1) || rc=$?
    expect_eq "exec PROG --cpu -- x: usage error" 2 "$rc"
    expect_contains "...without its value" "$out" "the option --cpu comes after the command (/bin/true) and before '--', without its value"
    expect_contains "...a VALUE to fill in" "$out" "put it before the command, with its value: emurun exec --cpu VALUE /bin/true -- x;"
    # Without a later --, the words after the command are the command's, as before.
    rc=0; out=$("$EMURUN" exec -- /bin/echo --cpu max -- x 2>&1) || rc=$?
    expect_eq "exec -- CMD --cpu -- x: the command's words" "--cpu max -- x" "$out"
    rc=0; out=$("$EMURUN" exec /bin/echo --cpu max 2>&1) || rc=$?
    expect_eq "exec CMD --cpu max: the command's words" "--cpu max" "$out"
}

# A fake apt-get / apt-cache for emurun-sysroot: FAKE_APT says how downloads fail.
fake_apt() {
    mkdir -p "$T/fake"
    cat >"$T/fake/apt-get" <<'EOF'
#!/bin/bash
lists="" ; for a in "$@"; do case $a in Dir::State::Lists=*) lists=${a#*=} ;; esac; done
case " $* " in
*" update "*)
    mkdir -p "$lists"; : >"$lists/127.0.0.1:9_debian_dists_bookworm_main_source_Sources"; exit 0 ;;
*" --print-uris "*)
    echo "'http://127.0.0.1:9/debian/pool/main/s/simplejson/simplejson_3.18.3-1.dsc' simplejson_3.18.3-1.dsc 1 SHA256:0"; exit 0 ;;
*" --download-only "*)
    case $FAKE_APT in
    404) echo "Err:1 http://127.0.0.1:9/debian simplejson 3.18.3-1 (tar)"
         echo "  404  Not Found [IP: 127.0.0.1 9]"
         echo "E: Failed to fetch http://127.0.0.1:9/debian/pool/main/s/simplejson/simplejson_3.18.3.orig.tar.gz  404  Not Found [IP: 127.0.0.1 9]" ;;
    net) echo "E: Failed to fetch http://127.0.0.1:9/x  Could not connect to 127.0.0.1:9 (127.0.0.1). - connect (111: Connection refused)" ;;
    eagain) echo "E: Method http has died unexpectedly!"; echo "E: Sub-process http returned an error code (100): fork: Resource temporarily unavailable" ;;
    esac
    exit 100 ;;
esac
exit 0
EOF
    cat >"$T/fake/apt-cache" <<'EOF'
#!/bin/bash
printf 'Package: simplejson\nVersion: 3.18.3-1\n\nPackage: simplejson\nVersion: 3.17.0-1\n'
EOF
    chmod +x "$T/fake/apt-get" "$T/fake/apt-cache"
}

part_sysroot_errors() {
    fake_apt
    local kind code out rc
    for kind in 404:4 net:3 eagain:5; do
        code=${kind#*:} kind=${kind%%:*} rc=0
        out=$(FAKE_APT=$kind PATH="$T/fake:$PATH" "$EMURUN_SOURCE_DIR/tools/emurun-sysroot" source \
            --mirror http://127.0.0.1:9/debian --suite bookworm --cache "$T/apt-$kind" \
            --dir "$T/src-$kind" simplejson 2>&1) || rc=$?
        expect_eq "source, download $kind: exit $code" "$code" "$rc"
        case $kind in
        404) expect_contains "404: said so" "$out" "not in the archive (404)"
             expect_contains "404: another version offered" "$out" "simplejson=3.17.0-1"
             case $out in *"simplejson=3.18.3-1"*) not_ok "404: the hint offers the version that failed" ;;
                 *) ok "404: the failed version is not offered" ;; esac ;;
        net) expect_contains "unreachable: said so" "$out" "cannot be reached" ;;
        eagain) expect_contains "EAGAIN: this machine, not the archive" "$out" "failed on this machine"
                case $out in *"cannot be reached"*) not_ok "EAGAIN reported as the network" ;; *) ok "EAGAIN not blamed on the network" ;; esac ;;
        esac
    done
}

# A full disk while unpacking into --dir is this machine's failure (5), as a full disk while
# downloading is: a fake archive (apt-get) and a fake dpkg -x that finds no space.
part_sysroot_enospc() {
    mkdir -p "$T/fake-enospc"
    cat >"$T/fake-enospc/apt-get" <<'EOF'
#!/bin/bash
lists="" archives=""
for a in "$@"; do
    case $a in Dir::State::Lists=*) lists=${a#*=} ;; Dir::Cache::Archives=*) archives=${a#*=} ;; esac
done
case " $* " in
*" update "*) mkdir -p "$lists"; : >"$lists/127.0.0.1:9_debian_dists_bookworm_main_binary-arm64_Packages" ;;
*" -s install "*) echo "Inst libfull (1.0-1 Debian:12 [arm64])" ;;
*" --download-only "*) mkdir -p "$archives"; : >"$archives/libfull_1.0-1_arm64.deb" ;;
esac
exit 0
EOF
    cat >"$T/fake-enospc/dpkg" <<'EOF'
#!/bin/bash
[ "$1" = -x ] || exec /usr/bin/dpkg "$@"
echo "dpkg-deb: error: failed to write: No space left on device" >&2
exit 2
EOF
    chmod +x "$T/fake-enospc/apt-get" "$T/fake-enospc/dpkg"
    local out rc=0
    out=$(PATH="$T/fake-enospc:$PATH" "$EMURUN_SOURCE_DIR/tools/emurun-sysroot" fetch --arch arm64 \
        --mirror http://127.0.0.1:9/debian --suite bookworm --cache "$T/apt-enospc" \
        --dir "$T/sr-enospc" libfull 2>&1) || rc=$?
    expect_eq "fetch, no space left unpacking: exit 5 (this machine)" 5 "$rc"
    expect_contains "...said so" "$out" "no space left on device in $T/sr-enospc (unpacking libfull)"
}

# The cache's file system fills up while apt downloads: apt's methods then wait forever. The
# fake apt-get fills a 2 MiB tmpfs (in a private mount namespace) and waits as apt does;
# emurun-sysroot stops it and says why, exit 5. Its --help to a full stdout is exit 5 too.
part_sysroot_full_cache() {
    local out rc=0
    out=$("$EMURUN_SOURCE_DIR/tools/emurun-sysroot" --help 2>&1 >/dev/full) || rc=$?
    expect_eq "--help >/dev/full: exit 5 (this machine)" 5 "$rc"
    expect_contains "...naming the errno" "$out" "cannot write the help to stdout: No space left on device"
    unshare -m true 2>/dev/null || { skip_part "no mount namespace here (unshare -m)"; return; }
    mkdir -p "$T/fake-hang" "$T/small"
    cat >"$T/fake-hang/apt-get" <<'EOF'
#!/bin/bash
for a in "$@"; do case $a in Dir::State::Lists=*) lists=${a#*=} ;; esac; done
mkdir -p "$lists/partial"
head -c 8M /dev/zero >"$lists/partial/big" 2>/dev/null
exec sleep 300
EOF
    chmod +x "$T/fake-hang/apt-get"
    rc=0
    out=$(timeout 60 unshare -m sh -c 'mount -t tmpfs -o size=2m tmpfs "$1" && shift && exec "$@"' \
        sh "$T/small" env PATH="$T/fake-hang:$PATH" "$EMURUN_SOURCE_DIR/tools/emurun-sysroot" \
        fetch --arch arm64 --mirror http://127.0.0.1:9/debian --suite bookworm \
        --cache "$T/small/c" --dir "$T/sr-small" zlib1g 2>&1) || rc=$?
    expect_eq "a full cache disk while apt waits: exit 5" 5 "$rc"
    expect_contains "...said so" "$out" "no space left on device in $T/small/c/arm64"
    pgrep -f "$T/fake-hang" >/dev/null && not_ok "the waiting apt-get was left running" ||
        ok "the waiting apt-get was stopped"
    # SIGTERM while apt waits: 143 at once, apt stopped with it (errexit in the trap once made
    # it exit 1 with apt's status).
    PATH="$T/fake-hang:$PATH" "$EMURUN_SOURCE_DIR/tools/emurun-sysroot" fetch --arch arm64 \
        --mirror http://127.0.0.1:9/debian --suite bookworm --cache "$T/term-cache" \
        --dir "$T/sr-term" zlib1g >/dev/null 2>&1 &
    local pid=$! t0=$SECONDS
    sleep 1
    kill -TERM "$pid"
    rc=0; wait "$pid" || rc=$?
    expect_eq "SIGTERM while apt runs: exit 143" 143 "$rc"
    [ $((SECONDS - t0)) -lt 10 ] && ok "...at once" || not_ok "...after $((SECONDS - t0)) s"
    sleep 0.2
    pgrep -f "$T/fake-hang" >/dev/null && not_ok "...apt-get left running" || ok "...apt-get stopped"
}


part_junit_missing() {
    command -v python3 >/dev/null || { skip_part "python3 needed to read the report"; return; }
    mkdir -p "$T/jm" && cd "$T/jm"
    cat >p.json <<'JSON'
{"name": "jm", "steps": [
  {"name": "silent", "kind": "test", "argv": ["true"], "junit": ["Testing/*.xml"]},
  {"name": "writes", "kind": "test", "shell": true, "junit": ["t.xml"],
   "argv": "echo '<testsuite><testcase name=\"a\"/></testsuite>' >t.xml"}]}
JSON
    local rc=0
    "$EMURUN" run p.json --report r.json >out.txt 2>err.txt || rc=$?
    expect_eq "a JUnit report that never appeared: a flag, the run still passes" 0 "$rc"
    expect_contains "...said in the table" "$(cat out.txt)" \
        "flag junit_missing: silent: no test results from Testing/*.xml"
    python3 - <<'PY' && ok "...in the report, on that step only" || not_ok "junit_missing in r.json"
import json
steps = {s["name"]: s for s in json.load(open("r.json"))["steps"]}
assert [f["rule"] for f in steps["silent"]["flags"]] == ["junit_missing"], steps["silent"]
assert steps["silent"]["status"] == "passed", steps["silent"]
assert steps["writes"]["flags"] == [] and len(steps["writes"]["tests"]) == 1, steps["writes"]
PY
    validate r.json p.json
    rc=0
    "$EMURUN" run p.json -q >/dev/null 2>&1 --fail-on-flag || rc=$?
    expect_eq "...and fails it with --fail-on-flag (3)" 3 "$rc"
    sed 's/"name": "jm",/"name": "jm", "defaults": {"junit_missing": "fail"},/' p.json >f.json
    rc=0
    "$EMURUN" run f.json --report rf.json >out.txt 2>err.txt || rc=$?
    expect_eq '"junit_missing": "fail": the step fails (1)' 1 "$rc"
    expect_contains "...saying why" "$(cat err.txt)" \
        'exited 0, but gave no test results from Testing/*.xml ("junit_missing": "fail")'
    validate rf.json f.json
}

run_parts inspect build_tree baseline dashdash sysroot_errors sysroot_enospc sysroot_full_cache junit_missing
finish
