#!/bin/bash
# ctest-tier: quick cross_builds=network
# The documentation runs (issue 30). One part per page of README.md and docs/ with command
# blocks: the page's ```sh and ```console blocks run in order, in one shell, in a fresh
# directory, as a reader would run them (tests/integration/lib/docs.py writes the script; marked
# blocks: CONTRIBUTING.md "Documentation"). emurun is this build tree's, installed into a
# temporary prefix: the docs say /usr/local, the test reads it as that prefix. `apt-get install`
# is checked, not run: each package must be installed here (else the part skips, naming it).
# Parts besides the pages: links (relative links and anchors of README.md, docs/ and the
# top-level pages resolve), coverage (every command block is run by a part, read by a test as a
# recipe, or says why not) and generated (the reference pages committed in docs/reference/ are
# what the build generated from the schemas and the arch table).
# ctest-parts: readme getting_started running_programs cross_builds pipelines ci library cli links coverage generated
. "$(dirname "$0")/lib/common.sh"
. "$(dirname "$0")/lib/docs.sh"
command -v python3 >/dev/null || skip "python3 needed to read the docs"
src=$EMURUN_SOURCE_DIR

# The pages a part runs: what coverage expects to be run.
pages="README.md docs/getting-started.md docs/guides/running-programs.md docs/guides/cross-builds.md
docs/guides/pipelines.md docs/guides/ci.md docs/guides/library.md docs/reference/emurun.adoc"

# Stand-ins a reader's machine has in other forms: sudo (we run as we are) and apt-get, whose
# install lines are checked: an installed package is fine, a known one that is not installed
# skips the part (exit 97), an unknown name fails (96).
stubs=$T/stubs
mkdir -p "$stubs"
cat >"$stubs/sudo" <<'EOF'
#!/bin/sh
exec "$@"
EOF
cat >"$stubs/apt-get" <<'EOF'
#!/bin/sh
# integration.docs: the docs' apt-get lines are checked, not run; a tool's own apt-get with its
# private state (-o Dir::...: emurun-sysroot) is the real one.
for a in "$@"; do case $a in -o*) exec /usr/bin/apt-get "$@" ;; esac; done
case "$1" in install) shift ;; *) exit 0 ;; esac
for p in "$@"; do
    case $p in -*) continue ;; esac
    dpkg-query -W -f='${db:Status-Abbrev}\n' "$p" 2>/dev/null | grep -q '^ii' && continue
    if apt-cache show "$p" >/dev/null 2>&1; then
        echo "DOCS-SKIP: $p is not installed here (tools/install-deps installs what the tests need)"
        exit 97
    fi
    echo "apt-get (integration.docs): no package '$p' in the archive" >&2
    exit 96
done
EOF
chmod +x "$stubs/sudo" "$stubs/apt-get"

# install_prefix: this build tree installed into $T/prefix (once), as /usr/local is in the docs.
prefix=$T/prefix
install_prefix() {
    [ -x "$prefix/bin/emurun" ] && return 0
    cmake --install "$EMURUN_BUILD_DIR" --prefix "$prefix" >"$T/install.log" 2>&1 && return 0
    not_ok "cmake --install of the build tree: $(tail -n 5 "$T/install.log")"
    return 1
}

# run_script NAME SCRIPT DIR: bash SCRIPT in DIR with the installed emurun and the stubs first in
# PATH; one check per block it reached (the script prints ::block WHERE before each, ::notrun
# for those not run, ::done at the end). Returns the script's exit status.
run_script() {
    local name=$1 script=$2 dir=$3 log=$T/$1.log rc=0 last="" line
    {
        echo 'doc_in_binfmt_namespace() { unshare --user --map-root-user --mount bash -c '\''mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc && exec bash "$0"'\'' "$1"; }'
        cat "$script"
    } >"$T/$name.run.sh"
    # emurun's cache (sysroot downloads, merged prefixes) in the build tree: fetched once per tree.
    mkdir -p "$EMURUN_BUILD_DIR/docs-cache"
    (cd "$dir" && PATH=$stubs:$prefix/bin:$PATH XDG_DATA_DIRS=$prefix/share:/usr/local/share:/usr/share \
        EMURUN_CACHE_DIR=$EMURUN_BUILD_DIR/docs-cache EMURUN_SOURCE_DIR=$src \
        bash "$T/$name.run.sh") >"$log" 2>&1 || rc=$?
    while IFS= read -r line; do
        case $line in
            ::block\ * | ::job\ * | ::job-line\ *)
                [ -z "$last" ] || ok "$name: ${last#::* } ran"
                last=$line ;;
            ::notrun\ *) echo "note: $name: not run: ${line#::notrun }" ;;
            ::done) [ -z "$last" ] || ok "$name: ${last#::* } ran"; last="" ;;
        esac
    done < <(grep -a '^::' "$log")
    if [ "$rc" = 97 ]; then
        skip_part "$(grep -a -m1 DOCS-SKIP "$log" | sed 's/^DOCS-SKIP: //')"
    elif [ "$rc" != 0 ]; then
        not_ok "$name: ${last#::* } failed (exit $rc); the end of its output:"
        tail -n 25 "$log" | grep -av '^::'
    fi
    return "$rc"
}

