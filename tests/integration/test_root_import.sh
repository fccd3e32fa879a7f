#!/bin/bash
# ctest-tier: quick run=root pipeline=root debian=root
# ctest-parts: layers owners tools hostile cache run pipeline debian
# `emurun root import`: images built here by hand (no registry, no container engine) — an OCI
# image layout of two layers (a whiteout, an opaque directory, gzip), a multi-arch index, a
# `docker save` archive and a rootfs tarball — become roots with the layers applied in order;
# crafted layers (a member "../..", an absolute symlink then a file through it, in one layer or
# across two, a hard link through a symlink, a device node, a damaged digest) are refused with
# nothing left behind. `run`: an arm64 root made from the shared cached root's dash and libc runs
# `uname -m` as aarch64 and honours the image's Env, WorkingDir and Cmd. `pipeline`: steps whose
# "root" is that image (a layout, a rootfs tarball with #arm64) get a fresh root of the run's
# own, shared by the run's steps, imported once into the cache, removed after the run, the
# report naming each step's image and its digest. `cache`: `root import` through that cache.
. "$(dirname "$0")/lib/common.sh"
# The imports' cache of this suite's own (`root import` fills it); the pipeline parts name theirs.
export EMURUN_CACHE_DIR=$T/cache

# expect_refused LABEL NEEDLE DIR CMD...: exit 125, NEEDLE in the message, DIR and no partial
# directory beside it left.
expect_refused() {
    local label=$1 needle=$2 dir=$3 rc=0 err
    shift 3
    err=$("$@" 2>&1) || rc=$?
    expect_eq "$label: exit 125" 125 "$rc"
    expect_contains "$label: says why" "$err" "$needle"
    if [ -e "$dir" ] || compgen -G "$(dirname "$dir")/.$(basename "$dir").emurun-*" >/dev/null; then
        not_ok "$label: left $(ls -d "$dir" "$(dirname "$dir")/.$(basename "$dir")".emurun-* 2>/dev/null)"
    else
        ok "$label: nothing left"
    fi
}

# blob LAYOUT FILE: FILE stored as LAYOUT's blob; prints "DIGEST SIZE".
blob() {
    local hex size
    hex=$(sha256sum "$2" | cut -d' ' -f1)
    size=$(stat -c %s "$2")
    mkdir -p "$1/blobs/sha256"
    cp "$2" "$1/blobs/sha256/$hex"
    echo "sha256:$hex $size"
}

# det_tar OUT DIR NAMES...: a reproducible tar of NAMES in DIR.
det_tar() {
    local out=$1 dir=$2
    shift 2
    tar -C "$dir" --sort=name --owner=0 --group=0 --numeric-owner --mtime=@0 -cf "$out" "$@"
}

# oci_layout LAYOUT ARCHES CONFIG_EXTRA LAYER...: an OCI layout whose index has one manifest
# per arch of ARCHES (the same layers), each config with CONFIG_EXTRA's Env/WorkingDir/Cmd.
oci_layout() {
    local layout=$1 arches=$2 extra=$3 a d s layers="" diffs="" manifests="" cfg man l
    shift 3
    mkdir -p "$layout"
    echo '{"imageLayoutVersion":"1.0.0"}' >"$layout/oci-layout"
    for l in "$@"; do
        read -r d s <<<"$(blob "$layout" "$l")"
        local type=application/vnd.oci.image.layer.v1.tar
        case $l in *.gz) type=$type+gzip ;; esac
        layers+="${layers:+,}{\"mediaType\":\"$type\",\"digest\":\"$d\",\"size\":$s}"
        diffs+="${diffs:+,}\"sha256:$( (case $l in *.gz) gzip -dc "$l" ;; *) cat "$l" ;; esac) | sha256sum | cut -d' ' -f1)\""
    done
    for a in $arches; do
        cfg=$T/config-$a.json man=$T/manifest-$a.json
        printf '{"architecture":"%s","os":"linux","config":{%s},"rootfs":{"type":"layers","diff_ids":[%s]}}' \
            "$a" "$extra" "$diffs" >"$cfg"
        read -r d s <<<"$(blob "$layout" "$cfg")"
        printf '{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json","config":{"mediaType":"application/vnd.oci.image.config.v1+json","digest":"%s","size":%s},"layers":[%s]}' \
            "$d" "$s" "$layers" >"$man"
        read -r d s <<<"$(blob "$layout" "$man")"
        manifests+="${manifests:+,}{\"mediaType\":\"application/vnd.oci.image.manifest.v1+json\",\"digest\":\"$d\",\"size\":$s,\"platform\":{\"os\":\"linux\",\"architecture\":\"$a\"}}"
    done
    echo "{\"schemaVersion\":2,\"manifests\":[$manifests]}" >"$layout/index.json"
}

EXTRA='"Env":["PATH=/usr/bin:/bin","FOO=from-image"],"WorkingDir":"/work","Cmd":["/bin/sh","-c","echo cmd-ran in $PWD"]'

# The two test layers: the base (etc/keep, etc/gone, old/{a,b}, a symlink), and the top one
# that whites out etc/gone, makes old/ opaque (only old/c stays) and adds etc/added.
make_layers() {
    local base=$T/l1 top=$T/l2
    mkdir -p "$base/etc" "$base/old" "$base/work" "$base/tmp" "$base/proc" "$base/dev" "$base/sys" "$base/root"
    echo keep >"$base/etc/keep"
    echo gone >"$base/etc/gone"
    echo a >"$base/old/a"
    echo b >"$base/old/b"
    ln -s etc/keep "$base/keep-link"
    det_tar "$T/layer1.tar" "$base" .
    mkdir -p "$top/etc" "$top/old"
    : >"$top/etc/.wh.gone"
    : >"$top/old/.wh..wh..opq"
    echo c >"$top/old/c"
    echo added >"$top/etc/added"
    det_tar "$T/layer2.tar" "$top" .
    gzip -9n <"$T/layer2.tar" >"$T/layer2.tar.gz"
}

# docker_archive: $T/docker.tar, a `docker save` archive of the two layers and the arm64 config
# (after oci_layout): manifest.json, config, uncompressed layers checked by diff_ids.
docker_archive() {
    mkdir -p "$T/docker/l1" "$T/docker/l2"
    cp "$T/layer1.tar" "$T/docker/l1/layer.tar"
    cp "$T/layer2.tar" "$T/docker/l2/layer.tar"
    cp "$T/config-arm64.json" "$T/docker/config.json"
    echo '[{"Config":"config.json","RepoTags":["t:1"],"Layers":["l1/layer.tar","l2/layer.tar"]}]' \
        >"$T/docker/manifest.json"
    tar -C "$T/docker" -cf "$T/docker.tar" .
}

