#!/bin/bash
# ctest-tier: root
# ppc64le and s390x roots: create, enter (the target's uname and dpkg arch), one accelerated C
# and C++ compile each, with Debian's hardening flags (dpkg-buildflags' defaults), whose objects
# equal the root's emulated gcc's without .comment (times printed), and a C program from the
# accelerated gcc that runs with the target's loader, byte order and uname -m.
# The probe corpus (the root's hardening flags and Python's sysconfig CFLAGS) compiled both ways
# gives the same objects too. Runs when both roots are in the tests' root cache (about 30 s);
# creating them cold takes 8-15 minutes each on 2 cores, so that is opt-in: EMURUN_ROOT_ARCHES=1.
. "$(dirname "$0")/lib/common.sh"
. "$(dirname "$0")/lib/root.sh"
if [ "${EMURUN_ROOT_ARCHES:-0}" != 1 ] && ! { have_cached_root ppc64el && have_cached_root s390x; }; then
    skip "the ppc64el and s390x roots are not in $ROOT_CACHE: EMURUN_ROOT_ARCHES=1 creates them (~10 min each, once)"
fi
# root run with a cache dir of its own: the probe corpus runs here, not a cached verdict (the
# roots themselves come from the tests' root cache, XDG_CACHE_HOME in make_root).
rr() { EMURUN_CACHE_DIR=$T/cache "$EMURUN" root run "$@"; }
# dpkg-buildflags' CPPFLAGS and CFLAGS on bookworm (dpkg-dev is not in the root).
hardening="-Wdate-time -D_FORTIFY_SOURCE=2 -g -O2 -fstack-protector-strong -Wformat -Werror=format-security"
cp "$EMURUN_SOURCE_DIR/tests/fixtures/hello.cpp" "$EMURUN_SOURCE_DIR/tests/fixtures/probe.c" "$T/"
for quad in ppc64le:ppc64el:powerpc64le-linux-gnu:/lib64/ld64.so.2:little \
    s390x:s390x:s390x-linux-gnu:/lib/ld64.so.1:big; do
    IFS=: read -r a deb triplet loader order <<<"$quad"
    ( root_probe "$a" ) || { skip_part "$a: a probe failed (see above)"; continue; }
    make_root "$a" "$T/$a"
    out=$(rr --accelerate --allow-revision-mismatch "$T/$a" -- sh -c 'uname -m; dpkg --print-architecture' 2>"$T/warn-$a")
    expect_contains "$a: the probe corpus (hardening, sysconfig flags) gave the same objects" \
        "$(cat "$T/warn-$a")" "the probe corpus compiled to the same objects both ways"
    expect_eq "$a: target view" "$a
$deb" "$out"
    mkdir -p "$T/w-$a" && cp "$T/hello.cpp" "$T/probe.c" "$T/w-$a/"
    for acc in default none; do
        start=$(date +%s.%N)
        rr --accelerate=$acc --allow-revision-mismatch --bind "$T/w-$a:/w" --cwd /w "$T/$a" -- sh -c "
            g++ $hardening -c hello.cpp -o hello-$acc.o && gcc $hardening -c probe.c -o probe-$acc.o &&
            g++ hello-$acc.o -o hello && ./hello >/dev/null" ||
            not_ok "$a: compile and run (accelerate=$acc)"
        echo "$a: g++ and gcc $hardening -c, link, run (accelerate=$acc): $(echo "$(date +%s.%N) - $start" | bc) s"
    done
    # A C program built by the accelerated gcc is the target's: its loader, its byte order,
    # and uname(2) inside says the target's machine.
    out=$(rr --accelerate --allow-revision-mismatch --bind "$T/w-$a:/w" --cwd /w "$T/$a" -- sh -c '
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
