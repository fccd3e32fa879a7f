#!/bin/bash
# ctest-tier: packaging bullseye=root trixie=root
# ctest-parts: tarball bullseye trixie
# The release tarball (cpack -G TGZ, cmake/EmurunRelease.cmake): what it holds, that nothing in
# it names a prefix (unpacked under two different prefixes, the toolchain files find their own
# emurun, the Meson cross files run 'emurun' from PATH), and that it works by unpacking alone in
# clean roots of two other Debian releases (bullseye: glibc 2.31, QEMU 5.2; trixie: glibc 2.41,
# QEMU 10.0; mmdebstrap's apt variant + qemu-user-static, made once and cached:
# tests/integration/lib/native_root.sh): there 'emurun doctor' passes, 'emurun sandbox' runs an
# aarch64 program, and a 3-step pipeline (native, sandbox aarch64, exec s390x) passes.
. "$(dirname "$0")/lib/common.sh"
. "$(dirname "$0")/lib/native_root.sh"
. "$(dirname "$0")/lib/release.sh"

part_tarball() {
    make_tarball
    local top list a b
    top=$(basename "$tarball" .tar.gz)
    expect_contains "the name says version, OS and arch" "$top" "emurun-$("$EMURUN" --version | awk '{print $2}')-linux-$(uname -m)"
    list=$(tar -tzf "$tarball")
    expect_eq "every member is below one top directory, $top/" "" "$(grep -v "^$top/" <<<"$list" || true)"
    for f in bin/emurun bin/emurun-sysroot libexec/emurun/emurun-cli libexec/emurun/emurun-shim \
        libexec/emurun/emurun-supervisor share/man/man1/emurun.1.gz share/man/man1/emurun-sysroot.1.gz \
        share/bash-completion/completions/emurun share/zsh/vendor-completions/_emurun \
        share/meson/cross/emurun-aarch64 share/meson/cross/emurun-s390x-sysroot share/emurun/arches.json \
        share/emurun/schema/pipeline.schema.json include/emurun/runner.hpp lib/libemurun.a \
        lib/pkgconfig/emurun.pc lib/cmake/emurun/emurunConfig.cmake lib/cmake/emurun/toolchains/aarch64.cmake \
        lib/cmake/emurun/toolchains/emurun-paths.cmake; do
        grep -qx "$top/$f" <<<"$list" && ok "ships $f" || not_ok "$f missing from the tarball"
    done
    a=$T/prefix-a
    b=$T/elsewhere/prefix-b
    unpack "$a"
    # Nothing names the staging dir or the build tree (binaries included: stripped, no RPATH).
    expect_eq "no file names the staging or build dir" "" \
        "$(grep -rlaE "_CPack_Packages|$EMURUN_BUILD_DIR" "$a" || true)"
    for f in bin/emurun libexec/emurun/emurun-cli libexec/emurun/emurun-shim libexec/emurun/emurun-supervisor; do
        if readelf -lW "$a/$f" | grep -q INTERP; then not_ok "$f is dynamic"; else ok "$f is static"; fi
    done
    mkdir -p "$(dirname "$b")" && mv "$a" "$b"
    expect_contains "emurun runs from a moved prefix" "$("$b/bin/emurun" --version)" "emurun "
    out=$("$b/bin/emurun" doctor --no-probe 2>&1) && rc=0 || rc=$?
    [ "$rc" -le 1 ] && ok "emurun doctor from a moved prefix (exit $rc)" || not_ok "doctor from a moved prefix: exit $rc: $out"
    printf 'include(%s)\nmessage("${EMURUN_INSTALLED_EXECUTABLE}")\n' "$b/lib/cmake/emurun/toolchains/emurun-paths.cmake" >"$T/p.cmake"
    expect_eq "the toolchain files' emurun is the moved prefix's" "$b/bin/emurun" "$(cmake -P "$T/p.cmake" 2>&1)"
    expect_contains "the Meson cross file runs emurun from PATH" \
        "$(grep '^exe_wrapper' "$b/share/meson/cross/emurun-aarch64")" "['emurun', 'exec', '--arch', 'aarch64', '--']"
    expect_contains "the pkg-config file's -I is the moved prefix's" \
        "$(PKG_CONFIG_PATH=$b/lib/pkgconfig pkg-config --cflags-only-I emurun 2>&1)" "-I$b/lib/pkgconfig/../../include"
    if command -v meson >/dev/null && command -v aarch64-linux-gnu-gcc >/dev/null; then
        mkdir -p "$T/mproj"
        printf "project('x', 'c')\nexecutable('x', 'x.c')\n" >"$T/mproj/meson.build"
        printf 'int main(void) { return 0; }\n' >"$T/mproj/x.c"
        if (cd "$T/mproj" && XDG_DATA_DIRS=$b/share PATH=$b/bin:/usr/bin:/bin HOME=$T \
            meson setup --cross-file emurun-aarch64 "$T/mbuild" >"$T/meson.txt" 2>&1); then
            ok "meson setup --cross-file emurun-aarch64 from the tarball (sanity check run through emurun)"
        else
            not_ok "meson setup with the tarball's cross file: $(tail -n5 "$T/meson.txt")"
        fi
    fi
}

