#!/bin/bash
# `emurun sysroot fetch` becomes the emurun-sysroot script (exec in place, so its exit code is
# emurun's): the one beside the emurun binary when executable, else the one found by emurun's
# PATH rule; neither: a clear error naming the script.
. "$(dirname "$0")/lib/common.sh"

mkdir -p "$T/bin" "$T/path" "$T/empty"
cp "$EMURUN" "$T/bin/emurun"
cat >"$T/bin/emurun-sysroot" <<'SH'
#!/bin/sh
printf 'beside:'; printf '[%s]' "$@"; echo; exit 3
SH
chmod +x "$T/bin/emurun-sysroot"
cat >"$T/path/emurun-sysroot" <<'SH'
#!/bin/sh
printf 'path:'; printf '[%s]' "$@"; echo; exit 4
SH
chmod +x "$T/path/emurun-sysroot"

rc=0; out=$(PATH="$T/path:/usr/bin:/bin" "$T/bin/emurun" sysroot fetch --arch x pkg) || rc=$?
expect_eq "the script beside emurun wins" "beside:[fetch][--arch][x][pkg]" "$out"
expect_eq "its exit code is emurun's" 3 "$rc"

chmod -x "$T/bin/emurun-sysroot"
rc=0; out=$(PATH="$T/path:/usr/bin:/bin" "$T/bin/emurun" sysroot fetch a) || rc=$?
expect_eq "a non-executable one beside is passed over for PATH" "path:[fetch][a]" "$out"
expect_eq "the PATH script's exit code" 4 "$rc"

rc=0; out=$(PATH="$T/empty" "$T/bin/emurun" sysroot fetch a 2>&1) || rc=$?
expect_contains "none found: the error names the script" "$out" \
    "exec emurun-sysroot: No such file or directory"
expect_contains "and says what to do" "$out" "install emurun-sysroot"
[ "$rc" -ne 0 ] && ok "none found fails (rc $rc)" || not_ok "none found exited 0"

finish