# check_tree LABEL DIR: the two layers applied.
check_tree() {
    local d=$2
    expect_eq "$1: a base file kept" keep "$(cat "$d/etc/keep")"
    expect_eq "$1: the top layer's file" added "$(cat "$d/etc/added")"
    [ ! -e "$d/etc/gone" ] && ok "$1: the whiteout removed etc/gone" || not_ok "$1: etc/gone is still there"
    expect_eq "$1: the opaque dir holds only the top layer's" c "$(ls "$d/old")"
    [ ! -e "$d/etc/.wh.gone" ] && [ ! -e "$d/old/.wh..wh..opq" ] && ok "$1: no whiteout file unpacked" ||
        not_ok "$1: a whiteout file was unpacked"
    expect_eq "$1: a symlink kept" etc/keep "$(readlink "$d/keep-link")"
    expect_eq "$1: the arch recorded" arm64 "$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["architecture"])' "$d/.emurun-image.json")"
}

part_layers() {
    need_tools python3 gzip sha256sum || return 0
    make_layers
    oci_layout "$T/oci" arm64 "$EXTRA" "$T/layer1.tar" "$T/layer2.tar.gz"
    "$EMURUN" root import "$T/oci" "$T/r-oci" --json >"$T/oci.json"
    check_tree "OCI layout" "$T/r-oci"
    expect_contains "OCI: --json names the env" "$(cat "$T/oci.json")" '"FOO=from-image"'
    expect_eq "OCI: the image file keeps WorkingDir" /work \
        "$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["working_dir"])' "$T/r-oci/.emurun-image.json")"

    # A tarball of the layout imports the same.
    tar -C "$T/oci" -cf "$T/oci.tar" .
    "$EMURUN" root import "$T/oci.tar" "$T/r-ocitar"
    check_tree "OCI layout tarball" "$T/r-ocitar"

    # A multi-arch index: ambiguous without a platform, then each platform by --platform/--arch.
    oci_layout "$T/multi" "arm64 ppc64le" "$EXTRA" "$T/layer1.tar" "$T/layer2.tar.gz"
    expect_refused "multi-arch without a platform" "linux/arm64, linux/ppc64le" "$T/r-multi" \
        "$EMURUN" root import "$T/multi" "$T/r-multi"
    "$EMURUN" root import --platform linux/ppc64le "$T/multi" "$T/r-ppc"
    expect_eq "--platform linux/ppc64le takes that manifest" ppc64le \
        "$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["architecture"])' "$T/r-ppc/.emurun-image.json")"
    "$EMURUN" root import --arch aarch64 "$T/multi" "$T/r-arm"
    check_tree "--arch aarch64 of a multi-arch index" "$T/r-arm"
    expect_refused "a platform the index lacks" "has no manifest for s390x" "$T/r-s390x" \
        "$EMURUN" root import --platform linux/s390x "$T/multi" "$T/r-s390x"

    # A docker save archive: manifest.json, config, uncompressed layers checked by diff_ids.
    docker_archive
    "$EMURUN" root import "$T/docker.tar" "$T/r-docker"
    check_tree "docker archive" "$T/r-docker"

    # A plain rootfs tarball: one layer, the arch named.
    "$EMURUN" root import --arch aarch64 "$T/layer1.tar" "$T/r-rootfs"
    expect_eq "rootfs tarball unpacked" keep "$(cat "$T/r-rootfs/etc/keep")"
    expect_refused "rootfs tarball without arch or bin/sh" "no image config and no bin/sh" \
        "$T/r-rootfs2" "$EMURUN" root import "$T/layer1.tar" "$T/r-rootfs2"
    mkdir -p "$T/full/x"
    expect_refused "into a directory that is not empty" "not an empty directory" "$T/full/y" \
        "$EMURUN" root import "$T/oci" "$T/full"
}

# The image's owners: kept when imported as root (ids 0-65535 are themselves in emurun's
# namespaces), through a pipeline's fresh copy and back out in an export; setuid bits cleared.
part_owners() {
    [ "$(id -u)" = 0 ] || { skip_part "owners are kept only when emurun runs as root"; return 0; }
    need_tools python3 sha256sum || return 0
    local l=$T/own
    mkdir -p "$l/srv/data" "$l/var/www" "$l/usr/bin" "$l/etc"
    echo x >"$l/srv/data/file"
    echo y >"$l/usr/bin/tool" && chmod 4755 "$l/usr/bin/tool"
    tar -C "$l" --sort=name --numeric-owner --mtime=@0 --owner=0 --group=0 -cf "$T/own1.tar" ./etc ./usr
    tar -C "$l" --sort=name --numeric-owner --mtime=@0 --owner=1000 --group=1001 -cf "$T/own2.tar" ./srv
    tar -C "$l" --sort=name --numeric-owner --mtime=@0 --owner=33 --group=33 -cf "$T/own3.tar" ./var
    oci_layout "$T/own-oci" arm64 "$EXTRA" "$T/own1.tar" "$T/own2.tar" "$T/own3.tar"
    "$EMURUN" root import "$T/own-oci" "$T/r-own" 2>"$T/own.err"
    expect_eq "a file's owner kept" 1000:1001 "$(stat -c %u:%g "$T/r-own/srv/data/file")"
    expect_eq "a directory's owner kept" 33:33 "$(stat -c %u:%g "$T/r-own/var/www")"
    expect_eq "root's file stays root's" 0:0 "$(stat -c %u:%g "$T/r-own/usr/bin/tool")"
    expect_eq "its setuid bit cleared" 755 "$(stat -c %a "$T/r-own/usr/bin/tool")"
    expect_contains "the clearing said" "$(cat "$T/own.err")" "cleared the setuid/setgid bits of 1 files"
    "$EMURUN" root export --format docker-archive "$T/own-out.tar" "$T/r-own" >/dev/null 2>"$T/own-export.err" ||
        { cat "$T/own-export.err"; not_ok "root export of the imported root"; return 0; }
    mkdir -p "$T/own-out" && tar -C "$T/own-out" -xf "$T/own-out.tar"
    local layer
    layer=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))[0]["Layers"][0])' "$T/own-out/manifest.json")
    expect_contains "the export keeps the owners" \
        "$(tar --numeric-owner -tvf "$T/own-out/$layer" srv/data/file)" "1000/1001"
}

