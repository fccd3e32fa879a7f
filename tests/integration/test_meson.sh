#!/bin/bash
# ctest-tier: quick
# cmake/meson/*.ini cross files (as the build writes them, naming its emurun): a tiny Meson project cross-builds for aarch64 and ppc64le, runs a
# foreign generator at build time (custom_target through exe_wrapper) and passes `meson test`,
# every foreign run going through `emurun exec` named by the cross file's exe_wrapper.
. "$(dirname "$0")/lib/common.sh"

command -v meson >/dev/null || skip "meson not installed (tools/install-deps installs it)"
command -v ninja >/dev/null || skip "ninja not installed (tools/install-deps installs ninja-build)"
for cc in aarch64-linux-gnu-gcc powerpc64le-linux-gnu-gcc; do
    command -v "$cc" >/dev/null || skip "$cc missing (tools/install-deps installs the cross compilers)"
done

src="$T/proj"
mkdir -p "$src"
cat > "$src/meson.build" <<'EOF'
project('emurun_meson_probe', 'c')
gen = executable('gen', 'gen.c')
hdr = custom_target('machine_h', output: 'machine.h', command: [gen, '@OUTPUT@'])
prog = executable('prog', 'prog.c', hdr)
test('runs and prints', prog)
test('exit code 3', prog, args: ['fail'], should_fail: true)
test('build-time machine matches run time', prog, args: ['check'])
EOF
# The generator records the machine it ran on (under qemu: the emulated one) in a header.
cat > "$src/gen.c" <<'EOF'
#include <stdio.h>
#include <sys/utsname.h>
int main(int argc, char **argv) {
    struct utsname u;
    FILE *f = argc > 1 ? fopen(argv[1], "w") : NULL;
    if (!f || uname(&u) != 0) return 1;
    fprintf(f, "#define BUILD_MACHINE \"%s\"\n", u.machine);
    return fclose(f) != 0;
}
EOF
cat > "$src/prog.c" <<'EOF'
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>
#include "machine.h"
int main(int argc, char **argv) {
    struct utsname u;
    if (uname(&u) != 0) return 1;
    printf("machine=%s built-on=%s\n", u.machine, BUILD_MACHINE);
    if (argc > 1 && strcmp(argv[1], "fail") == 0) return 3;
    if (argc > 1 && strcmp(argv[1], "check") == 0) return strcmp(u.machine, BUILD_MACHINE) != 0;
    return 0;
}
EOF

# check_arch INI_NAME EMURUN_ARCH UNAME_MACHINE FILE_WORDS
check_arch() {
    local cross="$EMURUN_BUILD_DIR/share/meson/cross/emurun-$1" b="$T/build-$1" rc
    # The build tree's copy of the cross file names this build's emurun by its absolute path.
    [ -f "$cross" ] || { not_ok "$cross missing (the build writes it)"; return; }
    expect_contains "$1: exe_wrapper names this build's emurun" "$(grep '^exe_wrapper' "$cross")" "'$EMURUN', 'exec', '--arch', '$2', '--'"

    rc=0
    meson setup --cross-file "$cross" "$b" "$src" > "$T/setup-$1.log" 2>&1 || rc=$?
    expect_eq "$1: meson setup" 0 "$rc"
    [ "$rc" -eq 0 ] || { cat "$T/setup-$1.log"; return; }
    rc=0
    ninja -C "$b" -j2 > "$T/build-$1.log" 2>&1 || rc=$?
    expect_eq "$1: ninja (runs the foreign generator)" 0 "$rc"
    [ "$rc" -eq 0 ] || { cat "$T/build-$1.log"; return; }
    expect_contains "$1: generator ran emulated" "$(cat "$b/machine.h")" "\"$3\""

    # The test binary is foreign: file(1) and emurun inspect agree.
    expect_contains "$1: file says foreign" "$(file -L "$b/prog")" "$4"
    expect_contains "$1: emurun inspect says $2" "$("$EMURUN" inspect "$b/prog" 2>&1)" "prog: $2,"

    rc=0
    meson test -C "$b" --num-processes 2 > "$T/test-$1.log" 2>&1 || rc=$?
    expect_eq "$1: meson test" 0 "$rc"
    [ "$rc" -eq 0 ] || cat "$T/test-$1.log" "$b/meson-logs/testlog.txt"
    local summary
    summary=$(grep -E '^(Ok|Expected Fail|Fail|Unexpected Pass|Skipped|Timeout): ' "$T/test-$1.log" | tr -s ' ' | tr '\n' ';')
    expect_eq "$1: meson test summary" "Ok: 2 ;Expected Fail: 1 ;Fail: 0 ;Unexpected Pass: 0 ;Skipped: 0 ;Timeout: 0 ;" "$summary"
    local log
    log=$(cat "$b/meson-logs/testlog.txt")
    expect_contains "$1: test output from emulated run" "$log" "machine=$3 built-on=$3"
    expect_contains "$1: tests went through emurun exec" "$log" "$EMURUN exec --arch $2 --"
    echo "--- $1: meson test summary"
    grep -E '^ *[0-9]+/[0-9]+ ' "$T/test-$1.log" || true
}

check_arch aarch64 aarch64 aarch64 "ARM aarch64"
check_arch ppc64le ppc64le ppc64le "64-bit PowerPC"
finish
