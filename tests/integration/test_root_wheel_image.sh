#!/bin/bash
# ctest-tier: root
# A wheel built in an image, tested in a clean root (docs/guides/foreign-roots.md, issue 33):
# Debian's brotli source (its Python binding compiles the bundled C library), the page's
# pipeline and commands as written, with the shared test root's tarball as the Debian arm64
# image: the wheel built accelerated in the imported root is linux_aarch64 with an aarch64 .so,
# its 71 tests pass in a fresh root of the image (which has not seen the build), and a wheel
# built the same way in a created root has the same _brotli object but for .comment.
. "$(dirname "$0")/lib/common.sh"
. "$(dirname "$0")/lib/root.sh"
. "$(dirname "$0")/lib/docs.sh"
root_probe aarch64
need_tools unzip python3 aarch64-linux-gnu-objcopy
make_root aarch64 "$T/created" # the shared cached root; its tarball is the image
image=$(compgen -G "$ROOT_CACHE/emurun/roots/arm64-bookworm-*.tar" | head -n1)
[ -n "$image" ] || skip "no cached arm64 root tarball"

src=$("$EMURUN_SOURCE_DIR/tools/emurun-sysroot" source --cache "$ROOT_CACHE/apt" \
    --dir "$ROOT_CACHE/src" brotli 2>"$T/source.log") || {
    grep -q 'cannot be reached\|Temporary failure' "$T/source.log" &&
        skip "the Debian archive cannot be reached: $(tail -n1 "$T/source.log")"
    cat "$T/source.log"; not_ok "emurun-sysroot source brotli"; finish; exit 1
}
cp -a "$src" "$T/proj"
cd "$T/proj"
ln -s "$image" debian-arm64.tar
doc_block docs/guides/foreign-roots.md wheel-pipeline >wheel.json || true
doc_block docs/guides/foreign-roots.md wheel-commands >recipe.sh || true
rc=0
PATH=$(dirname "$EMURUN"):$PATH XDG_CACHE_HOME=$T/cache bash -e recipe.sh >recipe.out 2>&1 || rc=$?
expect_eq "the page's commands exit 0" 0 "$rc"
[ "$rc" = 0 ] || tail -n 40 recipe.out
whl=$(ls dist/*.whl 2>/dev/null | head -n1)
expect_eq "the wheel" "Brotli-1.0.9-cp311-cp311-linux_aarch64.whl" "$(basename "${whl:-none}")"
mkdir -p "$T/unz" && unzip -q -o "${whl:-/dev/null}" -d "$T/unz" 2>/dev/null || true
so=$(ls "$T/unz"/_brotli*.so 2>/dev/null | head -n1)
expect_contains "its .so is aarch64" "$(file -b "${so:-/dev/null}")" "ARM aarch64"
test_log=$(python3 -c 'import json; print([s["log"] for s in json.load(open("wheel-report.json"))["steps"] if s["name"] == "test"][0])' 2>/dev/null)
expect_contains "its 71 tests ran and passed in the clean root" "$(cat "$test_log" 2>/dev/null)" "Ran 71 tests"
expect_contains "… OK" "$(tail -n 3 "$test_log" 2>/dev/null)" "OK"
expect_contains "the build accelerated its compilers" \
    "$(python3 -c 'import json; print([s["accelerated_tools"] for s in json.load(open("wheel-report.json"))["steps"] if s["name"] == "wheel"][0])')" "gcc-12"
# The clean root never saw the build: pip's build dir lives in roots/build only.
"$EMURUN" root run roots/build -- sh -c 'ls /tmp >/dev/null; python3 -c "import _brotli"' 2>/dev/null &&
    not_ok "the build root has the wheel installed (it only built it)" || ok "the build root only built the wheel"
expect_contains "the test step installed it in a root of its own" "$(cat "$test_log")" "Successfully installed Brotli-1.0.9"

# The same wheel from a created root: the same _brotli object but for .comment
cp -a "$src" "$T/proj2"
# (at the pipeline's path: the step's cwd is bound at the same path, and the paths are in the
# debug info)
"$EMURUN" root run --accelerate --allow-revision-mismatch --bind "$T/proj2:$T/proj" --cwd "$T/proj" "$T/created" -- \
    pip wheel --no-build-isolation --no-index -w dist . >"$T/created.log" 2>&1 || { tail -n 20 "$T/created.log"; not_ok "wheel in the created root"; }
mkdir -p "$T/unz2" && unzip -q -o "$(ls "$T"/proj2/dist/*.whl | head -n1)" -d "$T/unz2" 2>/dev/null || true
so2=$(ls "$T/unz2"/_brotli*.so 2>/dev/null | head -n1)
aarch64-linux-gnu-objcopy --remove-section .comment "${so:-/dev/null}" "$T/a.so" 2>/dev/null
aarch64-linux-gnu-objcopy --remove-section .comment "${so2:-/dev/null}" "$T/b.so" 2>/dev/null
[ -s "$T/a.so" ] && cmp -s "$T/a.so" "$T/b.so" && ok "the imported and the created root built the same _brotli" ||
    not_ok "the two _brotli objects differ"
finish
