#!/bin/bash
# ctest-tier: quick
# emurun run on CI: GitLab sections, --shard from CI_NODE_INDEX/CI_NODE_TOTAL, GitHub's annotation
# limits, and JUnit that GitLab/Jenkins can parse (failure body, log tail, unsafe bytes dropped).
. "$(dirname "$0")/lib/common.sh"
command -v python3 >/dev/null || skip "python3 not installed (used to read JSON and XML)"
cd "$T"

# GitLab: each step's output in a collapsed section, opened and closed.
echo '{"name": "g", "steps": [{"name": "say hi", "argv": ["echo", "hello"]}]}' >g.json
out=$(env -u GITHUB_ACTIONS GITLAB_CI=true "$EMURUN" run g.json --report g-r.json --log-dir logs 2>/dev/null)
expect_contains "GitLab section start" "$out" $'\e[0Ksection_start:'
expect_contains "GitLab section name and title" "$out" $':emurun_say_hi[collapsed=true]\r\e[0Kemurun: step say hi\nhello'
expect_contains "GitLab section end" "$out" $'\e[0Ksection_end:'
out=$(env -u GITHUB_ACTIONS -u GITLAB_CI "$EMURUN" run g.json --report g-r.json --log-dir logs 2>/dev/null)
case "$out" in *section_start*|*::group::*) not_ok "folding outside CI: $out" ;; *) ok "no folding outside CI" ;; esac

# Groups stay balanced when a step never starts (its command cannot be made: exec mode on a
# program that does not exist), on GitHub and GitLab, one step at a time or in parallel.
cat >b.json <<'JSON'
{"name": "b", "steps": [{"name": "ok", "argv": ["echo", "hi"]},
  {"name": "unmade", "arch": "aarch64", "emulation": "exec", "argv": ["/nonexistent/prog"]},
  {"name": "after", "argv": ["echo", "there"], "needs": ["unmade"]}]}
JSON
for j in 1 2; do
    out=$(GITHUB_ACTIONS=true "$EMURUN" run b.json -j $j --report b-r.json --log-dir logs 2>/dev/null || true)
    expect_eq "GitHub -j $j: every ::group:: ends once" "$(grep -c '^::group::' <<<"$out")" \
        "$(grep -c '^::endgroup::' <<<"$out")"
    out=$(env -u GITHUB_ACTIONS GITLAB_CI=true "$EMURUN" run b.json -j $j --report b-r.json --log-dir logs 2>/dev/null || true)
    expect_eq "GitLab -j $j: every section_start ends once" "$(grep -c 'section_start:' <<<"$out")" \
        "$(grep -c 'section_end:' <<<"$out")"
done

# GitLab parallel: --shard defaults to CI_NODE_INDEX/CI_NODE_TOTAL.
cat >s.json <<'JSON'
{"name": "s", "steps": [
  {"name": "t1", "kind": "test", "argv": ["true"]}, {"name": "t2", "kind": "test", "argv": ["true"]},
  {"name": "t3", "kind": "test", "argv": ["true"]}, {"name": "t4", "kind": "test", "argv": ["true"]}]}
JSON
CI_NODE_INDEX=2 CI_NODE_TOTAL=2 "$EMURUN" run s.json -q --report s2.json --log-dir logs >/dev/null 2>&1
python3 -c '
import json; r = json.load(open("s2.json"))
assert r["shard"] == {"index": 2, "count": 2}, r["shard"]
assert len(r["steps"]) == 2, [s["name"] for s in r["steps"]]' && ok "shard 2/2 from CI_NODE_INDEX/CI_NODE_TOTAL" ||
    not_ok "shard from CI_NODE_* not applied"
CI_NODE_INDEX=2 CI_NODE_TOTAL=2 "$EMURUN" run s.json -q --shard 1/1 --report s1.json --log-dir logs >/dev/null 2>&1
expect_eq "--shard wins over CI_NODE_*" 4 "$(python3 -c 'import json; print(len(json.load(open("s1.json"))["steps"]))')"
rc=0; err=$(CI_NODE_INDEX=3 CI_NODE_TOTAL=2 "$EMURUN" run s.json -q --report s3.json 2>&1 >/dev/null) || rc=$?
expect_eq "bad CI_NODE_INDEX is a usage error" 2 "$rc"
expect_contains "and names the variables" "$err" "CI_NODE_INDEX=3, CI_NODE_TOTAL=2"

# GitHub: 12 failing steps give 10 ::error lines and one ::notice counting the other 2.
{
    echo '{"name": "many", "steps": ['
    for i in $(seq 1 12); do echo "{\"name\": \"f$i\", \"argv\": [\"false\"]}$([ "$i" -lt 12 ] && echo ,)"; done
    echo ']}'
} >many.json
out=$(GITHUB_ACTIONS=true "$EMURUN" run many.json -q --report m.json --log-dir logs 2>/dev/null || true)
expect_eq "10 error annotations" 10 "$(echo "$out" | grep -c '^::error ')"
expect_contains "one notice counts the rest" "$(echo "$out" | grep '^::notice ')" "2 more failed steps and 0 more flags"

# JUnit: the failure reason in the body, the log's tail in system-out, valid XML from a log with
# colour codes, a control character and invalid UTF-8.
printf '#!/bin/sh\nseq 1 150\nprintf "\\033[31merror:\\033[0m bad\\001 \\377 byte\\n"\nexit 3\n' >fail.sh
chmod +x fail.sh
echo "{\"name\": \"j\", \"steps\": [{\"name\": \"broken\", \"argv\": [\"$T/fail.sh\"]}]}" >j.json
"$EMURUN" run j.json -q --report j.json.r --junit j.xml --log-dir logs >/dev/null 2>&1 || true
python3 - <<'PY' && ok "JUnit: failure body, log tail, parseable" || not_ok "JUnit content: see above"
import xml.etree.ElementTree as ET
tc = ET.parse("j.xml").getroot().find("testsuite/testcase")
f = tc.find("failure")
assert "exit code 3" in f.get("message"), f.attrib
assert "step broken: exit code 3" in f.text and "log: " in f.text, f.text
out = tc.find("system-out").text
assert out.startswith("log: "), out[:80]
assert "error: bad  byte" in out, out[-200:]
assert "\n150\n" in out and "\n52\n" in out and "\n51\n" not in out, out[:200]  # 100 lines: 52..150 + the error
assert "earlier bytes omitted" in out
PY
finish