# Images made by Debian's own tools: umoci builds an OCI layout in two layers (the second
# removes a file and a directory: umoci writes the whiteouts), skopeo turns it into a docker
# archive; both import to the same tree.
part_tools() {
    need_tools umoci skopeo || return 0
    local L=$T/umoci
    umoci init --layout "$L"
    umoci new --image "$L:t"
    umoci config --image "$L:t" --architecture arm64 --os linux --config.env FOO=umoci \
        --config.workingdir /work
    umoci unpack --rootless --image "$L:t" "$T/b1" >/dev/null
    mkdir -p "$T/b1/rootfs/etc" "$T/b1/rootfs/old"
    echo keep >"$T/b1/rootfs/etc/keep"
    echo gone >"$T/b1/rootfs/etc/gone"
    echo a >"$T/b1/rootfs/old/a"
    umoci repack --image "$L:t" "$T/b1"
    umoci unpack --rootless --image "$L:t" "$T/b2" >/dev/null
    rm -r "$T/b2/rootfs/etc/gone" "$T/b2/rootfs/old"
    echo added >"$T/b2/rootfs/etc/added"
    umoci repack --image "$L:t" "$T/b2"
    skopeo copy --quiet "oci:$L:t" "docker-archive:$T/umoci-docker.tar:t:1"
    local src
    for src in "$L" "$T/umoci-docker.tar"; do
        rm -rf "$T/r-tools"
        "$EMURUN" root import "$src" "$T/r-tools" 2>"$T/tools.err"
        expect_contains "$src: two layers" "$(cat "$T/tools.err")" "(2 layers)"
        expect_eq "$src: umoci's whiteouts applied" "added keep" "$(ls "$T/r-tools/etc" | tr '\n' ' ' | sed 's/ $//')"
        [ ! -e "$T/r-tools/old" ] && ok "$src: the removed directory is gone" || not_ok "$src: old/ is still there"
        expect_contains "$src: the Env kept" "$(cat "$T/r-tools/.emurun-image.json")" '"FOO=umoci"'
    done
}

# hostile NAME PY: a layer written by Python's tarfile (PY gets `t`, the open TarFile, and the
# helpers add_file/add_link/add_dir).
hostile() {
    python3 - "$T/$1.tar" "$2" <<'EOF'
import io, sys, tarfile
def add(t, name, type=tarfile.REGTYPE, data=b"", link="", mode=0o644):
    i = tarfile.TarInfo(name); i.type = type; i.linkname = link; i.mode = mode; i.size = len(data)
    t.addfile(i, io.BytesIO(data) if data else None)
with tarfile.open(sys.argv[1], "w", format=tarfile.GNU_FORMAT) as t:
    exec(sys.argv[2])
EOF
}

part_hostile() {
    need_tools python3 sha256sum || return 0
    local outside=$T/outside
    mkdir -p "$outside"
    hostile dotdot 'add(t, "../../etc/x", data=b"x")'
    oci_layout "$T/h-dotdot" arm64 "" "$T/dotdot.tar"
    expect_refused "a member ../../etc/x" "holds \"..\"" "$T/r1" "$EMURUN" root import "$T/h-dotdot" "$T/r1"

    hostile abs 'add(t, "/abs", data=b"x")'
    oci_layout "$T/h-abs" arm64 "" "$T/abs.tar"
    expect_refused "an absolute member" "is absolute" "$T/r2" "$EMURUN" root import "$T/h-abs" "$T/r2"

    hostile linkthen "add(t, 'evil', tarfile.SYMTYPE, link='$outside'); add(t, 'evil/pwned', data=b'x')"
    oci_layout "$T/h-same" arm64 "" "$T/linkthen.tar"
    expect_refused "absolute symlink then a file through it" "through the symlink 'evil' of the same layer" \
        "$T/r3" "$EMURUN" root import "$T/h-same" "$T/r3"

    hostile link1 "add(t, 'evil', tarfile.SYMTYPE, link='$outside')"
    hostile through2 "add(t, 'evil/pwned', data=b'x')"
    oci_layout "$T/h-two" arm64 "" "$T/link1.tar" "$T/through2.tar"
    expect_refused "a file through a lower layer's symlink" "of a lower layer" \
        "$T/r4" "$EMURUN" root import "$T/h-two" "$T/r4"

    hostile dirover "add(t, 'evil', tarfile.DIRTYPE, mode=0o777)"
    oci_layout "$T/h-dir" arm64 "" "$T/link1.tar" "$T/dirover.tar"
    expect_refused "a directory over a lower layer's symlink" "of a lower layer" \
        "$T/r5" "$EMURUN" root import "$T/h-dir" "$T/r5"

    hostile hardout "add(t, 'evil', tarfile.SYMTYPE, link='$outside'); add(t, 'h', tarfile.LNKTYPE, link='evil/secret')"
    oci_layout "$T/h-hard" arm64 "" "$T/hardout.tar"
    expect_refused "a hard link through a symlink" "through the symlink 'evil'" \
        "$T/r6" "$EMURUN" root import "$T/h-hard" "$T/r6"

    hostile dev "add(t, 'etc/disk', tarfile.BLKTYPE)"
    oci_layout "$T/h-dev" arm64 "" "$T/dev.tar"
    expect_refused "a device node outside dev/" "device node outside dev/" \
        "$T/r7" "$EMURUN" root import "$T/h-dev" "$T/r7"

    hostile whroot "add(t, '.wh.', data=b'')"
    oci_layout "$T/h-wh" arm64 "" "$T/whroot.tar"
    expect_refused "a whiteout of no name" "removes no name" "$T/r8" "$EMURUN" root import "$T/h-wh" "$T/r8"

    hostile good 'add(t, "etc/ok", data=b"ok")'
    oci_layout "$T/h-digest" arm64 "" "$T/good.tar"
    printf 'X' >>"$(ls "$T"/h-digest/blobs/sha256/* | while read -r f; do tar -tf "$f" >/dev/null 2>&1 && echo "$f"; done | head -n1)"
    expect_refused "a layer whose digest does not match" "as the image says" \
        "$T/r9" "$EMURUN" root import "$T/h-digest" "$T/r9"

    expect_eq "nothing was written outside" "" "$(ls -A "$outside")"
}

# tiny_arm_image: $T/arm.tar (a rootfs tarball) and $T/arm-oci (an OCI layout of it), a tiny
# arm64 root of dash, uname, cat and libc from the cached Debian root; status 1 (skipped, with
# the reason) when this machine cannot make or run one.
tiny_arm_image() {
    local cache=${EMURUN_ROOT_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/emurun-tests/roots} tarball
    tarball=$(compgen -G "$cache/emurun/roots/arm64-bookworm-*.tar" | head -n1 || true)
    [ -n "$tarball" ] || { skip_part "no cached arm64 root (integration.root_create makes it)"; return 1; }
    need_tools python3 qemu-aarch64-static sha256sum || return 1
    unshare --user --map-root-user --mount sh -c \
        'mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc' 2>/dev/null ||
        { skip_part "no binfmt_misc in a user namespace here (needs Linux >= 6.7)"; return 1; }
    [ -d "$T/arm-oci" ] && return 0
    local base=$T/arm
    mkdir -p "$base"
    tar -C "$base" -xf "$tarball" ./usr/bin/dash ./usr/bin/uname ./usr/bin/cat ./usr/bin/ls \
        ./usr/lib/aarch64-linux-gnu/libc.so.6 ./usr/lib/aarch64-linux-gnu/ld-linux-aarch64.so.1 \
        ./usr/lib/ld-linux-aarch64.so.1
    ln -s dash "$base/usr/bin/sh"
    ln -s usr/bin "$base/bin"
    ln -s usr/lib "$base/lib"
    mkdir -p "$base/etc" "$base/work" "$base/tmp" "$base/proc" "$base/dev" "$base/sys" "$base/root"
    det_tar "$T/arm.tar" "$base" .
    oci_layout "$T/arm-oci" arm64 "$EXTRA" "$T/arm.tar"
}

