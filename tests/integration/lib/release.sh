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
