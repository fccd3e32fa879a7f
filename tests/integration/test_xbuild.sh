#!/bin/bash
# Cross builds that need libraries (issue 13), as a new user does them: fetch a foreign sysroot
# from Debian's archive, build a project of our own that links libpng and zlib with the toolchain
# file (-DEMURUN_SYSROOT) and with the Meson cross files, and run its tests under emulation;
# build-dep on a real Debian source package; source packages with suite fallback and
# PKG=VERSION; a merged loader prefix that must follow a sysroot gaining a package (xz).
# Sysroots and the apt cache live in the build tree, so each is fetched once per CI run and
# shared by the parts. No network: the parts that need the archive skip and say so.
# ctest-parts: cmake_arm64 meson_arm64 cmake_s390x installed build_dep source stale_prefix errors
. "$(dirname "$0")/lib/common.sh"

data=$EMURUN_SOURCE_DIR/tests/integration/data/pngdemo
cache=$EMURUN_BUILD_DIR/debian-cache
sysroots=$EMURUN_BUILD_DIR/sysroots
sysroot_tool=$EMURUN_SOURCE_DIR/tools/emurun-sysroot
gen=()
command -v ninja >/dev/null && gen=(-G Ninja)

# sysroot SUB ARGS...: emurun-sysroot SUB with the shared cache; output in $T/sysroot.log.
# Returns the tool's code; 3 (archive unreachable) makes the part skip.
sysroot() {
    local sub=$1 rc=0
    shift
    "$sysroot_tool" "$sub" --cache "$cache" "$@" >"$T/sysroot.out" 2>"$T/sysroot.log" || rc=$?
    return $rc
}

# fetched NAME ARCH PKG...: the shared sysroot NAME (fetched on first use); false after skip_part
# or not_ok when it cannot be made.
fetched() {
    local name=$1 arch=$2 rc=0
    shift 2
    sysroot fetch --arch "$arch" --dir "$sysroots/$name" "$@" || rc=$?
    case $rc in
        0) return 0 ;;
        3) skip_part "the Debian archive cannot be reached: $(tail -n1 "$T/sysroot.log")" ;;
        *) not_ok "emurun-sysroot fetch $name: $(cat "$T/sysroot.log")" ;;
    esac
    return 1
}

need_tools() {
    local t
    for t in "$@"; do
        command -v "$t" >/dev/null || { skip_part "$t missing (tools/install-deps installs it)"; return 1; }
    done
}

# cmake_build ARCH SYSROOT BUILD: the pngdemo with the toolchain file against SYSROOT, then ctest.
cmake_build() {
    local arch=$1 sr=$2 b=$3 rc=0
    cmake -S "$data" -B "$b" "${gen[@]}" -DCMAKE_TOOLCHAIN_FILE="$EMURUN_SOURCE_DIR/cmake/toolchains/$arch.cmake" \
        -DEMURUN_SYSROOT="$sr" -DEMURUN_EXECUTABLE="$EMURUN" >"$b.configure.log" 2>&1 || rc=$?
    expect_eq "$arch: cmake configure with -DEMURUN_SYSROOT" 0 "$rc"
    [ "$rc" -eq 0 ] || { tail -n 20 "$b.configure.log"; return; }
    expect_contains "$arch: pkg-config found libpng in the sysroot" "$(grep PNG_INCLUDE_DIRS: "$b/CMakeCache.txt")" "$sr/usr/include/libpng16"
    cmake --build "$b" >"$b.build.log" 2>&1 || rc=$?
    expect_eq "$arch: cmake build" 0 "$rc"
    [ "$rc" -eq 0 ] || { tail -n 20 "$b.build.log"; return; }
    expect_contains "$arch: pngdemo is a $arch program" "$("$EMURUN" inspect --sysroot "$sr" "$b/pngdemo" 2>&1)" "pngdemo: $arch,"
    (cd "$b" && ctest --output-on-failure -V >"$b.test.log" 2>&1) || rc=$?
    expect_eq "$arch: ctest under emulation" 0 "$rc"
    [ "$rc" -eq 0 ] || tail -n 30 "$b.test.log"
    expect_contains "$arch: ctest ran it through emurun with the sysroot" "$(cat "$b.test.log")" \
        "\"exec\" \"--arch\" \"$arch\" \"--sysroot\" \"$sr\" \"--\""
    expect_contains "$arch: libpng round trip ran" "$(cat "$b.test.log")" "png ok: libpng 1.6"
    expect_contains "$arch: zlib round trip ran" "$(cat "$b.test.log")" "zlib ok: zlib 1.2"
}

