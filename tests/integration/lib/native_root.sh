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
# A root with more in it than the clean one (test_source_build.sh's build root): set these before
# native_root_probe and native_root. NATIVE_ROOT_NAME is its name in the cache
# (SUITE-NAME-ARCH-KEY.tar), NATIVE_ROOT_ARGS more mmdebstrap arguments (its hooks) and
# NATIVE_ROOT_KEY_FILES the files those hooks read: all three are part of the key.
NATIVE_ROOT_NAME=""
NATIVE_ROOT_ARGS=()
NATIVE_ROOT_KEY_FILES=()
# Host directories bound into every root in_native_root enters: "HOST_DIR:DIR_IN_ROOT" each.
NATIVE_ROOT_BINDS=()

# native_root_tarball SUITE: the cache path of SUITE's root (its key: suite, arch, variant,
# packages, mirror; and the NATIVE_ROOT_* above when set).
native_root_tarball() {
    local arch key
    arch=$(dpkg --print-architecture)
    key=$({
        printf '%s\n' "$1" "$arch" "$NATIVE_ROOT_VARIANT" "$NATIVE_ROOT_INCLUDE" "$NATIVE_ROOT_MIRROR"
        [ ${#NATIVE_ROOT_ARGS[@]} -eq 0 ] || printf '%s\n' "${NATIVE_ROOT_ARGS[@]}"
        [ ${#NATIVE_ROOT_KEY_FILES[@]} -eq 0 ] || cat "${NATIVE_ROOT_KEY_FILES[@]}"
    } | sha256sum | cut -c1-12)
    echo "$ROOT_CACHE/native/$1${NATIVE_ROOT_NAME:+-$NATIVE_ROOT_NAME}-$arch-$key.tar"
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

# native_root_can_create: mmdebstrap is here, and so is root or a subuid range for it.
native_root_can_create() {
    command -v mmdebstrap >/dev/null && { [ "$(id -u)" = 0 ] || grep -q "^$(id -un):" /etc/subuid 2>/dev/null; }
}

# native_root_prune SUITE TARBALL: the named root's tarballs of other keys removed (made before a
# change to the files of its key; a clean root is only ever made again for another mirror).
native_root_prune() {
    [ -n "$NATIVE_ROOT_NAME" ] || return 0
    local f
    for f in "$ROOT_CACHE/native/$1-$NATIVE_ROOT_NAME-$(dpkg --print-architecture)"-????????????.tar; do
        [ "$f" = "$2" ] || rm -f "$f"
    done
}

# native_root_create SUITE TARBALL: SUITE's root made into TARBALL (mmdebstrap). Returns 2 when
# the archive cannot be reached; any other failure fails the script. A part of this run's own,
# renamed when whole: two runs (two checkouts, one cache) that make the same root at once never
# write one file; a killed run's part is removed by the first create a day later.
native_root_create() {
    local log=$T/mmdebstrap-$1.log mode=root part=$2.part.$$
    mkdir -p "$(dirname "$2")"
    [ "$(id -u)" = 0 ] || mode=unshare
    cleanup+=("$part")
    # Parts of runs killed outright (ctest's timeout) a day ago or more: no run is still writing.
    find "$(dirname "$2")" -maxdepth 1 -name '*.tar.part.*' -mmin +1440 -delete
    echo "# creating the $1 root (mmdebstrap; cached as $2)"
    if ! mmdebstrap --mode=$mode --variant=$NATIVE_ROOT_VARIANT --include=$NATIVE_ROOT_INCLUDE \
        "${NATIVE_ROOT_ARGS[@]}" --format=tar "$1" "$part" "$NATIVE_ROOT_MIRROR" >"$log" 2>&1; then
        rm -f "$part"
        if grep -qE "Temporary failure resolving|Could not resolve|Failed to fetch|Connection (timed out|refused)" "$log"; then
            echo "# the Debian archive could not be reached for $1: $(grep -E '^E:' "$log" | head -n2 | tr '\n' ' ')"
            return 2
        fi
        echo "FAIL: mmdebstrap $1:"
        tail -n 30 "$log"
        exit 1
    fi
    mv "$part" "$2" || exit 1
    native_root_prune "$1" "$2"
}

# native_root SUITE DIR: SUITE's root unpacked into DIR, made first when not cached (a create
# that cannot reach the archive skips). A cached root older than NATIVE_ROOT_MAX_DAYS (30) is
# made again, so the release's updates since reach it; while the archive cannot be reached, or
# where no root can be made (native_root_can_create), the old one is used.
NATIVE_ROOT_MAX_DAYS=${EMURUN_NATIVE_ROOT_MAX_DAYS:-30}
native_root() {
    local tarball rc=0
    tarball=$(native_root_tarball "$1")
    if [ ! -f "$tarball" ]; then
        native_root_create "$1" "$tarball" || skip "the Debian archive could not be reached for $1"
    elif [ -n "$(find "$tarball" -mtime +"$NATIVE_ROOT_MAX_DAYS")" ] && native_root_can_create; then
        echo "# the cached $1 root is older than $NATIVE_ROOT_MAX_DAYS days: making it again"
        native_root_create "$1" "$tarball" || rc=$?
        [ "$rc" = 0 ] || echo "# using the cached $1 root of $(date -r "$tarball" +%F)"
    fi
    mkdir -p "$2"
    # Device nodes are not unpacked (the root gets the host's /dev); files become ours.
    tar -xf "$tarball" -C "$2" --no-same-owner --exclude='./dev/*'
}

# in_native_root DIR CMD...: CMD as root of a new user namespace with DIR as its /, the
# environment cleared but PATH, HOME=/root and the GITHUB_* / RUNNER_* variables; the
# NATIVE_ROOT_BINDS bound in.
in_native_root() {
    local dir=$1 b
    shift
    mkdir -p "$dir/proc" "$dir/dev" "$dir/tmp" "$dir/sys" "$dir/.old"
    for b in ${NATIVE_ROOT_BINDS[@]+"${NATIVE_ROOT_BINDS[@]}"}; do mkdir -p "$dir/${b#*:}"; done
    # shellcheck disable=SC2016
    unshare --user --map-root-user --mount --pid --fork --propagation private sh -c '
        dir=$1 binds=$2; shift 2
        mount --rbind "$dir" "$dir" && mount -t proc proc "$dir/proc" &&
            mount --rbind /dev "$dir/dev" && mount -t tmpfs tmpfs "$dir/tmp" &&
            mount --rbind /sys "$dir/sys" && cp /etc/resolv.conf "$dir/etc/resolv.conf" 2>/dev/null
        for b in $binds; do mount --bind "${b%%:*}" "$dir/${b#*:}" || exit 99; done
        cd "$dir" && pivot_root . .old || exit 99
        cd /
        exec "$@"' _ "$dir" "${NATIVE_ROOT_BINDS[*]+${NATIVE_ROOT_BINDS[*]}}" env -i PATH=/usr/local/bin:/usr/bin:/bin:/usr/local/sbin:/usr/sbin:/sbin \
        HOME=/root LANG=C.UTF-8 $(env | grep -E '^(GITHUB|RUNNER)_[A-Z_]*=' || true) "$@"
}

# run_root_script SUITE ROOT SCRIPT: run /work/SCRIPT in ROOT with sh (in_native_root), show
# its output indented, check that it exits 0 in a root of SUITE ("(SUITE)" in /etc/os-release,
# which the script prints); its output stays in $out for the caller's checks.
run_root_script() {
    local suite=$1 r=$2 script=$3 rc=0
    out=$(in_native_root "$r" sh "/work/$script" 2>&1) || rc=$?
    echo "$out" | sed 's/^/  | /'
    expect_eq "$suite: the root's shell exits 0" 0 "$rc"
    expect_contains "$suite: the root is $suite" "$out" "($suite)"
}
