#!/bin/bash
# ctest-tier: packaging
# BUILD_SHARED_LIBS=ON works: libemurun.so exports the public API (hidden visibility otherwise)
# and the CLI built against it runs a foreign program.
. "$(dirname "$0")/lib/common.sh"
command -v cmake >/dev/null || skip "cmake not installed"

b=$T/shared
gen=""; command -v ninja >/dev/null && gen="-G Ninja"
# shellcheck disable=SC2086
cmake -S "$EMURUN_SOURCE_DIR" -B "$b" $gen -DBUILD_SHARED_LIBS=ON -DEMURUN_BUILD_TESTS=OFF \
    -DCMAKE_BUILD_TYPE=Release >"$T/configure.log" 2>&1 || { cat "$T/configure.log"; not_ok configure; finish; }
cmake --build "$b" --target emurun_cli --parallel 2 >"$T/build.log" 2>&1 ||
    { tail -n 40 "$T/build.log"; not_ok build; finish; }

lib=$(ls "$b"/lib/libemurun.so.* 2>/dev/null | head -n1)
[ -n "$lib" ] && ok "libemurun.so built" || not_ok "libemurun.so built"
expect_contains "CLI links the shared library" "$(ldd "$b/bin/emurun-cli")" "libemurun.so"
syms=$(nm -D -C --defined-only "$lib")
expect_contains "public API exported" "$syms" "emurun::find_arch("
expect_contains "public API exported (elf)" "$syms" "emurun::read_elf("
case "$syms" in
    *"anonymous namespace"*) not_ok "internal symbols hidden" ;;
    *) ok "internal symbols hidden" ;;
esac
if [ -x "$EMURUN_FIXTURE_DIR/aarch64/probe-static" ]; then
    expect_eq "shared CLI runs aarch64" aarch64 "$("$b/bin/emurun" exec -- "$EMURUN_FIXTURE_DIR/aarch64/probe-static" uname)"
fi
finish