part_cmake_arm64() {
    need_tools aarch64-linux-gnu-gcc cmake pkg-config || return 0
    fetched png-arm64 arm64 libpng-dev libc6-dev || return 0
    cmake_build aarch64 "$sysroots/png-arm64" "$T/cmake-arm64"
}

part_cmake_s390x() {
    need_tools s390x-linux-gnu-gcc cmake pkg-config || return 0
    fetched png-s390x s390x libpng-dev libc6-dev || return 0
    cmake_build s390x "$sysroots/png-s390x" "$T/cmake-s390x"
}

part_meson_arm64() {
    need_tools aarch64-linux-gnu-gcc meson ninja pkg-config || return 0
    fetched png-arm64 arm64 libpng-dev libc6-dev || return 0
    local sr=$sysroots/png-arm64 b=$T/meson-arm64 rc=0
    local cross=$EMURUN_BUILD_DIR/share/meson/cross/emurun-aarch64-sysroot
    expect_contains "fetch wrote the sysroot's Meson constant" "$(cat "$sr/emurun-sysroot.ini")" "emurun_sysroot = '$sr'"
    meson setup --cross-file "$sr/emurun-sysroot.ini" --cross-file "$cross" "$b" "$data" \
        >"$T/meson-setup.log" 2>&1 || rc=$?
    expect_eq "meson setup with the sysroot cross file" 0 "$rc"
    [ "$rc" -eq 0 ] || { tail -n 30 "$T/meson-setup.log"; return; }
    expect_contains "meson: the compiler gets --sysroot" "$(cat "$b/build.ninja")" "--sysroot=$sr"
    expect_contains "meson: libpng's headers from the sysroot" "$(cat "$b/build.ninja")" "-I$sr/usr/include/libpng16"
    meson test -C "$b" >"$T/meson-test.log" 2>&1 || rc=$?
    expect_eq "meson test under emulation" 0 "$rc"
    [ "$rc" -eq 0 ] || cat "$T/meson-test.log" "$b/meson-logs/testlog.txt"
    local log
    log=$(cat "$b/meson-logs/testlog.txt")
    expect_contains "meson: the exe_wrapper is emurun with the sysroot" "$log" "$EMURUN exec --arch aarch64 --sysroot $sr --"
    expect_contains "meson: libpng round trip ran" "$log" "png ok: libpng 1.6"
}

# The README's way with an installed emurun and no emurun in PATH: the toolchain file and the
# cross file found by name must name the installed emurun themselves.
part_installed() {
    need_tools aarch64-linux-gnu-gcc cmake meson ninja pkg-config || return 0
    local p=$T/prefix rc=0 sr=$T/readme-sysroot
    cmake --install "$EMURUN_BUILD_DIR" --prefix "$p" >"$T/install.log" 2>&1 || rc=$?
    expect_eq "cmake --install into a fresh prefix" 0 "$rc"
    [ "$rc" -eq 0 ] || { tail "$T/install.log"; return; }
    rc=0; "$p/bin/emurun-sysroot" fetch --cache "$cache" --arch arm64 --dir "$sr" libpng-dev libc6-dev \
        >"$T/readme-fetch.log" 2>&1 || rc=$?
    [ "$rc" -eq 3 ] && { skip_part "the Debian archive cannot be reached"; return; }
    expect_eq "the installed tool fetches the sysroot" 0 "$rc"
    local clean=(env PATH=/usr/bin:/bin)
    rc=0; "${clean[@]}" cmake -S "$data" -B "$T/readme-cmake" "${gen[@]}" \
        -DCMAKE_TOOLCHAIN_FILE="$p/lib/cmake/emurun/toolchains/aarch64.cmake" -DEMURUN_SYSROOT="$sr" \
        >"$T/readme-cmake.log" 2>&1 && "${clean[@]}" cmake --build "$T/readme-cmake" >>"$T/readme-cmake.log" 2>&1 &&
        (cd "$T/readme-cmake" && "${clean[@]}" ctest -V >>"$T/readme-cmake.log" 2>&1) || rc=$?
    expect_eq "CMake: configure, build, ctest with the installed toolchain file, emurun not in PATH" 0 "$rc"
    [ "$rc" -eq 0 ] || tail -n 20 "$T/readme-cmake.log"
    expect_contains "ctest's emulator is the installed emurun" "$(cat "$T/readme-cmake.log")" "Test command: $p/bin/emurun \"exec\""
    rc=0; (cd "$T" && "${clean[@]}" XDG_DATA_DIRS="$p/share" meson setup --cross-file "$sr/emurun-sysroot.ini" \
        --cross-file emurun-aarch64-sysroot readme-meson "$data" >"$T/readme-meson.log" 2>&1 &&
        "${clean[@]}" meson test -C readme-meson >>"$T/readme-meson.log" 2>&1) || rc=$?
    expect_eq "Meson: setup with the cross file found by name, meson test, emurun not in PATH" 0 "$rc"
    [ "$rc" -eq 0 ] || tail -n 20 "$T/readme-meson.log"
}

