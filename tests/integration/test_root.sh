#!/bin/bash
# ctest-tier: root
# `emurun root`: bad input refused with exit 125 and the reason; an arm64 root entered with the
# target's view everywhere (uname, dpkg, Python), exit codes and signals passed through, a clean
# environment, binds; accelerated compilers that are the host's x86-64 cross compilers and emit
# the same objects as the root's own emulated gcc. The host's binfmt_misc is never touched.
. "$(dirname "$0")/lib/common.sh"
. "$(dirname "$0")/lib/root.sh"

# expect_refused LABEL NEEDLE CMD...: exit 125 and NEEDLE in the message.
expect_refused() {
    local label=$1 needle=$2 rc=0 err
    shift 2
    err=$("$@" 2>&1) || rc=$?
    expect_eq "$label: exit 125" 125 "$rc"
    expect_contains "$label: says why" "$err" "$needle"
}

# --- bad input that needs nothing else ---
mkdir -p "$T/empty" "$T/full/x"
expect_refused "unknown arch (run)" "not known" "$EMURUN" root run --arch vax "$T/empty" -- true
expect_refused "unknown arch (create)" "not known" "$EMURUN" root create --arch vax "$T/new"
expect_refused "not a root" "not a Debian root" "$EMURUN" root run "$T/empty" -- true
expect_refused "unknown tool to accelerate" "unknown tool 'frob'" \
    "$EMURUN" root run --accelerate=gcc,frob "$T/empty" -- true
expect_refused "create into a non-empty dir" "not an empty directory" \
    "$EMURUN" root create --arch aarch64 "$T/full"
touch "$T/a-file"
expect_refused "create over a file" "not an empty directory" \
    "$EMURUN" root create --arch aarch64 "$T/a-file"
expect_refused "run in a file" "not a directory" "$EMURUN" root run "$T/a-file" -- true
expect_refused "run in a missing dir" "it does not exist" "$EMURUN" root run "$T/missing" -- true
expect_refused "a root of the host's own arch" "natively" \
    "$EMURUN" root create --arch "$(uname -m)" "$T/native"
expect_refused "a suite that is no name" "not a Debian suite name" \
    "$EMURUN" root create --arch aarch64 --suite 'x;y' "$T/suite"
# The target directory is checked before anything is downloaded (an empty path aborted; a
# place where no directory can be made ran mmdebstrap for minutes first).
expect_refused "create into an empty path" "empty path" \
    env XDG_CACHE_HOME="$T/cache" "$EMURUN" root create --arch aarch64 ''
expect_refused "create where no directory can be made" "/proc/nonexist" \
    env XDG_CACHE_HOME="$T/cache" timeout 30 "$EMURUN" root create --arch aarch64 /proc/nonexist/x
expect_refused "create under a file" "Not a directory" \
    env XDG_CACHE_HOME="$T/cache" timeout 30 "$EMURUN" root create --arch aarch64 "$T/a-file/x"
[ ! -e "$T/native" ] && [ ! -e "$T/suite" ] && ok "refused creates made nothing" ||
    not_ok "a refused create made its directory"
[ -d "$T/full/x" ] && ok "the non-empty dir is left as it was" || not_ok "non-empty dir changed"
# A root of the host's own arch, and the host's / itself, are refused as create refuses them.
mkdir -p "$T/amd64/var/lib/dpkg" "$T/amd64/bin"
echo amd64 >"$T/amd64/var/lib/dpkg/arch"
touch "$T/amd64/bin/sh"
expect_refused "run in a root of the host's arch" "natively" "$EMURUN" root run "$T/amd64" -- true
expect_refused "run in the host's /" "the host's own root directory" "$EMURUN" root run / -- true
expect_refused "run in an empty path" "empty path" "$EMURUN" root run '' -- true
# No command, with or without the --.
expect_refused "no command" "no command given" "$EMURUN" root run "$T/empty"
expect_refused "no command after --" "no command given" "$EMURUN" root run "$T/empty" --
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
    # An unprivileged user without /etc/subuid ranges: the fix is named (in a directory that
    # user can write: the directory is checked first, and $T is root's alone).
    nobody_dir=$(mktemp -d /tmp/emurun-nobody.XXXXXX)
    chmod 1777 "$nobody_dir"
    expect_refused "no subordinate ids" "usermod --add-subuids" \
        setpriv --reuid=65534 --regid=65534 --clear-groups env HOME=/nonexistent \
        "$EMURUN" root create --arch aarch64 "$nobody_dir/root"
    expect_refused "a directory the user cannot make" "Permission denied" \
        setpriv --reuid=65534 --regid=65534 --clear-groups env HOME=/nonexistent \
        "$EMURUN" root create --arch aarch64 "$T/nobody-root"
    rm -rf "$nobody_dir"
