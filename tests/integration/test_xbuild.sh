#!/bin/bash
# ctest-tier: network
# Cross builds that need libraries (issue 13), as a new user does them: fetch a foreign sysroot
# from Debian's archive, build a project of our own that links libpng and zlib with the toolchain
# file (-DEMURUN_SYSROOT) and with the Meson cross files, and run its tests under emulation;
# build-dep on a real Debian source package; source packages with suite fallback and
# PKG=VERSION; a merged loader prefix that must follow a sysroot gaining a package (xz).
# Sysroots and the apt cache live in the build tree, so each is fetched once per CI run and
# shared by the parts. No network: the parts that need the archive skip and say so.
# ctest-parts: cmake_arm64 meson_arm64 cmake_s390x installed build_dep source stale_prefix errors usage
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
        0)
            # Not a terminal: one line per phase, each 'emurun-sysroot: ', no progress rewrites.
            if grep -q $'\r' "$T/sysroot.log" || grep -qv '^emurun-sysroot: ' "$T/sysroot.log"; then
                not_ok "fetch $name: its log is not one line per phase: $(cat -A "$T/sysroot.log" | head -n5)"
            elif ! grep -q "^emurun-sysroot: \[[0-9]*s\] unpacking [0-9]* packages into\|newly unpacked" \
                "$T/sysroot.log"; then
                not_ok "fetch $name: no unpacking phase nor summary: $(head -n5 "$T/sysroot.log")"
            fi
            return 0
            ;;
        3) skip_part "the Debian archive cannot be reached: $(tail -n1 "$T/sysroot.log")" ;;
        *) not_ok "emurun-sysroot fetch $name: $(cat "$T/sysroot.log")" ;;
    esac
    return 1
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

