#!/bin/bash
# Trust boundaries of a foreign root (issue 27), with a tiny fake aarch64 root (var/lib/dpkg/arch
# and the static probe fixture as its programs) instead of a Debian one: the root gets a private
# /dev, so nothing it does reaches the host's (item 4); a root whose /proc, /dev, /sys or /tmp is
# a symlink is refused with a clear error (item 13); a command in the root cannot remount a
# read-only bind read-write nor unmount one (it has no CAP_SYS_ADMIN), and no bind lands on the
# private /dev or its nodes.
# ctest-tier: quick
# ctest-parts: trust4_private_dev trust4_bind_into_dev trust13_symlinked_mount_points no_remount dev_binds
. "$(dirname "$0")/lib/common.sh"
need_fixture_arch aarch64
P=$EMURUN_FIXTURE_DIR/aarch64/probe-static
[ -x "$P" ] || skip "$P missing"
cd "$T"

# fake_root DIR: an arm64 "root" whose /bin/sh and /bin/probe are the static probe.
fake_root() {
    mkdir -p "$1/var/lib/dpkg" "$1/bin"
    echo arm64 > "$1/var/lib/dpkg/arch"
    cp "$P" "$1/bin/probe"
    cp "$P" "$1/bin/sh"
}

# in_root DIR ARGS...: emurun root run DIR -- ARGS; output in $out, exit code in $rc.
in_root() {
    local dir=$1
    shift
    set +e
    out=$(timeout -k 5 60 "$EMURUN" root run "$dir" -- "$@" 2>&1)
    rc=$?
    set -e
}

part_trust4_private_dev() {
    need_sandbox || return 0
    fake_root r
    local name=emurun-trust4-$$
    in_root r /bin/probe create "/dev/$name"
    expect_eq "trust 4: creating a file in the root's /dev works (its own tmpfs): $out" 0 "$rc"
    if [ -e "/dev/$name" ]; then
        not_ok "trust 4: /dev/$name created in the root appeared on the host"
        rm -f "/dev/$name"
    else
        ok "trust 4: a file created in the root's /dev is not on the host"
    fi
    in_root r /bin/probe statfs /dev
    expect_eq "trust 4: the root's /dev is a tmpfs (0x01021994)" 1021994 "$out"
    in_root r /bin/probe statfs /dev/shm
    expect_eq "trust 4: the root's /dev/shm is a tmpfs of its own" 1021994 "$out"
    in_root r /bin/probe statfs /dev/pts
    expect_eq "trust 4: the root's /dev/pts is a devpts (0x1cd1)" 1cd1 "$out"
    in_root r /bin/probe exec /bin/probe statfs /dev/kmsg
    case "$out" in
        *"No such file"*) ok "trust 4: no /dev/kmsg in the root" ;;
        *) not_ok "trust 4: /dev/kmsg in the root: $out" ;;
    esac
    in_root r /bin/probe cat < /dev/null
    expect_eq "trust 4: /dev/null works in the root" 0 "$rc"
    for n in null zero full random urandom tty ptmx shm pts fd; do
        in_root r /bin/probe statfs "/dev/$n"
        [ "$rc" = 0 ] || not_ok "trust 4: /dev/$n missing in the root: $out"
    done
    ok "trust 4: the standard nodes are there"
}

part_trust4_bind_into_dev() {
    need_sandbox || return 0
    fake_root r
    mkdir src
    local name=emurun-trust4-bind-$$
    set +e
    out=$(timeout -k 5 60 "$EMURUN" root run --bind "$T/src:/dev/$name" r -- /bin/probe statfs "/dev/$name" 2>&1)
    rc=$?
    set -e
    expect_eq "trust 4: a bind onto /dev/NAME works: $out" 0 "$rc"
    if [ -e "/dev/$name" ]; then
        not_ok "trust 4: a bind onto /dev/$name left /dev/$name on the host"
        rmdir "/dev/$name" 2>/dev/null || rm -f "/dev/$name"
    else
        ok "trust 4: a bind onto the root's /dev leaves nothing on the host"
    fi
}

part_trust13_symlinked_mount_points() {
    local d
    for d in proc tmp dev sys; do
        rm -rf "r-$d"
        fake_root "r-$d"
        ln -s /nonexistent-$d "r-$d/$d"
        in_root "r-$d" /bin/probe uname
        expect_eq "trust 13: a root whose /$d is a symlink is refused (exit 125)" 125 "$rc"
        expect_contains "trust 13: ... saying why" "$out" "its /$d is a symlink (to /nonexistent-$d)"
    done
    rm -rf r-file
    fake_root r-file
    : > r-file/proc
    in_root r-file /bin/probe uname
    expect_contains "trust 13: a root whose /proc is a file is refused" "$out" "its /proc is no directory"
}

# A read-only bind stays read-only: the command may not remount it (nor unmount it to reach the
# root's directory below), and CAP_SYS_ADMIN is out of its bounding set.
part_no_remount() {
    need_sandbox || return 0
    fake_root r
    mkdir -p ro && echo host >ro/file
    set +e
    out=$(timeout -k 5 60 "$EMURUN" root run --ro-bind "$T/ro:/ro" r -- /bin/probe remount /ro 2>&1)
    rc=$?
    set -e
    expect_eq "a read-only bind cannot be remounted read-write ($out)" 1 "$rc"
    expect_contains "the kernel said no" "$out" "remount read-write: Operation not permitted"
    in_root r /bin/probe create /ro/new
    [ ! -e ro/new ] && ok "nothing written through the read-only bind" || not_ok "ro/new was made"
    in_root r /bin/probe cat /proc/self/status
    local bnd
    bnd=$(sed -n 's/^CapBnd:[[:space:]]*//p' <<<"$out")
    [ -n "$bnd" ] && [ $((0x$bnd >> 21 & 1)) = 0 ] && ok "CAP_SYS_ADMIN is not in the command's bounding set ($bnd)" ||
        not_ok "CapBnd of the command: [$bnd] ($out)"
    # A bind that is not read-only is still one: the restriction is on mounts, not on files.
    in_root r /bin/probe create /tmp/made
    expect_eq "the command still writes its own files" 0 "$rc"
}

# Binds onto /dev or a node of the private /dev are refused; below /dev (a directory of its
# own in the tmpfs) they still work (trust4_bind_into_dev).
part_dev_binds() {
    local t
    fake_root r
    mkdir -p src
    for t in /dev /dev/ /dev/null /dev/urandom /dev/pts /dev/fd; do
        set +e
        out=$(timeout -k 5 60 "$EMURUN" root run --bind "$T/src:$t" r -- /bin/probe uname 2>&1)
        rc=$?
        set -e
        expect_eq "bind onto $t: refused (125)" 125 "$rc"
        expect_contains "bind onto $t: says why" "$out" "the root's private /dev"
    done
    [ -z "$(ls -A src)" ] && ok "nothing written into the bind sources" || not_ok "src: $(ls -A src)"
}

run_parts trust4_private_dev trust4_bind_into_dev trust13_symlinked_mount_points no_remount dev_binds
finish