# jget FILE KEY: a top-level member of a JSON file, as Python prints it.
jget() {
    python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$1" "$2"
}

# tree_of DIR: every path of an imported root with its type, mode, owner, size and link target
# (but emurun's .emurun-image.json, which says when and how it was imported).
tree_of() {
    (cd "$1" && find . -path ./.emurun-image.json -prune -o -printf '%p %y %m %u:%g %s %l\n' | sort)
}

# expect_reimported LABEL WHY (part cache): $T/oci imported again in place of the cache's $key
# (said, with WHY), as the image's tree, and the next import copies the new entry.
expect_reimported() {
    rm -rf "$T/c4" "$T/c5"
    EMURUN_CACHE_DIR=$cache "$EMURUN" root import --json "$T/oci" "$T/c4" >"$T/c4.json" 2>"$T/c4.err"
    expect_eq "$1: not used" False "$(jget "$T/c4.json" from_cache)"
    expect_contains "… said, with why" "$(cat "$T/c4.err")" "the cache's $key was not used$2"
    expect_eq "… the root is the image's" "$(tree_of "$T/c1")" "$(tree_of "$T/c4")"
    EMURUN_CACHE_DIR=$cache "$EMURUN" root import --json "$T/oci" "$T/c5" >"$T/c5.json" 2>/dev/null
    expect_eq "… and replaced: the next import copies it" True "$(jget "$T/c5.json" from_cache)"
    expect_eq "… the image's" "$(tree_of "$T/c1")" "$(tree_of "$T/c5")"
}

# `root import` through the cache of imports (pipeline runs' `images/`): a second import of an
# image copies the first (no tar runs), with the same tree; --no-cache extracts; an entry that
# is not a whole import is never used.
part_cache() {
    need_tools python3 gzip sha256sum || return 0
    make_layers
    oci_layout "$T/oci" arm64 "$EXTRA" "$T/layer1.tar" "$T/layer2.tar.gz"
    local cache=$T/icache rc key images
    images=$cache/images
    EMURUN_CACHE_DIR=$cache "$EMURUN" root import --json "$T/oci" "$T/c1" >"$T/c1.json" 2>"$T/c1.err"
    expect_eq "a first import: not from the cache" False "$(jget "$T/c1.json" from_cache)"
    expect_contains "… says it imported, with the platform and the manifest's digest" "$(cat "$T/c1.err")" \
        "imported the aarch64 oci image $T/oci (2 layers) into $T/c1 (linux/arm64, $(python3 -c \
            'import json,sys; print(json.load(open(sys.argv[1]))["manifests"][0]["digest"])' "$T/oci/index.json"))"
    expect_eq "… --json: the digest" "$(jget "$T/c1/.emurun-image.json" digest)" "$(jget "$T/c1.json" digest)"
    check_tree "a first import through the cache" "$T/c1"
    expect_eq "… filled the cache with one import" 1 "$(find "$images" -mindepth 1 -maxdepth 1 -type d | wc -l)"
    key=$(cd "$images" && find . -mindepth 1 -maxdepth 1 -type d -printf '%f\n')
    # Its imports' world-writable dirs (an image's tmp/) are out of others' reach: images/ is
    # closed, also when the cache dir was made open by hand.
    expect_eq "images/ is closed to others" 700 "$(stat -c %a "$images")"
    chmod 0755 "$cache" "$images"

    # The second: a copy (a tar that fails shows none ran), said with the first one's time.
    mkdir -p "$T/notar"
    printf '#!/bin/sh\necho a tar ran >&2\nexit 1\n' >"$T/notar/tar"
    chmod +x "$T/notar/tar"
    rc=0
    PATH=$T/notar:$PATH EMURUN_CACHE_DIR=$cache "$EMURUN" root import --json "$T/oci" "$T/c2" \
        >"$T/c2.json" 2>"$T/c2.err" || rc=$?
    expect_eq "the second import: exit 0 with no tar" 0 "$rc"
    [ "$rc" = 0 ] || cat "$T/c2.err"
    expect_eq "… from the cache" True "$(jget "$T/c2.json" from_cache)"
    expect_contains "… said on stderr, with when it was imported" "$(cat "$T/c2.err")" \
        "copied the aarch64 oci image $T/oci (2 layers) into $T/c2 from the cache, imported at $(jget "$T/c1.json" imported)"
    expect_eq "… the same files, types, modes, owners, sizes and links" "$(tree_of "$T/c1")" "$(tree_of "$T/c2")"
    expect_eq "… the same image file" "$(cat "$T/c1/.emurun-image.json")" "$(cat "$T/c2/.emurun-image.json")"
    check_tree "a copy from the cache" "$T/c2"
    expect_eq "… images/ closed again" 700 "$(stat -c %a "$images")"

    # --no-cache extracts (the failing tar stops it) and leaves the cache as it was.
    rc=0
    PATH=$T/notar:$PATH EMURUN_CACHE_DIR=$cache "$EMURUN" root import --no-cache "$T/oci" "$T/c3" \
        >/dev/null 2>"$T/c3.err" || rc=$?
    expect_eq "--no-cache extracts: the failing tar fails it" 125 "$rc"
    [ ! -e "$T/c3" ] && ok "… leaving nothing" || not_ok "… left $T/c3"
    EMURUN_CACHE_DIR=$cache "$EMURUN" root import --no-cache --json "$T/oci" "$T/c3" >"$T/c3.json" 2>"$T/c3.err"
    expect_eq "--no-cache: not from the cache" False "$(jget "$T/c3.json" from_cache)"
    expect_eq "… the same tree" "$(tree_of "$T/c1")" "$(tree_of "$T/c3")"
    expect_eq "… the cache untouched" "$key" "$(cd "$images" && find . -mindepth 1 -maxdepth 1 -type d -printf '%f\n')"

    # An image replaced at its path while it is imported (a `docker save` rewriting it): a tar on
    # PATH renames another tarball over it when run the second time, after the digest was taken
    # (the first run tells a rootfs from an image archive). Without the cache the import reads
    # the file it opened (the content its digest names); through the cache it fails, caching
    # nothing under the digest taken before.
    mkdir -p "$T/swaptar" "$T/other/etc" && echo other >"$T/other/etc/other"
    tar -cf "$T/other.tar" -C "$T/other" .
    cat >"$T/swaptar/tar" <<EOF
#!/bin/sh
n=\$((\$(cat "\$SWAP.n" 2>/dev/null || echo 0) + 1)) && echo \$n >"\$SWAP.n"
[ \$n != 2 ] || mv "\$SWAP" "$T/swap.tar"
exec $(command -v tar) "\$@"
EOF
    chmod +x "$T/swaptar/tar"
    cp "$T/layer1.tar" "$T/swap.tar" && cp "$T/other.tar" "$T/swap-in.tar" && rm -f "$T/swap-in.tar.n"
    EMURUN_CACHE_DIR=$cache "$EMURUN" root import --arch aarch64 --no-cache "$T/layer1.tar" "$T/c7ref" 2>/dev/null
    rc=0 && PATH=$T/swaptar:$PATH SWAP=$T/swap-in.tar EMURUN_CACHE_DIR=$cache \
        "$EMURUN" root import --arch aarch64 --no-cache --json "$T/swap.tar" "$T/c7" >"$T/c7.json" 2>"$T/c7.err" || rc=$?
    expect_eq "an image replaced while imported, --no-cache: exit 0" 0 "$rc"
    [ ! -e "$T/swap-in.tar" ] && ok "… (it was replaced)" || not_ok "… the swap did not happen"
    expect_eq "… the tree is the file it opened" "$(tree_of "$T/c7ref")" "$(tree_of "$T/c7")"
    expect_eq "… whose digest it says" "sha256:$(sha256sum "$T/layer1.tar" | cut -d' ' -f1)" "$(jget "$T/c7.json" digest)"
    cp "$T/layer1.tar" "$T/swap.tar" && cp "$T/other.tar" "$T/swap-in.tar" && rm -f "$T/swap-in.tar.n"
    local before
    before=$(ls "$images" | grep -v '\.lock$')
    rc=0 && PATH=$T/swaptar:$PATH SWAP=$T/swap-in.tar EMURUN_CACHE_DIR=$cache \
        "$EMURUN" root import --arch aarch64 "$T/swap.tar" "$T/c8" 2>"$T/c8.err" || rc=$?
    expect_eq "… through the cache: refused (125)" 125 "$rc"
    expect_contains "… saying why" "$(cat "$T/c8.err")" "the image changed while it was imported"
    expect_eq "… caching nothing" "$before" "$(ls "$images" | grep -v '\.lock$')"
    [ ! -e "$T/c8" ] && ok "… leaving nothing" || not_ok "… left $T/c8"

    # A cache dir that is not ours is refused, and the error says that --no-cache needs none.
    if [ "$(id -u)" = 0 ] && id nobody >/dev/null 2>&1; then
        mkdir -p "$T/theirs" && chown nobody "$T/theirs"
        rc=0 && EMURUN_CACHE_DIR=$T/theirs "$EMURUN" root import "$T/oci" "$T/c6" 2>"$T/c6.err" || rc=$?
        expect_eq "a cache dir of another user: refused (125)" 125 "$rc"
        expect_contains "… the hint names --no-cache" "$(cat "$T/c6.err")" "or import without the cache (--no-cache))"
        [ ! -e "$T/c6" ] && ok "… leaving nothing" || not_ok "… left $T/c6"
    fi

    # Entries that are not whole imports are never used: imported again, said, and replaced.
    local how
    for how in "without its image file" "of an import without a digest" "that is a file"; do
        case $how in
            without*) rm "$images/$key/.emurun-image.json" && echo damaged >"$images/$key/etc/keep" ;;
            *digest) python3 - "$images/$key/.emurun-image.json" <<'PY'
