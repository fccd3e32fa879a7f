#!/bin/bash
# ctest-tier: quick
# ctest-parts: formats multi refused interrupt full_disk pipeline
# `emurun root export`: roots (imported here from tarballs of the fixtures' static aarch64 and
# s390x probes, so no Debian root is needed) written as an OCI layout, an OCI archive and a
# docker archive that Debian's skopeo reads with the right architecture and copies, and that
# `emurun root import` turns back into the same tree; two roots make a multi-arch index whose
# platforms skopeo and import each pick; SOURCE_DATE_EPOCH makes the digests reproducible; as
# root the files' owners are kept. Refused, with nothing left behind: an existing output, two
# roots of one arch, a docker archive of two roots, a bad tag, a directory that is no root.
# Interrupted (SIGINT) or out of space, an export leaves nothing. `pipeline`: a pipeline step
# in an imported root gets the image's Env before its own env (its own wins).
. "$(dirname "$0")/lib/common.sh"
need_fixture_arch aarch64
need_fixture_arch s390x

# root_of ARCH DIR: a root of the fixture's static probe as bin/sh, with a file owned 1234:5678
# when run as root, imported from a tarball.
root_of() {
    local src=$T/src-$1
    mkdir -p "$src/bin" "$src/etc" "$src/dev" "$src/proc" "$src/sys" "$src/work"
    cp "$EMURUN_FIXTURE_DIR/$1/probe-static" "$src/bin/sh"
    echo "hello $1" >"$src/etc/hello"
    tar -C "$src" -cf "$T/src-$1.tar" .
    "$EMURUN" root import --arch "$1" "$T/src-$1.tar" "$2" 2>/dev/null
    [ "$(id -u)" != 0 ] || chown 1234:5678 "$2/etc/hello"
}

# nothing_left LABEL OUT: neither OUT nor a temporary directory beside it.
nothing_left() {
    if [ -e "$2" ] || compgen -G "$(dirname "$2")/.$(basename "$2").emurun-*" >/dev/null; then
        not_ok "$1: left $(ls -d "$2" "$(dirname "$2")/.$(basename "$2")".emurun-* 2>/dev/null)"
    else
        ok "$1: nothing left"
    fi
}

# same_tree LABEL A B: the same files, modes and contents (emurun's own file aside).
same_tree() {
    if diff -r --exclude=.emurun-image.json "$2" "$3" >/dev/null &&
        [ "$(cd "$2" && find . -path ./.emurun-image.json -prune -o -printf '%p %m %y\n' | sort)" = \
            "$(cd "$3" && find . -path ./.emurun-image.json -prune -o -printf '%p %m %y\n' | sort)" ]; then
        ok "$1"
    else
        not_ok "$1: $(diff -r "$2" "$3" 2>&1 | head -5)"
    fi
}

