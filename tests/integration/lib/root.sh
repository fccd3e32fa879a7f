# Shared by the test_root*.sh suites: probes (skip with the reason), and one cached root per
# spec. integration.root_create (the ctest fixture emurun_root, run first) creates the shared
# arm64 root once (mmdebstrap, minutes) and fetches zlib's source; the other suites unpack the
# cached tarball (seconds). The cache is ${EMURUN_ROOT_CACHE:-~/.cache/emurun-tests/roots}, kept
# between runs and build trees (a CI cache); the tarball's name carries the spec's key, so a cache of another
# spec or mirror is never used for this one. Source after common.sh.
ROOT_CACHE=${EMURUN_ROOT_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/emurun-tests/roots}
# One spec for every suite, so one tarball serves them all.
ROOT_INCLUDE=python3-dev,python3-setuptools,python3-wheel,python3-pip

# The Debian mirror this machine's apt uses (host:port of its first URI), for the probe.
mirror_hostport() {
    local uri
    uri=$(sed -n 's/^URIs:[[:space:]]*\([^[:space:]]*\).*/\1/p' /etc/apt/sources.list.d/*.sources 2>/dev/null |
        grep -v security | head -n1)
    [ -n "$uri" ] || uri=$(sed -n 's/^deb[[:space:]]\+\(\[[^]]*\][[:space:]]\+\)\?\([a-z]*:\/\/[^[:space:]]*\).*/\2/p' \
        /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null | grep -v security | head -n1)
    uri=${uri:-http://deb.debian.org/debian}
    uri=${uri#*://}
    uri=${uri%%/*}
    case $uri in *:*) echo "${uri%:*} ${uri##*:}" ;; *) echo "$uri 80" ;; esac
}

# have_cached_root DEBARCH: a tarball of the suites' spec is in the cache.
have_cached_root() { compgen -G "$ROOT_CACHE/emurun/roots/$1-bookworm-*.tar" >/dev/null; }

# root_probe ARCH: skip unless a root of ARCH can be created (or unpacked) and entered here.
root_probe() {
    local arch=$1 deb triplet host port
    case $arch in
        aarch64) deb=arm64 triplet=aarch64-linux-gnu ;;
        ppc64le) deb=ppc64el triplet=powerpc64le-linux-gnu ;;
        s390x) deb=s390x triplet=s390x-linux-gnu ;;
    esac
    command -v mmdebstrap >/dev/null || skip "mmdebstrap missing (tools/install-deps installs it)"
    command -v "qemu-$arch-static" >/dev/null || skip "qemu-$arch-static missing (apt-get install qemu-user-static)"
    command -v "$triplet-gcc" >/dev/null || skip "no $triplet cross compiler (apt-get install g++-$triplet)"
    unshare --user --map-root-user --mount sh -c \
        'mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc' 2>/dev/null ||
        skip "no binfmt_misc in a user namespace here (needs Linux >= 6.7 and user namespaces)"
    if [ "$(id -u)" != 0 ] && ! grep -q "^$(id -un):" /etc/subuid 2>/dev/null; then
        skip "not root and no /etc/subuid range for $(id -un) (usermod --add-subuids ...)"
    fi
    if ! have_cached_root "$deb" && [ -z "${http_proxy:-}" ]; then
        read -r host port <<<"$(mirror_hostport)"
        timeout 10 bash -c "exec 3<>/dev/tcp/$host/$port" 2>/dev/null ||
            skip "no cached $deb root and the Debian mirror $host:$port is unreachable"
    fi
}

# make_root ARCH DIR: the suite's own copy of the shared root (created once, then unpacked).
# A cached root must be reused, not made again. A create that fails because the Debian
# archive could not be reached (network, DNS, a mirror mid-sync) skips; any other failure fails.
make_root() {
    local log=$T/create-$1.log deb=arm64 cached=0
    case $1 in ppc64le) deb=ppc64el ;; s390x) deb=s390x ;; esac
    have_cached_root "$deb" && cached=1
    if ! XDG_CACHE_HOME=$ROOT_CACHE "$EMURUN" root create --arch "$1" --include "$ROOT_INCLUDE" \
        "$2" >"$log" 2>&1; then
        if grep -qE "no mirror reachable|Temporary failure resolving|Could not resolve|Failed to fetch|Mirror sync in progress|Hash Sum mismatch|Connection (timed out|refused)" "$log"; then
            skip "the Debian archive could not be reached: $(grep -E 'E:|error' "$log" | head -n2 | tr '\n' ' ')"
        fi
        echo "FAIL: emurun root create --arch $1:"
        tail -n 40 "$log"
        exit 1
    fi
    grep 'created' "$log" || true
    if [ "$cached" = 1 ] && ! grep -q "from the cached" "$log"; then
        not_ok "a cached $deb root was made again instead of unpacked"
    fi
}

# zlib's Debian source (tools/emurun-sysroot, with its own apt state in the root cache, so no
# other suite's apt cache is shared), copied to $1; skips when the archive is unreachable.
zlib_source() {
    local src rc=0
    src=$("$EMURUN_SOURCE_DIR/tools/emurun-sysroot" source --cache "$ROOT_CACHE/apt" \
        --dir "$ROOT_CACHE/src" zlib 2>"$T/zlib-source.log") || rc=$?
    [ $rc -ne 3 ] || skip "the Debian archive cannot be reached: $(tail -n1 "$T/zlib-source.log")"
    [ $rc -eq 0 ] && [ -f "$src/configure" ] || { cat "$T/zlib-source.log"; exit 1; }
    [ -z "${1:-}" ] || cp -a "$src" "$1"
}