import json, sys
j = json.load(open(sys.argv[1])); del j["digest"]; json.dump(j, open(sys.argv[1], "w"))
PY
                echo damaged >"$images/$key/etc/keep" ;;
            *file) rm -rf "${images:?}/$key" && echo damaged >"$images/$key" ;;
        esac
        expect_reimported "an entry $how" ""
    done
    expect_eq "no leftovers beside the cache's imports" "" "$(cd "$images" && ls -A | grep -F ".emurun-" || true)"

    # Entries someone else could have changed, or that are not what their name says: never
    # used (each said, with why), imported again, and replaced.
    local why
    for how in "owned by another user" "with an image file of another user" "writable by others" \
        "with a symlinked image file" "with a setuid file" "with a setgid dir's file" \
        "of another platform" "of another image"; do
        [ "$(id -u)" = 0 ] || case $how in *"another user"*) continue ;; esac # chown needs root
        case $how in
            "owned by"*) chown nobody "$images/$key"; why="it is owned by uid $(id -u nobody)" ;;
            *"of another user") chown nobody "$images/$key/.emurun-image.json"
                why="its .emurun-image.json is owned by uid $(id -u nobody)" ;;
            writable*) chmod o+w "$images/$key"; why="it is writable by others" ;;
            *symlinked*) mv "$images/$key/.emurun-image.json" "$T/elsewhere.json"
                ln -s "$T/elsewhere.json" "$images/$key/.emurun-image.json"
                why="its .emurun-image.json is a symlink" ;;
            *"setuid file") chmod u+s "$images/$key/etc/keep"
                why="its etc/keep is setuid or setgid, which an import never leaves" ;;
            *"setgid dir's file") chmod g+s "$images/$key/old/c"
                why="its old/c is setuid or setgid" ;;
            *platform) python3 - "$images/$key/.emurun-image.json" <<'PY'
import json, sys
j = json.load(open(sys.argv[1])); j["platform"] = "linux/ppc64le"; json.dump(j, open(sys.argv[1], "w"))
PY
                why="it records the platform linux/ppc64le" ;;
            *image) python3 - "$images/$key/.emurun-image.json" <<'PY'
import json, sys
j = json.load(open(sys.argv[1])); j["source_digest"] = "sha256:" + "0" * 64; json.dump(j, open(sys.argv[1], "w"))
PY
                why="it records the image sha256:0000" ;;
        esac
        echo damaged >"$images/$key/etc/added"
        expect_reimported "an entry $how" " ($why"
    done
    [ -e "$T/elsewhere.json" ] && ok "a symlinked image file's target is left alone" ||
        not_ok "the symlink's target was removed"

    # One image and platform, one entry: named by the platform the image offers, however the
    # request names it (none: the image's only one; --arch; --platform; a pipeline's #arm64).
    local fresh=$T/icache2 n=0 req
    for req in "" "--arch aarch64" "--platform linux/arm64" "--platform arm64"; do
        n=$((n + 1)) && rm -rf "$T/k$n"
        # shellcheck disable=SC2086 # the request's options, split
        EMURUN_CACHE_DIR=$fresh "$EMURUN" root import --json $req "$T/oci" "$T/k$n" >"$T/k$n.json" 2>/dev/null
        expect_eq "${req:-no platform}: $([ $n = 1 ] && echo imported || echo 'from the cache')" \
            "$([ $n = 1 ] && echo False || echo True)" "$(jget "$T/k$n.json" from_cache)"
    done
    expect_eq "… one entry, of the platform taken" "$key" \
        "$(cd "$fresh/images" && find . -mindepth 1 -maxdepth 1 -type d -printf '%f\n')"
    expect_eq "… an entry's name: the digest and the platform" \
        "$(sha256sum "$T/oci/index.json" | cut -c1-24)-aarch64" "$key"
    # The other way round, with a variant the index names: #arm64 first, then no platform.
    python3 - "$T/oci/index.json" <<'PY'