fi

root_probe aarch64
BM=/proc/sys/fs/binfmt_misc
host_binfmt() { ls -a "$BM" 2>&1; cat "$BM/status" 2>&1 || true; }
before=$(host_binfmt)

# A fake arm64 root without gcc: accelerating it is refused before anything starts.
mkdir -p "$T/nogcc/var/lib/dpkg" "$T/nogcc/bin" "$T/nogcc/usr/bin"
echo arm64 >"$T/nogcc/var/lib/dpkg/arch"
: >"$T/nogcc/var/lib/dpkg/status" # a Debian root (without dpkg status: an image, run emulated)
touch "$T/nogcc/bin/sh"
expect_refused "accelerating a root without gcc" "emurun root install" \
    "$EMURUN" root run --accelerate "$T/nogcc" -- true
expect_refused "root of another arch" "it is an aarch64 root" \
    "$EMURUN" root run --arch s390x "$T/nogcc" -- true
# hint_flags LABEL SUBCOMMAND CMD...: CMD is refused with a hint that names options as the CLI
# spells them, each an option of `emurun root SUBCOMMAND`; the message is left in $hint_msg.
hint_flags() {
    local label=$1 sub=$2 help flag
    shift 2
    hint_msg=$("$@" 2>&1) || true
    help=$("$EMURUN" root "$sub" --help 2>&1)
    expect_contains "$label: the hint names an option" "$hint_msg" "(--"
    for flag in $(grep -o '(--[a-z-]*' <<<"$hint_msg" | cut -c2-); do
        expect_contains "$label: $flag is an option of root $sub" "$help" "$flag"
    done
}
hint_flags "no gcc to accelerate" run "$EMURUN" root run --accelerate "$T/nogcc" -- true
expect_contains "no gcc: the way out is spelled as the CLI takes it" "$hint_msg" "(--accelerate=none)"
msg=$("$EMURUN" root run --accelerate=none "$T/nogcc" -- true 2>&1) || true
case $msg in *"has no gcc"*) not_ok "--accelerate=none as the hint says: still refused" ;;
    *) ok "--accelerate=none as the hint says: the gcc refusal is gone" ;; esac
hint_flags "root of another arch" run "$EMURUN" root run --arch s390x "$T/nogcc" -- true
expect_contains "another arch: the arch to expect" "$hint_msg" "expect aarch64 instead (--arch)"
expect_refused "no mirror reachable" "no mirror reachable" \
    env -u http_proxy XDG_CACHE_HOME="$T/cache" "$EMURUN" root create --arch aarch64 \
    --mirror http://127.0.0.1:9/debian "$T/unreachable"
[ ! -e "$T/unreachable" ] && ok "a failed create leaves no directory" ||
    not_ok "a failed create left $T/unreachable"

