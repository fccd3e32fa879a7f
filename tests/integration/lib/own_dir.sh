# shellcheck shell=bash
# A directory of this user's at a fixed place in a shared directory (TMPDIR), used by one run at a
# time. Source after common.sh.

# own_locked_dir DIR: DIR made (mode 700) when absent, and checked to be a directory of this
# user's own, not a symlink (one planted in a shared /tmp by another user may point at any
# directory this one can delete, and -O follows it); then DIR/.lock held (flock on fd 9) until the
# script exits, waiting while another run holds it. The lock lives inside DIR, where no other user
# can replace it; a lock file left by a run that died holds nothing (flock ends with its process).
# Returns 1, saying why on stderr, when DIR is not this user's own.
own_locked_dir() {
    local d=$1
    mkdir -p "$(dirname "$d")" && { mkdir -m 700 "$d" 2>/dev/null || true; }
    if [ -L "$d" ] || [ ! -d "$d" ] || [ ! -O "$d" ]; then
        echo "$d is not a directory of $(id -un)'s own (a symlink, no directory or another" \
            "user's): remove it, or set TMPDIR to a directory of your own" >&2
        return 1
    fi
    chmod 700 "$d"
    exec 9>"$d/.lock"
    flock -n 9 || { echo "# waiting for the run that holds $d/.lock"; flock 9; }
}
