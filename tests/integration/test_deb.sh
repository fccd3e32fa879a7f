#!/bin/bash
# ctest-tier: packaging
# Debian packages: 'cpack -G DEB' packages this build tree (emurun and libemurun-dev), lintian
# finds no errors, the control fields are right, and both install with dpkg into a fresh, empty
# root (dpkg --root with its own database, dependencies checked against this host with
# 'apt-get install -s' instead of being installed there: a debootstrap'ed root would take
# minutes). From that root: 'emurun doctor' runs, the man page renders, bash completion loads,
# and Meson finds the installed cross file by name.
. "$(dirname "$0")/lib/common.sh"

# All of it is what the packages are for (the man page, the Meson cross file with emurun as its
# exe_wrapper): without one of these tools the run is skipped, never a partial pass.
for tool in cpack lintian dpkg-deb dpkg-shlibdeps readelf man meson aarch64-linux-gnu-gcc qemu-aarch64-static; do
    command -v "$tool" >/dev/null || skip "$tool not installed (tools/install-deps installs it)"
done
config=$EMURUN_BUILD_DIR/CPackConfig.cmake
[ -f "$config" ] || skip "no CPackConfig.cmake in $EMURUN_BUILD_DIR"

start=$SECONDS
if ! (cd "$T" && cpack --config "$config" -G DEB -B "$T/out" >"$T/cpack.log" 2>&1); then
    not_ok "cpack -G DEB failed: $(tail -n 15 "$T/cpack.log")"
    finish
    exit 1
fi
ok "cpack -G DEB ($((SECONDS - start)) s)"
emurun_deb=$(ls "$T"/out/emurun_*.deb)
dev_deb=$(ls "$T"/out/libemurun-dev_*.deb)
# The version of the changelog's first entry is the packages' version.
version=$(dpkg-deb --fsys-tarfile "$emurun_deb" | tar -xO ./usr/share/doc/emurun/changelog.Debian.gz |
    gzip -dc | sed -n '1s/^emurun (\([^)]*\)).*/\1/p')
[ -n "$version" ] || not_ok "no version in changelog.Debian.gz"

# Control fields.
expect_eq "emurun package name" emurun "$(dpkg-deb -f "$emurun_deb" Package)"
expect_eq "emurun version" "$version" "$(dpkg-deb -f "$emurun_deb" Version)"
depends=$(dpkg-deb -f "$emurun_deb" Depends)
# emurun is a static PIE (start-up, issue 15), the shim launcher and the step supervisor static:
# no program of the package loads a shared library, so shlibdeps has nothing to depend on. A
# build whose emurun is dynamic (sanitizers, a shared libemurun) depends on libc6, and on no C++
# runtime library either way (spdlog and fmt compiled in, libstdc++ linked in).
dpkg-deb -x "$emurun_deb" "$T/unpacked"
for f in usr/bin/emurun usr/libexec/emurun/emurun-cli usr/libexec/emurun/emurun-shim usr/libexec/emurun/emurun-supervisor; do
    if readelf -lW "$T/unpacked/$f" | grep -q 'INTERP'; then
        dynamic="$dynamic $f"
    fi
done
if [ -z "${dynamic:-}" ]; then
    expect_eq "emurun Depends: nothing (every program in it is static)" "" "$depends"
else
    expect_contains "emurun Depends from shlibdeps ($dynamic dynamic): libc6" "$depends" "libc6"
fi
case "$depends" in
*libstdc++*|*libspdlog*|*libfmt*) not_ok "emurun Depends on C++ runtime libraries: $depends" ;;
*) ok "emurun Depends on no C++ runtime library: [$depends]" ;;
esac
expect_eq "libemurun-dev Depends: only emurun and nlohmann-json3-dev" \
    "emurun (= $version), nlohmann-json3-dev" "$(dpkg-deb -f "$dev_deb" Depends)"
