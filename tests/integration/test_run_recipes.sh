#!/bin/bash
# ctest-tier: quick
# The recipes for harnesses with per-test time limits of their own (docs/guides/pipelines.md
# "Test harnesses with time limits of their own": Meson, pytest-timeout, doctest, Catch2), run as
# the page writes them: each recipe's pipeline and code come from the page (the fenced block
# after "<!-- recipe:NAME -->", doc_block), so the two cannot drift. Every suite holds a test that sleeps 1.5 s
# under a limit of 1 s; the recipe's step (aarch64, sandbox: emulated, so it gets
# $EMURUN_TIMEOUT_MULTIPLIER) passes with --timeout-multiplier 3 and fails with 1, and the
# per-test results in the report say which test. doctest and Catch2 run cross-built aarch64
# programs under QEMU; Meson and pytest run the host's tools in the emulated step.
# ctest-parts: meson pytest doctest catch2
. "$(dirname "$0")/lib/common.sh"
. "$(dirname "$0")/lib/docs.sh"
command -v python3 >/dev/null || skip "python3 needed to read the reports"

# recipe NAME: the block of docs/guides/pipelines.md marked recipe:NAME (a failure if none).
recipe() { doc_block docs/guides/pipelines.md "$1"; }

# need_emulated: the recipes' aarch64 sandbox step is possible and emulated here.
need_emulated() {
    if [ "$(uname -m)" = aarch64 ]; then
        skip_part "this machine is aarch64: the recipes' aarch64 step would not be emulated"
        return 1
    fi
    need_sandbox
}

need_cross() {
    command -v aarch64-linux-gnu-g++ >/dev/null && return 0
    skip_part "aarch64-linux-gnu-g++ missing (tools/install-deps installs g++-aarch64-linux-gnu)"
    return 1
}

# run_recipe DIR FACTOR: DIR/pipeline.json with --timeout-multiplier FACTOR (report rFACTOR.json,
# logs in logsFACTOR); prints emurun's exit code.
run_recipe() {
    local rc=0
    (cd "$1" && "$EMURUN" run pipeline.json -q --timeout-multiplier "$2" --report "r$2.json" \
        --log-dir "logs$2") >"$1/out$2.txt" 2>&1 || rc=$?
    echo "$rc"
}

# expect_unit LABEL REPORT STATUS [TEST=STATUS...]: step "unit" ended STATUS, emulated in the
# sandbox under qemu-aarch64 with the multiplier in its environment's reach, and each TEST of its
# per-test results ended as given.
expect_unit() {
    if python3 - "$@" <<'PY'; then ok "$1"; else not_ok "$1 (python's assertion above)"; fi
import json, sys
label, report, status, *tests = sys.argv[1:]
unit = next(s for s in json.load(open(report))["steps"] if s["name"] == "unit")
assert unit["status"] == status, unit["status"]
assert unit["emulation"] == "sandbox" and unit["arch"] == "aarch64", unit
assert "qemu-aarch64" in unit["emulator"]["path"], unit["emulator"]
got = {t["name"]: t["status"] for t in unit["tests"]}
for t in tests:
    name, want = t.rsplit("=", 1)
    assert got.get(name) == want, (name, want, got)
PY
}

# both_ways NAME DIR: DIR's recipe passes at x3 (a 1.5 s test, a 1 s limit: 3 s leaves room for a loaded machine) and fails at x1 (exit codes; the reports are
# checked by the caller).
both_ways() {
    expect_eq "$1: --timeout-multiplier 3: the 1.5 s test fits its scaled limit, the run passes" \
        0 "$(run_recipe "$2" 3)"
    expect_eq "$1: --timeout-multiplier 1: the 1.5 s test is over its 1 s limit, the run fails" \
        1 "$(run_recipe "$2" 1)"
}

part_meson() {
    for tool in meson ninja; do
        command -v "$tool" >/dev/null ||
            { skip_part "$tool missing (tools/install-deps installs meson and ninja-build)"; return; }
    done
    need_emulated || return 0
    local d=$T/meson
    mkdir -p "$d"
    cat >"$d/meson.build" <<'EOF'
project('slow-suite')
sleep = find_program('sleep')
test('slow', sleep, args: ['1.5'], timeout: 1)
test('quick', sleep, args: ['0'])
EOF
    if ! (cd "$d" && meson setup build) >"$d/setup.log" 2>&1; then
        not_ok "meson setup failed: $(tail -n 5 "$d/setup.log")"
        return
    fi
    # The recipe: "argv": "meson test -C build -t $EMURUN_TIMEOUT_MULTIPLIER"
    recipe meson >"$d/pipeline.json"
    both_ways meson "$d"
    expect_unit "meson x3: the step and both tests passed" "$d/r3.json" passed slow=passed \
        quick=passed
    # Meson 1.0 writes the timed-out test without a failure (the page says so): the step fails.
    expect_unit "meson x1: the step failed (its JUnit file, as the page says, has no failure)" \
        "$d/r1.json" failed slow=passed quick=passed
    expect_contains "meson x1: the step's log says the slow test timed out" \
        "$(cat "$d/logs1/unit.log")" "TIMEOUT"
}

