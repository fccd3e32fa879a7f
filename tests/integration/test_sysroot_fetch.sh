#!/bin/bash
# ctest-tier: network
# `emurun sysroot fetch|source|build-dep` parse their options and run the emurun-sysroot script
# (its exit code is emurun's, except its usage error 2, which becomes 125): the one beside the
# emurun binary when executable, else the one found by emurun's PATH rule; neither: a clear
# error naming the script. `sysroot check --sysroot DIR FILE` checks FILE, not DIR/usr/bin; a
# sysroot that is missing, a file or holds no programs is bad input. A fake script records what
# it was given, so this needs no network.
. "$(dirname "$0")/lib/common.sh"

mkdir -p "$T/bin" "$T/path" "$T/empty"
cp "$EMURUN" "$T/bin/emurun"
cp "$(dirname "$EMURUN")/emurun-cli" "$T/bin/emurun-cli" # the launcher hands every command to it
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
P="$T/path:/usr/bin:/bin"
# emurun names the apt cache itself (apt/ in its cache dir), so EMURUN_CACHE_DIR moves it.
export EMURUN_CACHE_DIR="$T/cache"
C="[--cache][$T/cache/apt]"

rc=0; out=$(PATH=$P "$T/bin/emurun" sysroot fetch --arch aarch64 --dir "$T/sr" zlib1g-dev) || rc=$?
expect_eq "the script beside emurun wins; the arch is Debian's name" \
    "beside:[fetch][--arch][arm64][--dir][$T/sr]$C[--][zlib1g-dev]" "$out"
expect_eq "its exit code is emurun's" 3 "$rc"
out=$(EMURUN_CACHE_DIR='' XDG_CACHE_HOME="$T/xdg" PATH=$P "$T/bin/emurun" sysroot fetch --arch arm64 --dir D z) || true
expect_contains "without EMURUN_CACHE_DIR: the XDG cache's emurun/apt" "$out" "[--cache][$T/xdg/emurun/apt]"

rc=0
out=$(PATH=$P "$T/bin/emurun" sysroot fetch zlib1g-dev --dir D --refresh --arch ppc64el \
    --mirror http://m/debian --suite trixie --cache C libpng-dev) || rc=$?
expect_eq "options and packages in any order, every option passed on" \
    "beside:[fetch][--arch][ppc64el][--dir][D][--cache][C][--mirror][http://m/debian][--suite][trixie][--refresh][--][zlib1g-dev][libpng-dev]" \
    "$out"

rc=0; out=$(PATH=$P "$T/bin/emurun" sysroot source --dir S expat) || rc=$?
expect_eq "source: its options and the one package" "beside:[source][--dir][S]$C[--][expat]" "$out"

rc=0; out=$(PATH=$P "$T/bin/emurun" sysroot build-dep --arch s390x --dir B --profiles nocheck libpng1.6) || rc=$?
expect_eq "build-dep: arch, dir, profiles and the one source package" \
    "beside:[build-dep][--arch][s390x][--dir][B]$C[--profiles][nocheck][--][libpng1.6]" "$out"

rc=0; out=$(PATH=$P "$T/bin/emurun" sysroot source --dir S expat zlib 2>&1) || rc=$?
expect_eq "source with two packages is a usage error" 2 "$rc"

rc=0; out=$(PATH=$P "$T/bin/emurun" sysroot fetch --dir D zlib1g-dev 2>&1) || rc=$?
expect_eq "fetch without --arch is a usage error" 2 "$rc"
expect_contains "which names --arch" "$out" "--arch"

rc=0; out=$(PATH=$P "$T/bin/emurun" sysroot fetch --arch vax --dir D zlib1g-dev 2>&1) || rc=$?
expect_eq "an unknown arch is emurun's failure" 125 "$rc"
expect_contains "it names the arch" "$out" "vax"
expect_contains "and why" "$out" "not an architecture emurun knows"

# emurun-sysroot only serves some of the arches Debian has: refused before it runs.
rc=0; out=$(PATH=$P "$T/bin/emurun" sysroot fetch --arch mips64el --dir D zlib1g-dev 2>&1) || rc=$?
expect_eq "an arch emurun-sysroot does not serve is bad input" 125 "$rc"
expect_contains "it says so" "$out" "emurun-sysroot makes no sysroots for mips64el"
expect_contains "and lists the ones it does" "$out" "riscv64 (riscv64)"
case $out in *beside:*) not_ok "the script ran for mips64el" ;; *) ok "the script did not run" ;; esac

# A missing package names what goes there, with an example (a usage error, like a missing option).
for op in fetch build-dep; do
    rc=0; out=$(PATH=$P "$T/bin/emurun" sysroot $op --arch arm64 --dir D 2>&1) || rc=$?
    expect_eq "$op without a package is a usage error" 2 "$rc"
    expect_contains "$op: it says what is missing" "$out" "sysroot $op: no "
    expect_contains "$op: with an example" "$out" "e.g. emurun sysroot $op --arch arm64 --dir "