part_build_dep() {
    need_tools aarch64-linux-gnu-gcc cmake || return 0
    local d=$sysroots/builddep-libpng rc=0
    sysroot build-dep --arch arm64 --dir "$d" libpng1.6 || rc=$?
    [ "$rc" -eq 3 ] && { skip_part "the Debian archive cannot be reached: $(tail -n1 "$T/sysroot.log")"; return; }
    expect_eq "build-dep libpng1.6 for arm64" 0 "$rc"
    [ "$rc" -eq 0 ] || { cat "$T/sysroot.log"; return; }
    local log
    log=$(cat "$T/sysroot.log")
    # zlib1g-dev is the foreign build-dependency; mawk (Multi-Arch: foreign) runs on the build
    # machine, and debhelper too: named, not unpacked.
    expect_contains "zlib's arm64 headers and library are in the sysroot" \
        "$(ls "$d/usr/include/zlib.h" "$d/usr/lib/aarch64-linux-gnu/libz.so" 2>&1)" "$d/usr/lib/aarch64-linux-gnu/libz.so"
    expect_contains "libc6-dev for arm64 too" "$(ls "$d/usr/lib/aarch64-linux-gnu/libc.so" 2>&1)" "$d/usr/lib/aarch64-linux-gnu/libc.so"
    expect_contains "the build machine's dependencies are named" "$log" "not put into the sysroot: mawk"
    [ ! -e "$d/usr/bin/mawk" ] && ok "mawk (Multi-Arch: foreign) is not in the sysroot" || not_ok "mawk was unpacked into the sysroot"
    expect_contains "the unpacked libz.so is arm64" "$(file -L "$d"/usr/lib/aarch64-linux-gnu/libz.so)" "ARM aarch64"
    # The suggested host command resolves (simulated: the host is not changed).
    local suggestion
    suggestion=$(sed -n 's/.*install them on this machine: apt-get install //p' "$T/sysroot.log")
    rc=0; apt-get install -s $suggestion >"$T/apt-s.log" 2>&1 || rc=$?
    expect_eq "the suggested 'apt-get install $suggestion' resolves (apt-get -s)" 0 "$rc"
    # The same from an unpacked source tree (debian/control), then build libpng's own source
    # against that sysroot and run its test (pngtest) under emulation.
    rc=0; sysroot source --dir "$T/src" libpng1.6 || rc=$?
    expect_eq "source libpng1.6" 0 "$rc"
    [ "$rc" -eq 0 ] || { cat "$T/sysroot.log"; return; }
    local tree
    tree=$(cat "$T/sysroot.out")
    rc=0; sysroot build-dep --arch arm64 --dir "$T/bd-tree" "$tree" || rc=$?
    expect_eq "build-dep from the source tree's debian/control" 0 "$rc"
    expect_contains "the source tree's closure has zlib" "$(ls "$T/bd-tree/usr/include/zlib.h" 2>&1)" "$T/bd-tree/usr/include/zlib.h"
    # libpng's tests run through a CMake script (add_test(... COMMAND cmake -P ...)), which
    # ignores the emulator: the sandbox's private binfmt_misc runs them (README).
    # (Only pngtest and what it needs are built: libpng 1.6.39's CMake races pnglibconf.h in
    # a full parallel build.)
    rc=0
    cmake -S "$tree" -B "$T/libpng-build" "${gen[@]}" -DCMAKE_TOOLCHAIN_FILE="$EMURUN_SOURCE_DIR/cmake/toolchains/aarch64.cmake" \
        -DEMURUN_SYSROOT="$d" -DEMURUN_EXECUTABLE="$EMURUN" -DPNG_SHARED=ON -DPNG_STATIC=OFF \
        -DPNG_TESTS=ON >"$T/libpng-configure.log" 2>&1 &&
        cmake --build "$T/libpng-build" --target pngtest >"$T/libpng-build.log" 2>&1 || rc=$?
    expect_eq "libpng's own source cross-builds against the build-dep sysroot" 0 "$rc"
    [ "$rc" -eq 0 ] || { tail -n 20 "$T"/libpng-*.log; return; }
    need_sandbox || return 0
    (cd "$T/libpng-build" && "$EMURUN" sandbox --arch aarch64 --sysroot "aarch64=$d" -- \
        ctest -R '^pngtest$' --output-on-failure >"$T/libpng-test.log" 2>&1) || rc=$?
    expect_eq "libpng's pngtest passes under emulation (emurun sandbox -- ctest)" 0 "$rc"
    [ "$rc" -eq 0 ] || tail -n 30 "$T/libpng-test.log"
}

