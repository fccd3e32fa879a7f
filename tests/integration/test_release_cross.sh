#!/bin/bash
# ctest-tier: packaging
# ctest-parts: aarch64
# emurun for arm64 hosts (GitHub's arm64 runners): tools/release-cross aarch64 cross-builds the
# release tarball against a sysroot emurun fetches itself; the aarch64 emurun from it, unpacked
# and run under emulation (a private binfmt_misc table of the host emurun's sandbox makes this
# x86-64 machine an aarch64 host as far as execve is concerned), runs an s390x program with
# Debian's aarch64 build of qemu-s390x-static (nested emulation), and a pipeline whose steps are
# native to that host (aarch64), emulated (s390x, exec) and a host shell. Its doctor says why
# its own sandbox cannot work there: QEMU's user mode is multi-threaded, and unshare(2) refuses
# a user namespace to a multi-threaded process. The cross build stays in the build tree
# (build/release-aarch64, with its ~300 MB sysroot), so a second run only repacks it.
. "$(dirname "$0")/lib/common.sh"

part_aarch64() {
    command -v aarch64-linux-gnu-g++ >/dev/null || { skip_part "no aarch64-linux-gnu-g++"; return; }
    need_probe aarch64 || return 0
    need_probe s390x || return 0
    need_sandbox || return 0
    local tarball p=$T/prefix q=$T/qemu-arm64 f rc out
    tarball=$("$EMURUN_SOURCE_DIR/tools/release-cross" aarch64 2>"$T/cross.log") || {
        grep -q 'cannot be reached\|Temporary failure' "$T/cross.log" &&
            { skip_part "the Debian archive cannot be reached: $(grep -m1 'cannot be reached\|Temporary failure' "$T/cross.log")"; return; }
        not_ok "tools/release-cross aarch64 failed: $(tail -n 20 "$T/cross.log")"
        return
    }
    expect_eq "the tarball is named for aarch64" \
        "emurun-$("$EMURUN" --version | awk '{print $2}')-linux-aarch64.tar.gz" "$(basename "$tarball")"
    mkdir -p "$p" && tar -xzf "$tarball" --strip-components=1 -C "$p"
    for f in bin/emurun libexec/emurun/emurun-cli libexec/emurun/emurun-shim libexec/emurun/emurun-supervisor; do
        out=$(file -b "$p/$f")
        expect_contains "$f is for aarch64" "$out" "ARM aarch64"
        expect_contains "$f is static" "$out" "static"
    done
    # Debian's arm64 qemu-user-static: the emulators an arm64 host has.
    "$EMURUN" sysroot fetch --arch arm64 --dir "$q" qemu-user-static >"$T/fetch.log" 2>&1 ||
        { not_ok "fetching qemu-user-static:arm64 failed: $(tail -n 5 "$T/fetch.log")"; return; }
    expect_contains "the fetched qemu-s390x-static is an aarch64 program" \
        "$(file -b "$q/usr/bin/qemu-s390x-static")" "ARM aarch64"
    mkdir -p "$T/work"
    cp "$EMURUN_FIXTURE_DIR/aarch64/probe-static" "$T/work/probe-aarch64"
    cp "$EMURUN_FIXTURE_DIR/s390x/probe-static" "$T/work/probe-s390x"
    cat >"$T/work/pipeline.json" <<'EOF'
{
  "name": "arm64-host",
  "defaults": { "timeout": "2m" },
  "steps": [
    { "name": "shell", "argv": ["sh", "-c", "echo from the host shell > shell.txt"] },
    { "name": "aarch64", "arch": "aarch64", "argv": ["./probe-aarch64", "uname"] },
    { "name": "s390x", "arch": "s390x", "emulation": "exec", "argv": ["./probe-s390x", "endian"] }
  ]
}
EOF
    cat >"$T/work/check.sh" <<EOF
export EMURUN_QEMU_DIR=$q/usr/bin PATH=$p/bin:\$PATH
echo "version=\$(emurun --version)"
echo "exec-out=\$(emurun exec -- ./probe-s390x uname)"
emurun doctor >doctor.txt 2>&1
emurun run pipeline.json --report report.json --log-dir logs >run.txt 2>&1; echo "run-exit=\$?"
EOF
    rc=0
    out=$(cd "$T/work" && EMURUN_CACHE_DIR=$T/cache timeout 600 "$EMURUN" sandbox --arch aarch64 -- sh check.sh 2>&1) || rc=$?
    echo "$out" | sed 's/^/  | /'
    expect_eq "the sandbox ran the check" 0 "$rc"
    expect_contains "the aarch64 emurun runs" "$out" "version=emurun "
    expect_contains "the aarch64 emurun runs an s390x program" "$out" "exec-out=s390x"
    expect_contains "its pipeline passes" "$out" "run-exit=0"
    expect_contains "the s390x step ran big-endian" "$(cat "$T/work/logs/s390x.log" 2>/dev/null)" "big 01020304"
    expect_contains "the aarch64 step ran natively on the aarch64 host" \
        "$(cat "$T/work/logs/aarch64.log" 2>/dev/null)" "aarch64"
    expect_contains "the host shell step ran" "$(cat "$T/work/shell.txt" 2>/dev/null)" "from the host shell"
    out=$(python3 -c 'import json,sys; s={x["name"]: x for x in json.load(open(sys.argv[1]))["steps"]}
print(s["s390x"]["emulator"]["path"], s["aarch64"]["emulation"])' "$T/work/report.json" 2>&1)
    expect_eq "the report: arm64's qemu-s390x-static, the aarch64 step native" \
        "$q/usr/bin/qemu-s390x-static native" "$out"
    expect_contains "doctor: no sandbox under QEMU's user mode, and why" \
        "$(cat "$T/work/doctor.txt")" "multi-threaded"
}

run_parts aarch64
finish
