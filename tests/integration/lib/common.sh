# Shared helpers for integration scripts. Source it; it sets `set -eu` and a scratch dir $T.
set -eu
: "${EMURUN:?run through ctest (EMURUN is the emurun binary)}"
T=$(mktemp -d "${EMURUN_TESTDIR_ROOT:-/tmp}/it.XXXXXX" 2>/dev/null || mktemp -d)
fails=0
passes=0
cleanup=("$T") # more scratch dirs to remove at exit: cleanup+=("$dir")

# Exit code 125 means "skipped" to ctest, and 125 is also emurun's own failure code: under
# `set -e` an emurun call failing unexpectedly would end the script as "skipped". Only skip()
# and finish() may exit 125; any other exit with 125 becomes a failure.
skip_exit=0
skip() { echo "SKIP: $*"; skip_exit=1; exit 125; }

# no_sandbox CMD...: CMD where the kernel gives no sandbox: in a user namespace of its own whose
# user.max_user_namespaces is 0, so the sandbox's unshare(CLONE_NEWUSER) fails as on a kernel
# that forbids it. Where user namespaces are refused already, CMD runs as it is.
no_sandbox() {
    if unshare --user --map-root-user true 2>/dev/null; then
        unshare --user --map-root-user sh -c \
            'echo 0 >/proc/sys/user/max_user_namespaces || exit 97; exec "$@"' _ "$@"
    else
        "$@"
    fi
}
on_exit() {
    local rc=$?
    rm -rf "${cleanup[@]}"
    if [ "$rc" -eq 125 ] && [ "$skip_exit" != 1 ]; then
        echo "not ok - the script ended with 125 without skipping: a command failed with 125" \
            "(emurun's own failure) under set -e; see above"
        exit 1
    fi
}
trap on_exit EXIT

# Parts. A script with a "# ctest-parts: a b" line is one ctest per part (tests/CMakeLists.txt),
# the part's name as $1; it defines part_a, part_b ... and ends with `run_parts a b`. Without an
# argument every part runs. A part whose precondition is missing calls `skip_part WHY` and
# returns: the run then exits 125 (skipped) unless something failed, never 0.
skipped=0
skip_part() { skipped=$((skipped + 1)); echo "SKIP part ${current_part:-}: $*"; }
run_parts() {
    local wanted=${script_part:-$*} p
    for p in $wanted; do
        case " $* " in
            *" $p "*) current_part=$p; echo "== part $p"; "part_$p" ;;
            *) not_ok "no part '$p' (parts: $*)" ;;
        esac
    done
}
script_part=${1:-}

ok() { passes=$((passes + 1)); echo "ok - $*"; }
not_ok() { fails=$((fails + 1)); echo "not ok - $*"; }

# expect_eq LABEL EXPECTED ACTUAL
expect_eq() {
    if [ "$2" = "$3" ]; then ok "$1"; else not_ok "$1: expected [$2], got [$3]"; fi
}

# expect_contains LABEL HAYSTACK NEEDLE
expect_contains() {
    case "$2" in
        *"$3"*) ok "$1" ;;
        *) not_ok "$1: [$3] not in [$2]" ;;
    esac
}

# expect_lacks LABEL HAYSTACK NEEDLE
expect_lacks() {
    case "$2" in
        *"$3"*) not_ok "$1: [$3] in [$2]" ;;
        *) ok "$1" ;;
    esac
}

# Arches whose fixtures CMake built (cross compiler present).
fixture_arches() { cat "$EMURUN_FIXTURE_DIR/arches.txt" 2>/dev/null | tr ';' ' '; }

need_fixture_arch() {
    case " $(fixture_arches) " in
        *" $1 "*) ;;
        *) skip "no $1 fixtures: cross compiler for $1 missing (tools/install-deps installs it)" ;;
    esac
}

# need_probe ARCH: true when ARCH's static probe fixture is there. Else false, after skip_part when
# CMake did not build ARCH's fixtures (no cross compiler) or not_ok when it did (one is missing).
need_probe() {
    case " $(fixture_arches) " in
        *" $1 "*) ;;
        *) skip_part "no $1 fixtures: cross compiler for $1 missing (tools/install-deps installs it)"; return 1 ;;
    esac
    [ -x "$EMURUN_FIXTURE_DIR/$1/probe-static" ] && return 0
    not_ok "$EMURUN_FIXTURE_DIR/$1/probe-static missing, though CMake built the $1 fixtures"
    return 1
}

# need_tools TOOL...: true when every TOOL is in PATH; else false after skip_part naming it.
need_tools() {
    local t
    for t in "$@"; do
        command -v "$t" >/dev/null || { skip_part "$t missing (tools/install-deps installs it)"; return 1; }
    done
}

# need_sandbox: true when the kernel gives a user namespace its own binfmt_misc (what
# `emurun sandbox` needs, Linux >= 6.7); else false after skip_part. Checked without emurun, so
# a failing `emurun sandbox` afterwards is the test's failure, never a skip.
need_sandbox() {
    local m
    m=$(mktemp -d "$T/bm.XXXXXX")
    unshare --user --map-root-user --mount sh -c "mount -t binfmt_misc binfmt_misc '$m'" \
        2>/dev/null && return 0
    skip_part "no binfmt_misc in a user namespace here (Linux >= 6.7 needed)"
    return 1
}

finish() {
    echo "$passes passed, $fails failed, $skipped parts skipped"
    [ "$fails" -eq 0 ] || return 1
    [ "$skipped" -eq 0 ] || { skip_exit=1; return 125; }
}

# validate REPORT PIPELINE: both against their schemas (when valijson was built).
validate() {
    local v=$EMURUN_BUILD_DIR/tests/validate_json schema=$EMURUN_SOURCE_DIR/cmake/schema
    [ -x "$v" ] || return 0
    "$v" "$schema/report.schema.json" "$1" >/dev/null &&
        "$v" "$schema/pipeline.schema.json" "$2" >/dev/null &&
        ok "the report and pipeline validate against their schemas" || not_ok "schemas"
}

# fill_pipelines DATA_DIR: DATA_DIR's pipeline.json and baseline.json into the cwd with @WORK@
# ($T), @SRC@ (DATA_DIR), @EMURUN@, @TOOLCHAINS@ and @FIXTURES@ filled in.
fill_pipelines() {
    local name
    for name in pipeline baseline; do
        sed -e "s|@WORK@|$T|g" -e "s|@SRC@|$1|g" -e "s|@EMURUN@|$EMURUN|g" \
            -e "s|@TOOLCHAINS@|$EMURUN_SOURCE_DIR/cmake/toolchains|g" \
            -e "s|@FIXTURES@|$EMURUN_FIXTURE_DIR|g" "$1/$name.json" >"$name.json"
    done
}

# run_native_baseline: baseline.json natively into native.json (logs-native/); the script ends
# (a failure, with the logs' tails) when it does not pass, since nothing after it can.
run_native_baseline() {
    local rc=0
    "$EMURUN" run baseline.json -q --report native.json --log-dir logs-native >native.txt 2>&1 ||
        rc=$?
    expect_eq "native baseline run exits 0" 0 "$rc"
    [ "$rc" -eq 0 ] || { tail -n 20 native.txt logs-native/*.log; finish; exit 1; }
}
