# The release tarball of this build tree, for the suites that install it (test_release.sh,
# test_action.sh). Source after common.sh.

# make_tarball: $tarball, this build tree packed by 'cpack -G TGZ' (once per run of the script).
tarball=""
make_tarball() {
    [ -z "$tarball" ] || return 0
    command -v cpack >/dev/null || skip "cpack missing"
    [ -f "$EMURUN_BUILD_DIR/CPackConfig.cmake" ] || skip "no CPackConfig.cmake in $EMURUN_BUILD_DIR"
    local start=$SECONDS
    if ! (cd "$T" && cpack --config "$EMURUN_BUILD_DIR/CPackConfig.cmake" -G TGZ -B "$T/out" >"$T/cpack.log" 2>&1); then
        echo "FAIL: cpack -G TGZ: $(tail -n 20 "$T/cpack.log")"
        exit 1
    fi
    tarball=$(ls "$T"/out/emurun-*-linux-*.tar.gz)
    ok "cpack -G TGZ: $(basename "$tarball"), $(du -h "$tarball" | cut -f1) ($((SECONDS - start)) s)"
}

# unpack PREFIX: the tarball installed into PREFIX the documented way.
unpack() {
    mkdir -p "$1"
    tar -xzf "$tarball" --strip-components=1 -C "$1"
}

# release_root SUITE DIR: a clean SUITE root (native_root.sh, sourced first) in DIR with the
# aarch64 and s390x probes in DIR/work/{aarch64,s390x}/, and the tarball made; false after
# skip_part when a probe, the sandbox or the fixtures are missing.
release_root() {
    native_root_probe "$1"
    need_probe aarch64 || return 1
    need_probe s390x || return 1
    need_sandbox || return 1
    make_tarball
    native_root "$1" "$2"
    mkdir -p "$2/work/aarch64" "$2/work/s390x"
    cp "$EMURUN_FIXTURE_DIR/aarch64/probe-static" "$2/work/aarch64/"
    cp "$EMURUN_FIXTURE_DIR/s390x/probe-static" "$2/work/s390x/"
}
