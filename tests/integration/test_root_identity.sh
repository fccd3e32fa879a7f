#!/bin/bash
# ctest-tier: root
# ctest-parts: hello libogg jansson libyaml fribidi
# Proof of identity for the native tools of an accelerated root (issue 32): GNU hello, libogg and
# libyaml (autotools; libyaml's configure made by autoreconf in the root), jansson (CMake +
# Ninja) and fribidi (Meson + Ninja), Debian's sources, each configured, built and checked in an
# arm64 root twice with Debian's hardening flags (dpkg-buildflags, hardening=+all): fully
# emulated (--accelerate=none) and with the default --accelerate (the root's sh, sed, grep, awk,
# m4, coreutils, find, tar, ninja ... run as the host's programs; the compilers as the identity
# rule decides). The same config.h, the same configure substitutions (config.status's S[...]
# lines; CMakeCache.txt for CMake; build.ninja, meson-info and the checks' answers for Meson),
# the same generated configure and Makefile.in, the same objects but for .comment, the same
# test results. Both builds use the same path inside the root (/src), so no path differs.
# The fully emulated build is the reference, kept in a cache keyed by all its inputs (see
# reference_key): a run whose inputs are unchanged makes only the accelerated build.
. "$(dirname "$0")/lib/common.sh"
. "$(dirname "$0")/lib/root.sh"
root_probe aarch64
command -v aarch64-linux-gnu-objcopy >/dev/null || skip "no aarch64-linux-gnu-objcopy (binutils-aarch64-linux-gnu)"
command -v dpkg-buildflags >/dev/null || skip "dpkg-buildflags missing (apt-get install dpkg-dev)"

W=$T/identity
mkdir -p "$W"
make_root aarch64 "$W/root"

