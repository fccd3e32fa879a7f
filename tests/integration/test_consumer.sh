#!/bin/bash
# ctest-tier: packaging
# The installed package works for a consumer: `cmake --install` into a temporary prefix, then
# tests/consumer (find_package(emurun CONFIG), emurun::emurun, emurun_add_shim) is configured,
# built and run against that prefix, and runs a foreign tool through a shim.
set -u
probe=$EMURUN_FIXTURE_DIR/aarch64/probe
[ -x "$probe" ] || { echo "skipped: aarch64 probe fixture not built (no cross compiler)"; exit 125; }
command -v qemu-aarch64 >/dev/null || command -v qemu-aarch64-static >/dev/null ||
    { echo "skipped: qemu-aarch64 not installed"; exit 125; }
mkdir -p "$EMURUN_TESTDIR_ROOT"
t=$(mktemp -d "$EMURUN_TESTDIR_ROOT/consumer.XXXXXX")
gen=()
command -v ninja >/dev/null && gen=(-G Ninja)

cmake --install "$EMURUN_BUILD_DIR" --prefix "$t/prefix" >"$t/install.log" 2>&1 ||
    { echo "FAIL: cmake --install"; tail -n 20 "$t/install.log"; exit 1; }
cmake -S "$EMURUN_SOURCE_DIR/tests/consumer" -B "$t/build" "${gen[@]}" \
    -DCMAKE_PREFIX_PATH="$t/prefix" -DCONSUMER_FOREIGN_TOOL="$probe" >"$t/configure.log" 2>&1 ||
    { echo "FAIL: configuring the consumer"; tail -n 30 "$t/configure.log"; exit 1; }
grep -q "emurun shim: $t/build/emurun-shims/probe" "$t/configure.log" ||
    { echo "FAIL: the consumer did not use the installed emurun"; cat "$t/configure.log"; exit 1; }
cmake --build "$t/build" >"$t/build.log" 2>&1 ||
    { echo "FAIL: building the consumer"; tail -n 30 "$t/build.log"; exit 1; }

failures=0
machine=$(cat "$t/build/machine.txt")
[ "$machine" = aarch64 ] || { echo "FAIL: custom command through emurun_add_shim gave <$machine>"; failures=1; }
out=$("$t/build/consumer" "$probe" "$t/shims" uname)
[ "$out" = aarch64 ] || { echo "FAIL: consumer ran the shimmed tool: <$out>"; failures=1; }
"$t/build/consumer" "$probe" "$t/shims" exit 7
rc=$?
[ $rc -eq 7 ] || { echo "FAIL: exit code through the consumer: $rc"; failures=1; }
[ "$(stat -c %i "$t/shims/tool")" = "$(stat -c %i "$t/prefix/bin/emurun")" ] ||
    echo "note: the shim is a copy, not a hard link, of the installed emurun"
# The installed `emurun shim add` (run by emurun_add_shim) links the installed launcher.
launcher=$t/prefix/libexec/emurun/emurun-shim
[ -x "$launcher" ] || { echo "FAIL: $launcher not installed"; failures=1; }
cmp -s "$launcher" "$t/build/emurun-shims/probe" ||
    { echo "FAIL: emurun_add_shim's shim is not the installed launcher"; failures=1; }
[ $failures -eq 0 ] || { echo "files in $t"; exit 1; }
rm -rf "$t"
echo "consumer: built against the installed package and ran a shimmed tool"
