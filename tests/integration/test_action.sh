#!/bin/bash
# ctest-tier: packaging bullseye=root trixie=root
# ctest-parts: host bullseye trixie
# The GitHub Action (action.yml) runs as GitHub would run its steps: each step's script with
# fake GITHUB_* variables, a temporary step summary, output, env and path files. host: on this
# machine, from a source build (this build tree). bullseye, trixie: in clean roots of those
# releases (tests/integration/lib/native_root.sh) as on a fresh runner of them: the action's
# ref is a release tag, so plan.sh finds its release tarball (a file:// release URL here),
# install.sh unpacks it, userns.sh warns about a restricted knob it was not asked to relax,
# arches.sh finds the root's QEMU, doctor.sh passes, pipeline.sh runs a 3-step pipeline; and
# tools/install-deps picks that release's packages (bullseye: no Boost >= 1.80, it says to use
# the tarball; trixie: apt can install every package it names).
. "$(dirname "$0")/lib/common.sh"
. "$(dirname "$0")/lib/native_root.sh"
. "$(dirname "$0")/lib/release.sh"

src=$EMURUN_SOURCE_DIR
action=$src/action.yml

part_host() {
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
export GITHUB_STEP_SUMMARY=$T/summary.md GITHUB_OUTPUT=$T/output GITHUB_PATH=$T/path GITHUB_ENV=$T/env
: >"$GITHUB_STEP_SUMMARY"; : >"$GITHUB_OUTPUT"; : >"$GITHUB_PATH"; : >"$GITHUB_ENV"

# Step 1, the plan: a checkout that is no release tag builds from source; a release tag whose
# tarball is not there too, saying so; one whose tarball is there installs it; 'tarball' wins.
local arch rel
arch=$(uname -m)
out=$(EMURUN_ACTION_REF=main "$src/tools/action/plan.sh")
expect_contains "plan.sh: a branch builds from source" "$(cat "$GITHUB_OUTPUT")" "method=source"
expect_contains "plan.sh says why" "$out" "main is no release tag"
: >"$GITHUB_OUTPUT"
out=$(EMURUN_ACTION_REF=v9.9.9 EMURUN_RELEASE_URL=file://$T/releases "$src/tools/action/plan.sh")
expect_contains "plan.sh: a release without a tarball builds from source" "$(cat "$GITHUB_OUTPUT")" "method=source"
expect_contains "plan.sh names the tarball it looked for" "$out" "no release tarball at file://$T/releases/v9.9.9/emurun-9.9.9-linux-$arch.tar.gz"
: >"$GITHUB_OUTPUT"
rel=$T/releases/v9.9.9/emurun-9.9.9-linux-$arch.tar.gz
mkdir -p "$(dirname "$rel")" && echo "not a tarball" >"$rel"
# The ref from the action's own path, as the runner lays it out (.../_actions/OWNER/REPO/REF).
mkdir -p "$T/_actions/someone/emurun" && ln -s "$src" "$T/_actions/someone/emurun/v9.9.9"
GITHUB_ACTION_PATH=$T/_actions/someone/emurun/v9.9.9 EMURUN_RELEASE_URL=file://$T/releases "$src/tools/action/plan.sh" >/dev/null
expect_contains "plan.sh: the ref's release tarball" "$(cat "$GITHUB_OUTPUT")" "url=file://$rel"
expect_contains "plan.sh: by tarball" "$(cat "$GITHUB_OUTPUT")" "method=tarball"
expect_contains "plan.sh: the source build's cache key" "$(cat "$GITHUB_OUTPUT")" "build-key=emurun-build-v1-"
: >"$GITHUB_OUTPUT"
EMURUN_TARBALL=/x.tar.gz "$src/tools/action/plan.sh" >/dev/null
expect_contains "plan.sh: the input 'tarball'" "$(cat "$GITHUB_OUTPUT")" "url=/x.tar.gz"
: >"$GITHUB_OUTPUT"
rc=0
out=$(EMURUN_METHOD=tarball EMURUN_URL=$rel EMURUN_PREFIX=$T/broken "$src/tools/action/install.sh" 2>&1) || rc=$?
expect_eq "install.sh: a broken tarball fails" 1 "$rc"
expect_contains "install.sh says which" "$out" "is no gzip'ed tar file"
expect_eq "install.sh: a broken tarball leaves the prefix empty" "" "$(ls -A "$T/broken" 2>/dev/null)"

# Step 2, from source: reuses this build tree, installs into a temporary prefix.
if out=$(EMURUN_METHOD=source EMURUN_BUILD_DIR=$EMURUN_BUILD_DIR EMURUN_PREFIX=$T/prefix "$src/tools/action/install.sh" 2>&1); then
    ok "install.sh (source build) succeeded"
else
    not_ok "install.sh failed: $(echo "$out" | tail -n5)"
fi
expect_eq "install.sh adds the prefix's bin to GITHUB_PATH" "$T/prefix/bin" "$(cat "$GITHUB_PATH")"
expect_contains "installed emurun runs" "$("$T/prefix/bin/emurun" --version 2>&1)" "emurun "
[ -f "$T/prefix/share/man/man1/emurun.1.gz" ] && ok "man page installed" || not_ok "no man page in the prefix"
export EMURUN=$T/prefix/bin/emurun

# Step 3 against a fake sysctl tree: 1 stays with a one-line warning unless relax-apparmor, then
# it is relaxed to 0 with a notice; 0 and absent stay.
mkdir -p "$T/sys/kernel"
echo 1 >"$T/sys/kernel/apparmor_restrict_unprivileged_userns"
out=$(EMURUN_SYSCTL_DIR=$T/sys "$src/tools/action/userns.sh")
expect_eq "userns.sh leaves the knob without relax-apparmor" 1 "$(cat "$T/sys/kernel/apparmor_restrict_unprivileged_userns")"
expect_eq "userns.sh says so in one line, with what to set" 1 "$(echo "$out" | grep -c "relax-apparmor: true")"
out=$(EMURUN_RELAX_APPARMOR=true EMURUN_SYSCTL_DIR=$T/sys "$src/tools/action/userns.sh")
expect_eq "userns.sh sets the knob to 0" 0 "$(cat "$T/sys/kernel/apparmor_restrict_unprivileged_userns")"
expect_contains "userns.sh says so" "$out" "::notice title=emurun::set kernel.apparmor_restrict_unprivileged_userns=0 (was 1)"
expect_contains "userns.sh: already 0" "$(EMURUN_SYSCTL_DIR=$T/sys "$src/tools/action/userns.sh")" "already 0"
expect_contains "userns.sh: no such knob" "$(EMURUN_SYSCTL_DIR=$T/none "$src/tools/action/userns.sh")" "does not exist"

# Step 4: the emulators of two arches (this host's qemu-user-static), the output lists them.
out=$(EMURUN_ARCHES="aarch64, s390x" "$src/tools/action/arches.sh" 2>&1) && ok "arches.sh exit 0" || not_ok "arches.sh: $out"
expect_contains "arches.sh output arches" "$(cat "$GITHUB_OUTPUT")" "arches=aarch64,s390x"
mkdir -p "$T/no-qemu-here"
rc=0
out=$(EMURUN_ARCHES="aarch64" EMURUN_QEMU=$T/no-qemu-here PATH=/nonexistent:$PATH "$src/tools/action/arches.sh" 2>&1) || rc=$?
expect_contains "arches.sh: a qemu dir sets EMURUN_QEMU_DIR" "$(cat "$GITHUB_ENV")" "EMURUN_QEMU_DIR=$T/no-qemu-here"

# Step 5: doctor in a group, its lines in the summary.
out=$("$src/tools/action/doctor.sh" 2>&1) && ok "doctor.sh exit 0" || not_ok "doctor.sh failed: $out"
expect_contains "doctor.sh folds its output" "$out" "::group::emurun doctor"
expect_contains "doctor.sh summary" "$(cat "$GITHUB_STEP_SUMMARY")" "### emurun doctor"
expect_contains "doctor.sh summary has the checks" "$(cat "$GITHUB_STEP_SUMMARY")" "kernel"

# Step 6: a pipeline with a failing step: exit code, outputs, summary, annotations, groups.
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
}

# action_script ACTION VERSION: what a job on a fresh runner runs (the action's steps in order),
# then tools/install-deps' choice of packages for that release.
action_script() {
    local action=$1
    cat <<EOF
set -u
export GITHUB_ACTIONS=true GITHUB_ACTION_PATH=$action RUNNER_TEMP=/tmp HOME=/root
export GITHUB_OUTPUT=/gh/output GITHUB_ENV=/gh/env GITHUB_PATH=/gh/path GITHUB_STEP_SUMMARY=/gh/summary.md
export EMURUN_RELEASE_URL=file:///releases
: >/gh/output; : >/gh/env; : >/gh/path; : >/gh/summary.md
start=\$(date +%s%N)
$action/tools/action/plan.sh || echo "plan-failed"
out() { sed -n "s/^\$1=//p" /gh/output | tail -n1; }
EMURUN_METHOD=\$(out method) EMURUN_URL=\$(out url) $action/tools/action/install.sh || echo "install-failed"
export PATH=\$(cat /gh/path):\$PATH
EMURUN_SYSCTL_DIR=/fake-sys $action/tools/action/userns.sh
EMURUN_ARCHES=aarch64,s390x $action/tools/action/arches.sh || echo "arches-failed"
EMURUN_DOCTOR_MUST_PASS=true $action/tools/action/doctor.sh >/tmp/doctor.txt 2>&1 || { cat /tmp/doctor.txt; echo "doctor-failed"; }
echo "setup-ms=\$(( (\$(date +%s%N) - start) / 1000000 ))"
cd /work && EMURUN_PIPELINE=p.json EMURUN_ARGS="--log-dir logs" $action/tools/action/pipeline.sh; echo "pipeline-exit=\$?"
echo "== install-deps"
apt-get -o APT::Sandbox::User=root update -q >/tmp/apt-update.log 2>&1 || { tail -n3 /tmp/apt-update.log; echo "apt-update-failed"; }
pkgs=\$($action/tools/install-deps --print --build 2>/tmp/deps.err); echo "deps-exit=\$?"
cat /tmp/deps.err
echo "deps=\$pkgs"
if [ -n "\$pkgs" ]; then
    if apt-get -o APT::Sandbox::User=root install -s -q \$pkgs >/tmp/apt-s.log 2>&1; then echo "apt-simulate=ok"; else tail -n5 /tmp/apt-s.log; echo "apt-simulate=failed"; fi
fi
EOF
}

# in_action_root SUITE: the action's scripts on a fresh runner of SUITE (see the top).
in_action_root() {
    local suite=$1 r=$T/$1 version out rc action
    release_root "$suite" "$r" || return 0
    version=$("$EMURUN" --version | awk '{print $2}')
    action=/home/runner/work/_actions/emurun/emurun/v$version
    mkdir -p "$r$action/tools" "$r/releases/v$version" "$r/gh" "$r/fake-sys/kernel"
    cp "$EMURUN_SOURCE_DIR/action.yml" "$r$action/"
    cp -r "$EMURUN_SOURCE_DIR/tools/action" "$EMURUN_SOURCE_DIR/tools/install-deps" "$r$action/tools/"
    cp "$tarball" "$r/releases/v$version/"
    echo 1 >"$r/fake-sys/kernel/apparmor_restrict_unprivileged_userns"
    cat >"$r/work/p.json" <<'JSON'
{"name": "action-root", "defaults": {"cwd": "/work"}, "steps": [
  {"name": "prepare", "argv": ["sh", "-c", "echo prepared > in.txt"]},
  {"name": "aarch64", "needs": ["prepare"], "arch": "aarch64", "emulation": "sandbox",
   "argv": ["sh", "-c", "aarch64/probe-static cat < in.txt && aarch64/probe-static uname"]},
  {"name": "s390x", "kind": "test", "needs": ["aarch64"], "arch": "s390x", "emulation": "exec",
   "argv": ["s390x/probe-static", "endian"]}]}
JSON
    action_script "$action" >"$r/work/action.sh"
    rc=0
    out=$(in_native_root "$r" bash /work/action.sh 2>&1) || rc=$?
    echo "$out" | sed 's/^/  | /'
    expect_eq "$suite: the runner's shell exits 0" 0 "$rc"
    expect_contains "$suite: plan.sh picks the ref's release tarball" "$(cat "$r/gh/output")" \
        "url=file:///releases/v$version/emurun-$version-linux-$(uname -m).tar.gz"
    expect_contains "$suite: install.sh installs it into /usr/local" "$out" "installed into /usr/local (tarball"
    expect_contains "$suite: GITHUB_PATH gets /usr/local/bin" "$(cat "$r/gh/path")" "/usr/local/bin"
    expect_eq "$suite: userns.sh warns in one line" 1 \
        "$(echo "$out" | grep -c "::warning title=emurun::user namespaces are restricted.*relax-apparmor: true")"
    expect_contains "$suite: arches.sh outputs both arches" "$(cat "$r/gh/output")" "arches=aarch64,s390x"
    case $out in
        *-failed*) not_ok "$suite: a step failed: $(echo "$out" | grep -- '-failed' | tr '\n' ' ')" ;;
        *) ok "$suite: plan, install, arches and doctor pass" ;;
    esac
    expect_contains "$suite: pipeline.sh passes" "$out" "pipeline-exit=0"
    expect_contains "$suite: outputs report" "$(cat "$r/gh/output")" "report=emurun-report.json"
    expect_contains "$suite: the sandbox step ran on aarch64" "$(cat "$r/work/logs/aarch64.log" 2>/dev/null)" "prepared"
    expect_contains "$suite: the s390x step ran big-endian" "$(cat "$r/work/logs/s390x.log" 2>/dev/null)" "big 01020304"
    echo "# $suite: the action's set-up (plan, install, userns, arches, doctor) took $(echo "$out" | sed -n 's/^setup-ms=//p') ms"
    if [ "$suite" = bullseye ]; then
        expect_contains "bullseye: install-deps fails" "$out" "deps-exit=1"
        expect_contains "bullseye: install-deps says there is no Boost >= 1.80 and what to do" "$out" \
            "no Boost >= 1.80 in this release's archive (newest: libboost1.74-dev)"
    else
        expect_contains "$suite: install-deps names the release's packages" "$out" "deps-exit=0"
        expect_contains "$suite: with its default Boost, 1.83" "$(echo "$out" | grep '^deps=')" "libboost1.83-dev"
        expect_contains "$suite: apt can install them all" "$out" "apt-simulate=ok"
    fi
}

part_bullseye() { in_action_root bullseye; }
part_trixie() { in_action_root trixie; }

run_parts host bullseye trixie
finish
