# The documentation's blocks for the suites that run them (source after common.sh). The rules
# of marking a block: tests/integration/lib/docs.py and CONTRIBUTING.md "Documentation".
DOCS_PY=$(dirname "${BASH_SOURCE[0]}")/docs.py

# doc_block FILE NAME: the block of FILE (relative to the source tree) marked
# "<!-- recipe:NAME -->", on stdout; a failure (not_ok) when there is none.
doc_block() {
    local text
    if text=$(python3 "$DOCS_PY" block "$EMURUN_SOURCE_DIR/$1" "$2"); then
        printf '%s\n' "$text"
    else
        not_ok "$1 has no block marked <!-- recipe:$2 -->"
        return 1
    fi
}
