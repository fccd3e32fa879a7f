# Shared helpers for integration scripts. Source it; it sets `set -eu` and a scratch dir $T.
set -eu
: "${EMURUN:?run through ctest (EMURUN is the emurun binary)}"
T=$(mktemp -d "${EMURUN_TESTDIR_ROOT:-/tmp}/it.XXXXXX" 2>/dev/null || mktemp -d)
fails=0
passes=0
trap 'rm -rf "$T"' EXIT

skip() { echo "SKIP: $*"; exit 125; }

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

# Arches whose fixtures CMake built (cross compiler present).
fixture_arches() { cat "$EMURUN_FIXTURE_DIR/arches.txt" 2>/dev/null | tr ';' ' '; }

need_fixture_arch() {
    case " $(fixture_arches) " in
        *" $1 "*) ;;
        *) skip "no $1 fixtures: cross compiler for $1 missing (tools/install-deps installs it)" ;;
    esac
}

finish() {
    echo "$passes passed, $fails failed"
    [ "$fails" -eq 0 ]
}
