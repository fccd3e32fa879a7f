#!/bin/bash
# ctest-tier: quick
# emurun run prints step output where the step wrote it: a step's stdout on emurun's stdout, its
# stderr on emurun's stderr (prefixed with [step] when steps run in parallel); -q prints nothing
# per step; the log keeps both streams either way.
. "$(dirname "$0")/lib/common.sh"
cd "$T"
cat > p.json <<'JSON'
{"name": "o", "steps": [
  {"name": "a", "argv": ["sh", "-c", "echo a-out; echo a-err >&2"]},
  {"name": "b", "argv": ["sh", "-c", "echo b-err >&2; echo b-out"]}
]}
JSON
"$EMURUN" run p.json --report r1.json >out.txt 2>err.txt || not_ok "run -j1 failed"
expect_contains "-j1: step stdout on stdout" "$(cat out.txt)" "a-out
b-out"
expect_contains "-j1: step stderr on stderr" "$(cat err.txt)" "a-err"
expect_contains "-j1: second step's stderr on stderr" "$(cat err.txt)" "b-err"
expect_eq "-j1: no stderr on stdout" "" "$(grep -e -err out.txt || true)"
expect_eq "-j1: no stdout on stderr" "" "$(grep -e -out err.txt || true)"

"$EMURUN" run p.json -j 2 --report r2.json >out2.txt 2>err2.txt || not_ok "run -j2 failed"
expect_eq "-j2: prefixed stdout lines" "[a] a-out
[b] b-out" "$(grep -e '-out' out2.txt | sort)"
expect_eq "-j2: prefixed stderr lines" "[a] a-err
[b] b-err" "$(grep -e '-err' err2.txt | sort)"

"$EMURUN" run p.json -q --report r3.json >out3.txt 2>err3.txt || not_ok "run -q failed"
expect_eq "-q: nothing on stderr" "" "$(cat err3.txt)"
expect_eq "-q: no step output on stdout" "" "$(grep -e -out -e -err out3.txt || true)"
expect_contains "-q: the table still on stdout" "$(cat out3.txt)" "report: r3.json"
"$EMURUN" -q run p.json --report r5.json >out5.txt 2>err5.txt || not_ok "emurun -q run failed"
expect_eq "emurun -q run (the global -q): nothing on stderr" "" "$(cat err5.txt)"
expect_eq "emurun -q run: no step output on stdout" "" "$(grep -e -out -e -err out5.txt || true)"
expect_eq "the log keeps both streams" "a-err
a-out" "$(grep -e '^a-' emurun-logs/a.log | sort)"
# emurun runs its steps itself: an inherited EMURUN_EXE (for programs linking the library) does not
# swap in another binary.
rc=0; EMURUN_EXE=/bin/false "$EMURUN" run p.json -q --report r4.json >out4.txt 2>err4.txt || rc=$?
expect_eq "EMURUN_EXE=/bin/false: emurun still runs the steps (exit 0)" 0 "$rc"
expect_contains "and both passed" "$(cat out4.txt)" "b     passed"
finish