import json, sys
j = json.load(open(sys.argv[1])); j["manifests"][0]["platform"]["variant"] = "v8"; json.dump(j, open(sys.argv[1], "w"))
PY
    cat >"$T/img-cache.json" <<JSON
{"name": "ic", "steps": [{"name": "s", "emulation": "root", "root": "oci#arm64", "argv": ["/bin/true"]}]}
JSON
    EMURUN_CACHE_DIR=$fresh "$EMURUN" -v run --log-dir "$T/iclogs" --report "$T/ic.json" "$T/img-cache.json" \
        >"$T/ic.out" 2>&1 || true
    expect_contains "a pipeline's #arm64: imported" "$(cat "$T/ic.out")" "imported, then copied"
    rm -rf "$T/k9"
    EMURUN_CACHE_DIR=$fresh "$EMURUN" root import --json "$T/oci" "$T/k9" >"$T/k9.json" 2>/dev/null
    expect_eq "… then root import without a platform: from the cache" True "$(jget "$T/k9.json" from_cache)"
    expect_eq "… the platform the index names" linux/arm64/v8 "$(jget "$T/k9/.emurun-image.json" platform)"
    expect_eq "… one entry for it" "$(sha256sum "$T/oci/index.json" | cut -c1-24)-aarch64-v8" \
        "$(cd "$fresh/images" && find . -mindepth 1 -maxdepth 1 -type d -name "$(sha256sum "$T/oci/index.json" | cut -c1-24)-*" -printf '%f\n')"
    rm -rf "$T/k10"
    EMURUN_CACHE_DIR=$fresh "$EMURUN" root import --json --platform linux/arm64/v8 "$T/oci" "$T/k10" >"$T/k10.json" 2>/dev/null
    expect_eq "… and --platform linux/arm64/v8: from the cache" True "$(jget "$T/k10.json" from_cache)"

    # A pipeline step whose image cannot be imported: the step fails with why, the step that
    # needs it is skipped, the others run, and the report is written (an old one replaced).
    cp -r "$T/oci" "$T/bad-oci" # another index (another image to the cache), its base layer damaged
    python3 - "$T/bad-oci/index.json" <<'PY'
import json, sys
j = json.load(open(sys.argv[1])); j["annotations"] = {"a": "b"}; json.dump(j, open(sys.argv[1], "w"))
PY
    printf 'X' >>"$T/bad-oci/blobs/sha256/$(sha256sum "$T/layer1.tar" | cut -d' ' -f1)"
    cat >"$T/img-bad.json" <<JSON
{"name": "ib", "steps": [
  {"name": "build", "emulation": "root", "root": "bad-oci#arm64", "argv": ["/bin/true"]},
  {"name": "test", "emulation": "root", "root": "bad-oci#arm64", "needs": ["build"], "argv": ["/bin/true"]},
  {"name": "other", "argv": ["/bin/true"]}]}
JSON
    echo '{"stale": true}' >"$T/ib.json"
    rc=0
    EMURUN_CACHE_DIR=$fresh "$EMURUN" run --log-dir "$T/iblogs" --report "$T/ib.json" "$T/img-bad.json" \
        >"$T/ib.out" 2>&1 || rc=$?
    expect_eq "an image that cannot be imported: the run fails (1), not refused (125)" 1 "$rc"
    expect_eq "… its report: the step failed, its dependant skipped, the other passed" \
        "build failed|test skipped|other passed" \
        "$(python3 -c 'import json,sys; print("|".join(s["name"] + " " + s["status"] for s in json.load(open(sys.argv[1]))["steps"]))' "$T/ib.json" 2>&1)"
    expect_contains "… the step's message is the import's" \
        "$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["steps"][0]["message"])' "$T/ib.json" 2>&1)" \
        "root $T/bad-oci#arm64: apply layer 1 of 2"
    expect_contains "… and its log says it" "$(cat "$T/iblogs/build.log")" "as the image says"

    # A lock that is a directory: the error names it and says what to do.
    local stem
    stem=$(sha256sum "$T/oci/index.json" | cut -c1-24)
    rm -f "$fresh/images/$stem.lock" && mkdir "$fresh/images/$stem.lock"
    rc=0 && EMURUN_CACHE_DIR=$fresh "$EMURUN" root import "$T/oci" "$T/k11" 2>"$T/k11.err" || rc=$?
    expect_eq "a lock path that is a directory: refused (125)" 125 "$rc"
    expect_contains "… naming it, saying what to do" "$(cat "$T/k11.err")" \
        "$fresh/images/$stem.lock is a directory, not emurun's lock file (remove it (emurun makes the lock file again))"
    rmdir "$fresh/images/$stem.lock"

    # A rootfs tarball's --json lists its one layer by the tarball's digest.
    rm -rf "$T/k12"
    EMURUN_CACHE_DIR=$fresh "$EMURUN" root import --arch aarch64 --json "$T/layer1.tar" "$T/k12" >"$T/k12.json" 2>/dev/null
    expect_eq "a rootfs tarball's layers: its digest" "['sha256:$(sha256sum "$T/layer1.tar" | cut -d' ' -f1)']" \
        "$(jget "$T/k12.json" layers)"

    # A docker archive and a platform of a multi-arch index: an import of their own, then copies.
    docker_archive
    oci_layout "$T/multi" "arm64 ppc64le" "$EXTRA" "$T/layer1.tar" "$T/layer2.tar.gz"
    local src
    for src in "$T/docker.tar" "--platform linux/ppc64le $T/multi"; do
        rm -rf "$T/c6" "$T/c7"
        # shellcheck disable=SC2086 # the platform and the source, split
        EMURUN_CACHE_DIR=$cache "$EMURUN" root import --json $src "$T/c6" >"$T/c6.json" 2>/dev/null
        # shellcheck disable=SC2086
        EMURUN_CACHE_DIR=$cache "$EMURUN" root import --json $src "$T/c7" >"$T/c7.json" 2>/dev/null
        expect_eq "$src: imported, then copied" "False True" "$(jget "$T/c6.json" from_cache) $(jget "$T/c7.json" from_cache)"
        expect_eq "… the same tree" "$(tree_of "$T/c6")" "$(tree_of "$T/c7")"
        case $src in
            *docker.tar) expect_eq "… the docker archive's digest is its config's (the image ID)" \
                "sha256:$(sha256sum "$T/docker/config.json" | cut -d' ' -f1)" "$(jget "$T/c7.json" digest)" ;;
            *) expect_eq "… the index's ppc64le platform" linux/ppc64le "$(jget "$T/c7.json" platform)" ;;
        esac
    done
    expect_eq "three imports in the cache" 3 "$(find "$images" -mindepth 1 -maxdepth 1 -type d | wc -l)"
}

