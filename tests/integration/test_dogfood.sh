#!/bin/bash
# ctest-tier: dogfood
# Our CI is an emulated test suite: emurun's own unit tests, cross-built for aarch64, ppc64le
# and s390x, must pass under emurun (tools/dogfood, tests/dogfood/pipeline.json). The dogfood
# tier: tools/test --full runs it verbosely, so the CI log shows the per-arch table.
set -u
src=$EMURUN_SOURCE_DIR
out=$EMURUN_BUILD_DIR/dogfood

check_report() {
    local rc=$1
    local table
    table=$("$EMURUN" report show "$out/report.json") || { echo "FAIL: no readable $out/report.json"; exit 1; }
    echo "$table"
    for arch in aarch64 ppc64le s390x; do
        # The unit steps must have run and passed: a report without them is a failure too.
        if ! grep -Eq "^unit-$arch +passed " <<<"$table"; then
            echo "FAIL: unit-$arch did not pass (see $out/logs/unit-$arch.log)"
            rc=1
        fi
    done
    [ "$rc" -eq 0 ] && echo "PASS: emurun's unit tests pass on aarch64, ppc64le and s390x"
    exit "$rc"
}

for arch in aarch64 ppc64le s390x; do
    triplet=$(sed -n 's/^set(EMURUN_TRIPLET \(.*\))$/\1/p' "$src/cmake/toolchains/$arch.cmake")
    command -v "$triplet-g++" >/dev/null ||
        { echo "skipped: no $triplet-g++ for $arch (tools/install-deps installs it)"; exit 125; }
done
if ! unshare --user --map-root-user --mount \
    sh -c 'mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc' 2>/dev/null; then
    echo "skipped: no private binfmt_misc here (Linux >= 6.7 with user namespaces needed)"
    exit 125
fi
rc=0
EMURUN_BUILD_DIR=$EMURUN_BUILD_DIR "$src/tools/dogfood" || rc=$?
check_report "$rc"
