#!/bin/bash
# ppc64le and s390x roots: create, enter (the target's uname and dpkg arch), one accelerated C
# and C++ compile each whose objects equal the root's emulated gcc's without .comment.
# Opt-in (EMURUN_ROOT_ARCHES=1): creating each root cold takes 8-15 minutes on 2 cores.
. "$(dirname "$0")/lib/common.sh"
. "$(dirname "$0")/lib/root.sh"
[ "${EMURUN_ROOT_ARCHES:-0}" = 1 ] ||
    skip "opt-in: EMURUN_ROOT_ARCHES=1 (creates ppc64el and s390x roots, ~10 min each when not cached)"
cp "$EMURUN_SOURCE_DIR/tests/fixtures/hello.cpp" "$EMURUN_SOURCE_DIR/tests/fixtures/probe.c" "$T/"
for pair in ppc64le:ppc64el:powerpc64le-linux-gnu s390x:s390x:s390x-linux-gnu; do
    IFS=: read -r a deb triplet <<<"$pair"
    ( root_probe "$a" ) || { skip_part "$a: a probe failed (see above)"; continue; }
    make_root "$a" "$T/$a"
    out=$("$EMURUN" root run --accelerate "$T/$a" -- sh -c 'uname -m; dpkg --print-architecture')
    expect_eq "$a: target view" "$a
$deb" "$out"
    mkdir -p "$T/w-$a" && cp "$T/hello.cpp" "$T/probe.c" "$T/w-$a/"
    for acc in default none; do
        "$EMURUN" root run --accelerate=$acc --bind "$T/w-$a:/w" --cwd /w "$T/$a" -- sh -c "
            g++ -O2 -g -c hello.cpp -o hello-$acc.o && gcc -O2 -g -c probe.c -o probe-$acc.o &&
            g++ hello-$acc.o -o hello && ./hello >/dev/null" ||
            not_ok "$a: compile and run (accelerate=$acc)"
    done
    for o in hello probe; do
        "$triplet-objcopy" --remove-section .comment "$T/w-$a/$o-default.o" "$T/acc.o"
        "$triplet-objcopy" --remove-section .comment "$T/w-$a/$o-none.o" "$T/emu.o"
        cmp -s "$T/acc.o" "$T/emu.o" && ok "$a: $o object identical" || not_ok "$a: $o objects differ"
    done
done
finish
