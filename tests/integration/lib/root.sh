# Shared by the test_root*.sh suites: probes (skip with the reason), and one cached root per
# spec. The first suite of a run that needs a root creates it (mmdebstrap, a few minutes); the
# others, and later runs, unpack the cached tarball (seconds). Source after common.sh.
ROOT_CACHE=${EMURUN_ROOT_CACHE:-$EMURUN_BUILD_DIR/root-cache}
# One spec for every suite, so one tarball serves them all.
ROOT_INCLUDE=python3-dev,python3-setuptools,python3-wheel,python3-pip

# root_probe ARCH: skip unless a root of ARCH can be created and entered here.
root_probe() {
    local arch=$1 deb triplet
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
    if ! ls "$ROOT_CACHE/emurun/roots/$deb-"*.tar >/dev/null 2>&1; then
        timeout 10 bash -c 'exec 3<>/dev/tcp/deb.debian.org/80' 2>/dev/null ||
            [ -n "${http_proxy:-}" ] || skip "no cached $deb root and the Debian mirror is unreachable"
    fi
}

# make_root ARCH DIR: the suite's own copy of the shared root (created once, then unpacked).
make_root() {
    local log=$T/create-$1.log
    if ! XDG_CACHE_HOME=$ROOT_CACHE "$EMURUN" root create --arch "$1" --include "$ROOT_INCLUDE" \
        "$2" >"$log" 2>&1; then
        echo "FAIL: emurun root create --arch $1:"
        tail -n 40 "$log"
        exit 1
    fi
    grep 'created' "$log" || true
}

# zlib's Debian source (cached by tools/emurun-sysroot), copied to $1; skips when unreachable.
zlib_source() {
    local src rc=0
    src=$("$EMURUN_SOURCE_DIR/tools/emurun-sysroot" source --dir "$ROOT_CACHE/src" zlib \
        2>"$T/zlib-source.log") || rc=$?
    [ $rc -ne 3 ] || skip "the Debian archive cannot be reached: $(tail -n1 "$T/zlib-source.log")"
    [ $rc -eq 0 ] && [ -f "$src/configure" ] || { cat "$T/zlib-source.log"; exit 1; }
    cp -a "$src" "$1"
}
