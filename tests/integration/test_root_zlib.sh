#!/bin/bash
# A real autotools-style project from Debian's sources inside an arm64 root: zlib's
# ./configure && make && make check, accelerated and fully emulated, with the same test
# results (1); every object the accelerated compiler made is byte-identical to the emulated
# gcc's once the .comment version string is removed (2). Both builds see the tree at /src.
. "$(dirname "$0")/lib/common.sh"
. "$(dirname "$0")/lib/root.sh"
root_probe aarch64
command -v dpkg-source >/dev/null || skip "dpkg-source missing (apt-get install dpkg-dev)"

R=$T/arm64
make_root aarch64 "$R"
zlib_source "$T/zlib"
declare -A wall
for acc in default none; do
    cp -a "$T/zlib" "$T/z-$acc"
    start=$(date +%s.%N)
    rc=0
    "$EMURUN" root run --accelerate=$acc --bind "$T/z-$acc:/src" --cwd /src "$R" -- \
        sh -c './configure && make -j2 && make check' >"$T/z-$acc.log" 2>&1 || rc=$?
    wall[$acc]=$(echo "$(date +%s.%N) - $start" | bc)
    expect_eq "zlib configure+make+check, accelerate=$acc" 0 "$rc"
    [ "$rc" = 0 ] || tail -n 30 "$T/z-$acc.log"
    grep '\*\*\*.*test OK' "$T/z-$acc.log" | sort >"$T/z-$acc.results"
done
printf 'wall: accelerated %.1f s, emulated %.1f s\n' "${wall[default]}" "${wall[none]}"
expect_eq "same test results" "$(cat "$T/z-none.results")" "$(cat "$T/z-default.results")"
[ -s "$T/z-none.results" ] && ok "make check printed its OK lines" || not_ok "no test results"

# (2) The objects, compared without .comment (the host's objcopy for the target).
n=0 same=0
for o in "$T"/z-none/*.o; do
    b=$(basename "$o")
    n=$((n + 1))
    aarch64-linux-gnu-objcopy --remove-section .comment "$o" "$T/e.o"
    aarch64-linux-gnu-objcopy --remove-section .comment "$T/z-default/$b" "$T/a.o"
    if cmp -s "$T/e.o" "$T/a.o"; then same=$((same + 1)); else echo "differs: $b"; fi
done
[ "$n" -gt 10 ] && ok "$n objects compared" || not_ok "only $n objects"
expect_eq "accelerated objects identical to emulated ones" "$n" "$same"
finish
