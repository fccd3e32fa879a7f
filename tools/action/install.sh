#!/bin/bash
# Action step 1: install emurun. With EMURUN_DEB (one or more .deb paths or globs) apt installs
# them with their dependencies; otherwise the build dependencies are installed
# (tools/install-deps --build), emurun is built in EMURUN_BUILD_DIR (default
# $RUNNER_TEMP/emurun-build) and installed into EMURUN_PREFIX (default /usr/local), whose bin/ is
# added to $GITHUB_PATH.
. "$(dirname "$0")/common.sh"

if [ -n "${EMURUN_DEB:-}" ]; then
    # shellcheck disable=SC2206 # globs are wanted here
    debs=($EMURUN_DEB)
    paths=()
    for d in "${debs[@]}"; do
        [ -f "$d" ] || { echo "::error title=emurun::no .deb at $d (input 'deb')"; exit 1; }
        case $d in /*) paths+=("$d") ;; *) paths+=("./$d") ;; esac # apt wants a path, not a name
    done
    as_root apt-get update -q
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${paths[@]}"
    command -v emurun
    emurun --version
    exit 0
fi

prefix=${EMURUN_PREFIX:-/usr/local}
build=${EMURUN_BUILD_DIR:-${RUNNER_TEMP:-/tmp}/emurun-build}
echo "::group::emurun: install build dependencies"
as_root "$root/tools/install-deps" --build
echo "::endgroup::"
echo "::group::emurun: build into $build, install into $prefix"
gen=""
command -v ninja >/dev/null 2>&1 && gen="-G Ninja"
if [ ! -f "$build/CMakeCache.txt" ]; then
    # shellcheck disable=SC2086
    cmake -S "$root" -B "$build" $gen -DCMAKE_BUILD_TYPE=Release -DEMURUN_BUILD_TESTS=OFF
fi
cmake --build "$build" --parallel "$(nproc)" --target emurun_cli emurun_man_pages emurun_deb_changelog
if [ -w "$prefix" ] || { mkdir -p "$prefix" 2>/dev/null && [ -w "$prefix" ]; }; then
    cmake --install "$build" --prefix "$prefix" --component runtime
else
    as_root cmake --install "$build" --prefix "$prefix" --component runtime
fi
echo "::endgroup::"
github_file GITHUB_PATH "$prefix/bin"
"$prefix/bin/emurun" --version
