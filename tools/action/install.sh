#!/bin/bash
# Action step 2: install emurun the way plan.sh chose (EMURUN_METHOD):
#   deb      apt installs EMURUN_DEB (one or more .deb paths or globs) with their dependencies;
#   tarball  the release tarball at EMURUN_URL (a path or URL) is unpacked into EMURUN_PREFIX
#            (default /usr/local): that is all it takes to install it;
#   source   the build dependencies of the release this runs on (tools/install-deps --build),
#            emurun built in EMURUN_BUILD_DIR (cached by the action) and installed into
#            EMURUN_PREFIX.
# The prefix's bin/ is added to $GITHUB_PATH.
. "$(dirname "$0")/common.sh"

start=$SECONDS
prefix=${EMURUN_PREFIX:-/usr/local}
method=${EMURUN_METHOD:-source}

# in_prefix CMD...: CMD as us when the prefix is ours to write, else as root.
in_prefix() {
    if [ -w "$prefix" ] || { mkdir -p "$prefix" 2>/dev/null && [ -w "$prefix" ]; }; then "$@"; else as_root "$@"; fi
}

install_debs() {
    # shellcheck disable=SC2206 # globs are wanted here
    local debs=($EMURUN_DEB) paths=() d
    for d in "${debs[@]}"; do
        [ -f "$d" ] || { echo "::error title=emurun::no .deb at $d (input 'deb')"; exit 1; }
        case $d in /*) paths+=("$d") ;; *) paths+=("./$d") ;; esac # apt wants a path, not a name
    done
    as_root apt-get update -q
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${paths[@]}"
    prefix=$(dirname "$(dirname "$(command -v emurun)")")
}

install_tarball() {
    local file
    file=$(mktemp "${RUNNER_TEMP:-/tmp}/emurun.XXXXXX.tar.gz")
    if ! fetch "$EMURUN_URL" "$file"; then
        echo "::error title=emurun::could not download the release tarball $EMURUN_URL (input 'tarball', or the action's ref)"
        exit 1
    fi
    # Read whole first: a broken download leaves the prefix as it was.
    if ! tar -tzf "$file" >/dev/null 2>&1; then
        echo "::error title=emurun::$EMURUN_URL is no gzip'ed tar file"
        exit 1
    fi
    in_prefix tar -xzf "$file" --strip-components=1 --no-same-owner -C "$prefix"
    rm -f "$file"
}

install_source() {
    local build=${EMURUN_BUILD_DIR:-$HOME/.cache/emurun-action/build} gen=""
    echo "::group::emurun: install build dependencies"
    as_root "$root/tools/install-deps" --build
    echo "::endgroup::"
    echo "::group::emurun: build into $build, install into $prefix"
    command -v ninja >/dev/null 2>&1 && gen="-G Ninja"
    if [ ! -f "$build/CMakeCache.txt" ]; then
        # shellcheck disable=SC2086
        cmake -S "$root" -B "$build" $gen -DCMAKE_BUILD_TYPE=Release -DEMURUN_BUILD_TESTS=OFF
    fi
    cmake --build "$build" --parallel "$(nproc)" --target emurun_cli emurun_man_pages emurun_deb_changelog
    in_prefix cmake --install "$build" --prefix "$prefix" # everything the release tarball holds, toolchain files too
    echo "::endgroup::"
}

case $method in
    deb) install_debs ;;
    tarball) install_tarball ;;
    source) install_source ;;
    *) echo "::error title=emurun::unknown install method '$method'"; exit 1 ;;
esac
[ "$prefix" = /usr ] || github_file GITHUB_PATH "$prefix/bin"
echo "emurun: $("$prefix/bin/emurun" --version) installed into $prefix ($method, $((SECONDS - start)) s)"