part_formats() {
    need_tools skopeo python3 || return 0
    root_of aarch64 "$T/r1"
    local f rc
    for f in oci oci-archive docker-archive; do
        rc=0
        SOURCE_DATE_EPOCH=0 "$EMURUN" root export --format "$f" --tag emurun-test/img:1 --json \
            "$T/img-$f" "$T/r1" >"$T/$f.json" 2>"$T/$f.err" || rc=$?
        expect_eq "$f: export exits 0" 0 "$rc"
        [ "$rc" = 0 ] || { cat "$T/$f.err"; continue; }
        expect_contains "$f: the JSON names the platform" "$(cat "$T/$f.json")" '"platform": "linux/arm64"'
        local ref=$f:$T/img-$f
        [ "$f" != oci ] || ref=oci:$T/img-$f:1
        expect_eq "$f: skopeo inspect reads arm64" arm64 \
            "$(skopeo inspect "$ref" | python3 -c 'import json,sys; print(json.load(sys.stdin)["Architecture"])')"
        skopeo copy --quiet "$ref" "oci:$T/copy-$f:x" && ok "$f: skopeo copies it" || not_ok "$f: skopeo copy failed"
        "$EMURUN" root import "$T/img-$f" "$T/back-$f" 2>/dev/null && ok "$f: imports again" ||
            not_ok "$f: emurun root import of the export failed"
        same_tree "$f: the imported tree is the exported root's" "$T/r1" "$T/back-$f"
        expect_contains "$f: the config's Cmd and PATH came along" "$(cat "$T/back-$f/.emurun-image.json")" '"/bin/sh"'
    done
    expect_contains "docker-archive: manifest.json names the tag" \
        "$(tar -xOf "$T/img-docker-archive" manifest.json)" '"emurun-test/img:1"'
    # SOURCE_DATE_EPOCH: the same digests twice.
    SOURCE_DATE_EPOCH=0 "$EMURUN" root export --format oci --tag emurun-test/img:1 --json \
        "$T/img-again" "$T/r1" >"$T/again.json" 2>/dev/null
    expect_eq "SOURCE_DATE_EPOCH: the manifest digest is reproducible" \
        "$(grep '"manifest"' "$T/oci.json")" "$(grep '"manifest"' "$T/again.json")"
    local blob
    if [ "$(id -u)" = 0 ]; then
        blob=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["platforms"][0]["layer"][7:])' "$T/oci.json")
        expect_contains "as root, the layer keeps a file's owner" \
            "$(tar -tvzf "$T/img-oci/blobs/sha256/$blob" etc/hello)" "1234/5678"
    fi
    # dev, proc and sys are in the layer empty; emurun's own top-level files not at all.
    cp -a "$T/r1" "$T/r-mounts"
    touch "$T/r-mounts/dev/null" "$T/r-mounts/sys/kernel" "$T/r-mounts/.emurun-other"
    mkdir "$T/r-mounts/proc/1"
    "$EMURUN" root export --json "$T/img-mounts" "$T/r-mounts" >"$T/mounts.json" 2>/dev/null
    blob=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["platforms"][0]["layer"][7:])' "$T/mounts.json")
    expect_eq "dev/, proc/, sys/ are in the layer empty, no .emurun-* file" "bin/ bin/sh dev/ etc/ etc/hello proc/ sys/ work/" \
        "$(tar -tzf "$T/img-mounts/blobs/sha256/$blob" | sort | tr '\n' ' ' | sed 's/ $//')"
}

part_multi() {
    need_tools skopeo python3 || return 0
    root_of aarch64 "$T/ra"
    root_of s390x "$T/rs"
    "$EMURUN" root export --tag multi:2 "$T/multi" "$T/ra" "$T/rs" 2>"$T/multi.err" ||
        { not_ok "export of two roots: $(cat "$T/multi.err")"; return 0; }
    local a
    for a in arm64 s390x; do
        expect_eq "the index has $a" "$a" \
            "$(skopeo inspect --override-arch "$a" "oci:$T/multi:2" | python3 -c 'import json,sys; print(json.load(sys.stdin)["Architecture"])')"
    done
    "$EMURUN" root import --arch s390x "$T/multi" "$T/back-s" 2>/dev/null
    same_tree "import --arch s390x takes the s390x root" "$T/rs" "$T/back-s"
    rc=0
    out=$("$EMURUN" root import "$T/multi" "$T/back-none" 2>&1) || rc=$?
    expect_contains "import without a platform names both" "$out" "linux/arm64, linux/s390x"
    if unshare --user --map-root-user --mount sh -c \
        'mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc' 2>/dev/null; then
        expect_eq "the re-imported s390x root runs" s390x "$("$EMURUN" root run "$T/back-s" -- /bin/sh uname)"
    else
        skip_part "no binfmt_misc in a user namespace here (needs Linux >= 6.7) to run the root"
    fi
}

