#!/bin/bash
# ctest-tier: packaging
# The installed pkg-config file works from any install prefix: a program compiled with
# `pkg-config --cflags --libs emurun` links and uses the library.
. "$(dirname "$0")/lib/common.sh"
command -v pkg-config >/dev/null || skip "pkg-config not installed"
cmake --install "$EMURUN_BUILD_DIR" --prefix "$T/prefix" >"$T/install.log" 2>&1 ||
    { tail -n 20 "$T/install.log"; not_ok "cmake --install"; finish; }
pc=$(find "$T/prefix" -name emurun.pc | head -n1)
[ -n "$pc" ] && ok "emurun.pc installed" || { not_ok "emurun.pc installed"; finish; }
export PKG_CONFIG_PATH=$(dirname "$pc")
cat > "$T/use.cpp" <<'CPP'
#include <emurun/arch.hpp>
#include <iostream>
int main() {
    auto a = emurun::find_arch("ppc64el");
    if (!a) { std::cerr << a.error().message() << '\n'; return 1; }
    std::cout << (*a)->name << ' ' << (*a)->triplet << '\n';
}
CPP
# shellcheck disable=SC2046
# Plain --libs (what a Makefile writes): the static library's own dependencies are in Libs.
c++ -std=c++23 -o "$T/use" "$T/use.cpp" $(pkg-config --cflags --libs emurun) 2>"$T/cc.log" ||
    { cat "$T/cc.log"; not_ok "compile against pkg-config flags"; finish; }
expect_eq "program linked via pkg-config runs" "ppc64le powerpc64le-linux-gnu" "$("$T/use")"
expect_contains "cflags point into the prefix" "$(pkg-config --cflags emurun)" "$T/prefix"
expect_eq "cflags: a clean -I (the prefix the install wrote) and no -std" "-I$T/prefix/include" \
    "$(pkg-config --cflags-only-I emurun | tr -s ' ' | sed 's/ *$//' | tr ' ' '\n' | grep "$T/prefix")"
case $(pkg-config --cflags emurun) in *-std=*) not_ok "cflags force a -std" ;; *) ok "cflags leave -std to the consumer" ;; esac
expect_contains "the .pc says which standard the headers need" "$(cat "$(pkg-config --variable=pcfiledir emurun)/emurun.pc")" "C++23"
finish
