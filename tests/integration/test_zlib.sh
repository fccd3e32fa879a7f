#!/bin/bash
# ctest-tier: network
# A real third-party test suite under emulation: zlib's Debian source package, cross-built for
# aarch64 and ppc64le with emurun's toolchain files, its own CTest tests run under emurun.
# zlib registers them with the old add_test(name command) signature, which ignores
# CMAKE_CROSSCOMPILING_EMULATOR, so ctest runs inside `emurun sandbox`, where a private
# binfmt_misc lets the kernel start the foreign test programs directly.
set -u
src_dir=$EMURUN_SOURCE_DIR
for a in aarch64 ppc64le; do
    command -v "$(grep -o '[a-z0-9_-]*-linux-gnu[a-z]*' "$src_dir/cmake/toolchains/$a.cmake" | head -n1)-gcc" >/dev/null ||
        { echo "skipped: no cross compiler for $a (tools/install-deps)"; exit 125; }
done
command -v dpkg-source >/dev/null || { echo "skipped: dpkg-source missing (apt-get install dpkg-dev)"; exit 125; }
probe=$("$EMURUN" sandbox --help >/dev/null 2>&1 && echo ok)
[ "$probe" = ok ] || { echo "skipped: this emurun has no working 'sandbox' command yet"; exit 125; }

cache=${XDG_CACHE_HOME:-$HOME/.cache}/emurun
zlib=$("$src_dir/tools/emurun-sysroot" source --dir "$cache/src" zlib 2>"$EMURUN_TESTDIR_ROOT/zlib-source.log")
rc=$?
if [ $rc -eq 3 ]; then
    echo "skipped: the Debian archive cannot be reached: $(tail -n1 "$EMURUN_TESTDIR_ROOT/zlib-source.log")"
    exit 125
elif [ $rc -ne 0 ] || [ ! -f "$zlib/CMakeLists.txt" ]; then
    echo "FAIL: fetching zlib's source package:"
    cat "$EMURUN_TESTDIR_ROOT/zlib-source.log"
    exit 1
fi
# Debian's source lacks the Windows resource file zlib's CMakeLists names.
mkdir -p "$zlib/win32" && touch "$zlib/win32/zlib1.rc"

mkdir -p "$EMURUN_TESTDIR_ROOT"
t=$(mktemp -d "$EMURUN_TESTDIR_ROOT/zlib.XXXXXX")
gen=()
command -v ninja >/dev/null && gen=(-G Ninja)
failures=0
for arch in aarch64 ppc64le; do
    b=$t/build-$arch
    if ! cmake -S "$zlib" -B "$b" "${gen[@]}" -DCMAKE_BUILD_TYPE=Release \
        -DCMAKE_TOOLCHAIN_FILE="$src_dir/cmake/toolchains/$arch.cmake" \
        -DEMURUN_EXECUTABLE="$EMURUN" >"$b.configure.log" 2>&1 ||
        ! cmake --build "$b" >"$b.build.log" 2>&1; then
        echo "FAIL: cross-building zlib for $arch:"
        tail -n 30 "$b".*.log
        failures=$((failures + 1))
        continue
    fi
    file -b "$b/example" | grep -qi "$( [ $arch = aarch64 ] && echo aarch64 || echo PowerPC)" ||
        { echo "FAIL: $b/example is not a $arch program: $(file -b "$b/example")"; failures=$((failures + 1)); }
    # ctest's options go in a script: `emurun sandbox` passes the command's own options through
    # CLI11, which currently rejects them after "--".
    printf '#!/bin/sh\nexec ctest --test-dir "%s" --output-on-failure\n' "$b" >"$b.run-ctest"
    chmod +x "$b.run-ctest"
    if "$EMURUN" sandbox --arch $arch -- "$b.run-ctest" >"$b.ctest.log" 2>&1; then
        echo "$arch: $(grep -o '[0-9]*% tests passed.*' "$b.ctest.log")"
        grep -q 'tests passed, 0 tests failed out of [1-9]' "$b.ctest.log" ||
            { echo "FAIL: $arch: no tests ran"; failures=$((failures + 1)); }
    else
        echo "FAIL: zlib's tests under emulation on $arch:"
        tail -n 30 "$b.ctest.log"
        failures=$((failures + 1))
    fi
done
[ $failures -eq 0 ] || { echo "$failures failure(s); files in $t"; exit 1; }
rm -rf "$t"
