#!/bin/bash
# ctest-tier: root
# The same tests on every arch's image (docs/guides/foreign-roots.md "Recipe: the same tests on
# every arch's image", issue 33): a multi-arch base image made here from Debian's busybox-static
# for arm64 and s390x (imported as rootfs tarballs, exported as one OCI archive), then the page's
# app, tests, pipeline and commands as written: imported per arch, built into and tested in each
# root against a native run with per-test results, merged, and exported as one image that
# skopeo reads as an index of both platforms; the export imported back holds what the build
# step installed. Then the app broken in the s390x root alone fails that arch's run, naming the
# test case.
. "$(dirname "$0")/lib/common.sh"
. "$(dirname "$0")/lib/docs.sh"
need_tools python3 skopeo sha256sum
case $(uname -m) in aarch64 | s390x) skip "the page's arches must both be foreign here" ;; esac
"$EMURUN" sandbox --arch s390x -- true >"$T/probe.log" 2>&1 ||
    skip "the sandbox is unavailable here: $(tail -n1 "$T/probe.log")"
ROOT_CACHE=${EMURUN_ROOT_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/emurun-tests/roots}
cd "$T"

# The base image: busybox and its applets, a root per arch, one OCI archive of both.
for a in arm64:aarch64 s390x:s390x; do
    deb=${a%%:*} arch=${a##*:} r=$T/rootfs-${a##*:}
    "$EMURUN" sysroot fetch --cache "$ROOT_CACHE/apt" --arch "$deb" --dir "$T/bb-$arch" busybox-static \
        >"$T/fetch-$arch.log" 2>&1 || {
        grep -q 'cannot be reached\|Temporary failure' "$T/fetch-$arch.log" &&
            skip "the Debian archive cannot be reached: $(tail -n1 "$T/fetch-$arch.log")"
        cat "$T/fetch-$arch.log"; not_ok "sysroot fetch busybox-static for $deb"; finish; exit 1
    }
    mkdir -p "$r/bin" "$r/etc" "$r/tmp" "$r/proc" "$r/dev" "$r/sys" "$r/root" "$r/opt"
    cp "$T/bb-$arch/bin/busybox" "$r/bin/"
    for t in sh cp cat mkdir uname echo rm ls; do ln -s busybox "$r/bin/$t"; done
    tar -C "$r" --sort=name --numeric-owner --owner=0 --group=0 --mtime=@0 -cf "$r.tar" .
    "$EMURUN" root import --arch "$arch" "$r.tar" "$T/base-$arch" 2>>"$T/base.log"
done
"$EMURUN" root export --format oci-archive --tag base:1 base.tar "$T/base-aarch64" "$T/base-s390x" \
    2>>"$T/base.log" || { cat "$T/base.log"; not_ok "the base image"; finish; exit 1; }

# The page's files and commands as written.
doc_block docs/guides/foreign-roots.md images-app >app.sh || true
doc_block docs/guides/foreign-roots.md images-tests >tests.sh || true
doc_block docs/guides/foreign-roots.md images-pipeline >images.json || true
doc_block docs/guides/foreign-roots.md images-commands >recipe.sh || true
PATH=$(dirname "$EMURUN"):$PATH # the recipe says emurun
rc=0
bash -e recipe.sh >recipe.out 2>&1 || rc=$?
expect_eq "the page's commands exit 0" 0 "$rc"
[ "$rc" = 0 ] || tail -n 30 recipe.out

python3 - <<'PY' && ok "all.json: both arches, each test case passed, each with its native baseline" || not_ok "all.json"
import json
r = json.load(open("all.json"))
steps = {s["name"]: s for s in r["steps"]}
assert set(steps) == {"build[aarch64]", "test[aarch64]", "build[s390x]", "test[s390x]"}, steps.keys()
for arch in ("aarch64", "s390x"):
    t = steps["test[%s]" % arch]
    assert t["status"] == "passed", t
    names = sorted((c["classname"], c["name"], c["status"]) for c in t["tests"])
    assert names == [("app", n, "passed") for n in ("machine", "sum", "usage")], names
    assert t["baseline_wall"] > 0, t  # the native run's step
    assert all("baseline_time" in c for c in t["tests"]), t["tests"]  # and its test cases
PY
expect_contains "report show: a column per arch" "$(cat recipe.out)" "step   aarch64"
expect_contains "skopeo reads the export as an index of both platforms" "$(cat recipe.out)" '"architecture":"s390x"'
expect_contains "… and of arm64" "$(cat recipe.out)" '"architecture":"arm64"'

# The exported image holds what the build steps installed.
for p in linux/arm64:aarch64 linux/s390x:s390x; do
    "$EMURUN" root import --platform "${p%%:*}" app.tar "back-${p##*:}" 2>/dev/null
    expect_eq "app.tar (${p%%:*}) holds the build's /opt/app" "${p##*:}" "$(cat "back-${p##*:}/opt/app/built-for" 2>&1)"
done

# A bug on one arch alone: the s390x root's app adds wrong; that arch's run fails on app.sum.
cp tests.sh tests.keep
sed -i 's/n=\$((n + x))/n=$((n + x + 1))/' roots/s390x/opt/app/app.sh
cat >one.json <<'JSON'
{"name": "images", "arches": ["s390x"], "defaults": {"emulation": "root"},
 "steps": [{"name": "test", "kind": "test", "root": "roots/${arch}",
            "argv": ["sh", "tests.sh", "/opt/app", "results-${arch}.xml"], "junit": ["results-${arch}.xml"]}]}
JSON
rc=0
"$EMURUN" run one.json --report broken.json --log-dir logs-broken >broken.out 2>&1 || rc=$?
expect_eq "the broken arch's run fails (exit 1)" 1 "$rc"
expect_eq "… naming the failed test case" "app.sum failed" \
    "$(python3 -c 'import json; t=json.load(open("broken.json"))["steps"][0]["tests"]; print(" ".join(c["classname"]+"."+c["name"]+" "+c["status"] for c in t if c["status"]!="passed"))')"
finish