part_source() {
    local rc=0 out
    sysroot source --dir "$T/src" expat || rc=$?
    [ "$rc" -eq 3 ] && { skip_part "the Debian archive cannot be reached: $(tail -n1 "$T/sysroot.log")"; return; }
    expect_eq "source expat (falls back across suites when one fails)" 0 "$rc"
    [ "$rc" -eq 0 ] || { cat "$T/sysroot.log"; return; }
    out=$(cat "$T/sysroot.out")
    expect_contains "source expat prints the tree" "$out" "$T/src/expat-"
    [ -f "$out/debian/control" ] && ok "expat's tree has debian/control" || not_ok "no $out/debian/control"
    local ver
    ver=$(sed -n '1s/^expat (\(.*\)).*/\1/p' "$out/debian/changelog")
    rc=0; sysroot source --dir "$T/src2" "expat=$ver" || rc=$?
    expect_eq "source expat=$ver (PKG=VERSION)" 0 "$rc"
    expect_contains "PKG=VERSION unpacks that version" "$(head -n1 "$(cat "$T/sysroot.out")/debian/changelog")" "expat ($ver)"
    rc=0; sysroot source --dir "$T/src3" libpng1.6 || rc=$?
    expect_eq "source libpng1.6" 0 "$rc"
    expect_contains "libpng1.6's tree" "$(cat "$T/sysroot.out")" "$T/src3/libpng1.6-1.6"
    rc=0; sysroot source --dir "$T/src4" expat=0.0.0-0 || rc=$?
    expect_eq "an unknown version is an error" 1 "$rc"
    expect_contains "it names the versions there are" "$(cat "$T/sysroot.log")" "no version 0.0.0-0 of expat: the archive has expat=$ver"
}

