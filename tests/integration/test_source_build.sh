#!/bin/bash
# ctest-tier: root
# ctest-parts: trixie
# emurun built from source on another Debian release, as a user of it would (docs/install.md,
# "From source"): trixie (GCC 14, Boost 1.83, its spdlog, fmt, nlohmann-json, CLI11, doctest).
# The root is a clean trixie of this host's arch (mmdebstrap, tests/integration/lib/native_root.sh)
# into which tools/install-deps --build installed the release's packages, made once and cached
# under a key that covers install-deps itself. This checkout's source goes in as a clean clone
# would have it (git archive of HEAD with the working tree's changes to tracked files; never the
# host's build tree), then in the root: install-deps --build has nothing left to install,
# tools/build configures and builds everything (warnings are errors there), and the new emurun
# answers --version and doctor and passes the unit tier. The in-root build compiles through the
# root's ccache, whose dir is kept on the host beside the cached roots.
. "$(dirname "$0")/lib/common.sh"
. "$(dirname "$0")/lib/native_root.sh"

# export_source DIR: the checkout's tracked files as they are now into DIR/src; says what it took
# (untracked files are left out: a new file not yet added makes the build there fail).
export_source() {
    local rev g=(git -C "$EMURUN_SOURCE_DIR") untracked
    "${g[@]}" rev-parse --git-dir >/dev/null 2>&1 ||
        { skip_part "$EMURUN_SOURCE_DIR is no git checkout: nothing to export cleanly"; return 1; }
    if [ -n "$("${g[@]}" status --porcelain --untracked-files=no)" ]; then
        rev=$("${g[@]}" stash create) ||
            { not_ok "git stash create cannot take the working tree's changes (unmerged paths?)"; return 1; }
        echo "# the source: HEAD with the working tree's changes to tracked files"
    else
        rev=HEAD && echo "# the source: HEAD, the working tree clean"
    fi
    untracked=$("${g[@]}" ls-files --others --exclude-standard | head -n 5 | tr '\n' ' ')
    [ -z "$untracked" ] || echo "# left out, untracked: $untracked"
    mkdir -p "$1/src"
    "${g[@]}" archive -o "$1/src.tar" "$rev" && tar -xf "$1/src.tar" -C "$1/src" && rm "$1/src.tar"
}

# The build root: the clean one plus the packages install-deps --build picks in it.
build_root_setup() {
    export EMURUN_INSTALL_DEPS=$EMURUN_SOURCE_DIR/tools/install-deps
    NATIVE_ROOT_NAME=build
    # shellcheck disable=SC2016 # the hooks' own shell expands these
    NATIVE_ROOT_ARGS=(
        '--customize-hook=cp "$EMURUN_INSTALL_DEPS" "$1/tmp/install-deps"'
        '--customize-hook=chroot "$1" sh /tmp/install-deps --build'
        '--customize-hook=rm "$1/tmp/install-deps"')
    NATIVE_ROOT_KEY_FILES=("$EMURUN_INSTALL_DEPS")
}

build_script() {
    cat <<'EOF'
set -u
. /etc/os-release
echo "== $PRETTY_NAME"
cd /src
tools/install-deps --build; echo "deps-exit=$?"
echo "deps=$(tools/install-deps --print --build)"
echo "gcc=$(g++ -dumpfullversion)"
export CCACHE_DIR=/ccache CCACHE_MAXSIZE=1G
ccache -z >/dev/null
start=$(date +%s)
tools/build >/work/build.log 2>&1; rc=$?
echo "build-exit=$rc"
echo "build-seconds=$(($(date +%s) - start))"
ccache -s | grep -E '^ *(Hits|Misses):' | head -n2
[ "$rc" = 0 ] || exit 0
sed -n 's/^Boost_DIR:PATH=/boost-dir=/p' build/CMakeCache.txt
build/bin/emurun --version
build/bin/emurun doctor >/work/doctor.txt 2>&1; echo "doctor-exit=$?"
start=$(date +%s)
ctest --test-dir build -L unit --output-on-failure >/work/unit.log 2>&1; echo "unit-exit=$?"
echo "unit-seconds=$(($(date +%s) - start))"
tail -n 3 /work/unit.log
EOF
}

# build_in SUITE: the build, the program and the unit tier in SUITE's build root.
build_in() {
    local suite=$1 r=$T/$1 out rc start=$SECONDS ccache_dir
    build_root_setup
    native_root_probe "$suite"
    native_root "$suite" "$r"
    echo "# the $suite build root is ready ($((SECONDS - start)) s)"
    # What an installer writes and mmdebstrap does not (a unit test resolves localhost).
    printf '127.0.0.1\tlocalhost\n::1\t\tlocalhost ip6-localhost ip6-loopback\n' >"$r/etc/hosts"
    export_source "$r" || return 0
    mkdir -p "$r/work"
    build_script >"$r/work/build.sh"
    ccache_dir=${XDG_CACHE_HOME:-$HOME/.cache}/emurun-tests/ccache/$suite-$(dpkg --print-architecture)
    mkdir -p "$ccache_dir"
    NATIVE_ROOT_BINDS=("$ccache_dir:/ccache")
    run_root_script "$suite" "$r" build.sh
    expect_contains "$suite: install-deps --build finds every package it picks installed" "$out" "deps-exit=0"
    expect_contains "$suite: ... Boost 1.83" "$(grep '^deps=' <<<"$out")" "libboost1.83-dev"
    expect_contains "$suite: the compiler is GCC 14" "$out" "gcc=14."
    if grep -q '^build-exit=0$' <<<"$out"; then
        ok "$suite: tools/build configures and builds everything ($(sed -n 's/^build-seconds=//p' <<<"$out") s)"
    else
        not_ok "$suite: tools/build failed:"
        grep -E -B2 -A8 'error:|Error|FAILED' "$r/work/build.log" | head -n 80 | sed 's/^/  | /'
        tail -n 15 "$r/work/build.log" | sed 's/^/  | /'
        return 0
    fi
    expect_contains "$suite: CMake found Boost 1.83" "$(grep '^boost-dir=' <<<"$out")" "Boost-1.83"
    expect_contains "$suite: the built emurun says its version" "$out" "emurun $("$EMURUN" --version | awk '{print $2}')"
    if grep -q '^doctor-exit=0$' <<<"$out"; then ok "$suite: emurun doctor passes"; else
        not_ok "$suite: emurun doctor: $(cat "$r/work/doctor.txt")"
    fi
    if grep -q '^unit-exit=0$' <<<"$out"; then
        ok "$suite: the unit tier passes ($(sed -n 's/^unit-seconds=//p' <<<"$out") s)"
    else
        not_ok "$suite: the unit tier failed:"
        grep -E -A20 'FAILED|Failed|ERROR' "$r/work/unit.log" | head -n 80 | sed 's/^/  | /'
    fi
    echo "# $suite: the whole part took $((SECONDS - start)) s"
}

part_trixie() { build_in trixie; }

run_parts trixie
finish