part_pytest() {
    if ! pytest --help 2>/dev/null | grep -q -- '--timeout='; then
        skip_part "pytest with pytest-timeout missing (tools/install-deps installs python3-pytest python3-pytest-timeout)"
        return
    fi
    need_emulated || return 0
    local d=$T/pytest
    mkdir -p "$d"
    printf '[pytest]\ntimeout = 1\n' >"$d/pytest.ini"
    cat >"$d/test_slow.py" <<'EOF'
import time

import pytest


def test_default():  # the ini file's limit
    time.sleep(1.5)


@pytest.mark.timeout(1)
def test_marked():
    time.sleep(1.5)


@pytest.mark.timeout(timeout=1)
def test_keyword():
    time.sleep(1.5)


def test_quick():
    pass
EOF
    # The recipe: "argv": ["pytest", "--junitxml=junit.xml"], with its conftest.py
    recipe pytest >"$d/pipeline.json"
    expect_eq "pytest: without the recipe's conftest.py, x2 fails (pytest-timeout has no factor)" \
        1 "$(run_recipe "$d" 2)"
    recipe pytest-conftest >"$d/conftest.py"
    both_ways pytest "$d"
    expect_unit "pytest x3: every test passed" "$d/r3.json" passed test_default=passed \
        test_marked=passed test_keyword=passed test_quick=passed
    expect_unit "pytest x1: the three 1.5 s tests failed their 1 s limits" "$d/r1.json" failed \
        test_default=failed test_marked=failed test_keyword=failed test_quick=passed
    expect_contains "pytest x1: pytest-timeout's reason" "$(cat "$d/logs1/unit.log")" \
        "Failed: Timeout >1.0s"
}

# cross_build DIR HEADER_DIR MAIN_LINES RECIPE: DIR/build-aarch64/tests, statically cross-built
# from the page's helper and RECIPE's test case after MAIN_LINES (the framework's main and a
# parse_big_file that sleeps 1.5 s). HEADER_DIR is the framework's headers in /usr/include.
cross_build() {
    mkdir -p "$1/inc" "$1/build-aarch64"
    ln -s "/usr/include/$2" "$1/inc/$2" # the host's header-only framework, not its libc
    recipe timeouts-hpp >"$1/emurun_timeouts.hpp"
    { printf '%s\n' "$3" '#include "emurun_timeouts.hpp"' '#include <chrono>' '#include <thread>' \
        'static void parse_big_file() { std::this_thread::sleep_for(std::chrono::milliseconds(1500)); }'
      recipe "$4"; } >"$1/tests.cpp"
    aarch64-linux-gnu-g++ -std=c++17 -static -O1 -I"$1/inc" -I"$1" -o "$1/build-aarch64/tests" \
        "$1/tests.cpp" >"$1/build.log" 2>&1 && return 0
    not_ok "$4: the cross build failed: $(tail -n 5 "$1/build.log")"
    return 1
}

part_doctest() {
    [ -f /usr/include/doctest/doctest.h ] ||
        { skip_part "doctest-dev missing (tools/install-deps installs it)"; return; }
    need_cross && need_emulated || return 0
    local d=$T/doctest
    cross_build "$d" doctest $'#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN\n#include <doctest/doctest.h>' \
        doctest || return 0
    # The recipe: TEST_CASE("parses the big file" * doctest::timeout(1.0 * emurun_timeout_multiplier()))
    recipe doctest-step >"$d/pipeline.json"
    both_ways doctest "$d"
    expect_unit "doctest x3: the step passed" "$d/r3.json" passed
    expect_unit "doctest x1: the step failed" "$d/r1.json" failed
    expect_contains "doctest x1: doctest says the test overran its limit" \
        "$(cat "$d/logs1/unit.log")" "Test case exceeded time limit of 1.000000!"
    # The page: doctest 2.4's JUnit reporter leaves that failure out (the exit code has it).
    local junit rc=0
    junit=$(cd "$d" && EMURUN_TIMEOUT_MULTIPLIER=1 "$EMURUN" exec --arch aarch64 -- \
        build-aarch64/tests -r=junit 2>/dev/null) || rc=$?
    expect_eq "doctest -r=junit over the limit exits 1" 1 "$rc"
    [[ $junit == *'name="parses the big file"'* && $junit != *"<failure"* ]] &&
        ok "doctest's JUnit lists the test without a failure, as the page says" ||
        not_ok "doctest's JUnit: $junit"
}

part_catch2() {
    [ -f /usr/include/catch2/catch.hpp ] ||
        { skip_part "catch2 missing (tools/install-deps installs it)"; return; }
    need_cross && need_emulated || return 0
    local d=$T/catch2
    cross_build "$d" catch2 $'#define CATCH_CONFIG_MAIN\n#include <catch2/catch.hpp>' catch2 ||
        return 0
    # The recipe: CHECK(took.count() < 1.0 * emurun_timeout_multiplier());
    recipe catch2-step >"$d/pipeline.json"
    both_ways catch2 "$d"
    expect_unit "catch2 x3: the test in time" "$d/r3.json" passed \
        "parses the big file in time=passed"
    expect_unit "catch2 x1: the test over its limit failed, in the per-test results" \
        "$d/r1.json" failed "parses the big file in time=failed"
}

run_parts meson pytest doctest catch2
finish