expect_contains "emurun Recommends qemu-user-static" "$(dpkg-deb -f "$emurun_deb" Recommends)" "qemu-user-static"
expect_contains "libemurun-dev Depends on emurun of its version" "$(dpkg-deb -f "$dev_deb" Depends)" "emurun (= $version)"
expect_eq "libemurun-dev section" libdevel "$(dpkg-deb -f "$dev_deb" Section)"
contents=$(dpkg-deb -c "$emurun_deb")
for f in ./usr/bin/emurun ./usr/libexec/emurun/emurun-cli ./usr/libexec/emurun/emurun-shim ./usr/libexec/emurun/emurun-supervisor ./usr/share/man/man1/emurun.1.gz ./usr/share/doc/emurun/copyright \
    ./usr/share/doc/emurun/changelog.Debian.gz ./usr/share/bash-completion/completions/emurun \
    ./usr/share/zsh/vendor-completions/_emurun ./usr/share/meson/cross/emurun-aarch64 \
    ./usr/share/meson/cross/emurun-aarch64-sysroot \
    ./usr/share/emurun/schema/report.schema.json ./usr/share/emurun/arches.json; do
    expect_contains "emurun ships $f" "$contents" "$f"
done
dev_contents=$(dpkg-deb -c "$dev_deb")
for f in ./usr/include/emurun/runner.hpp /libemurun.a /cmake/emurun/emurunConfig.cmake /pkgconfig/emurun.pc \
    /cmake/emurun/toolchains/emurun-paths.cmake \
    ./usr/share/doc/libemurun-dev/copyright; do
    expect_contains "libemurun-dev ships $f" "$dev_contents" "$f"
done

# lintian: no errors (E: lines; overridden tags, shown as O: with their reason, do not count).
# Warnings and info are printed for the record.
lintian --allow-root --display-info --show-overrides "$emurun_deb" "$dev_deb" >"$T/lintian.txt" 2>&1 || true
if grep -q '^E:' "$T/lintian.txt"; then
    not_ok "lintian reports errors: $(grep '^E:' "$T/lintian.txt")"
elif ! grep -q '^[EWIPON]:' "$T/lintian.txt" && [ -s "$T/lintian.txt" ]; then
    not_ok "lintian did not run: $(head -n5 "$T/lintian.txt")"
else
    ok "lintian: no errors"
fi
echo "lintian said ($(grep -c "^[EWIPO]:" "$T/lintian.txt") tags, O: overridden):"
sed 's/^/  /' "$T/lintian.txt"

# Dependencies resolvable on this Debian host (simulated: nothing is installed).
if apt-get install -s "$emurun_deb" "$dev_deb" >"$T/apt.txt" 2>&1; then
    ok "apt-get install -s: dependencies resolvable"
else
    not_ok "apt-get install -s failed: $(tail -n5 "$T/apt.txt")"
fi

# A fresh root with an empty dpkg database; no maintainer scripts run (the packages have none).
R=$T/root
mkdir -p "$R/var/lib/dpkg/info" "$R/var/lib/dpkg/updates"
: >"$R/var/lib/dpkg/status"
if dpkg --root="$R" --log="$T/dpkg.log" --force-not-root --force-depends --force-script-chrootless \
    -i "$emurun_deb" "$dev_deb" >"$T/dpkg.txt" 2>&1; then
    ok "dpkg --root installs both packages"
else
    not_ok "dpkg --root failed: $(tail -n5 "$T/dpkg.txt")"
fi
expect_contains "dpkg's database in the root lists emurun" \
    "$(dpkg --root="$R" -l emurun libemurun-dev 2>/dev/null)" "ii  emurun"
