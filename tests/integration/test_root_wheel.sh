#!/bin/bash
# ctest-tier: root
# The wheel case: a tiny CPython extension (data/pyext) built with
# `pip wheel --no-build-isolation --no-index .` inside an arm64 root (Debian's python3-dev,
# -setuptools, -wheel, -pip), accelerated and fully emulated: the wheel is tagged
# linux_aarch64, its .so is aarch64, it installs, imports and passes its test (5). First the
# recipe of docs/guides/foreign-roots.md "A Python wheel for the target", as written.
. "$(dirname "$0")/lib/common.sh"
. "$(dirname "$0")/lib/root.sh"
. "$(dirname "$0")/lib/docs.sh"
root_probe aarch64
command -v unzip >/dev/null || skip "unzip missing (apt-get install unzip)"

R=$T/w/root
mkdir -p "$T/w"
make_root aarch64 "$R"

# The page's recipe, in a directory holding the root and the project, as the page has them.
cp -a "$EMURUN_SOURCE_DIR/tests/integration/data/pyext" "$T/w/pyext"
doc_block docs/guides/foreign-roots.md wheel >"$T/wheel-recipe.sh" || true
rc=0
(cd "$T/w" && PATH=$(dirname "$EMURUN"):$PATH bash -e "$T/wheel-recipe.sh") >"$T/recipe.log" 2>&1 || rc=$?
expect_eq "the page's wheel recipe exits 0" 0 "$rc"
[ "$rc" = 0 ] || tail -n 30 "$T/recipe.log"
expect_contains "the recipe's wheel is linux_aarch64" "$(ls "$T/w/pyext/dist" 2>/dev/null)" \
    "spam-0.1-cp311-cp311-linux_aarch64.whl"
expect_contains "the recipe's test passed" "$(cat "$T/recipe.log")" "spam ok aarch64"
for acc in default none; do
    cp -a "$EMURUN_SOURCE_DIR/tests/integration/data/pyext" "$T/py-$acc"
    start=$(date +%s.%N)
    rc=0
    "$EMURUN" root run --accelerate=$acc --allow-revision-mismatch --bind "$T/py-$acc:/w" --cwd /w "$R" -- \
        sh -c 'pip wheel --no-build-isolation --no-index -w dist . &&
               python3 -m pip install --break-system-packages --no-index --force-reinstall dist/*.whl &&
               cd / && python3 /w/test_spam.py' >"$T/py-$acc.log" 2>&1 || rc=$?
    printf 'accelerate=%s: %.1f s\n' $acc "$(echo "$(date +%s.%N) - $start" | bc)"
    expect_eq "wheel built, installed and tested (accelerate=$acc)" 0 "$rc"
    [ "$rc" = 0 ] || tail -n 30 "$T/py-$acc.log"
    whl=$(ls "$T/py-$acc"/dist/*.whl 2>/dev/null | head -n1)
    expect_contains "wheel tag (accelerate=$acc)" "$(basename "${whl:-none}")" "linux_aarch64"
    mkdir -p "$T/unz-$acc" && unzip -q -o "${whl:-/dev/null}" -d "$T/unz-$acc" 2>/dev/null || true
    so=$(ls "$T/unz-$acc"/spam*.so 2>/dev/null | head -n1)
    expect_contains ".so is aarch64 (accelerate=$acc)" "$(file -b "${so:-/dev/null}")" "ARM aarch64"
    expect_contains "its test passed (accelerate=$acc)" "$(cat "$T/py-$acc.log")" "spam ok aarch64"
done
finish