part_run() {
    tiny_arm_image || return 0
    "$EMURUN" root import "$T/arm-oci" "$T/r-arm"
    expect_eq "uname -m in the imported root" aarch64 "$("$EMURUN" root run "$T/r-arm" -- uname -m)"
    expect_eq "the image's Env and WorkingDir" "from-image /work" \
        "$("$EMURUN" root run "$T/r-arm" -- /bin/sh -c 'echo $FOO $(pwd)')"
    expect_eq "--env and --cwd win over the image's" "mine /tmp" \
        "$("$EMURUN" root run --env FOO=mine --cwd /tmp "$T/r-arm" -- /bin/sh -c 'echo $FOO $(pwd)')"
    expect_eq "no command: the image's Cmd" "cmd-ran in /work" "$("$EMURUN" root run "$T/r-arm")"
    # Not based on Debian (no dpkg status): --accelerate runs everything emulated and says so.
    expect_eq "--accelerate in an image without dpkg: runs" aarch64 \
        "$("$EMURUN" root run --accelerate "$T/r-arm" -- uname -m 2>"$T/acc.err")"
    expect_contains "… saying nothing could be accelerated and why" "$(cat "$T/acc.err")" \
        "nothing accelerated: $T/r-arm has no dpkg status"
    # The arch is checked against the binaries: an amd64 config over arm64 binaries is refused.
    oci_layout "$T/lying" amd64 "" "$T/arm.tar"
    expect_refused "a config whose arch the binaries contradict" "bin/sh is aarch64" "$T/r-lying" \
        "$EMURUN" root import "$T/lying" "$T/r-lying"
}