# in_release_root SUITE: the tarball and the aarch64 and s390x probes in a clean SUITE root,
# then doctor, sandbox and a pipeline there.
in_release_root() {
    local suite=$1 r=$T/$1 out rc
    release_root "$suite" "$r" || return 0
    unpack "$r/opt/emurun"
    cat >"$r/work/pipeline.json" <<'EOF'
{
  "name": "release-check",
  "defaults": { "cwd": "/work", "timeout": "2m" },
  "steps": [
    { "name": "prepare", "argv": ["sh", "-c", "printf 'hello from the root\\n' > in.txt"] },
    { "name": "aarch64", "needs": ["prepare"], "arch": "aarch64", "emulation": "sandbox",
      "argv": ["sh", "-c", "aarch64/probe-static cat < in.txt > out.txt && aarch64/probe-static uname >> out.txt"] },
    { "name": "s390x", "needs": ["aarch64"], "arch": "s390x", "emulation": "exec",
      "argv": ["s390x/probe-static", "endian"] }
  ]
}
EOF
    cat >"$r/work/check.sh" <<'EOF'
set -u
export PATH=/opt/emurun/bin:$PATH
. /etc/os-release
echo "== $PRETTY_NAME, glibc $(getconf GNU_LIBC_VERSION | cut -d' ' -f2)"
emurun --version
echo "qemu-pkg=$(dpkg-query -W -f '${Version}' qemu-user-static)"
emurun doctor; echo "doctor-exit=$?"
echo "sandbox-out=$(emurun sandbox --arch aarch64 -- /work/aarch64/probe-static uname)"
cd /work && emurun run pipeline.json --report report.json --log-dir logs; echo "run-exit=$?"
cat out.txt
EOF
    run_root_script "$suite" "$r" check.sh
    expect_contains "$suite: emurun doctor passes" "$out" "doctor-exit=0"
    expect_contains "$suite: emurun sandbox runs an aarch64 program" "$out" "sandbox-out=aarch64"
    expect_contains "$suite: the pipeline passes" "$out" "run-exit=0"
    expect_contains "$suite: the sandbox step read the native step's file" "$(cat "$r/work/out.txt" 2>/dev/null)" "hello from the root"
    expect_contains "$suite: the sandbox step ran on aarch64" "$(cat "$r/work/out.txt" 2>/dev/null)" "aarch64"
    expect_contains "$suite: the exec step ran big-endian s390x" "$(cat "$r/work/logs/s390x.log" 2>/dev/null)" "big 01020304"
    # The report names the root's own QEMU: the version of the suite's qemu-user-static.
    local pkg emu
    pkg=$(sed -n 's/^qemu-pkg=\([0-9]*:\)\{0,1\}\([0-9]*\.[0-9]*\).*/\2/p' <<<"$out")
    emu=$(python3 -c 'import json,sys; s={x["name"]: x for x in json.load(open(sys.argv[1]))["steps"]}; e=s["s390x"]["emulator"]; print(e["path"], e["version"])' \
        "$r/work/report.json" 2>&1)
    expect_contains "$suite: the report records the root's QEMU ($pkg)" "$emu" "/usr/bin/qemu-s390x-static $pkg"
}

part_bullseye() { in_release_root bullseye; }
part_trixie() { in_release_root trixie; }

run_parts tarball bullseye trixie
finish
