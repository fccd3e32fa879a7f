#!/bin/bash
# ctest-tier: packaging
# The GitHub Action (action.yml) runs here as GitHub would run its steps: each step's script with
# fake GITHUB_* variables, a temporary step summary, output and path files.
. "$(dirname "$0")/lib/common.sh"

src=$EMURUN_SOURCE_DIR
action=$src/action.yml

# action.yml: every script it runs exists and is executable, every script is used, every input
# it reads is declared.
used=$(grep -o 'tools/action/[a-z_-]*\.sh' "$action" | sort -u)
for s in $used; do
    [ -x "$src/$s" ] && ok "action.yml runs $s" || not_ok "action.yml runs $s: missing or not executable"
done
for s in "$src"/tools/action/*.sh; do
    [ "$(basename "$s")" = common.sh ] && continue
    expect_contains "$(basename "$s") is a step of action.yml" "$used" "tools/action/$(basename "$s")"
done
declared=$(sed -n '/^inputs:/,/^outputs:/p' "$action" | grep -o '^  [a-z-]*:' | tr -d ' :' | sort)
for i in $(grep -o 'inputs\.[a-z-]*' "$action" | cut -d. -f2 | sort -u); do
    expect_contains "input '$i' is declared" " $(echo $declared) " " $i "
done

export GITHUB_ACTIONS=true GITHUB_ACTION_PATH=$src RUNNER_TEMP=$T
export GITHUB_STEP_SUMMARY=$T/summary.md GITHUB_OUTPUT=$T/output GITHUB_PATH=$T/path
: >"$GITHUB_STEP_SUMMARY"; : >"$GITHUB_OUTPUT"; : >"$GITHUB_PATH"

# Step 1, from source: reuses this build tree, installs into a temporary prefix.
if out=$(EMURUN_BUILD_DIR=$EMURUN_BUILD_DIR EMURUN_PREFIX=$T/prefix "$src/tools/action/install.sh" 2>&1); then
    ok "install.sh (source build) succeeded"
else
    not_ok "install.sh failed: $(echo "$out" | tail -n5)"
fi
expect_eq "install.sh adds the prefix's bin to GITHUB_PATH" "$T/prefix/bin" "$(cat "$GITHUB_PATH")"
expect_contains "installed emurun runs" "$("$T/prefix/bin/emurun" --version 2>&1)" "emurun "
[ -f "$T/prefix/share/man/man1/emurun.1.gz" ] && ok "man page installed" || not_ok "no man page in the prefix"
export EMURUN=$T/prefix/bin/emurun

# Step 2 against a fake sysctl tree: 1 is relaxed to 0 with a notice; 0 and absent stay.
mkdir -p "$T/sys/kernel"
echo 1 >"$T/sys/kernel/apparmor_restrict_unprivileged_userns"
out=$(EMURUN_SYSCTL_DIR=$T/sys "$src/tools/action/userns.sh")
expect_eq "userns.sh sets the knob to 0" 0 "$(cat "$T/sys/kernel/apparmor_restrict_unprivileged_userns")"
expect_contains "userns.sh says so" "$out" "::notice title=emurun::set kernel.apparmor_restrict_unprivileged_userns=0 (was 1)"
expect_contains "userns.sh: already 0" "$(EMURUN_SYSCTL_DIR=$T/sys "$src/tools/action/userns.sh")" "already 0"
expect_contains "userns.sh: no such knob" "$(EMURUN_SYSCTL_DIR=$T/none "$src/tools/action/userns.sh")" "does not exist"

# Step 3: doctor in a group, its lines in the summary.
out=$("$src/tools/action/doctor.sh" 2>&1) && ok "doctor.sh exit 0" || not_ok "doctor.sh failed: $out"
expect_contains "doctor.sh folds its output" "$out" "::group::emurun doctor"
expect_contains "doctor.sh summary" "$(cat "$GITHUB_STEP_SUMMARY")" "### emurun doctor"
expect_contains "doctor.sh summary has the checks" "$(cat "$GITHUB_STEP_SUMMARY")" "kernel"

# Step 4: a pipeline with a failing step: exit code, outputs, summary, annotations, groups.
cat >"$T/p.json" <<JSON
{"name": "action-test", "steps": [
  {"name": "hello", "argv": ["echo", "hello from a step"]},
  {"name": "broken", "kind": "test", "argv": ["false"]}]}
JSON
rc=0
out=$(cd "$T" && EMURUN_PIPELINE=$T/p.json EMURUN_ARGS="--log-dir $T/logs" "$src/tools/action/pipeline.sh" 2>/dev/null) || rc=$?
expect_eq "pipeline.sh exits with emurun run's code" 1 "$rc"
expect_contains "GITHUB_OUTPUT report" "$(cat "$GITHUB_OUTPUT")" "report=emurun-report.json"
expect_contains "GITHUB_OUTPUT exit-code" "$(cat "$GITHUB_OUTPUT")" "exit-code=1"
[ -s "$T/emurun-report.json" ] && [ -s "$T/emurun-junit.xml" ] && ok "report and JUnit written" ||
    not_ok "report or JUnit missing"
expect_contains "step summary has the run table" "$(cat "$GITHUB_STEP_SUMMARY")" "### emurun: action-test FAILED"
expect_contains "error annotation" "$out" "::error title=emurun%3A broken::"
expect_contains "step output folded" "$out" "::group::emurun: step hello"
expect_contains "group closed" "$out" "::endgroup::"
finish