# page FILE NAME: FILE's blocks (/usr/local read as the test's prefix) in a fresh directory.
page() {
    install_prefix || return 1
    (cd "$src" && python3 "$DOCS_PY" script "$1" "$prefix") >"$T/$2.sh" || { not_ok "docs.py script $1"; return 1; }
    mkdir -p "$T/$2"
    run_script "$2" "$T/$2.sh" "$T/$2"
}

part_readme() {
    need_tools aarch64-linux-gnu-gcc cmake || return 0
    need_sandbox || return 0
    page README.md readme || return 0
    # The CI recipe: its pipeline on a small CMake project with a ctest test, here, then the
    # workflow's jobs as docs.py runs them (the emurun action's own scripts for its steps).
    need_tools powerpc64le-linux-gnu-gcc s390x-linux-gnu-gcc || return 0
    local d=$T/readme-ci rc=0
    mkdir -p "$d/.github/workflows"
    printf 'cmake_minimum_required(VERSION 3.16)\nproject(t C)\nadd_executable(t t.c)\nenable_testing()\nadd_test(NAME t COMMAND t)\n' >"$d/CMakeLists.txt"
    printf 'int main(void) { return 0; }\n' >"$d/t.c"
    doc_block README.md readme-ci-pipeline | sed "s|/usr/local|$prefix|g" >"$d/pipeline.json" || return 0
    doc_block README.md readme-ci-workflow >"$d/.github/workflows/arches.yml" || return 0
    (cd "$d" && PATH=$prefix/bin:$PATH emurun run pipeline.json -q --report r.json) >"$T/readme-ci.log" 2>&1 || rc=$?
    expect_eq "README's CI pipeline: builds and tests on three arches (exit 0)" 0 "$rc"
    [ "$rc" = 0 ] || tail -n 20 "$T/readme-ci.log"
    python3 - "$d/r.json" <<'PY' && ok "README's CI pipeline: six steps passed, the tests emulated" || not_ok "README's CI report"
import json, sys
steps = json.load(open(sys.argv[1]))["steps"]
assert sorted(s["name"] for s in steps) == sorted(
    "%s-%s" % (k, a) for k in ("build", "test") for a in ("aarch64", "ppc64le", "s390x")), steps
assert all(s["status"] == "passed" for s in steps), steps
assert all(s["emulation"] != "native" for s in steps if s["name"].startswith("test")), steps
PY
    python3 "$DOCS_PY" ci-jobs "$d/.github/workflows/arches.yml" >"$T/readme-wf.sh" &&
        run_script readme-workflow "$T/readme-wf.sh" "$d" || true
    [ -s "$d/emurun-report.json" ] && ok "README's workflow: the action's run wrote its report" ||
        not_ok "README's workflow: no emurun-report.json"
}

part_getting_started() {
    need_tools aarch64-linux-gnu-gcc s390x-linux-gnu-gcc cc || return 0
    need_sandbox || return 0
    page docs/getting-started.md getting_started || true
}

part_running_programs() {
    need_tools aarch64-linux-gnu-gcc s390x-linux-gnu-gcc || return 0
    need_sandbox || return 0
    page docs/guides/running-programs.md running_programs || true
}

part_cross_builds() {
    need_tools aarch64-linux-gnu-gcc cmake meson ninja pkg-config || return 0
    need_sandbox || return 0
    page docs/guides/cross-builds.md cross_builds || true
}

part_pipelines() {
    need_tools aarch64-linux-gnu-gcc s390x-linux-gnu-gcc gcc || return 0
    need_sandbox || return 0
    page docs/guides/pipelines.md pipelines || true
}

part_ci() {
    need_tools aarch64-linux-gnu-gcc powerpc64le-linux-gnu-gcc s390x-linux-gnu-gcc cmake || return 0
    need_sandbox || return 0
    python3 -c 'import yaml' 2>/dev/null || { skip_part "python3-yaml missing (tools/install-deps installs it)"; return 0; }
    page docs/guides/ci.md ci || return 0
    local d=$T/ci/ci-demo f name
    python3 - "$d/report.json" <<'PY' && ok "ci.md's pipeline: every step passed against the native baseline" || not_ok "ci.md's report"
import json, sys
steps = json.load(open(sys.argv[1]))["steps"]
assert len(steps) == 6 and all(s["status"] == "passed" for s in steps), steps
assert all(s["baseline_wall"] is not None for s in steps if s["name"].startswith("test")), steps
PY
    # Each CI file's jobs, in the project as the page left it but without the reports and logs
    # (the build trees stay: the jobs' cmake runs are then incremental).
    # The GitLab job installs emurun from a release tarball's URL: this tree's install as one.
    tar -C "$T" -czf "$T/emurun-release.tar.gz" prefix
    export EMURUN_TARBALL_URL=file://$T/emurun-release.tar.gz
    for f in .github/workflows/arches.yml .gitlab-ci.yml Jenkinsfile; do
        name=ci-$(basename "$f" | tr -c 'a-zA-Z0-9\n' '-')
        (cd "$d" && rm -rf native.json report.* emurun-report.json emurun-junit.xml emurun-logs)
        python3 "$DOCS_PY" ci-jobs "$d/$f" >"$T/$name.sh" || { not_ok "docs.py ci-jobs $f"; continue; }
        run_script "$name" "$T/$name.sh" "$d" && ok "$f: every job's commands ran, their reports are there" || true
    done
}

