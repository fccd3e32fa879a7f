#!/bin/bash
# ctest-tier: root
# The wheel case: a tiny CPython extension (data/pyext) built with
# `pip wheel --no-build-isolation --no-index .` inside an arm64 root (Debian's python3-dev,
# -setuptools, -wheel, -pip), accelerated and fully emulated: the wheel is tagged
# linux_aarch64, its .so is aarch64, it installs, imports and passes its test (5).
. "$(dirname "$0")/lib/common.sh"
. "$(dirname "$0")/lib/root.sh"
root_probe aarch64
command -v unzip >/dev/null || skip "unzip missing (apt-get install unzip)"

R=$T/arm64
make_root aarch64 "$R"
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
