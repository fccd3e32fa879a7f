#!/bin/bash
# ctest-tier: network
# `emurun inspect` on Debian's own arm64 protoc (unpacked from its .deb): names aarch64, the
# interpreter and the needed libraries, resolves them all in the full sysroot, and lists what
# is missing (with the Debian package) from a sysroot that lacks them.
. "$(dirname "$0")/lib/common.sh"

root=${XDG_CACHE_HOME:-$HOME/.cache}/emurun/sysroots/protoc-arm64
rc=0
"$EMURUN_SOURCE_DIR/tools/emurun-sysroot" fetch --arch arm64 --dir "$root" protobuf-compiler \
    2>"$T/fetch.log" || rc=$?
[ $rc -eq 3 ] && skip "the Debian archive cannot be reached: $(tail -n1 "$T/fetch.log")"
[ $rc -eq 0 ] || { cat "$T/fetch.log"; not_ok "emurun-sysroot fetch"; finish; }

protoc=$root/usr/bin/protoc
rc=0; out=$("$EMURUN" inspect --sysroot "$root" "$protoc") || rc=$?
expect_eq "full sysroot: nothing missing" 0 "$rc"
expect_contains "arch" "$out" "protoc: aarch64, ELF 64-bit little-endian"
expect_contains "interpreter" "$out" "interpreter: /lib/ld-linux-aarch64.so.1 => $root/"
for lib in libprotoc.so.32 libprotobuf.so.32 libstdc++.so.6 libc.so.6 libz.so.1; do
    expect_contains "resolves $lib" "$out" "$lib => $root/"
done

# Only Debian's cross sysroot (libc, libstdc++): protobuf's own libraries and zlib are missing.
rc=0; out=$("$EMURUN" inspect --sysroot /usr/aarch64-linux-gnu "$protoc") || rc=$?
expect_eq "partial sysroot: exit 1" 1 "$rc"
expect_contains "libprotoc missing, its package a guess said as one" "$out" \
    "libprotoc.so.32 => MISSING (Debian: libprotoc32:arm64?, a name guessed from the soname"
expect_contains "libstdc++ found" "$out" "libstdc++.so.6 => /usr/aarch64-linux-gnu/"
expect_contains "libc found in cross sysroot" "$out" "libc.so.6 => /usr/aarch64-linux-gnu/lib/libc.so.6"

json=$("$EMURUN" inspect --json --sysroot /usr/aarch64-linux-gnu "$protoc" || true)
expect_contains "json arch" "$json" '"arch": "aarch64"'
expect_contains "json missing list" "$json" '"libprotoc.so.32"'
expect_contains "json: a guessed package says so" "$(tr -d ' \n' <<<"$json")" \
    '"package":"libprotoc32:arm64","package_guessed":true'

# exec refuses before starting qemu, naming the libraries.
rc=0; err=$("$EMURUN" exec --sysroot /usr/aarch64-linux-gnu -- "$protoc" --version 2>&1) || rc=$?
expect_eq "exec with missing libs: 125" 125 "$rc"
expect_contains "exec names libprotoc" "$err" "libprotoc.so.32 (needed by protoc)"
expect_contains "exec: the packages are likely, not known" "$err" \
    "Debian likely ships them in libprotoc32:arm64 (names guessed from the sonames"
# ... and runs it with the full sysroot.
expect_contains "exec with full sysroot" "$("$EMURUN" exec --sysroot "$root" -- "$protoc" --version)" "libprotoc 3."
finish