part_library() {
    need_tools aarch64-linux-gnu-gcc cmake || return 0
    if grep -q '^EMURUN_ASAN:BOOL=ON' "$EMURUN_BUILD_DIR/CMakeCache.txt" 2>/dev/null; then
        skip_part "this tree's libemurun.a is built with ASan and UBSan, which the page's plain g++ program does not link (the quick tier runs the page against the release build)"
        return 0
    fi
    # pipeline.cpp's auto step runs in a sandbox here, else through the host's handlers.
    need_sandbox || return 0
    page docs/guides/library.md library || return 0
    python3 - "$T/library/lib-demo/runner-report.json" <<'PY' && ok "library.md's runner wrote a report: both steps passed, one emulated" || not_ok "the runner's report"
import json, sys
steps = {s["name"]: s for s in json.load(open(sys.argv[1]))["steps"]}
assert steps["native"]["status"] == "passed" and steps["aarch64"]["status"] == "passed", steps
assert steps["aarch64"]["emulation"] == "exec" and steps["aarch64"]["emulator"], steps
PY
    # The program written from the page alone against the installed package (issue 29): a
    # PipelineBuilder pipeline of three steps run, the sink's diagnostic, an error by its kind.
    python3 - "$T/library/lib-demo/pipeline-report.json" <<'PY' && ok "library.md's PipelineBuilder program ran its three steps, the test emulated in a sandbox" || not_ok "the PipelineBuilder program's report"
import json, sys
steps = {s["name"]: s for s in json.load(open(sys.argv[1]))["steps"]}
assert [steps[n]["status"] for n in ("configure", "build", "test")] == ["passed"] * 3, steps
assert steps["test"]["emulation"] == "sandbox" and steps["test"]["arch"] == "aarch64", steps
PY
    expect_contains "its DiagnosticSink received the run's diagnostic" "$(cat "$T/library.log")" \
        'pipeline: note: step "test": emulation auto runs in a sandbox (a private binfmt_misc)'
    expect_contains "its switch on Error::kind took bad_input for a zero timeout" "$(cat "$T/library.log")" \
        'pipeline: fix the pipeline: hello: steps[2].timeout: must be longer than 0'
}

part_cli() {
    need_tools aarch64-linux-gnu-gcc s390x-linux-gnu-gcc || return 0
    need_sandbox || return 0
    # What the man page's examples name: two foreign programs and a pipeline.
    local d=$T/cli
    mkdir -p "$d"
    printf '#include <stdio.h>\nint main(void) { puts("hi"); return 0; }\n' >"$d/hello.c"
    aarch64-linux-gnu-gcc -o "$d/hello-aarch64" "$d/hello.c" && s390x-linux-gnu-gcc -o "$d/hello-s390x" "$d/hello.c" ||
        { not_ok "building the examples' programs"; return 0; }
    printf '{"name": "cli", "steps": [{"name": "a", "kind": "test", "argv": ["true"]}]}\n' >"$d/pipeline.json"
    install_prefix || return 0
    (cd "$src" && python3 "$DOCS_PY" script docs/reference/emurun.adoc "$prefix") >"$T/cli.sh" &&
        run_script cli "$T/cli.sh" "$d" || true
}

part_links() {
    local out rc=0
    out=$(python3 "$DOCS_PY" links "$src") || rc=$?
    echo "$out"
    expect_eq "every relative link and anchor of README.md, docs/ and the top-level pages resolves" 0 "$rc"
}

part_coverage() {
    local out rc=0
    # shellcheck disable=SC2086 # the page list
    out=$(python3 "$DOCS_PY" coverage "$src" $pages) || rc=$?
    echo "$out"
    expect_eq "every command block runs in a part, is a recipe a test reads, or says why not" 0 "$rc"
    local n
    n=$(grep -c '^not run:' <<<"$out" || true)
    echo "note: $n command blocks are not run (each with its reason above)"
}

part_generated() {
    local f built
    for f in pipeline-json.md report-json.md doctor-json.md arches.md; do
        built=$EMURUN_BUILD_DIR/docs/reference/$f
        if [ ! -f "$built" ]; then
            not_ok "the build made no $built (target emurun_docs)"
        elif cmp -s "$built" "$src/docs/reference/$f"; then
            ok "docs/reference/$f is what the build generates from its source"
        else
            not_ok "docs/reference/$f differs from the generated $built: its source changed; copy it (cp $built $src/docs/reference/$f)"
            diff -u "$src/docs/reference/$f" "$built" | head -n 20
        fi
    done
}

run_parts readme getting_started running_programs cross_builds pipelines ci library cli links coverage generated
finish
