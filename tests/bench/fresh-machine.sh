#!/bin/bash
# Time a command of this checkout on a fresh Debian 12 machine: a minimal bookworm root (made
# once by mmdebstrap, kept in DIR/base) is copied to DIR/run, HEAD's tree (git archive: what a
# clean clone has) is put at /src inside it, and COMMAND runs there as root in a mount namespace
# of its own entered with pivot_root (not chroot: user namespaces, and so emurun's sandbox, work
# as on a real machine). Nothing is cached inside: apt, ccache and emurun's caches start empty.
#   tests/bench/fresh-machine.sh DIR COMMAND...     e.g. ... /var/tmp/fresh tools/demo
# Prints COMMAND's output, then its wall time. CONTRIBUTING.md ("Measured") lists the results.
set -euo pipefail
if [ $# -lt 2 ] || [ "$(id -u)" != 0 ]; then
    echo "usage: $0 DIR COMMAND... (as root)" >&2
    exit 2
fi
src=$(cd "$(dirname "$0")/../.." && pwd)
dir=$1
shift
mirror=${EMURUN_BENCH_MIRROR:-http://deb.debian.org/debian}
if [ ! -d "$dir/base/usr" ]; then
    mkdir -p "$dir"
    mmdebstrap --variant=minbase --include=ca-certificates,sudo --skip=cleanup/apt/lists bookworm \
        "$dir/base.tmp" "deb $mirror bookworm main" "deb $mirror bookworm-updates main" \
        "deb ${mirror%/debian}/debian-security bookworm-security main"
    mv "$dir/base.tmp" "$dir/base"
fi
rm -rf "$dir/run"
cp -a "$dir/base" "$dir/run"
mkdir -p "$dir/run/src"
git -C "$src" archive HEAD | tar -x -C "$dir/run/src"
# What a Debian installer writes and mmdebstrap does not: name service files.
cp /etc/resolv.conf "$dir/run/etc/resolv.conf" 2>/dev/null || true
printf '127.0.0.1\tlocalhost\n::1\t\tlocalhost ip6-localhost ip6-loopback\n' >"$dir/run/etc/hosts"
# shellcheck disable=SC2016
exec unshare --mount --pid --fork --propagation private bash -c '
    set -e
    new=$1
    shift
    mount --rbind "$new" "$new"
    mount -t proc proc "$new/proc"
    mount --rbind /sys "$new/sys"
    mount --rbind /dev "$new/dev"
    mount -t tmpfs tmpfs "$new/tmp"
    cd "$new"
    mkdir -p .old
    pivot_root . .old
    umount -l /.old
    rmdir /.old
    cd /src
    export HOME=/root PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
    start=$(date +%s)
    rc=0
    "$@" || rc=$?
    echo "fresh-machine: $* took $(($(date +%s) - start)) s, exit $rc"
    exit $rc
' fresh "$dir/run" "$@"
