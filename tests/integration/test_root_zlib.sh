#!/bin/bash
# ctest-tier: root
# docs/guides/foreign-roots.md "From a fresh machine to the report", as a person follows it: an
# arm64 root made by `emurun root create`, zlib's Debian source from `emurun-sysroot source`, the
# page's own pipeline.json (read from the page) run by `emurun run --report`: ./configure && make and
# make check accelerated and fully emulated in the same root. The report must show all four
# steps passed, which ones were accelerated, the accelerated build >= 5x faster than the
# emulated one, and the same test results (make check's OK lines, from the step logs) (issue
# 10's "Done when"; evidence 1). Every object the accelerated compiler made is byte-identical
# to the emulated gcc's once the .comment version string is removed (evidence 2).
. "$(dirname "$0")/lib/common.sh"
. "$(dirname "$0")/lib/root.sh"
. "$(dirname "$0")/lib/docs.sh"
root_probe aarch64
command -v dpkg-source >/dev/null || skip "dpkg-source missing (apt-get install dpkg-dev)"
command -v python3 >/dev/null || skip "python3 needed to read the report"

W=$T/zlib-arm64 # the page's working directory
mkdir -p "$W"
make_root aarch64 "$W/root"
zlib_source "$W/zlib"
cp -a "$W/zlib" "$W/zlib-accelerated" && cp -a "$W/zlib" "$W/zlib-emulated"
cp -a "$W/zlib" "$W/zlib-shell"
# The pipeline is the page's: the block marked recipe:zlib-pipeline.
doc_block docs/guides/foreign-roots.md zlib-pipeline >"$W/pipeline.json" || true
grep -q '"build-emulated"' "$W/pipeline.json" && ok "the page's pipeline found" ||
    { not_ok "no zlib-pipeline block in docs/guides/foreign-roots.md"; finish; }

rc=0
(cd "$W" && "$EMURUN" run pipeline.json --report report.json >"$T/run.out" 2>"$T/run.err") || rc=$?
expect_eq "emurun run: every step passed" 0 "$rc"
[ "$rc" = 0 ] || { tail -n 30 "$T/run.err"; tail -n 30 "$W"/emurun-logs/*.log; }
table=$("$EMURUN" report show "$W/report.json")
echo "$table"

python3 - "$W/report.json" <<'PY' >"$T/check.txt"
import json, sys
r = json.load(open(sys.argv[1]))
s = {x["name"]: x for x in r["steps"]}
for n in ("build-accelerated", "test-accelerated", "build-emulated", "test-emulated"):
    print(n, s[n]["status"], s[n]["emulation"], json.dumps(s[n]["accelerated"]))
ratio = s["build-emulated"]["wall"] / max(s["build-accelerated"]["wall"], 0.001)
print("ratio %.1f" % ratio)
print("fast-enough", "yes" if ratio >= 5 else "no")
PY
cat "$T/check.txt"
expect_eq "report: statuses, modes, acceleration" "build-accelerated passed root true
test-accelerated passed root true
build-emulated passed root false
test-emulated passed root false" "$(head -n4 "$T/check.txt")"
expect_eq "report: accelerated build >= 5x faster than emulated ($(sed -n 's/^ratio //p' "$T/check.txt")x)" \
    "fast-enough yes" "$(tail -n1 "$T/check.txt")"

# The same test results: make check's OK lines, from each test step's log.
for v in accelerated emulated; do
    grep '\*\*\*.*test OK' "$W/emurun-logs/test-$v.log" | sort >"$T/results-$v"
done
[ -s "$T/results-emulated" ] && ok "make check printed its OK lines ($(wc -l <"$T/results-emulated"))" ||
    not_ok "no test results in emurun-logs/test-emulated.log"
expect_eq "same test results accelerated and emulated" "$(cat "$T/results-emulated")" \
    "$(cat "$T/results-accelerated")"

# --accelerate=toolchain,shell: sh, make, sed, grep, coreutils run natively too. The same
# build and test results; the shell really is the host's (its /proc maps show x86-64 libc and
# no qemu) while uname still names the target.
rc=0
"$EMURUN" root run --accelerate=toolchain,shell --bind "$W/zlib-shell" --cwd "$W/zlib-shell" \
    "$W/root" -- sh -c './configure && make -j2 && make check' >"$T/shell.log" 2>&1 || rc=$?
expect_eq "zlib built and tested with --accelerate=toolchain,shell" 0 "$rc"
[ "$rc" = 0 ] || tail -n 30 "$T/shell.log"
grep '\*\*\*.*test OK' "$T/shell.log" | sort >"$T/results-shell"
expect_eq "same test results with the shell group" "$(cat "$T/results-emulated")" \
    "$(cat "$T/results-shell")"
view=$("$EMURUN" root run --accelerate=toolchain,shell "$W/root" -- sh -c 'uname -m
    grep -q x86_64-linux-gnu/libc /proc/$$/maps && echo host-libc
    grep -q qemu /proc/$$/maps && echo qemu; true' 2>/dev/null | tr '\n' ' ')
expect_eq "shell group: uname says aarch64, sh is the host's dash (x86-64 libc, no qemu)" \
    "aarch64 host-libc " "$view"

# (2) The objects, compared without .comment (the host's objcopy for the target).
n=0 same=0
for o in "$W"/zlib-emulated/*.o; do
    b=$(basename "$o")
    n=$((n + 1))
    aarch64-linux-gnu-objcopy --remove-section .comment "$o" "$T/e.o"
    aarch64-linux-gnu-objcopy --remove-section .comment "$W/zlib-accelerated/$b" "$T/a.o"
    aarch64-linux-gnu-objcopy --remove-section .comment "$W/zlib-shell/$b" "$T/s.o"
    if cmp -s "$T/e.o" "$T/a.o" && cmp -s "$T/e.o" "$T/s.o"; then
        same=$((same + 1))
    else
        echo "differs: $b"
    fi
done
[ "$n" -gt 10 ] && ok "$n objects compared" || not_ok "only $n objects"
expect_eq "accelerated objects (toolchain; toolchain,shell) identical to emulated ones" "$n" "$same"
finish