# Binds: empty parts, a destination that leaves the root ('..', the root's own symlinks), a
# directory onto a file and a file onto a directory are refused before anything is mounted.
mkdir -p "$T/work"
ln -s /tmp "$T/nogcc/evil"
escape=/tmp/emurun-escape-$$
# refused_bind NAME EXPECTED SPEC: `root run --bind SPEC` of the root without gcc is refused,
# naming EXPECTED.
refused_bind() { expect_refused "$1" "$2" "$EMURUN" root run --bind "$3" "$T/nogcc" -- true; }
# An empty --bind value is a usage error, as for every option but --accelerate (exit 2).
rc=0; err=$("$EMURUN" root run --bind '' "$T/nogcc" -- true 2>&1) || rc=$?
expect_eq "bind of an empty value: exit 2 (usage)" 2 "$rc"
expect_contains "bind of an empty value: says why" "$err" "--bind: an empty value"
# `--accelerate none DIR` took "none" as the root: said, with the spelling that works (exit 2).
rc=0; err=$(cd "$T" && "$EMURUN" root run --accelerate none -- true 2>&1) || rc=$?
expect_eq "--accelerate none (a space): exit 2 (usage)" 2 "$rc"
expect_contains "--accelerate none (a space): says how" "$err" "write --accelerate=none"
refused_bind "bind ':'" "empty path" :
refused_bind "bind to an empty destination" "empty path" "$T/work:"
refused_bind "bind with '..' in the destination" "'..'" "$T/work:/../../..$escape"
refused_bind "bind to a relative destination" "not an absolute path" "$T/work:w"
refused_bind "bind through a symlink of the root" "/evil is a symlink in the root" "$T/work:/evil/${escape#/tmp/}"
[ ! -e "$escape" ] && ok "no bind made a directory on the host" || not_ok "$escape was made"
rm -rf "$escape"
refused_bind "bind a directory onto a file" "is a file in the root" "$T/work:/bin/sh"
refused_bind "bind a file onto a directory" "is a directory in the root" "$T/a-file:/var/lib/dpkg"
refused_bind "bind of a missing source" "No such file" "$T/missing:/m"

R=$T/arm64
make_root aarch64 "$R"
run() { "$EMURUN" root run "$@"; }
# The probe corpus' verdicts are cached in emurun's cache dir: this run's own, so that the
# first accelerated run really compiles the corpus both ways.
export EMURUN_CACHE_DIR=$T/cache

# -v says what runs as the host's programs.
out=$("$EMURUN" -v root run --accelerate "$R" -- true 2>&1)
expect_contains "-v: the programs run natively are listed" "$out" "programs of the root run as the host's:"
out=$("$EMURUN" -v root run --accelerate=none "$R" -- true 2>&1)
case $out in
    *"accelerated:"*) not_ok "-v --accelerate=none: an acceleration line, not asked for: $out" ;;
    *) ok "-v --accelerate=none: no acceleration line" ;;
esac