part_stale_prefix() {
    need_tools dpkg-deb || return 0
    local cross=/usr/aarch64-linux-gnu
    [ -f $cross/lib/libc.so.6 ] || { skip_part "$cross/lib/libc.so.6 missing (tools/install-deps installs the cross compilers)"; return; }
    fetched xz-arm64 arm64 xz-utils || return 0
    # Two sysroots, as a user has them: Debian's cross libc, and one holding the tool.
    local archives=$cache/arm64/archives s=$T/stale
    rm -rf "$s" && mkdir -p "$s/tool" "$s/shims"
    ln -s $cross "$s/libc"
    export EMURUN_CACHE_DIR=$T/emurun-cache
    dpkg -x "$(ls "$archives"/xz-utils_*.deb | head -n1)" "$s/tool"
    # A merged prefix of the two sysroots is made while the tool's sysroot lacks liblzma...
    local rc=0
    need_sandbox || return 0
    "$EMURUN" sandbox --arch aarch64 --sysroot "aarch64=$s/libc" --sysroot "aarch64=$s/tool" -- true \
        >"$T/sandbox.log" 2>&1 || rc=$?
    expect_eq "the sandbox makes the merged prefix of both sysroots" 0 "$rc"
    [ "$rc" -eq 0 ] || { tail -n 5 "$T/sandbox.log"; return; }
    # ... then liblzma5 is unpacked into it, and a shim is made: it must work, now and after
    # the sysroot gains yet another package.
    dpkg -x "$(ls "$archives"/liblzma5_*.deb | head -n1)" "$s/tool"
    rc=0; "$EMURUN" shim add xz --target "$s/tool/usr/bin/xz" --arch arm64 --sysroot "$s/libc" \
        --sysroot "$s/tool" --dir "$s/shims" >"$T/shim.log" 2>&1 || rc=$?
    expect_eq "shim add xz" 0 "$rc"
    [ "$rc" -eq 0 ] || cat "$T/shim.log"
    local out
    out=$(echo "emurun stale prefix" | "$s/shims/xz" -c | "$s/shims/xz" -dc 2>&1) || true
    expect_eq "the xz shim runs (liblzma found through the merged prefix)" "emurun stale prefix" "$out"
    rc=0; out=$("$EMURUN" exec --sysroot "$s/libc" --sysroot "$s/tool" -- "$s/tool/usr/bin/xz" --version 2>&1) || rc=$?
    expect_eq "emurun exec with both sysroots exits 0" 0 "$rc"
    expect_contains "emurun exec with both sysroots runs xz" "$out" "liblzma"
    dpkg -x "$(ls "$archives"/libgcc-s1_*.deb | head -n1)" "$s/tool"
    rc=0; "$EMURUN" exec --sysroot "$s/libc" --sysroot "$s/tool" -- "$s/tool/usr/bin/xz" --version >"$T/exec2.log" 2>&1 || rc=$?
    expect_eq "emurun exec after the sysroot gained a package exits 0" 0 "$rc"
    [ "$rc" -eq 0 ] || tail -n 5 "$T/exec2.log"
    out=$(echo "after another package" | "$s/shims/xz" -c | "$s/shims/xz" -dc 2>&1) || true
    expect_eq "the shim still runs after the sysroot gained another package" "after another package" "$out"
    local versions
    versions=$(find "$EMURUN_CACHE_DIR/prefix" -maxdepth 1 -name '.v-*' | wc -l)
    [ "$versions" -ge 2 ] && ok "each change of the sysroots gave a new prefix version ($versions)" ||
        not_ok "expected a new prefix version per change, found $versions"
    unset EMURUN_CACHE_DIR
}

