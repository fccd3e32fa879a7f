#!/bin/bash
# ctest-tier: quick
# The JSON Schemas (cmake/schema/, installed to share/emurun/schema/) describe what emurun really
# reads and writes: every JSON example in README.md and docs/ and every pipeline under tests/ validates,
# reports and doctor output that emurun writes right now validate, and broken documents do not.
. "$(dirname "$0")/lib/common.sh"

validate=$EMURUN_BUILD_DIR/tests/validate_json
[ -x "$validate" ] || skip "validate_json not built: libvalijson-dev missing (tools/install-deps installs it)"
schema=$EMURUN_SOURCE_DIR/cmake/schema

# schema_for FILE: which schema a document claims to follow, by its top-level keys.
schema_for() {
    if grep -q '"schema_version"' "$1"; then echo report
    elif grep -q '"checks"' "$1"; then echo doctor
    elif grep -q '"steps"' "$1"; then echo pipeline
    fi
}

# expect_valid LABEL FILE [SCHEMA]
expect_valid() {
    local s=${3:-$(schema_for "$2")}
    if [ -z "$s" ]; then not_ok "$1: no schema describes $2"; return; fi
    if out=$("$validate" "$schema/$s.schema.json" "$2" 2>&1); then ok "$1 ($s)"; else
        not_ok "$1 ($s): $(echo "$out" | head -n3)"
    fi
}

expect_invalid() { # LABEL SCHEMA FILE
    if "$validate" "$schema/$2.schema.json" "$3" >/dev/null 2>&1; then
        not_ok "$1: accepted"
    else ok "$1"; fi
}

# 1. Every ```json block of README.md and docs/.
for page in "$EMURUN_SOURCE_DIR/README.md" $(find "$EMURUN_SOURCE_DIR/docs" -name '*.md' | sort); do
    name=$(echo "${page#"$EMURUN_SOURCE_DIR"/}" | tr '/.' '--')
    awk -v dir="$T" -v name="$name" '/^```json/ { f = 1; n++; out = dir "/doc-" name "-" n ".json"; next }
                     /^```/ { f = 0 } f { print > out }' "$page"
done
count=$(find "$T" -maxdepth 1 -name 'doc-*.json' | wc -l)
[ "$count" -gt 10 ] || not_ok "only $count JSON examples found in README.md and docs/"
for f in "$T"/doc-*.json; do expect_valid "example $(basename "$f")" "$f"; done

# 2. Every JSON document under tests/ (pipelines, baselines, reports); the fuzz corpora hold
# deliberately invalid inputs and are left out.
while IFS= read -r f; do
    expect_valid "${f#"$EMURUN_SOURCE_DIR"/}" "$f"
done < <(find "$EMURUN_SOURCE_DIR/tests" -path "$EMURUN_SOURCE_DIR/tests/fuzz/corpus" -prune -o -name '*.json' -print | sort)

# 3. What emurun writes now: a report with passed, failed and skipped steps, a merge, doctor.
cat >"$T/p.json" <<JSON
{"name": "schema-check", "steps": [
  {"name": "ok", "kind": "test", "argv": ["true"], "budget": "1m"},
  {"name": "bad", "kind": "test", "argv": ["false"]},
  {"name": "after-bad", "argv": ["true"], "needs": ["bad"]},
  {"name": "sh", "argv": "echo hi", "shell": true, "timeout": "1h30m"}]}
JSON
expect_valid "test pipeline" "$T/p.json" pipeline
rc=0; "$EMURUN" run "$T/p.json" -q --report "$T/r.json" --log-dir "$T/logs" >/dev/null 2>&1 || rc=$?
expect_eq "emurun run exits 1 (step 'bad' failed)" 1 "$rc"
expect_valid "report written by emurun run" "$T/r.json" report
rc=0; "$EMURUN" report merge "$T/r.json" -o "$T/m.json" >/dev/null 2>&1 || rc=$?
expect_eq "emurun report merge exits 1 (the merged run has a failed step)" 1 "$rc"
expect_valid "report written by emurun report merge" "$T/m.json" report
rc=0; "$EMURUN" doctor --json --no-probe >"$T/d.json" 2>/dev/null || rc=$?
# 1: a check FAILed on this host, which is still a document; anything else is emurun failing.
[ "$rc" -le 1 ] && ok "emurun doctor --json exits 0 or 1 (got $rc)" || not_ok "emurun doctor --json exited $rc"
expect_valid "emurun doctor --json" "$T/d.json" doctor

# 4. The schemas can fail.
sed 's/"passed"/"fine"/' "$T/r.json" >"$T/bad-status.json"
expect_invalid "report with an unknown status" report "$T/bad-status.json"
sed 's/"schema_version": 1/"schema_version": 2/' "$T/r.json" >"$T/bad-version.json"
expect_invalid "report of another schema version" report "$T/bad-version.json"
echo '{"name": "x", "steps": [{"name": "a", "argv": "ls | wc"}]}' >"$T/bad-shell.json"
expect_invalid "pipeline: string argv without shell" pipeline "$T/bad-shell.json"
echo '{"name": "x", "steps": [{"name": "a", "argv": ["ls"], "timout": "1m"}]}' >"$T/bad-key.json"
expect_invalid "pipeline: unknown key" pipeline "$T/bad-key.json"
echo '{"name": "x", "steps": [{"name": "a", "argv": ["ls"], "timeout": "5 min"}]}' >"$T/bad-dur.json"
expect_invalid "pipeline: bad duration" pipeline "$T/bad-dur.json"
finish