# The target's view, accelerated or not (3).
for acc in --accelerate --accelerate=none; do
    out=$(run $acc "$R" -- sh -c 'uname -m; dpkg --print-architecture;
        python3 -c "import platform; print(platform.machine())"')
    expect_eq "target view ($acc)" "aarch64
arm64
aarch64" "$out"
done

# Exit codes, signals, a missing command, as for `emurun sandbox`.
rc=0; run "$R" -- sh -c 'exit 42' || rc=$?
expect_eq "exit code passes through" 42 "$rc"
rc=0; run "$R" -- sh -c 'kill -TERM $$' || rc=$?
expect_eq "death by SIGTERM is 143" 143 "$rc"
rc=0; run "$R" -- no-such-command-emurun 2>/dev/null || rc=$?
expect_eq "command not found is 127" 127 "$rc"

# A signal sent to emurun's pid alone (not its process group: kill, a CI runner's cancel) reaches
# the command inside, which ends with it; nothing is left behind.
descendants() { # PID: every process below PID
    local c
    for c in $(cat /proc/"$1"/task/*/children 2>/dev/null); do echo "$c"; descendants "$c"; done
}
for sig in INT TERM; do
    setsid "$EMURUN" root run "$R" -- sleep 100 &
    pid=$!
    for _ in $(seq 1 200); do # until the sleep runs (at most 20 s)
        tree=$(descendants "$pid")
        for p in $tree; do # the emulated sleep, not pid 1 (emurun's own command line)
            case $(tr '\0' ' ' </proc/"$p"/cmdline 2>/dev/null) in
                *"root run"*) ;; *"sleep 100"*) break 2 ;;
            esac
        done
        sleep 0.1
    done
    start=$(date +%s)
    kill -"$sig" "$pid"
    rc=0; wait "$pid" || rc=$?
    secs=$(($(date +%s) - start))
    expected=$((128 + $(kill -l "$sig")))
    expect_eq "SIG$sig to emurun alone: the command's status" "$expected" "$rc"
    [ "$secs" -lt 10 ] && ok "SIG$sig to emurun alone: stopped in ${secs} s" ||
        not_ok "SIG$sig to emurun alone: took ${secs} s"
    left=""
    for p in $tree; do [ -d /proc/"$p" ] && left="$left $p"; done
    expect_eq "SIG$sig to emurun alone: no process left" "" "$left"
done

# A clean environment plus --env; binds and --cwd.
mkdir -p "$T/work"
out=$(LIBRARY_PATH=/host/only CPATH=/host/only run --env K=v "$R" -- sh -c \
    'echo "${LIBRARY_PATH:-unset} ${CPATH:-unset} $K $HOME"')
expect_eq "host env does not leak, --env is set" "unset unset v /root" "$out"
run --bind "$T/work:/w" --cwd /w "$R" -- sh -c 'pwd > where; id -u >> where'
expect_eq "bind + cwd, files written back" "/w
0" "$(cat "$T/work/where")"

# Accelerated: the drivers inside are x86-64 programs; not accelerated: the root's own. (The
# mechanics with --allow-revision-mismatch: bookworm's root gcc is another revision than the
# source of the host's cross gcc; the identity rule itself is checked below.)
m=$(run --accelerate --allow-revision-mismatch "$R" -- sh -c 'readelf -h "$(readlink -f /usr/bin/gcc)" | grep Machine')
expect_contains "accelerated gcc is the host's x86-64 cross gcc" "$m" "X86-64"
m=$(run --accelerate=none "$R" -- sh -c 'readelf -h "$(readlink -f /usr/bin/gcc)" | grep Machine')
expect_contains "unaccelerated gcc is the root's aarch64 gcc" "$m" "AArch64"

# C++ with libstdc++ headers through the accelerated g++ (2, C++): same object as emulated.
cp "$EMURUN_SOURCE_DIR/tests/fixtures/hello.cpp" "$EMURUN_SOURCE_DIR/tests/fixtures/probe.c" "$T/work/"
for acc in default none; do
    run --accelerate=$acc --allow-revision-mismatch --bind "$T/work:/w" --cwd /w "$R" -- sh -c "
        g++ -O2 -g -c hello.cpp -o hello-$acc.o && gcc -O2 -g -c probe.c -o probe-$acc.o &&
        g++ -O2 hello-$acc.o -o hello-$acc && ./hello-$acc >/dev/null &&
        for o in hello probe; do objcopy --remove-section .comment \$o-$acc.o \$o-$acc.stripped; done"
done
for o in hello probe; do
    if cmp -s "$T/work/$o-default.stripped" "$T/work/$o-none.stripped"; then
        ok "$o: accelerated object identical to the emulated gcc's (without .comment)"
    else
        not_ok "$o: accelerated and emulated objects differ"
    fi
done
expect_contains "the accelerated object is aarch64" "$(file -b "$T/work/hello-default.o")" "aarch64"

# The identity rule (issue 26, the field trial's case): the root's gcc-12 and the source of the
# host's cross gcc-12 (its Built-Using), Debian revision included. bookworm: 12.2.0-14+deb12u1
# (CVE-2023-4039's -fstack-protector fix on aarch64) vs 12.2.0-14, and with
# -fstack-protector-strong the two emit different code. A plain --accelerate must then run the
# compiler emulated and say why; with the same revision the objects must be identical.
root_gcc=$(dpkg-query --admindir="$R/var/lib/dpkg" -W -f '${Version}' gcc-12)
host_gcc=$(dpkg-query -W -f '${Built-Using}' gcc-12-aarch64-linux-gnu | sed -n 's/.*gcc-12 (= \([^)]*\)).*/\1/p')
cat >"$T/work/sp.c" <<'EOF'
#include <string.h>
int fill(char *out, const char *in, unsigned n) {
    char buf[64];
    memcpy(buf, in, n < 64 ? n : 64);
    buf[0] ^= 1;
    memcpy(out, buf, 64);
    return buf[3];
}
EOF
for acc in default none; do
    run --accelerate=$acc --bind "$T/work:/w" --cwd /w "$R" -- sh -c "
        gcc -O2 -fstack-protector-strong -c sp.c -o sp-$acc.o &&
        objcopy --remove-section .comment sp-$acc.o sp-$acc.stripped" 2>"$T/sp-$acc.err"
done
m=$(run --accelerate "$R" -- sh -c 'readelf -h "$(readlink -f /usr/bin/gcc)" | grep Machine' 2>/dev/null)
if [ "$root_gcc" = "$host_gcc" ]; then
    expect_contains "same gcc revision ($root_gcc): gcc accelerated" "$m" "X86-64"
    cmp -s "$T/work/sp-default.stripped" "$T/work/sp-none.stripped" &&
        ok "-fstack-protector-strong: accelerated object identical (without .comment)" ||
        not_ok "-fstack-protector-strong: same revision, but the objects differ"
else
    expect_contains "root gcc $root_gcc vs host $host_gcc: gcc runs emulated" "$m" "AArch64"
    expect_contains "the warning says which tool" "$(cat "$T/sp-default.err")" "gcc kept emulated"
    expect_contains "the warning says both versions and why" "$(cat "$T/sp-default.err")" \
        "the root's gcc-12 is built from gcc-12 $root_gcc, the host's gcc-12-aarch64-linux-gnu from gcc-12 $host_gcc"
    cmp -s "$T/work/sp-default.stripped" "$T/work/sp-none.stripped" &&
        ok "-fstack-protector-strong with --accelerate: the root's own compiler's object" ||
        not_ok "-fstack-protector-strong with --accelerate: the object is not the root compiler's"
    # The other revision, accelerated anyway, is what the trial found: said, and different.
    run --accelerate --allow-revision-mismatch --bind "$T/work:/w" --cwd /w "$R" -- sh -c "
        gcc -O2 -fstack-protector-strong -c sp.c -o sp-forced.o &&
        objcopy --remove-section .comment sp-forced.o sp-forced.stripped" 2>"$T/sp-forced.err"
    expect_contains "allowed: said on stderr" "$(cat "$T/sp-forced.err")" "gcc accelerated although"
    # The probe corpus ran (the first accelerated run) and its verdict is said with it: the
    # hardening flags make the other revision's stack.c object differ.
    expect_contains "allowed: the probe's verdict said" "$(cat "$T/sp-forced.err")" \
        "the probe corpus (the root's hardening flags) compiled both ways: the emulated and the accelerated compiler's objects differ beyond .comment: stack.c."
    expect_contains "allowed: the sections that differ" "$(cat "$T/sp-forced.err")" ".text"
    n=$(find "$T/cache/toolchain-probe" -name '*.json' | wc -l)
    expect_eq "one probe verdict cached for this root and toolchain" 1 "$n"
    expect_contains "the cached verdict: not identical, stack.c" \
        "$(cat "$T"/cache/toolchain-probe/*.json)" '"file":"stack.c.'
    if cmp -s "$T/work/sp-forced.stripped" "$T/work/sp-none.stripped"; then
        echo "note: gcc $root_gcc and $host_gcc made the same object for this probe"
    else
        ok "the other revision's object differs, as the identity rule expects"
    fi
fi

# Real flags (issue 26): a small C project (a shared library and a program) built with the
# root's dpkg-buildflags (hardening: -fstack-protector-strong, -D_FORTIFY_SOURCE=2,
# -Wl,-z,relro,-z,now) and with Python's sysconfig CFLAGS, with a plain --accelerate and fully
# emulated: the objects are identical but for .comment, or gcc ran emulated and the warning says
# why (bookworm: the latter, the root's gcc being another revision).
mkdir -p "$T/proj"
cat >"$T/proj/lib.c" <<'C'
#include <stdio.h>
#include <string.h>
int demo_name(char *out, unsigned long n, const char *who) {
    char buf[48];
    snprintf(buf, sizeof buf, "hello %s", who);
    memcpy(out, buf, n < sizeof buf ? n : sizeof buf);
    return (int)strlen(buf);
}
C
cat >"$T/proj/main.c" <<'C'
#include <stdio.h>
int demo_name(char *out, unsigned long n, const char *who);
int main(void) { char s[64] = {0}; demo_name(s, sizeof s, "arm64"); puts(s); return 0; }
C
cat >"$T/proj/build.sh" <<'SH'
set -e
export DEB_BUILD_MAINT_OPTIONS=hardening=+all # bindnow too: -Wl,-z,relro -Wl,-z,now
o=out-$1; mkdir -p "$o"
cf="$(dpkg-buildflags --get CPPFLAGS) $(dpkg-buildflags --get CFLAGS)"
lf=$(dpkg-buildflags --get LDFLAGS)
py=$(python3 -c 'import sysconfig; print(sysconfig.get_config_var("CFLAGS"))')
for f in lib main; do
    gcc $cf -fPIC -c $f.c -o "$o/$f.dpkg.o"
    gcc $py -fPIC -c $f.c -o "$o/$f.python.o"
done
gcc $lf -shared "$o/lib.dpkg.o" -o "$o/libdemo.so"
gcc $lf "$o/main.dpkg.o" -L"$o" -ldemo -o "$o/demo"
LD_LIBRARY_PATH=$o "./$o/demo" >"$o/said"
for f in "$o"/*.o; do objcopy --remove-section .comment "$f"; done
printf '%s\n%s\n%s\n' "$cf" "$lf" "$py" >"$o/flags"
SH
if ! run "$R" -- sh -c 'command -v dpkg-buildflags' >/dev/null 2>&1; then
    "$EMURUN" root install "$R" dpkg-dev >"$T/dpkg-dev.log" 2>&1 || true
fi
if run "$R" -- sh -c 'command -v dpkg-buildflags' >/dev/null 2>&1; then
    for acc in default none; do
        run --accelerate=$acc --bind "$T/proj:/p" --cwd /p "$R" -- sh build.sh $acc \
            2>"$T/proj-$acc.err" || not_ok "real flags, --accelerate=$acc: the build failed"
    done
    flags=$(cat "$T/proj/out-default/flags" 2>/dev/null || true)
    for f in -fstack-protector-strong -D_FORTIFY_SOURCE=2 -Wl,-z,relro -Wl,-z,now; do
        expect_contains "real flags: the root's dpkg-buildflags give $f" "$flags" "$f"
    done
    expect_contains "real flags: Python's sysconfig CFLAGS harden too" \
        "$(sed -n 3p "$T/proj/out-default/flags" 2>/dev/null || true)" "-fstack-protector-strong"
    expect_eq "real flags: the program runs" "hello arm64" \
        "$(cat "$T/proj/out-default/said" 2>/dev/null || true)"
    expect_contains "real flags: linked with BIND_NOW" \
        "$(readelf -d "$T/proj/out-default/demo" 2>&1 || true)" "BIND_NOW"
    same=yes
    for o in lib.dpkg lib.python main.dpkg main.python; do
        cmp -s "$T/proj/out-default/$o.o" "$T/proj/out-none/$o.o" || same="no ($o.o differs)"
    done
    m=$(run --accelerate "$R" -- sh -c 'readelf -h "$(readlink -f /usr/bin/gcc)" | grep Machine' 2>/dev/null)
    case $m in
        *X86-64*) expect_eq "real flags, gcc accelerated: objects identical but .comment" yes "$same" ;;
        *)
            expect_eq "real flags, gcc emulated: the same objects" yes "$same"
            expect_contains "real flags, gcc emulated: the warning says why" \
                "$(cat "$T/proj-default.err")" "gcc kept emulated"
            ;;
    esac
    if [ "$root_gcc" != "$host_gcc" ]; then
        expect_contains "real flags on $root_gcc vs $host_gcc: gcc ran emulated" "$m" "AArch64"
    fi
else
    skip_part "real flags: the root has no dpkg-buildflags and dpkg-dev could not be installed" \
        "(network?): $(tail -1 "$T/dpkg-dev.log" 2>/dev/null || true)"
fi

# Pipeline root steps: emurun's variables in their environment; a step whose root cannot be
# entered fails with the reason in the report's message (not only "exit code 125").
mkdir -p "$T/pipe"
cat >"$T/pipe/pipeline.json" <<EOF
{"name": "root-steps", "defaults": {"arch": "aarch64", "emulation": "root", "root": "$R"},
 "steps": [
  {"name": "vars", "shell": true, "accelerate": "toolchain,shell",
   "argv": "echo \$EMURUN_ARCH \$EMURUN_EMULATED \$EMURUN_TIMEOUT_MULTIPLIER >vars"},
  {"name": "accelerated", "argv": ["true"], "accelerate": true},
  {"name": "allowed", "argv": ["true"], "accelerate": {"allow_revision_mismatch": true}},
  {"name": "no-root", "argv": ["true"], "root": "$T/missing-root"},
  {"name": "host-arch-root", "argv": ["true"], "root": "$T/amd64"}
 ]}
EOF
rc=0
(cd "$T/pipe" && "$EMURUN" run pipeline.json --report report.json >"$T/pipe.out" 2>&1) || rc=$?
expect_eq "a pipeline with unusable roots fails" 1 "$rc"
read -r v_arch v_emulated v_factor <"$T/pipe/vars" || true
expect_eq "root step: EMURUN_ARCH" aarch64 "${v_arch:-}"
expect_eq "root step: EMURUN_EMULATED" 1 "${v_emulated:-}"
[ -n "${v_factor:-}" ] && ok "root step: EMURUN_TIMEOUT_MULTIPLIER=$v_factor" ||
    not_ok "root step: no EMURUN_TIMEOUT_MULTIPLIER"
msg() {
    python3 -c 'import json, sys
print([s for s in json.load(open(sys.argv[1]))["steps"] if s["name"] == sys.argv[2]][0]["message"])' \
        "$T/pipe/report.json" "$1"
}
field() {
    python3 -c 'import json, sys
print([s for s in json.load(open(sys.argv[1]))["steps"] if s["name"] == sys.argv[2]][0][sys.argv[3]])' \
        "$T/pipe/report.json" "$1" "$2"
}
expect_eq "report: the shell group's acceleration" "toolchain,shell" "$(field vars acceleration)"
expect_eq "report: an emulated step has no acceleration" "None" "$(field no-root acceleration)"
# What really ran natively: the shell group's tools always (no identity rule for them); the
# compilers only where the identity rule holds or a mismatch is allowed.
expect_eq "report: the shell group ran natively" True "$(field vars accelerated)"
expect_contains "report: which host tools (dash)" "$(field vars accelerated_tools)" "'dash'"
expect_contains "report: allowed: the host's gcc ran" "$(field allowed accelerated_tools)" "'gcc-12'"
expect_eq "report: allowed: accelerated" True "$(field allowed accelerated)"
if [ "$root_gcc" != "$host_gcc" ]; then
    # The compilers kept emulated; the native tools (issue 32) still serve the root.
    expect_eq "report: compilers kept emulated, the native tools accelerated" True \
        "$(field accelerated accelerated)"
    case $(field accelerated accelerated_tools) in
        *gcc-12*) not_ok "report: a compiler kept emulated is listed as accelerated" ;;
        *"'dash'"*) ok "report: the native tools listed (dash), no compiler" ;;
        *) not_ok "report: no native tool listed: $(field accelerated accelerated_tools)" ;;
    esac
    expect_eq "report: the default acceleration" "toolchain,shell" "$(field accelerated acceleration)"
else
    expect_eq "report: the same revisions: accelerated" True "$(field accelerated accelerated)"
    expect_eq "report: the default acceleration" "toolchain,shell" "$(field accelerated acceleration)"
fi
expect_eq "report: allowed: the default acceleration" "toolchain,shell" "$(field allowed acceleration)"
mismatch() {
    python3 -c 'import json, sys
s = [s for s in json.load(open(sys.argv[1]))["steps"] if s["name"] == sys.argv[2]][0]
print(" ".join("%s:%s:%s:%s" % (m["tool"], m["root_source"], m["host_source"], m["accelerated"]) for m in s["toolchain_mismatches"]))' \
        "$T/pipe/report.json" "$1"
}
if [ "$root_gcc" != "$host_gcc" ]; then
    expect_contains "report: gcc kept emulated, both versions" "$(mismatch accelerated)" \
        "gcc:gcc-12 $root_gcc:gcc-12 $host_gcc:False"
    expect_contains "report: gcc accelerated anyway, recorded" "$(mismatch allowed)" \
        "gcc:gcc-12 $root_gcc:gcc-12 $host_gcc:True"
    expect_contains "table: the toolchain note" "$("$EMURUN" report show "$T/pipe/report.json")" \
        "toolchain: accelerated: gcc kept emulated"
fi
expect_contains "missing root: the reason in the message" "$(msg no-root)" "does not exist"
expect_contains "host-arch root: the reason in the message" "$(msg host-arch-root)" "it is an x86_64 root"

# The probe refuses what the identity rule cannot see (issue 26): the root's dpkg status made to
# claim the host cross gcc's revision (its binaries stay the other revision's), a plain
# --accelerate finds the sources the same, compiles the probe corpus both ways the first time,
# sees stack.c differ and keeps gcc emulated, saying which file; the report records it. The
# verdict is cached per root and toolchain versions: a forged "identical" verdict in the cache
# is believed (the probe does not run again).
if [ "$root_gcc" != "$host_gcc" ]; then
    cp -a "$R/var/lib/dpkg/status" "$T/status.orig"
    sed -i "s/$(printf '%s' "$root_gcc" | sed 's/[.]/\\&/g')/$host_gcc/g" "$R/var/lib/dpkg/status"
    verdicts=$(find "$T/cache/toolchain-probe" -name '*.json' | wc -l)
    m=$(run --accelerate "$R" -- sh -c 'readelf -h "$(readlink -f /usr/bin/gcc)" | grep Machine' 2>"$T/faked.err")
    expect_contains "same sources claimed, the probe differs: gcc runs emulated" "$m" "AArch64"
    expect_contains "the warning: kept emulated, the probe, the file" "$(cat "$T/faked.err")" \
        "the probe corpus (the root's hardening flags) compiled both ways: the emulated and the accelerated compiler's objects differ beyond .comment: stack.c."
    expect_contains "the warning: gcc and the binutils kept emulated" "$(cat "$T/faked.err")" \
        "gcc kept emulated and the binutils with it"
    expect_eq "one more probe verdict cached (another key)" $((verdicts + 1)) \
        "$(find "$T/cache/toolchain-probe" -name '*.json' | wc -l)"
    cat >"$T/pipe/probe.json" <<JSON
{"name": "probe", "defaults": {"arch": "aarch64", "emulation": "root", "root": "$R"},
 "steps": [{"name": "probed", "argv": ["true"], "accelerate": true}]}
JSON
    (cd "$T/pipe" && "$EMURUN" run probe.json --report probe-report.json >"$T/probe.out" 2>&1) ||
        not_ok "the probe pipeline failed: $(tail -3 "$T/probe.out")"
    probe_field() {
        python3 -c 'import json, sys
m = json.load(open(sys.argv[1]))["steps"][0]["toolchain_mismatches"]
print(" ".join("%s:%s:%s" % (x["tool"], x["accelerated"], x["probe"]) for x in m))' \
            "$T/pipe/probe-report.json"
    }
    expect_contains "report: gcc kept emulated by the probe, the file named" "$(probe_field)" \
        "gcc:False:the emulated and the accelerated compiler's objects differ beyond .comment: stack.c."
    newest=$(ls -t "$T"/cache/toolchain-probe/*.json | head -1)
    printf '{"identical":true,"file":"","why":""}\n' >"$newest"
    m=$(run --accelerate "$R" -- sh -c 'readelf -h "$(readlink -f /usr/bin/gcc)" | grep Machine' 2>/dev/null)
    expect_contains "a cached verdict is used as is (no probe run): gcc accelerated" "$m" "X86-64"
    cp -a "$T/status.orig" "$R/var/lib/dpkg/status"
fi

# A root whose compiler's files are there but whose dpkg status does not list it (emptied,
# damaged): gcc runs emulated, and --accelerate says so and why (it used to say nothing).
cp -a "$R/var/lib/dpkg/status" "$T/status.orig"
: >"$R/var/lib/dpkg/status"
rc=0
run --accelerate=gcc,g++,ld,ar,nm,ranlib "$R" -- true 2>"$T/nostatus.err" || rc=$?
expect_eq "an emptied dpkg status: the command still runs" 0 "$rc"
expect_contains "an emptied dpkg status: said" "$(cat "$T/nostatus.err")" \
    "gcc not accelerated: $R has usr/bin/aarch64-linux-gnu-gcc-12 but its dpkg status lists no gcc-12 package"
cp -a "$T/status.orig" "$R/var/lib/dpkg/status"

expect_eq "host binfmt_misc unchanged" "$before" "$(host_binfmt)"
finish