out=$("$R/usr/bin/emurun" doctor --no-probe 2>&1) && rc=0 || rc=$?
[ "$rc" -le 1 ] && ok "installed emurun doctor runs (exit $rc)" || not_ok "installed emurun doctor: exit $rc: $out"
expect_contains "installed emurun doctor checks the kernel" "$out" "kernel:"
# And inside that root: chrooted (user namespace, own /proc), with the shared libraries the
# Depends name copied in from this host as the stand-in for installing those packages (none for
# a static emurun: then it runs in a root with no library at all).
if unshare --user --map-root-user --mount --pid --fork true 2>/dev/null; then
    for lib in $(ldd "$R/usr/bin/emurun" | awk '/=>/ {print $3} /^\t\// {print $1}'); do
        mkdir -p "$R$(dirname "$lib")" && cp -L "$lib" "$R$lib"
    done
    mkdir -p "$R/proc" "$R/tmp"
    rc=0
    out=$(unshare --user --map-root-user --mount --pid --fork \
        sh -c 'mount -t proc proc "$1/proc" && exec chroot "$1" /usr/bin/emurun doctor --no-probe' _ "$R" 2>&1) || rc=$?
    # No qemu in the root (qemu-user-static is only recommended): doctor says so and exits 1.
    expect_eq "chrooted emurun doctor runs in the fresh root (exit 1: no emulator there)" 1 "$rc"
    expect_contains "chrooted emurun doctor checks the kernel" "$out" "kernel:"
    expect_contains "chrooted emurun doctor finds no emulator in the root" "$out" "emulators: no QEMU"
else
    skip_part "no user namespaces: emurun doctor not run chrooted in the fresh root"
fi
expect_contains "installed emurun --version" "$("$R/usr/bin/emurun" --version)" "emurun ${version%-*}"
expect_contains "installed man page renders" "$(MANWIDTH=80 man -l "$R/usr/share/man/man1/emurun.1.gz" 2>&1)" "sandbox"
expect_contains "installed bash completion" "$(bash -c ". $R/usr/share/bash-completion/completions/emurun; complete -p emurun")" "_emurun"

# The cross files name emurun by its installed absolute path (/usr/bin, as the package puts it),
# written at install time: no PATH lookup.
expect_contains "the cross file's exe_wrapper is the installed /usr/bin/emurun" \
    "$(grep '^exe_wrapper' "$R/usr/share/meson/cross/emurun-aarch64")" "['/usr/bin/emurun', 'exec', '--arch', 'aarch64', '--']"
expect_contains "the sysroot cross file too, with the sysroot" \
    "$(grep '^exe_wrapper' "$R/usr/share/meson/cross/emurun-aarch64-sysroot")" "['/usr/bin/emurun', 'exec', '--arch', 'aarch64', '--sysroot', emurun_sysroot, '--']"
paths=$(find "$R/usr/lib" -path '*cmake/emurun/toolchains/emurun-paths.cmake' | head -n1)
# emurun-paths.cmake names emurun relative to itself (the release tarball moves): from the
# root's copy it is the root's /usr/bin/emurun.
printf 'include(%s)\nmessage("${EMURUN_INSTALLED_EXECUTABLE}")\n' "$paths" >"$T/paths.cmake"
expect_eq "the toolchain files' emurun-paths.cmake finds usr/bin/emurun beside it" "$R/usr/bin/emurun" \
    "$(cmake -P "$T/paths.cmake" 2>&1)"

# meson setup --cross-file emurun-aarch64 finds the installed file by name ($XDG_DATA_DIRS); the
# root's emurun is not at /usr/bin, so a second cross file overrides the exe_wrapper (the
# documented override), which then runs the cross compiler's sanity check.
mkdir -p "$T/mproj"
printf "project('x', 'c')\nexecutable('x', 'x.c')\n" >"$T/mproj/meson.build"
printf 'int main(void) { return 0; }\n' >"$T/mproj/x.c"
printf "[binaries]\nexe_wrapper = ['%s', 'exec', '--arch', 'aarch64', '--']\n" "$R/usr/bin/emurun" >"$T/override.ini"
if (cd "$T/mproj" && XDG_DATA_DIRS=$R/usr/share PATH=/usr/bin:/bin HOME=$T \
    meson setup --cross-file emurun-aarch64 --cross-file "$T/override.ini" "$T/mbuild" >"$T/meson.txt" 2>&1); then
    ok "meson setup --cross-file emurun-aarch64 (found by name)"
else
    not_ok "meson setup --cross-file emurun-aarch64: $(tail -n5 "$T/meson.txt")"
fi
expect_contains "meson ran the sanity check through the exe_wrapper" "$(cat "$T/meson.txt")" "emurun"
echo "test_deb took $((SECONDS - start)) s"
finish