done
rc=0; out=$(PATH=$P "$T/bin/emurun" sysroot source --dir S 2>&1) || rc=$?
expect_eq "source without a package is a usage error" 2 "$rc"
expect_contains "source: it says what is missing, with an example" "$out" \
    "sysroot source: no source package named (give it after the options, e.g. emurun sysroot source --dir ./src zlib)"

# The script's usage error (2) is a value emurun passed on that it refused: bad input, 125, and
# its message comes through.
mkdir -p "$T/bin2"
cp "$EMURUN" "$T/bin2/emurun"
cp "$(dirname "$EMURUN")/emurun-cli" "$T/bin2/emurun-cli"
cat >"$T/bin2/emurun-sysroot" <<'SH'
#!/bin/sh
echo "emurun-sysroot: error: refused" >&2; exit 2
SH
chmod +x "$T/bin2/emurun-sysroot"
rc=0; out=$(PATH=$P "$T/bin2/emurun" sysroot fetch --arch arm64 --dir D -- -x 2>&1) || rc=$?
expect_eq "the script's usage error is emurun's bad input" 125 "$rc"
expect_contains "the script's message comes through" "$out" "emurun-sysroot: error: refused"

out=$("$T/bin/emurun" sysroot fetch --help)
for o in --arch --dir --mirror --suite --cache --refresh; do
    expect_contains "fetch --help lists $o" "$out" "$o"
done
out=$("$T/bin/emurun" sysroot source --help)
expect_contains "source --help lists --dir" "$out" "--dir"
out=$("$T/bin/emurun" sysroot build-dep --help)
expect_contains "build-dep --help lists --profiles" "$out" "--profiles"

chmod -x "$T/bin/emurun-sysroot"
rc=0; out=$(PATH=$P "$T/bin/emurun" sysroot fetch --arch s390x --dir D a) || rc=$?
expect_eq "a non-executable one beside is passed over for PATH" \
    "path:[fetch][--arch][s390x][--dir][D]$C[--][a]" "$out"
expect_eq "the PATH script's exit code" 4 "$rc"

rc=0; out=$(PATH="$T/empty" "$T/bin/emurun" sysroot fetch --arch s390x --dir D a 2>&1) || rc=$?
expect_contains "none found: the error names the script" "$out" \
    "exec emurun-sysroot: No such file or directory"
expect_contains "and says what to do" "$out" "install emurun-sysroot"
expect_eq "none found is emurun's failure" 125 "$rc"

# check: FILE after --sysroot DIR is a program to check, and --sysroot repeats. FILE is the
# native probe fixture, a dynamic program (emurun itself is a static PIE: nothing to resolve).
dyn=$EMURUN_FIXTURE_DIR/native/probe
rc=0; out=$("$EMURUN" sysroot check --sysroot "$T/empty" --sysroot / "$dyn") || rc=$?
expect_contains "check --sysroot DIR FILE checks FILE" "$out" "$dyn: ok ("
expect_eq "and exits 0 when it resolves" 0 "$rc"
rc=0; out=$("$EMURUN" sysroot check --sysroot "$T/empty" "$dyn") || rc=$?
expect_contains "a sysroot without FILE's libraries: FILE is reported" "$out" "$dyn: "
expect_eq "and check exits 1" 1 "$rc"

# check: a sysroot that is not there, a file, or a directory without programs is bad input.
: >"$T/afile"
for sr in "$T/nonexistent:no such directory" "$T/afile:not a directory" \
    "$T/empty:no usr/lib and no programs in usr/bin or bin"; do
    rc=0; out=$("$EMURUN" sysroot check --sysroot "${sr%%:*}" 2>&1) || rc=$?
    expect_eq "check --sysroot ${sr%%:*} fails as bad input" 125 "$rc"
    expect_contains "it names the directory and why" "$out" "sysroot ${sr%%:*}: ${sr#*:}"
    expect_contains "and how to make one" "$out" "sysroot fetch --arch ARCH --dir ${sr%%:*}"
done
mkdir -p "$T/libsonly/usr/lib"
rc=0; out=$("$EMURUN" sysroot check --sysroot "$T/libsonly" 2>&1) || rc=$?
expect_eq "a sysroot with libraries but no programs: name the programs" 125 "$rc"
expect_contains "it says to name them" "$out" "$T/libsonly: no programs in usr/bin or bin (name the programs to check"
rc=0; out=$("$EMURUN" sysroot check --sysroot "$T/nonexistent" "$EMURUN" 2>&1) || rc=$?
expect_eq "a missing sysroot with a program named fails too" 125 "$rc"

finish
