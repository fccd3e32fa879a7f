#!/bin/bash
# ctest-tier: network
# Real-world acceptance: Debian's own arm64 and ppc64el protoc, unpacked into sysroots from the
# Debian archive by tools/emurun-sysroot, run through shims named `protoc` and found through
# PATH, generate C++ and Python code byte-identical to the host's native protoc.
# Skips only when the archive cannot be reached (or a prerequisite is not installed).
set -u
src=$EMURUN_SOURCE_DIR
proto_dir=$src/tests/integration/data
command -v protoc >/dev/null ||
    { echo "skipped: host protoc not installed (apt-get install protobuf-compiler)"; exit 125; }
for a in aarch64 ppc64le; do
    command -v qemu-$a >/dev/null || command -v qemu-$a-static >/dev/null ||
        { echo "skipped: qemu-$a not installed (apt-get install qemu-user)"; exit 125; }
done
host_version=$(protoc --version)

mkdir -p "$EMURUN_TESTDIR_ROOT"
t=$(mktemp -d "$EMURUN_TESTDIR_ROOT/protoc.XXXXXX")
mkdir -p "$t/native/cpp" "$t/native/py"
(cd "$proto_dir" && protoc --cpp_out="$t/native/cpp" --python_out="$t/native/py" shop.proto common.proto) ||
    { echo "FAIL: native protoc"; exit 1; }

failures=0
for arch in arm64 ppc64el; do
    root=${XDG_CACHE_HOME:-$HOME/.cache}/emurun/sysroots/protoc-$arch
    "$src/tools/emurun-sysroot" fetch --arch $arch --dir "$root" protobuf-compiler 2>"$t/fetch-$arch.log"
    rc=$?
    if [ $rc -eq 3 ]; then
        echo "skipped: the Debian archive cannot be reached: $(tail -n1 "$t/fetch-$arch.log")"
        exit 125
    elif [ $rc -ne 0 ]; then
        echo "FAIL: emurun-sysroot fetch $arch: $(cat "$t/fetch-$arch.log")"
        exit 1
    fi
    if "$EMURUN" inspect --help >/dev/null 2>&1; then
        "$EMURUN" inspect --sysroot "$root" "$root/usr/bin/protoc" >"$t/inspect-$arch.txt" 2>&1 ||
            { echo "FAIL: emurun inspect reports a problem:"; cat "$t/inspect-$arch.txt"; failures=$((failures + 1)); }
    fi
    shims=$t/shims-$arch
    "$EMURUN" shim add protoc --target "$root/usr/bin/protoc" --arch $arch --sysroot "$root" \
        --dir "$shims" >/dev/null || { echo "FAIL: shim add protoc for $arch"; exit 1; }
    version=$(PATH=$shims:$PATH protoc --version)
    [ "$version" = "$host_version" ] || echo "note: $arch protoc is '$version', host is '$host_version'"
    out=$t/$arch
    mkdir -p "$out/cpp" "$out/py"
    (cd "$proto_dir" && PATH=$shims:$PATH protoc --cpp_out="$out/cpp" --python_out="$out/py" shop.proto common.proto) ||
        { echo "FAIL: $arch protoc exited $?"; failures=$((failures + 1)); continue; }
    if diff -r "$t/native" "$out" >"$t/diff-$arch.txt"; then
        echo "$arch: $(find "$out" -type f | wc -l) generated files byte-identical to native"
    else
        echo "FAIL: $arch output differs from native:"
        head -n 20 "$t/diff-$arch.txt"
        failures=$((failures + 1))
    fi
done
[ $failures -eq 0 ] || { echo "$failures failure(s); files in $t"; exit 1; }
rm -rf "$t"