# docs/guides/cross-builds.md's way with an installed emurun and no emurun in PATH: the toolchain file and the
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
    # ignores the emulator: the sandbox's private binfmt_misc runs them (docs/guides/cross-builds.md).
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
    rc=0; sysroot fetch --arch arm64 --dir "$T/x" libpng-devv || rc=$?
    expect_eq "a misspelt package fails" 1 "$rc"
    expect_contains "similar names are shown" "$(cat "$T/sysroot.log")" "no package libpng-devv in "
    expect_contains "among them the right one" "$(cat "$T/sysroot.log")" "similar names: libpng-dev "
    # A package name guessed from a soname by Debian's naming policy (libxml2.so.2): the real
    # name comes first, the fewest edits away.
    rc=0; sysroot fetch --arch arm64 --dir "$T/x" libxml2-2 || rc=$?
    expect_contains "the closest similar name first" "$(cat "$T/sysroot.log")" "similar names: libxml2 "
    rc=0; sysroot fetch --arch arm64 --dir "$T/x" zlib1g=9.9 || rc=$?
    expect_eq "a version the archive does not have fails" 1 "$rc"
    expect_contains "the versions it has are shown" "$(cat "$T/sysroot.log")" "no version 9.9 of zlib1g in "
    expect_contains "with their epoch" "$(cat "$T/sysroot.log")" "the archive has 1:1.2"
    # build-dep that apt cannot satisfy: apt's unmet dependency, not just "held broken packages".
    mkdir -p "$T/impossible/debian"
    printf 'Source: impossible\nBuild-Depends: libc6-dev (>= 99), zlib1g-dev\n\nPackage: impossible\nArchitecture: any\n' \
        >"$T/impossible/debian/control"
    rc=0; sysroot build-dep --arch arm64 --dir "$T/x" "$T/impossible" || rc=$?
    expect_eq "unsatisfiable build-dependencies fail" 1 "$rc"
    expect_contains "the unmet dependency is named" "$(cat "$T/sysroot.log")" "unmet dependencies: builddeps:$T/impossible/:arm64 : Depends: libc6-dev:arm64 (>= 99)"
    # The cause of a failed update: a suite the mirror does not have; an arch the suite lacks.
    rc=0; "$sysroot_tool" fetch --cache "$T/c-suite" --arch arm64 --suite nosuch --dir "$T/x" zlib1g \
        2>"$T/suite.log" || rc=$?
    expect_eq "a suite the mirror does not have is exit 1, not 'unreachable'" 1 "$rc"
    expect_contains "it says the suite does not exist there" "$(cat "$T/suite.log")" "suite 'nosuch' does not exist on "
    rc=0; "$sysroot_tool" fetch --cache "$T/c-rv" --arch riscv64 --suite bookworm --dir "$T/x" zlib1g \
        2>"$T/rv.log" || rc=$?
    expect_eq "riscv64 on bookworm fails" 1 "$rc"
    expect_contains "saying bookworm has none, and which suite has" "$(cat "$T/rv.log")" \
        "bookworm has no riscv64 packages on $(sed -n 's/.*lists for riscv64 from \([^ ]*\) .*/\1/p' "$T/rv.log") (riscv64 is in Debian from trixie: --suite trixie)"
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
    # A full disk while unpacking: one short error saying so, not tar's hundreds of lines.
    mkdir -p "$T/full"
    unshare -m true 2>/dev/null || { skip_part "no mount namespace for a small tmpfs (the full-disk case)"; return; }
    # 1 MiB: ENOSPC in dpkg's words; 24 KiB: a short write, in tar's ("Wrote only N of M bytes").
    local size
    for size in 1m 24k; do
        rc=0; unshare -m --propagation private sh -c 'mount -t tmpfs -o size="$1" tmpfs "$2" && shift 2 && exec "$@"' - \
            "$size" "$T/full" "$sysroot_tool" fetch --cache "$cache" --arch arm64 --dir "$T/full" xz-utils 2>"$T/full.log" || rc=$?
        expect_eq "a full disk ($size) fails the fetch: exit 5 (this machine failed)" 5 "$rc"
        expect_contains "saying so" "$(cat "$T/full.log")" "no space left on device in $T/full (unpacking "
        expect_contains "and what to do" "$(cat "$T/full.log")" "free space or choose another --dir"
        [ "$(wc -l <"$T/full.log")" -le 3 ] && ok "in a few lines" || not_ok "$(wc -l <"$T/full.log") lines: $(head -n5 "$T/full.log")"
    done
    # A source tree that does not fit: exit 5 as well, and no half-unpacked tree left.
    rc=0; unshare -m --propagation private sh -c 'mount -t tmpfs -o size=1m tmpfs "$1" && shift && exec "$@"' - \
        "$T/full" "$sysroot_tool" source --cache "$cache" --dir "$T/full" zlib >/dev/null 2>"$T/full.log" || rc=$?
    expect_eq "a full disk fails the source: exit 5" 5 "$rc"
    expect_contains "...saying so" "$(cat "$T/full.log")" "no space left on device in $T/full (unpacking the source of zlib)"
}

# tool ARGS...: emurun-sysroot with a cache of this part's own; stdout in $T/tool.out, stderr in
# $T/tool.err; returns its code.
tool() {
    local rc=0
    "$sysroot_tool" "$@" >"$T/tool.out" 2>"$T/tool.err" || rc=$?
    return $rc
}

# usage_case LABEL CODE NEEDLE ARGS...: emurun-sysroot ARGS exits CODE saying NEEDLE on stderr.
usage_case() {
    local label=$1 want=$2 needle=$3 rc=0
    shift 3
    tool "$@" || rc=$?
    expect_eq "$label: exit $want" "$want" "$rc"
    expect_contains "$label: says why" "$(cat "$T/tool.err")" "$needle"
}