# The native tools must really be native here, else this proves nothing: the root's dash runs
# as the host's (x86-64 libc in its maps, no qemu), uname still says aarch64, and no native
# tool of the shell group was kept emulated by the identity rule.
view=$("$EMURUN" root run --accelerate "$W/root" -- sh -c 'uname -m
    grep -q x86_64-linux-gnu/libc /proc/$$/maps && echo host-libc
    grep -q qemu /proc/$$/maps && echo qemu; true' 2>"$T/view.err" | tr '\n' ' ')
kept=$(grep -oE '(sh|sed|grep|awk|m4|coreutils|findutils|diffutils|tar|gzip|xz|ninja) kept emulated: [^;]*' "$T/view.err" || true)
[ -z "$kept" ] || skip "the identity rule keeps native tools emulated here (host and root differ): $kept"
expect_eq "--accelerate: uname says aarch64, sh is the host's dash (x86-64 libc, no qemu)" \
    "aarch64 host-libc " "$view"

# Debian's hardening flags for arm64, the file prefix map at the in-root path.
flags=()
for v in CFLAGS CPPFLAGS CXXFLAGS LDFLAGS; do
    val=$(DEB_HOST_ARCH=arm64 DEB_BUILD_MAINT_OPTIONS=hardening=+all dpkg-buildflags --get "$v" |
        sed 's/-ffile-prefix-map=[^ ]*/-ffile-prefix-map=\/src=./')
    flags+=(--env "$v=$val")
done
echo "flags: ${flags[*]}"

# build MODE PROJECT SCRIPT [LABEL]: a fresh copy of PROJECT's source built in the root at /src,
# in $W/PROJECT-LABEL (LABEL: MODE), its output in $W/PROJECT-LABEL.log. Fails (returns 1) when
# the build does.
build() {
    local acc=$1 dir=$W/$2-${4:-$1}
    rm -rf "$dir" && cp -a "$src" "$dir"
    local s=$SECONDS rc=0
    "$EMURUN" root run --accelerate="$acc" "${flags[@]}" --bind "$dir:/src" --cwd /src "$W/root" \
        -- sh -c "$3" >"$dir.log" 2>&1 || rc=$?
    echo "$2 --accelerate=$acc: exit $rc in $((SECONDS - s)) s"
    [ "$rc" = 0 ] && return 0
    tail -n 40 "$dir.log"
    not_ok "$2 built and tested with --accelerate=$acc"
    return 1
}

# build_both PROJECT SCRIPT: PROJECT built fully emulated (the reference: from the cache when
# one of the same inputs is there), then with the default --accelerate.
build_both() {
    reference "$1" "$2"
    build default "$1" "$2"
}

# The fully emulated builds are the reference: 3-20 minutes each on 2 cores. One is kept in
# $REF_CACHE (a CI cache, like the roots), keyed by everything that decides what a fully
# emulated build makes: the root's packages (its dpkg status, after root_tools), the source's
# files, the script, the flags, the environment the build sees in the root, emurun's and QEMU's
# versions. A change to any of them builds the reference again; EMURUN_IDENTITY_FRESH=1 always
# does. The accelerated build is made in every run and compared with it.
REF_CACHE=${EMURUN_IDENTITY_CACHE:-$ROOT_CACHE/identity}

# reference_key SCRIPT: the key of the fully emulated build of $src with SCRIPT (16 hex digits).
reference_key() {
    {
        echo "emurun identity reference 1"
        printf '%s\n' "$1" "${flags[@]}"
        "$EMURUN" --version
        qemu-aarch64-static --version | head -n1
        # The environment a build sees (without what names this run: PWD is /src in both).
        "$EMURUN" root run --accelerate=none "${flags[@]}" --bind "$src:/src" --cwd /src \
            "$W/root" -- env | sort
        cat "$W/root/var/lib/dpkg/status"
        (cd "$src" && find . -type f -print0 | LC_ALL=C sort -z | xargs -0 sha256sum)
    } | sha256sum | cut -c1-16
}

# reference PROJECT SCRIPT: $W/PROJECT-none and its log, the fully emulated build: unpacked from
# the cache, or built and then cached (only a build that succeeded; the two newest kept).
reference() {
    local key file
    key=$(reference_key "$2") || { not_ok "$1: the reference's key"; return 1; }
    file=$REF_CACHE/$1-$key.tar.gz
    if [ "${EMURUN_IDENTITY_FRESH:-0}" != 1 ] && [ -f "$file" ]; then
        rm -rf "$W/$1-none" "$W/$1-none.log"
        if tar -C "$W" -xzf "$file"; then
            echo "$1 --accelerate=none: the cached reference $file ($(date -ur "$file" '+%F %T UTC'))"
            return 0
        fi
        echo "$1: the cached reference $file cannot be unpacked: building it again"
    fi
    build none "$1" "$2" || return 1
    mkdir -p "$REF_CACHE" &&
        tar -C "$W" -czf "$file.$$.tmp" "$1-none" "$1-none.log" && mv -f "$file.$$.tmp" "$file" ||
        { rm -f "$file.$$.tmp"; echo "$1: the reference was not cached (see above)"; return 0; }
    # shellcheck disable=SC2012 # names are PROJECT-HEX.tar.gz
    ls -t "$REF_CACHE/$1"-*.tar.gz | tail -n +3 | xargs -r rm -f
}

# root_tools PACKAGE...: installed into this suite's copy of the root (not into the shared test
# root: its cache key would change for every suite).
root_tools() {
    "$EMURUN" root install "$W/root" "$@" >"$T/install.log" 2>&1 && return 0
    tail -n 20 "$T/install.log"
    not_ok "root install $*"
    return 1
}

# same_objects PROJECT: every object of both builds, without .comment, the same bytes.
same_objects() {
    local n=0 same=0 o
    (cd "$W/$1-none" && find . -name '*.o' | sort) >"$T/objs-none"
    (cd "$W/$1-default" && find . -name '*.o' | sort) >"$T/objs-default"
    expect_eq "$1: the same objects made" "$(cat "$T/objs-none")" "$(cat "$T/objs-default")"
    while read -r o; do
        n=$((n + 1))
        aarch64-linux-gnu-objcopy --remove-section .comment "$W/$1-none/$o" "$T/e.o"
        aarch64-linux-gnu-objcopy --remove-section .comment "$W/$1-default/$o" "$T/a.o"
        if cmp -s "$T/e.o" "$T/a.o"; then same=$((same + 1)); else echo "differs: $o"; fi
    done <"$T/objs-none"
    [ "$n" -gt 0 ] && ok "$1: $n objects compared" || not_ok "$1: no objects"
    expect_eq "$1: objects identical but for .comment" "$n" "$same"
}

# same_file PROJECT FILE [FILTER]: FILE of both builds the same (after FILTER, a sed script).
same_file() {
    local f=$2 filter=${3:-p}
    [ -f "$W/$1-none/$f" ] || { not_ok "$1: no $f"; return; }
    sed -n "$filter" "$W/$1-none/$f" >"$T/f-none"
    sed -n "$filter" "$W/$1-default/$f" >"$T/f-default" 2>/dev/null || true
    same_text "$1" "$f"
}

# same_json PROJECT FILE: FILE of both builds the same, one JSON value a line (Meson writes its
# introspection on one line: a diff of it would be unreadable).
same_json() {
    local m
    [ -f "$W/$1-none/$2" ] || { not_ok "$1: no $2"; return; }
    for m in none default; do
        python3 -m json.tool "$W/$1-$m/$2" >"$T/f-$m" 2>/dev/null || true
    done
    same_text "$1" "$2"
}

# same_text PROJECT WHAT: $T/f-none and $T/f-default (WHAT of the two builds) the same.
same_text() {
    if [ -s "$T/f-none" ] && cmp -s "$T/f-none" "$T/f-default"; then
        ok "$1: the same $2 ($(wc -l <"$T/f-none") lines compared)"
    else
        not_ok "$1: $2 differs (or is empty):"
        diff "$T/f-none" "$T/f-default" | head -n 20
    fi
}

# same_results PROJECT REGEX: the lines of the two logs that give test results (sorted: make
# -j2 check finishes tests in either order; without their times).
same_results() {
    local m
    for m in none default; do
        grep -E "$2" "$W/$1-$m.log" | sed -E "$untimed" | sort >"$T/r-$m" || true
    done
    [ -s "$T/r-none" ] && ok "$1: the tests reported ($(wc -l <"$T/r-none") lines)" ||
        not_ok "$1: no test results in the emulated log"
    expect_eq "$1: the same test results" "$(cat "$T/r-none")" "$(cat "$T/r-default")"
}

# A test line without its time (ctest's "0.05 sec"; meson test's "0.05s", before "exit status 1"
# on a failure) and its counter ("1/6").
untimed='s/ +[0-9.]+ sec$//; s/ +[0-9]+\.[0-9]+s( |$)/\1/; s/^ *[0-9]+\/[0-9]+ //'

# The configure substitutions: config.status's S["NAME"]="VALUE" lines.
subst='/^S\["/p'
# The lines of meson-log.txt that say what Meson found (see part_fribidi).
meson_decisions='/^\(C\|C++\) \(compiler\|linker\) for\|^\(Build\|Host\) machine\|^Compiler for\|^Checking\|^Has header\|^Program .* found\|^Run-time dependency\|^Library .* found/p'
automake_results='^(# (TOTAL|PASS|SKIP|XFAIL|FAIL|XPASS|ERROR):|(PASS|FAIL|SKIP|XFAIL|XPASS|ERROR): )'
# meson test's lines (" 1/8 CapRTL_explicit   OK   0.05s") and its counts ("Fail:   0").
meson_results='^ *[0-9]+/[0-9]+ .* (OK|FAIL|SKIP|EXPECTEDFAIL|UNEXPECTEDPASS|TIMEOUT|ERROR) '
meson_results+='|^(Ok|Expected Fail|Fail|Unexpected Pass|Skipped|Timeout): '
autotools='./configure && make -j2 && make -j2 check'

project() { # NAME: its Debian source, unpacked once in the root cache
    src=$("$EMURUN_SOURCE_DIR/tools/emurun-sysroot" source --cache "$ROOT_CACHE/apt" \
        --dir "$ROOT_CACHE/src" "$1" 2>"$T/source.log") || {
        grep -q 'cannot be reached\|Temporary failure' "$T/source.log" &&
            { skip_part "the Debian archive cannot be reached: $(tail -n1 "$T/source.log")"; return 1; }
        cat "$T/source.log"; not_ok "emurun-sysroot source $1"; return 1
    }
}

part_hello() {
    project hello || return 0
    build_both hello "$autotools"
    same_file hello config.h
    same_file hello config.status "$subst"
    same_objects hello
    same_results hello "$automake_results"
}

part_libogg() {
    project libogg || return 0
    build_both libogg "$autotools"
    same_file libogg config.h
    same_file libogg config.status "$subst"
    same_file libogg include/ogg/config_types.h
    same_objects libogg
    # Its check rule runs test_bitwise and test_framing, which print "Testing ... ok." lines.
    same_results libogg '(^[Tt]esting |ok\.$|FAIL|[Ee]rror)'
}

part_jansson() {
    root_tools cmake ninja-build || return 0
    project jansson || return 0
    local cmake='cmake -G Ninja -S . -B build -DCMAKE_BUILD_TYPE=None && ninja -C build'
    local check='ctest --test-dir build -j2'
    build_both jansson "$cmake && $check"
    same_file jansson build/private_include/jansson_private_config.h
    same_file jansson build/include/jansson_config.h
    # The cache without its comments (CMAKE_COMMAND and friends name the same in-root paths).
    same_file jansson build/CMakeCache.txt '/^[^#/]/p'
    same_objects jansson
    same_results jansson '(Test +#[0-9]+:|tests passed|tests failed)'
    # cmake is an opt-in native tool (its cmake_host_system_information reads the host's
    # machine; jansson does not call it): built again with cmake native, compared with the
    # emulated build the same way, and with CMake's record of the host system too. Its tests are
    # not run again: cmake makes the build files, and the objects are compared.
    ln -sfn "$W/jansson-none" "$W/jansson+cmake-none"
    ln -sf "$W/jansson-none.log" "$W/jansson+cmake-none.log"
    local maps
    # cmake's own maps, read by its child (cmake -E cat prints nothing of a /proc file: size 0).
    # shellcheck disable=SC2016 # $PPID is the in-root shell's
    maps=$("$EMURUN" root run --accelerate=toolchain,shell,cmake "$W/root" -- \
        cmake -E env sh -c 'cat /proc/$PPID/maps' 2>&1)
    grep -q 'x86_64-linux-gnu/libc\.so' <<<"$maps" && ok "--accelerate=...,cmake: cmake runs as the host's" ||
        { not_ok "--accelerate=...,cmake: cmake is not the host's:"; grep -i 'cmake\|libc' <<<"$maps" | head -n 5; }
    build toolchain,shell,cmake jansson+cmake "$cmake" default
    same_file jansson+cmake build/private_include/jansson_private_config.h
    same_file jansson+cmake build/CMakeCache.txt '/^[^#/]/p'
    same_file jansson+cmake "build/CMakeFiles/$(cd "$W/jansson-none/build/CMakeFiles" && ls -d 3.*)/CMakeSystem.cmake"
    same_objects jansson+cmake
}

part_libyaml() {
    # Its Debian source has no configure: autoreconf (autoconf, automake, libtool; the root's m4
    # and perl) makes it in both builds, so the autotools' own output is compared too.
    root_tools autoconf automake libtool || return 0
    project libyaml || return 0
    build_both libyaml "autoreconf -fi && $autotools"
    local f
    for f in configure aclocal.m4 include/config.h.in Makefile.in src/Makefile.in include/config.h; do
        same_file libyaml "$f"
    done
    same_file libyaml config.status "$subst"
    same_objects libyaml
    same_results libyaml "$automake_results"
}

part_fribidi() {
    root_tools meson ninja-build || return 0
    project fribidi || return 0
    # As Debian's meson builds do (dh_auto_configure): --buildtype=plain, the flags from the
    # environment. No docs (they need c2man).
    local meson='meson setup build --buildtype=plain --wrap-mode=nodownload -Ddocs=false &&
        ninja -C build && meson test -C build'
    build_both fribidi "$meson"
    same_file fribidi build/config.h
    same_file fribidi build/lib/fribidi-config.h
    same_file fribidi build/build.ninja
    # What Meson found (compilers, machines, each check's answer), without the rest of its log:
    # its start time and the random names of its check directories and of gcc's temporary files
    # differ between two runs of the same build.
    same_file fribidi build/meson-logs/meson-log.txt "$meson_decisions"
    local f
    for f in "$W/fribidi-none"/build/meson-info/*.json; do
        same_json fribidi "build/meson-info/${f##*/}"
    done
    same_objects fribidi
    same_results fribidi "$meson_results"
}

run_parts hello libogg jansson libyaml fribidi
finish
