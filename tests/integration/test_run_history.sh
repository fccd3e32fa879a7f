#!/bin/bash
# ctest-tier: quick
# emurun run keeps its own timing history per pipeline (issue 32): the first run of a pipeline
# starts its steps in the pipeline's order; a second run, without --previous or any other flag,
# starts the longest first (from the history the first one kept in the cache dir); --no-history
# neither reads nor writes it; --history DIR keeps it where a CI caches; a damaged history file
# is ignored, not fatal.
. "$(dirname "$0")/lib/common.sh"
H=$EMURUN_HELPER_DIR
[ -x "$H/sleep_for" ] || skip "helper programs not built ($H)"
cd "$T"
export EMURUN_CACHE_DIR=$T/cache # this test's own cache dir: no earlier history

# Each step appends its name to order.txt as it starts, then sleeps: -j 1 runs them one by one.
step() { echo "{\"name\": \"$1\", \"argv\": [\"sh\", \"-c\", \"echo $1 >>order.txt; exec $H/sleep_for $2\"]}"; }
cat >p.json <<JSON
{"name": "hist", "steps": [$(step short 0.1), $(step long 0.9), $(step middle 0.4)]}
JSON
order() { # the start order of a run with ARGS
    rm -f order.txt
    "$EMURUN" run p.json -j 1 -q --report r.json "$@" >/dev/null 2>"$T/err.txt" ||
        { cat "$T/err.txt"; not_ok "emurun run $* failed"; }
    tr '\n' ' ' <order.txt
}
expect_eq "first run: the pipeline's order (no history yet)" "short long middle " "$(order)"
files=$(find "$T/cache" -path '*run-history*' -name 'hist-*.json' | wc -l)
expect_eq "the run kept one history file in the cache dir's run-history/" 1 "$files"
expect_eq "second run, no flags: longest first" "long middle short " "$(order)"
expect_eq "--no-history: the pipeline's order again" "short long middle " "$(order --no-history)"

# --no-history writes nothing: a fresh cache stays without history.
rm -rf "$T/cache"
order --no-history >/dev/null
[ ! -e "$T/cache/run-history" ] || [ -z "$(ls -A "$T/cache/run-history")" ] &&
    ok "--no-history kept no history" || not_ok "--no-history wrote $(ls "$T/cache/run-history")"

# --history DIR: a directory the CI caches; the second run there orders longest first.
expect_eq "--history DIR, first run" "short long middle " "$(order --history "$T/ci-cache")"
[ -n "$(ls "$T/ci-cache"/hist-*.json 2>/dev/null)" ] && ok "the history is in --history DIR" ||
    not_ok "nothing in $T/ci-cache"
expect_eq "--history DIR, second run: longest first" "long middle short " \
    "$(order --history "$T/ci-cache")"

# A damaged history is ignored (the pipeline's order), then replaced by a good one.
for f in "$T"/ci-cache/hist-*.json; do echo '{"schema": 1, "steps": [' >"$f"; done
expect_eq "a damaged history: the pipeline's order" "short long middle " \
    "$(order --history "$T/ci-cache")"
expect_eq "and the run after it: longest first" "long middle short " \
    "$(order --history "$T/ci-cache")"

# --history and --no-history together are refused.
rc=0
"$EMURUN" run p.json --history "$T/x" --no-history >/dev/null 2>"$T/both.txt" || rc=$?
[ "$rc" != 0 ] && ok "--history with --no-history refused ($rc)" ||
    not_ok "--history with --no-history accepted"
finish
