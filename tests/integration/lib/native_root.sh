# Clean roots of other Debian releases for this host's own arch (bullseye, trixie): where the
# release tarball and the Action's scripts are tried as a user of that release would. Each is
# made once with mmdebstrap (minimal: the apt variant, plus the release's qemu-user-static, what
# a user of it installs first) and kept as a tarball in the test root cache,
# ${EMURUN_ROOT_CACHE:-~/.cache/emurun-tests/roots}/native/, named by its spec's key; later runs
# unpack it (seconds). emurun root is for foreign arches only, so these are entered the way
# emurun's own roots are, without it: a user + mount + pid namespace, the root bound on itself,
# its own /proc, /dev and /tmp, then pivot_root (a chroot would refuse the nested user namespace
# that 'emurun sandbox' makes inside). Source after common.sh.
ROOT_CACHE=${EMURUN_ROOT_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/emurun-tests/roots}
NATIVE_ROOT_VARIANT=apt
NATIVE_ROOT_INCLUDE=qemu-user-static,ca-certificates,curl
NATIVE_ROOT_MIRROR=${EMURUN_TEST_MIRROR:-http://deb.debian.org/debian}

# native_root_tarball SUITE: the cache path of SUITE's root (its key: suite, arch, variant,
# packages, mirror).
native_root_tarball() {
    local arch key
    arch=$(dpkg --print-architecture)
    key=$(printf '%s\n' "$1" "$arch" "$NATIVE_ROOT_VARIANT" "$NATIVE_ROOT_INCLUDE" "$NATIVE_ROOT_MIRROR" |
        sha256sum | cut -c1-12)
    echo "$ROOT_CACHE/native/$1-$arch-$key.tar"
}

# native_root_probe: skip unless such roots can be made (or are cached) and entered here.
native_root_probe() {
    command -v unshare >/dev/null && command -v pivot_root >/dev/null ||
        skip "unshare or pivot_root missing (util-linux)"
    unshare --user --map-root-user --mount --pid --fork true 2>/dev/null ||
        skip "no user namespaces here"
    local s
    for s in "$@"; do
        [ -f "$(native_root_tarball "$s")" ] && continue
        command -v mmdebstrap >/dev/null || skip "mmdebstrap missing (tools/install-deps --full installs it)"
        [ "$(id -u)" = 0 ] || grep -q "^$(id -un):" /etc/subuid 2>/dev/null ||
            skip "not root and no /etc/subuid range for $(id -un): mmdebstrap cannot make the $s root"
    done
}

# native_root SUITE DIR: SUITE's clean root unpacked into DIR (made first when not cached; a
# create that cannot reach the archive skips, any other failure fails the script).
native_root() {
    local tarball log=$T/mmdebstrap-$1.log mode=root
    tarball=$(native_root_tarball "$1")
    if [ ! -f "$tarball" ]; then
        mkdir -p "$(dirname "$tarball")"
        [ "$(id -u)" = 0 ] || mode=unshare
        echo "# creating the $1 root (mmdebstrap, once; cached as $tarball)"
        if ! mmdebstrap --mode=$mode --variant=$NATIVE_ROOT_VARIANT --include=$NATIVE_ROOT_INCLUDE \
            --format=tar "$1" "$tarball.part" "$NATIVE_ROOT_MIRROR" >"$log" 2>&1; then
            rm -f "$tarball.part"
            if grep -qE "Temporary failure resolving|Could not resolve|Failed to fetch|Connection (timed out|refused)" "$log"; then
                skip "the Debian archive could not be reached for $1: $(grep -E '^E:' "$log" | head -n2 | tr '\n' ' ')"
            fi
            echo "FAIL: mmdebstrap $1:"
            tail -n 30 "$log"
            exit 1
        fi
        mv "$tarball.part" "$tarball"
    fi
    mkdir -p "$2"
    # Device nodes are not unpacked (the root gets the host's /dev); files become ours.
    tar -xf "$tarball" -C "$2" --no-same-owner --exclude='./dev/*'
}

# in_native_root DIR CMD...: CMD as root of a new user namespace with DIR as its /, the
# environment cleared but PATH, HOME=/root and the GITHUB_* / RUNNER_* variables.
in_native_root() {
    local dir=$1
    shift
    mkdir -p "$dir/proc" "$dir/dev" "$dir/tmp" "$dir/sys" "$dir/.old"
    # shellcheck disable=SC2016
    unshare --user --map-root-user --mount --pid --fork --propagation private sh -c '
        dir=$1; shift
        mount --rbind "$dir" "$dir" && mount -t proc proc "$dir/proc" &&
            mount --rbind /dev "$dir/dev" && mount -t tmpfs tmpfs "$dir/tmp" &&
            mount --rbind /sys "$dir/sys" && cp /etc/resolv.conf "$dir/etc/resolv.conf" 2>/dev/null
        cd "$dir" && pivot_root . .old || exit 99
        cd /
        exec "$@"' _ "$dir" env -i PATH=/usr/local/bin:/usr/bin:/bin:/usr/local/sbin:/usr/sbin:/sbin \
        HOME=/root LANG=C.UTF-8 $(env | grep -E '^(GITHUB|RUNNER)_[A-Z_]*=' || true) "$@"
}
