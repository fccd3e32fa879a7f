#!/bin/bash
# ctest-tier: root
# ppc64le and s390x roots: create, enter (the target's uname and dpkg arch), one accelerated C
# and C++ compile each, with Debian's hardening flags (dpkg-buildflags' defaults), whose objects
# equal the root's emulated gcc's without .comment (times printed), and a C program from the
# accelerated gcc that runs with the target's loader, byte order and uname -m.
# Opt-in (EMURUN_ROOT_ARCHES=1): creating each root cold takes 8-15 minutes on 2 cores.
. "$(dirname "$0")/lib/common.sh"
. "$(dirname "$0")/lib/root.sh"
[ "${EMURUN_ROOT_ARCHES:-0}" = 1 ] ||
    skip "opt-in: EMURUN_ROOT_ARCHES=1 (creates ppc64el and s390x roots, ~10 min each when not cached)"
# dpkg-buildflags' CPPFLAGS and CFLAGS on bookworm (dpkg-dev is not in the root).
hardening="-Wdate-time -D_FORTIFY_SOURCE=2 -g -O2 -fstack-protector-strong -Wformat -Werror=format-security"
cp "$EMURUN_SOURCE_DIR/tests/fixtures/hello.cpp" "$EMURUN_SOURCE_DIR/tests/fixtures/probe.c" "$T/"
for quad in ppc64le:ppc64el:powerpc64le-linux-gnu:/lib64/ld64.so.2:little \
    s390x:s390x:s390x-linux-gnu:/lib/ld64.so.1:big; do
    IFS=: read -r a deb triplet loader order <<<"$quad"
    ( root_probe "$a" ) || { skip_part "$a: a probe failed (see above)"; continue; }
    make_root "$a" "$T/$a"
    out=$("$EMURUN" root run --accelerate --allow-revision-mismatch "$T/$a" -- sh -c 'uname -m; dpkg --print-architecture')
    expect_eq "$a: target view" "$a
$deb" "$out"
    mkdir -p "$T/w-$a" && cp "$T/hello.cpp" "$T/probe.c" "$T/w-$a/"
    for acc in default none; do
        start=$(date +%s.%N)
        "$EMURUN" root run --accelerate=$acc --allow-revision-mismatch --bind "$T/w-$a:/w" --cwd /w "$T/$a" -- sh -c "
            g++ $hardening -c hello.cpp -o hello-$acc.o && gcc $hardening -c probe.c -o probe-$acc.o &&
            g++ hello-$acc.o -o hello && ./hello >/dev/null" ||
            not_ok "$a: compile and run (accelerate=$acc)"
        echo "$a: g++ and gcc $hardening -c, link, run (accelerate=$acc): $(echo "$(date +%s.%N) - $start" | bc) s"
    done
    # A C program built by the accelerated gcc is the target's: its loader, its byte order,
    # and uname(2) inside says the target's machine.
    out=$("$EMURUN" root run --accelerate --allow-revision-mismatch --bind "$T/w-$a:/w" --cwd /w "$T/$a" -- sh -c '
        gcc -O2 probe.c -o probe && ./probe uname && ./probe endian')
    expect_eq "$a: the accelerated gcc's program runs as $a" "$a" "$(head -n1 <<<"$out")"
    expect_contains "$a: its byte order" "$(tail -n1 <<<"$out")" "$order "
    expect_contains "$a: its loader" "$("$triplet-readelf" -l "$T/w-$a/probe")" \
        "interpreter: $loader]"
    for o in hello probe; do
        "$triplet-objcopy" --remove-section .comment "$T/w-$a/$o-default.o" "$T/acc.o"
        "$triplet-objcopy" --remove-section .comment "$T/w-$a/$o-none.o" "$T/emu.o"
        cmp -s "$T/acc.o" "$T/emu.o" && ok "$a: $o object identical" || not_ok "$a: $o objects differ"
    done
done
finish
