#!/bin/bash
# ctest-tier: packaging
# ctest-parts: shim errors
# The installed package works for a consumer: `cmake --install` into a temporary prefix, then
# tests/consumer (find_package(emurun CONFIG), emurun::emurun, emurun_add_shim) is configured,
# built and run against that prefix.
#   shim:   runs a foreign tool through a shim, by a custom command and by the program.
#   errors: gives the library bad input and switches on Error::kind (tests/consumer/errors.cpp):
#           a missing pipeline is not_found, a broken one bad_input, a run of 0 jobs bad_input,
#           a text file not_elf, a foreign program without an emulator no_emulator.
# Both parts build tests/consumer/core_headers.cpp: the core's public headers compile without
# nlohmann/json (its #error fails the build); and tests/consumer/designated.cpp: the core's
# request structs take designated initializers at -Wall -Wextra -Werror.
. "$(dirname "$0")/lib/common.sh"
probe=$EMURUN_FIXTURE_DIR/aarch64/probe
gen=()
command -v ninja >/dev/null && gen=(-G Ninja)

# install_and_build [CMAKE ARGS...]: the build tree installed into $T/prefix, the consumer
# configured against it (with the args) and built in $T/build; false after not_ok.
install_and_build() {
    cmake --install "$EMURUN_BUILD_DIR" --prefix "$T/prefix" >"$T/install.log" 2>&1 ||
        { not_ok "cmake --install"; tail -n 20 "$T/install.log"; return 1; }
    cmake -S "$EMURUN_SOURCE_DIR/tests/consumer" -B "$T/build" "${gen[@]}" \
        -DCMAKE_PREFIX_PATH="$T/prefix" "$@" >"$T/configure.log" 2>&1 ||
        { not_ok "configuring the consumer"; tail -n 30 "$T/configure.log"; return 1; }
    cmake --build "$T/build" >"$T/build.log" 2>&1 ||
        { not_ok "building the consumer"; tail -n 30 "$T/build.log"; return 1; }
    ok "the consumer builds against the installed package"
}

part_shim() {
    [ -x "$probe" ] || { skip_part "aarch64 probe fixture not built (no cross compiler)"; return; }
    command -v qemu-aarch64 >/dev/null || command -v qemu-aarch64-static >/dev/null ||
        { skip_part "qemu-aarch64 not installed"; return; }
    install_and_build -DCONSUMER_FOREIGN_TOOL="$probe" || return
    grep -q "emurun shim: $T/build/emurun-shims/probe" "$T/configure.log" ||
        { not_ok "the consumer did not use the installed emurun"; cat "$T/configure.log"; }
    expect_eq "custom command through emurun_add_shim" aarch64 "$(cat "$T/build/machine.txt")"
    expect_eq "consumer ran the shimmed tool" aarch64 \
        "$("$T/build/consumer" "$probe" "$T/shims" uname)"
    local rc=0
    "$T/build/consumer" "$probe" "$T/shims" exit 7 || rc=$?
    expect_eq "exit code through the consumer" 7 "$rc"
    [ "$(stat -c %i "$T/shims/tool")" = "$(stat -c %i "$T/prefix/bin/emurun")" ] ||
        echo "note: the shim is a copy, not a hard link, of the installed emurun"
    # The installed `emurun shim add` (run by emurun_add_shim) links the installed launcher.
    local launcher=$T/prefix/libexec/emurun/emurun-shim
    [ -x "$launcher" ] && ok "launcher installed" || not_ok "$launcher not installed"
    cmp -s "$launcher" "$T/build/emurun-shims/probe" && ok "emurun_add_shim's shim is the launcher" ||
        not_ok "emurun_add_shim's shim is not the installed launcher"
}

part_errors() {
    install_and_build || return
    mkdir "$T/work"
    local foreign=() rc=0 out
    # A foreign program for the no_emulator case; the program looks for no emulator at all.
    [ -x "$probe" ] && foreign=("$probe")
    out=$("$T/build/errors" "$T/work" "${foreign[@]}") || rc=$?
    echo "$out"
    expect_eq "every error had the expected kind" 0 "$rc"
    expect_contains "a missing pipeline: not_found" "$out" "ok   missing pipeline: not_found ->"
    expect_contains "a broken pipeline: bad_input" "$out" "ok   pipeline that is no JSON: bad_input ->"
    expect_contains "0 jobs: bad_input" "$out" "ok   a run with 0 jobs: bad_input ->"
    expect_contains "a text file: not_elf" "$out" "ok   a program that is no ELF: not_elf ->"
    if [ ${#foreign[@]} -gt 0 ]; then
        expect_contains "no emulator: no_emulator" "$out" \
            "ok   a foreign program without an emulator: no_emulator -> install qemu-user-static"
    else
        skip_part "aarch64 probe fixture not built (no cross compiler): no_emulator not checked"
    fi
}

run_parts shim errors
finish