part_refused() {
    root_of aarch64 "$T/r1"
    root_of s390x "$T/rs"
    local rc out
    mkdir "$T/exists"
    rc=0
    out=$("$EMURUN" root export "$T/exists" "$T/r1" 2>&1) || rc=$?
    expect_eq "an existing output: exit 125" 125 "$rc"
    expect_contains "... says so" "$out" "exists (remove it first"
    expect_eq "... and is left as it was" "" "$(ls -A "$T/exists")"
    # refused LABEL NEEDLE ARGS...: exit 125 naming NEEDLE, nothing left at $T/x.
    refused() {
        local label=$1 needle=$2
        shift 2
        rc=0
        out=$("$EMURUN" root export "$@" 2>&1) || rc=$?
        expect_eq "$label: exit 125" 125 "$rc"
        expect_contains "$label: says why" "$out" "$needle"
        nothing_left "$label" "$T/x"
    }
    refused "two roots of one arch" "is a second aarch64 root" "$T/x" "$T/r1" "$T/r1"
    refused "a docker archive of two roots" "a docker archive holds one platform" \
        --format docker-archive "$T/x" "$T/r1" "$T/rs"
    refused "a tag with capitals" "expected NAME[:TAG]" --tag Bad/Name "$T/x" "$T/r1"
    refused "a directory that is no root" "not a Debian root" "$T/x" "$T/exists"
    refused "a missing root" "does not exist" "$T/x" "$T/nowhere"
    rc=0
    SOURCE_DATE_EPOCH=soon "$EMURUN" root export "$T/x" "$T/r1" >/dev/null 2>&1 || rc=$?
    expect_eq "a SOURCE_DATE_EPOCH that is no number: exit 125" 125 "$rc"
    rc=0
    "$EMURUN" root export --format tarball "$T/x" "$T/r1" >/dev/null 2>&1 || rc=$?
    expect_eq "an unknown --format: usage error, exit 2" 2 "$rc"
}

part_interrupt() {
    root_of aarch64 "$T/big"
    head -c 300M /dev/urandom >"$T/big/blob.bin"
    "$EMURUN" root export "$T/x" "$T/big" 2>"$T/int.err" &
    local pid=$! rc=0
    sleep 1
    kill -INT "$pid"
    wait "$pid" || rc=$?
    expect_eq "SIGINT during the export: exit 130" 130 "$rc"
    expect_contains "... saying so" "$(cat "$T/int.err")" "interrupted by SIGINT"
    nothing_left "SIGINT" "$T/x"
}

part_full_disk() {
    [ "$(id -u)" = 0 ] || { skip_part "mounting a small tmpfs needs root"; return 0; }
    root_of aarch64 "$T/big"
    head -c 30M /dev/urandom >"$T/big/blob.bin"
    mkdir -p "$T/small"
    mount -t tmpfs -o size=10m tmpfs "$T/small" 2>/dev/null || { skip_part "cannot mount a tmpfs here"; return 0; }
    local rc=0 out
    out=$("$EMURUN" root export "$T/small/img" "$T/big" 2>&1) || rc=$?
    expect_eq "a full disk: exit 125" 125 "$rc"
    expect_contains "... naming it" "$out" "No space left on device"
    nothing_left "a full disk" "$T/small/img"
    umount "$T/small"
}

part_pipeline() {
    unshare --user --map-root-user --mount sh -c \
        'mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc' 2>/dev/null ||
        { skip_part "no binfmt_misc in a user namespace here (needs Linux >= 6.7)"; return 0; }
    root_of s390x "$T/rs"
    # The image's config gets an Env of its own: rewrite the imported root's run defaults.
    python3 - "$T/rs/.emurun-image.json" <<'PY'
import json, sys
p = sys.argv[1]; j = json.load(open(p))
j["env"] = ["PATH=/bin", "FROM_IMAGE=image", "BOTH=image"]
json.dump(j, open(p, "w"))
PY
    cat >"$T/p.json" <<JSON
{"name": "img", "defaults": {"emulation": "root", "root": "$T/rs", "arch": "s390x", "cwd": "$T"},
 "steps": [
  {"name": "from-image", "argv": ["/bin/sh", "env", "FROM_IMAGE"]},
  {"name": "step-wins", "argv": ["/bin/sh", "env", "BOTH"], "env": {"BOTH": "step"}}]}
JSON
    local rc=0
    (cd "$T" && "$EMURUN" run p.json -q --log-dir logs >/dev/null 2>"$T/p.err") || rc=$?
    expect_eq "the pipeline in the imported root passes" 0 "$rc"
    [ "$rc" = 0 ] || cat "$T/p.err"
    expect_eq "a step sees the image's Env" image "$(cat "$T/logs/from-image.log" 2>/dev/null)"
    expect_eq "the step's env wins over the image's" step "$(cat "$T/logs/step-wins.log" 2>/dev/null)"
}

run_parts formats multi refused interrupt full_disk pipeline
finish
