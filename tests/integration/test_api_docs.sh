#!/bin/bash
# ctest-tier: packaging
# ctest-parts: headers planted
# The API reference (docs/api/Doxyfile, Doxygen over include/emurun/) builds without a single
# warning: every public type, member and function is documented, every reference resolves.
#   headers: the repository's headers; the HTML names the classes with their documentation.
#   planted: the same Doxyfile over a copy of the headers with one undocumented struct fails
#            and names it (so the check above can fail).
. "$(dirname "$0")/lib/common.sh"
command -v doxygen >/dev/null || skip "doxygen not installed (Debian's doxygen: tools/install-deps --full)"

# api_docs SRC OUT: doxygen run in SRC (a checkout, or a copy of its include/ and docs/api/),
# the reference written to OUT; its status, the warnings in OUT/warnings.log.
api_docs() {
    mkdir -p "$2"
    (cd "$1" && EMURUN_API_DOCS_DIR=$2 doxygen docs/api/Doxyfile) >"$2.out" 2>&1
}

# html_has LABEL FILE TEXT: the generated FILE contains TEXT.
html_has() {
    if grep -qF -- "$3" "$2" 2>/dev/null; then ok "$1"; else not_ok "$1: [$3] not in $2"; fi
}

part_headers() {
    local out=$T/api rc=0
    api_docs "$EMURUN_SOURCE_DIR" "$out" || rc=$?
    expect_eq "doxygen exits 0 on the public headers" 0 "$rc"
    if [ -s "$out/warnings.log" ]; then
        not_ok "doxygen warned ($(wc -l <"$out/warnings.log") lines; document what it names):"
        cat "$out/warnings.log"
    else
        ok "no doxygen warning"
    fi
    [ -f "$out/html/index.html" ] && ok "html/index.html written" || not_ok "no html/index.html"
    html_has "the main page says which layer is stable" "$out/html/index.html" "The core"
    html_has "Runner's page has its documentation" "$out/html/classemurun_1_1Runner.html" \
        "and produces its"
    html_has "a member documented after another's (ChildResult::stderr_bytes)" \
        "$out/html/structemurun_1_1ChildResult.html" "bytes the tree wrote to stderr"
}

part_planted() {
    local src=$T/src rc=0
    mkdir -p "$src/docs"
    cp -r "$EMURUN_SOURCE_DIR/include" "$src/include"
    cp -r "$EMURUN_SOURCE_DIR/docs/api" "$src/docs/api"
    sed -i 's|^} // namespace emurun$|struct PlantedUndocumented {\n    int field = 0;\n};\n\n&|' \
        "$src/include/emurun/elf.hpp"
    grep -q PlantedUndocumented "$src/include/emurun/elf.hpp" ||
        { not_ok "could not plant a struct in elf.hpp"; return; }
    api_docs "$src" "$T/planted" || rc=$?
    expect_eq "doxygen fails on an undocumented struct" 1 "$rc"
    expect_contains "the warning names it" "$(cat "$T/planted/warnings.log" 2>/dev/null)" \
        "emurun::PlantedUndocumented is not documented"
}

run_parts headers planted
finish