part_errors() {
    local rc=0 log
    sysroot fetch --arch sparc99 --dir "$T/x" zlib1g || rc=$?
    expect_eq "an unknown arch is a usage error" 2 "$rc"
    expect_contains "it names the arch and the known ones" "$(cat "$T/sysroot.log")" "unknown architecture 'sparc99' (use arm64"
    : >"$T/afile"
    rc=0; sysroot fetch --arch arm64 --dir "$T/afile" zlib1g || rc=$?
    expect_eq "--dir naming a file is a usage error" 2 "$rc"
    expect_contains "it says so" "$(cat "$T/sysroot.log")" "$T/afile is not a directory"
    rc=0; sysroot build-dep --arch arm64 --dir "$T/bd" "$T/afile" || rc=$?
    expect_eq "build-dep of a file is a usage error" 2 "$rc"
    # Runs sharing a cache take turns: one holding the lock makes another wait, then give up
    # naming the lock (parallel CI jobs corrupted each other's apt lists before).
    mkdir -p "$T/lockcache"
    flock "$T/lockcache/.lock" sleep 5 &
    local holder=$! t0=$SECONDS
    sleep 0.3
    rc=0; EMURUN_SYSROOT_LOCK_TIMEOUT=1 "$sysroot_tool" fetch --cache "$T/lockcache" --arch arm64 \
        --dir "$T/x" zlib1g >/dev/null 2>"$T/lock.log" || rc=$?
    expect_eq "a run finding the cache locked past the timeout fails" 1 "$rc"
    expect_contains "it said it waits" "$(cat "$T/lock.log")" "waiting for another emurun-sysroot using $T/lockcache"
    expect_contains "and names the lock" "$(cat "$T/lock.log")" "held $T/lockcache for 1 s"
    [ $((SECONDS - t0)) -lt 5 ] && ok "it gave up after the timeout" || not_ok "it waited $((SECONDS - t0)) s"
    wait "$holder"
    rc=0; sysroot fetch --arch arm64 --dir "$T/x" no-such-package-emurun || rc=$?
    [ "$rc" -eq 3 ] && { skip_part "the Debian archive cannot be reached"; return; }
    expect_eq "a package that does not exist fails" 1 "$rc"
    expect_contains "and is named" "$(cat "$T/sysroot.log")" "no-such-package-emurun"
    # The toolchain file refuses a sysroot without a C library and suggests a command: run it.
    need_tools aarch64-linux-gnu-gcc cmake || return 0
    mkdir -p "$T/empty-sr"
    rc=0; cmake -S "$data" -B "$T/bad" -DCMAKE_TOOLCHAIN_FILE="$EMURUN_SOURCE_DIR/cmake/toolchains/aarch64.cmake" \
        -DEMURUN_SYSROOT="$T/empty-sr" -DEMURUN_EXECUTABLE="$EMURUN" >"$T/bad.log" 2>&1 || rc=$?
    [ "$rc" -ne 0 ] && ok "an empty EMURUN_SYSROOT fails configure" || not_ok "an empty EMURUN_SYSROOT configured"
    log=$(tr -s ' \n' ' ' <"$T/bad.log")
    expect_contains "and names what is missing" "$log" "has no usr/lib/aarch64-linux-gnu/libc.so"
    local suggestion
    suggestion=$(echo "$log" | sed -n 's/.*Make one with: \(emurun-sysroot fetch [^(]*\) (add.*/\1/p')
    expect_contains "it suggests emurun-sysroot fetch" "$suggestion" "emurun-sysroot fetch --arch aarch64 --dir $T/empty-sr libc6-dev"
    rc=0; run_suggestion "$suggestion" || rc=$?
    expect_eq "the suggested command works" 0 "$rc"
    # libc6-dev alone: the toolchain accepts the sysroot and the compiler links against it
    # (the project's own -dev packages are the user's to add, as the message says).
    cmake -S "$data" -B "$T/bad" >"$T/bad2.log" 2>&1 || true
    log=$(cat "$T/bad2.log")
    case $log in
        *"has no usr/lib"*) not_ok "after it, the toolchain file still refuses the sysroot" ;;
        *) ok "after it, the toolchain file accepts the sysroot" ;;
    esac
    expect_contains "and the cross compiler links against it" "$log" "Detecting C compiler ABI info - done"
    # emurun exec's missing-library error suggests a command too: run it, then the program runs.
    fetched xz-arm64 arm64 xz-utils || return 0
    mkdir -p "$T/bare"
    rc=0; log=$("$EMURUN" exec --sysroot "$T/bare" -- "$sysroots/xz-arm64/usr/bin/xz" --version 2>&1) || rc=$?
    expect_eq "a program whose libraries are missing fails" 125 "$rc"
    log=$(echo "$log" | tr -s ' \n' ' ')
    suggestion=$(echo "$log" | sed -n "s/.*with '\(emurun-sysroot fetch [^']*\)'.*/\1/p")
    expect_contains "the error suggests fetching the packages" "$suggestion" "emurun-sysroot fetch --arch arm64 --dir $T/bare"
    expect_contains "liblzma's package among them" "$suggestion" "liblzma5"
    rc=0; run_suggestion "$suggestion" || rc=$?
    expect_eq "the suggested command works" 0 "$rc"
    rc=0; log=$("$EMURUN" exec --sysroot "$T/bare" -- "$sysroots/xz-arm64/usr/bin/xz" --version 2>&1) || rc=$?
    expect_eq "after it, the program runs" 0 "$rc"
    expect_contains "it is xz" "$log" "liblzma"
}

# run_suggestion "emurun-sysroot ...": runs a suggested command with this tree's emurun-sysroot
# (installed beside emurun) and the shared cache (the words are split as a user's shell would).
run_suggestion() {
    local words
    read -r -a words <<<"$1"
    [ "${words[0]}" = emurun-sysroot ] || { echo "not an emurun-sysroot command: $1"; return 1; }
    "$sysroot_tool" "${words[@]:1}" --cache "$cache" >"$T/suggestion.log" 2>&1 || { cat "$T/suggestion.log"; return 1; }
}

run_parts cmake_arm64 meson_arm64 cmake_s390x installed build_dep source stale_prefix errors
finish