part_pipeline() {
    tiny_arm_image || return 0
    unset EMURUN_CACHE_DIR # each run names its cache (XDG_CACHE_HOME)
    local cache=$T/pcache
    cat >"$T/img.json" <<'JSON'
{"name": "img", "defaults": {"emulation": "root", "root": "arm-oci"},
 "steps": [
  {"name": "write", "argv": ["/bin/sh", "-c", "cat /root/out 2>/dev/null || echo fresh; echo built-$(uname -m) >/root/out"]},
  {"name": "read", "needs": ["write"], "argv": ["/bin/cat", "/root/out"]},
  {"name": "tarball", "root": "arm.tar#arm64", "argv": ["/bin/sh", "-c", "cat /root/out 2>/dev/null; uname -m"]},
  {"name": "acc", "root": "arm.tar#arm64", "accelerate": true, "argv": ["uname", "-m"]}
 ]}
JSON
    local rc=0
    XDG_CACHE_HOME=$cache "$EMURUN" -v run --log-dir "$T/plogs" --report "$T/p1.json" \
        --junit "$T/p1.xml" --markdown "$T/p1.md" "$T/img.json" >"$T/p1.out" 2>&1 || rc=$?
    expect_eq "a pipeline on an image root: exit 0" 0 "$rc"
    [ "$rc" = 0 ] || cat "$T/p1.out"
    # The report names each step's image as the step names it, the platform and the digest of
    # what was imported: the layout's manifest, the rootfs tarball itself.
    local manifest tarball_digest
    manifest=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["manifests"][0]["digest"])' "$T/arm-oci/index.json")
    tarball_digest=sha256:$(sha256sum "$T/arm.tar" | cut -d' ' -f1)
    expect_eq "the report names each step's image, platform and digest" \
        "write $T/arm-oci linux/arm64 $manifest|read $T/arm-oci linux/arm64 $manifest|tarball $T/arm.tar#arm64 linux/arm64 $tarball_digest|acc $T/arm.tar#arm64 linux/arm64 $tarball_digest" \
        "$(python3 -c 'import json,sys; print("|".join(" ".join([s["name"], s["image"]["reference"], s["image"]["platform"], s["image"]["digest"]]) for s in json.load(open(sys.argv[1]))["steps"]))' "$T/p1.json")"
    expect_contains "… the JUnit testcase's property" "$(cat "$T/p1.xml")" \
        "<property name=\"emurun.image.digest\" value=\"$manifest\"/>"
    expect_contains "… the Markdown summary" "$(cat "$T/p1.md")" \
        "\`tarball\` image: $T/arm.tar#arm64 (linux/arm64, $tarball_digest)"
    expect_eq "the first step saw the image's /root (no out)" fresh "$(cat "$T/plogs/write.log")"
    expect_eq "the next step saw what the first wrote in the run's root" "built-aarch64" \
        "$(cat "$T/plogs/read.log")"
    expect_eq "a rootfs tarball#arm64 is a root too, of its own" "aarch64" "$(cat "$T/plogs/tarball.log")"
    expect_contains "the run says it imported the image" "$(cat "$T/p1.out")" "imported, then copied"
    expect_contains "an accelerated step on an image without dpkg runs emulated, saying so" \
        "$(cat "$T/plogs/acc.log")" "nothing accelerated"
    expect_eq "both imports cached, no run's root left" "2" \
        "$(find "$cache/emurun/images" -mindepth 1 -maxdepth 1 -type d | wc -l)"
    expect_eq "the image was not changed" "" "$(ls -A "$T/arm/root")"

    # What a run killed outright (SIGKILL) left: its root, read-only dirs inside.
    local dead=4194000
    while kill -0 "$dead" 2>/dev/null; do dead=$((dead + 1)); done
    mkdir -p "$cache/emurun/images/run-$dead/root-x/ro/d" && chmod 0555 "$cache/emurun/images/run-$dead/root-x/ro"
    # A run of another PID namespace sharing the cache (its PID no process here) holds its dir.
    local other=$((dead + 1)) holder
    while kill -0 "$other" 2>/dev/null; do other=$((other + 1)); done
    mkdir -p "$cache/emurun/images/run-$other/root-y"
    (exec 9<"$cache/emurun/images/run-$other" && flock -s 9 && exec sleep 60) &
    holder=$!
    sleep 0.3
    # What an import killed outright left (its partial root, blobs, exclude list), the import
    # itself never made: the next run imports again and removes them.
    local key
    key=$(cd "$cache/emurun/images" && ls -d ./*-aarch64 | head -n1)
    key=${key#./}
    rm -rf "${cache:?}/emurun/images/$key"
    mkdir -p "$cache/emurun/images/.$key.emurun-partial-AbCdEf/ro/d" "$cache/emurun/images/.$key.emurun-image-AbCdEf"
    chmod 0555 "$cache/emurun/images/.$key.emurun-partial-AbCdEf/ro"
    : >"$cache/emurun/images/..$key.emurun-partial-AbCdEf.exclude"
    rc=0
    XDG_CACHE_HOME=$cache "$EMURUN" -v run --log-dir "$T/plogs2" "$T/img.json" >"$T/p2.out" 2>&1 || rc=$?
    [ -e "$cache/emurun/images/run-$dead" ] && not_ok "a dead run's root was left" ||
        ok "the next run removed a dead run's root"
    [ -d "$cache/emurun/images/run-$other/root-y" ] && ok "a held run dir (another PID namespace's) is kept" ||
        not_ok "a run dir another PID namespace's run holds was removed"
    kill "$holder" 2>/dev/null
    wait "$holder" 2>/dev/null || true
    rm -rf "${cache:?}/emurun/images/run-$other"
    expect_eq "the next run removed a dead import's leftovers" "" \
        "$(cd "$cache/emurun/images" && ls -A | grep -F ".$key.emurun-" || true)"
    expect_eq "and imported that image again" "aarch64" "$(cat "$T/plogs2/tarball.log")"
    expect_eq "a second run: exit 0" 0 "$rc"
    expect_eq "a second run starts from the image, not from the first run's root" fresh \
        "$(cat "$T/plogs2/write.log")"
    expect_contains "a second run copies the cached import" "$(cat "$T/p2.out")" "copied from the imported image"

    sed 's/"arm.tar#arm64"/"arm.tar#linux\/sparc99"/' "$T/img.json" >"$T/bad.json"
    rc=0
    XDG_CACHE_HOME=$cache "$EMURUN" -v run --log-dir "$T/plogs3" "$T/bad.json" >"$T/p3.out" 2>&1 || rc=$?
    expect_eq "an unknown platform is refused before the run (exit 125)" 125 "$rc"
    expect_contains "it names the step and the platform" "$(cat "$T/p3.out")" 'step "tarball": root'
    [ -e "$T/plogs3/write.log" ] && not_ok "a step ran before the refusal" || ok "no step ran"

    # A step whose root cannot be entered as asked (accelerated, with no gcc in a Debian-based
    # image: a layer adds dpkg's status): its message names the image, not the run's temporary
    # root, which is gone after the run.
    mkdir -p "$T/dpkg-layer/var/lib/dpkg" && : >"$T/dpkg-layer/var/lib/dpkg/status"
    det_tar "$T/dpkg.tar" "$T/dpkg-layer" .
    oci_layout "$T/arm-deb-oci" arm64 "$EXTRA" "$T/arm.tar" "$T/dpkg.tar"
    cat >"$T/acc.json" <<'JSON'
{"name": "acc", "steps": [{"name": "a", "emulation": "root", "root": "arm-deb-oci", "accelerate": true,
  "argv": ["/bin/true"]}]}
JSON
    rc=0
    XDG_CACHE_HOME=$cache "$EMURUN" run --log-dir "$T/plogs6" --report "$T/p6.json" "$T/acc.json" \
        >"$T/p6.out" 2>&1 || rc=$?
    expect_eq "an accelerated step without gcc in the image fails" 1 "$rc"
    local message
    message=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["steps"][0]["message"])' "$T/p6.json")
    expect_contains "its message names the image" "$message" "$T/arm-deb-oci (this run's root from it)"
    expect_lacks "not the run's temporary root" "$message" "/images/run-"

    # Ctrl-C while the second image is read (a slow sha256sum of arm.tar): the run is
    # interrupted (130), its report says so with every step not run, and no root of it is left
    # (the first image's neither).
    mkdir -p "$T/slowbin"
    printf '#!/bin/sh\ncase "$*" in *arm.tar) sleep 30 ;; esac\nexec %s "$@"\n' "$(command -v sha256sum)" >"$T/slowbin/sha256sum"
    chmod +x "$T/slowbin/sha256sum"
    PATH=$T/slowbin:$PATH XDG_CACHE_HOME=$cache "$EMURUN" run --log-dir "$T/plogs4" \
        --report "$T/p4.json" "$T/img.json" >"$T/p4.out" 2>&1 &
    local run=$! tries=0
    until pgrep -f "$T/slowbin/sha256sum" >/dev/null || [ $tries -ge 100 ]; do
        sleep 0.1
        tries=$((tries + 1))
    done
    kill -INT "$run"
    rc=0
    wait "$run" || rc=$?
    expect_eq "interrupted while importing: exit 130" 130 "$rc"
    [ "$rc" = 130 ] || cat "$T/p4.out"
    expect_eq "the report says SIGINT, every step not run" "2 not_run not_run not_run not_run" \
        "$(python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print(r["interrupted_by"], *[s["status"] for s in r["steps"]])' "$T/p4.json" 2>&1)"
    expect_eq "no run's root left" "" "$(cd "$cache/emurun/images" && ls -d run-* 2>/dev/null)"

    # Waiting for another run's import of the image (its lock held here): Ctrl-C ends the wait
    # at once, not when that import is done.
    local lock
    lock=$cache/emurun/images/$(sha256sum "$T/arm-oci/index.json" | cut -c1-24).lock # arm-oci's imports
    (exec 9<"$lock" && flock 9 && exec sleep 60) &
    holder=$!
    sleep 0.5
    XDG_CACHE_HOME=$cache "$EMURUN" run --log-dir "$T/plogs5" --report "$T/p5.json" "$T/img.json" \
        >"$T/p5.out" 2>&1 &
    run=$!
    sleep 1
    local began=$SECONDS
    kill -INT "$run"
    rc=0
    wait "$run" || rc=$?
    expect_eq "interrupted while waiting for another run's import: exit 130" 130 "$rc"
    [ $((SECONDS - began)) -le 5 ] && ok "at once ($((SECONDS - began)) s)" ||
        not_ok "it took $((SECONDS - began)) s"
    kill "$holder" 2>/dev/null
    wait "$holder" 2>/dev/null || true
}

# A Debian-based image (the shared cached arm64 root's tarball, a rootfs image of 600 MB) as a
# pipeline step's root: accelerated by the created roots' identity rule, its shell the host's.
part_debian() {
    unset EMURUN_CACHE_DIR # the run names its cache (XDG_CACHE_HOME)
    local cache=${EMURUN_ROOT_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/emurun-tests/roots} tarball rc=0
    tarball=$(compgen -G "$cache/emurun/roots/arm64-bookworm-*.tar" | head -n1 || true)
    [ -n "$tarball" ] || { skip_part "no cached arm64 root (integration.root_create makes it)"; return 0; }
    need_tools python3 qemu-aarch64-static sha256sum || return 0
    cat >"$T/deb.json" <<JSON
{"name": "deb", "steps": [{"name": "view", "emulation": "root", "accelerate": true, "arch": "aarch64",
  "root": "$tarball#arm64", "shell": true,
  "argv": "uname -m; grep -q x86_64-linux-gnu/libc /proc/\$\$/maps && echo host-sh; dpkg --print-architecture"}]}
JSON
    XDG_CACHE_HOME=$T/dcache "$EMURUN" -v run --log-dir "$T/dlogs" --report "$T/deb-report.json" "$T/deb.json" \
        >"$T/deb.out" 2>&1 || rc=$?
    expect_eq "a step on a Debian image: exit 0" 0 "$rc"
    [ "$rc" = 0 ] || tail -n 20 "$T/deb.out"
    expect_eq "… the target's view, the host's shell" "aarch64 host-sh arm64" "$(grep -v warning "$T/dlogs/view.log" | tr '\n' ' ' | sed 's/ $//')"
    expect_contains "… the report lists the native tools it used" \
        "$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["steps"][0]["accelerated_tools"])' "$T/deb-report.json")" "dash"
    expect_contains "… the import timed" "$(cat "$T/deb.out")" "imported, then copied into a fresh root in"
}

run_parts layers owners tools hostile cache run pipeline debian
finish