# The command line and --dir, checked before the archive is asked anything (no network).
part_usage() {
    local h rc
    export EMURUN_CACHE_DIR=$T/emurun-cache # a regression must not fill the user's cache
    for h in --help -h help "fetch --help"; do
        rc=0; tool $h || rc=$?
        expect_eq "emurun-sysroot $h exits 0" 0 "$rc"
        expect_contains "emurun-sysroot $h prints the usage on stdout" "$(cat "$T/tool.out")" "emurun-sysroot fetch --arch ARCH --dir DIR"
    done
    usage_case "no arguments" 2 "no command given (fetch, source or build-dep)"
    expect_contains "no arguments: points to --help" "$(cat "$T/tool.err")" "emurun-sysroot --help"
    usage_case "an unknown command" 2 "unknown command 'bogus' (commands: fetch, source, build-dep)" bogus --dir "$T/x" z
    local o
    for o in --arch --dir --mirror --suite --cache --profiles; do
        usage_case "$o without a value" 2 "$o needs a value" fetch "$o"
    done
    EMURUN_SYSROOT_LOCK_TIMEOUT=abc usage_case "a lock timeout that is no number" 2 \
        "EMURUN_SYSROOT_LOCK_TIMEOUT='abc' is not a number of seconds" fetch --arch arm64 --dir "$T/x" zlib1g
    usage_case "a package name starting with '-'" 2 "'-zlib' is not a package name" fetch --arch arm64 --dir "$T/x" -- -zlib
    usage_case "an empty version" 2 "'zlib=' names no version" source --dir "$T/x" zlib=
    : >"$T/afile"
    usage_case "--dir under a file" 2 "cannot create the directory $T/afile/sub: $T/afile is not a directory" \
        fetch --arch arm64 --dir "$T/afile/sub" zlib1g
    # CMake's find modules and Meson's cross file cannot take such a sysroot path: refused up front.
    local bad
    for bad in "$T/a b" "$T/it's" "$T/semi;colon"; do
        usage_case "a sysroot path with a space or quote ($bad)" 2 "the sysroot path '$bad' holds a space, quote" \
            fetch --arch arm64 --dir "$bad" zlib1g
        [ ! -e "$bad" ] && ok "and nothing was made" || not_ok "$bad was made"
    done
    (cd "$T" && mkdir -p "sp ace" && cd "sp ace" && tool fetch --arch arm64 --dir rel zlib1g) && rc=0 || rc=$?
    expect_eq "a relative --dir under such a path too" 2 "$rc"
    # A read-only --dir is refused before anything is downloaded.
    mkdir -p "$T/ro"
    if [ "$(id -u)" != 0 ]; then
        chmod 555 "$T/ro"
        rc=0; tool fetch --cache "$T/c" --arch arm64 --dir "$T/ro" zlib1g || rc=$?
    elif unshare -m true 2>/dev/null; then
        rc=0; unshare -m --propagation private sh -c 'mount --bind -o ro "$1" "$1" && shift && exec "$@"' - \
            "$T/ro" "$sysroot_tool" fetch --cache "$T/c" --arch arm64 --dir "$T/ro" zlib1g \
            >"$T/tool.out" 2>"$T/tool.err" || rc=$?
    else
        rc=skip
    fi
    if [ "$rc" = skip ]; then
        skip_part "no way to make a read-only directory here (root without mount namespaces)"
    else
        expect_eq "a read-only --dir fails" 1 "$rc"
        expect_contains "naming it" "$(cat "$T/tool.err")" "emurun-sysroot: error: cannot write into $T/ro:"
    fi
    # An unreachable mirror is exit 3 (skip), even when the cache holds another mirror's lists.
    mkdir -p "$T/c/arm64/lists"
    : >"$T/c/arm64/lists/deb.debian.org_debian_dists_bookworm_main_binary-arm64_Packages"
    rc=0; env -u http_proxy -u HTTP_PROXY "$sysroot_tool" fetch --cache "$T/c" --arch arm64 --suite bookworm \
        --mirror http://127.0.0.1:9/debian --dir "$T/x" zlib1g >/dev/null 2>"$T/tool.err" || rc=$?
    expect_eq "an unreachable mirror is exit 3" 3 "$rc"
    expect_contains "it says so, with the connection failure" "$(cat "$T/tool.err")" \
        "the Debian archive http://127.0.0.1:9/debian cannot be reached: Could not connect to 127.0.0.1:9"
    unset EMURUN_CACHE_DIR
}

# run_suggestion "emurun-sysroot ...": runs a suggested command with this tree's emurun-sysroot
# (installed beside emurun) and the shared cache (the words are split as a user's shell would).
run_suggestion() {
    local words
    read -r -a words <<<"$1"
    [ "${words[0]}" = emurun-sysroot ] || { echo "not an emurun-sysroot command: $1"; return 1; }
    "$sysroot_tool" "${words[@]:1}" --cache "$cache" >"$T/suggestion.log" 2>&1 || { cat "$T/suggestion.log"; return 1; }
}

run_parts cmake_arm64 meson_arm64 cmake_s390x installed build_dep source stale_prefix errors usage
finish
