#!/bin/bash
# ctest-tier: quick
# emurun binfmt end to end, inside a private user+mount namespace with its own binfmt_misc
# (Linux >= 6.7): the host's table is never touched. Skips (125) when that is not possible.
# Each scenario is its own ctest (integration.binfmt_sandboxed.<scenario>), so one that cannot
# run here is reported as skipped, not folded into a pass of the others.
# ctest-parts: basic conflict rollback concurrent export debian tonistiigi dangling disabled
set -u
scenarios=${1:-basic conflict rollback concurrent export debian tonistiigi dangling disabled}
: "${EMURUN:?}" "${EMURUN_FIXTURE_DIR:?}" "${EMURUN_HELPER_DIR:?}" "${EMURUN_TESTDIR_ROOT:=/tmp}"

if ! command -v unshare >/dev/null; then
    echo "SKIP: unshare not found"; exit 125
fi
if ! unshare --user --map-root-user --mount sh -c \
    'mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc' 2>/dev/null; then
    echo "SKIP: cannot mount binfmt_misc in a user namespace (needs Linux >= 6.7 and userns)"
    exit 125
fi

mkdir -p "$EMURUN_TESTDIR_ROOT"
work=$(mktemp -d "$EMURUN_TESTDIR_ROOT/binfmt.XXXXXX") || exit 1
export EMURUN work EMURUN_FIXTURE_DIR EMURUN_HELPER_DIR
inner=$work/inner.sh
# Everything below runs in the namespace; $1 selects the scenario.
cat >"$inner" <<'EOF'
set -u
mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc || exit 99
M=/proc/sys/fs/binfmt_misc
fails=0
check() { if "$@"; then :; else echo "FAILED: $*"; fails=$((fails + 1)); fi; }
has_entry() { [ -e "$M/$1" ]; }
arches=""
for a in aarch64 ppc64le s390x riscv64 arm; do
    if [ -x "$EMURUN_FIXTURE_DIR/$a/probe-static" ] && { [ -x /usr/bin/qemu-$a-static ] || [ -x /usr/bin/qemu-$a ]; }; then
        arches="$arches $a"
    fi
done
[ -n "$arches" ] || { echo "SKIP: no arch with both an emulator and a fixture"; exit 125; }
first=$(echo $arches | cut -d' ' -f1)
interp=$(ls /usr/bin/qemu-aarch64-static /usr/bin/qemu-aarch64 2>/dev/null | head -1)

case "$1" in
basic)
    for a in $arches; do
        check "$EMURUN" binfmt register "$a"
        check "$EMURUN" binfmt verify --probe-dir "$EMURUN_FIXTURE_DIR" "$a"
        out=$("$EMURUN" binfmt register "$a")  # idempotent: second run keeps, exit 0
        check [ $? -eq 0 ]
        check grep -q "^keep" <<<"$out"
        check "$EMURUN" binfmt disable "$a"
        check grep -q disabled "$M/qemu-$a"
        check "$EMURUN" binfmt enable "$a"
        check "$EMURUN" binfmt unregister "$a"
        check test ! -e "$M/qemu-$a"
        if "$EMURUN" binfmt verify --probe-dir "$EMURUN_FIXTURE_DIR" "$a" >/dev/null; then
            echo "FAILED: verify passed for $a with no handler"; fails=$((fails + 1))
        fi
    done
    "$EMURUN" binfmt status --json | grep -q '"mount"' || { echo "FAILED: status --json"; fails=$((fails + 1)); }
    ;;
conflict)
    # A foreign entry under emurun's name whose handler is not a qemu: reported, untouched,
    # exit non-zero.
    line=$(printf ':qemu-aarch64:M::\\x7fELF\\x02\\x01\\x01\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x02\\x00\\xb7\\x00:\\xff\\xff\\xff\\xff\\xff\\xff\\xff\\x00\\xff\\xff\\xff\\xff\\xff\\xff\\xff\\xff\\xfe\\xff\\xff\\xff:%s:F' /bin/true)
    printf '%s' "$line" >"$M/register" || exit 98
    before=$(cat "$M/qemu-aarch64")
    if "$EMURUN" binfmt register aarch64 2>"$work/err"; then
        echo "FAILED: register succeeded over a conflicting entry"; fails=$((fails + 1))
    fi
    check grep -q "interpreter /bin/true registered" "$work/err"
    check [ "$before" = "$(cat "$M/qemu-aarch64")" ]
    check "$EMURUN" binfmt register --dry-run --replace aarch64
    check [ "$before" = "$(cat "$M/qemu-aarch64")" ]
    check "$EMURUN" binfmt register --replace aarch64
    check grep -q "^interpreter /usr/bin/qemu-aarch64" "$M/qemu-aarch64"
    # Default flags: P, plus F for a static emulator (as Debian and tonistiigi register).
    want=P
    grep -q "^interpreter /usr/bin/qemu-aarch64-static$" "$M/qemu-aarch64" && want=PF
    check grep -q "^flags: $want$" "$M/qemu-aarch64"
    # C is refused without the option that names it
    if "$EMURUN" binfmt register --replace --flags PC aarch64 2>/dev/null; then
        echo "FAILED: C accepted without --allow-credentials"; fails=$((fails + 1))
    fi
    ;;
rollback)
    n=$(echo $arches | wc -w)
    [ "$n" -ge 3 ] || { echo "SKIP: rollback needs 3 arches, have:$arches"; exit 125; }
    set -- $arches
    # an unrelated entry that must survive
    printf ':other:E::xyz::/bin/true:' >"$M/register"
    "$EMURUN" binfmt register "$1"   # already there before: must stay after rollback
    # $1 is kept (no write): the library's own register_binfmt, through a writer that passes one
    # write to the kernel and fails the second (registering $3 after $2), as
    # tests/helpers/binfmt_fail_after does; every change of the run must be undone.
    rc=0
    "$EMURUN_HELPER_DIR/binfmt_fail_after" 1 $arches 2>"$work/err" || rc=$?
    if [ "$rc" -ne 1 ]; then
        echo "FAILED: injected failure not reported (exit $rc)"; cat "$work/err"; fails=$((fails + 1))
    fi
    check grep -q "failed by binfmt_fail_after after 1 writes" "$work/err"
    check grep -q "rolled back" "$work/err"
    check has_entry "qemu-$1"
    check has_entry other
    for a in $2 $3; do check test ! -e "$M/qemu-$a"; done
    check "$EMURUN" binfmt register $arches
    for a in $arches; do check has_entry "qemu-$a"; done
    ;;
concurrent)
    pids=""
    for i in 1 2 3 4 5 6 7 8; do
        "$EMURUN" binfmt register $arches >"$work/c$i.out" 2>&1 & pids="$pids $!"
    done
    for p in $pids; do wait "$p" || { echo "FAILED: a registrar failed"; cat "$work"/c*.out; fails=$((fails + 1)); }; done
    want=$(for a in $arches; do echo "qemu-$a"; done | sort)
    got=$(ls "$M" | grep -v -e '^register$' -e '^status$' | sort)
    check [ "$want" = "$got" ]
    check [ "$(grep -h '^add' "$work"/c*.out | wc -l)" -eq "$(echo $arches | wc -w)" ]
    ;;
export)
    check "$EMURUN" binfmt register --flags PF $arches
    mkdir -p "$work/d" "$work/deb"
    check "$EMURUN" binfmt export --binfmt-d "$work/d"
    check "$EMURUN" binfmt export --update-binfmts "$work/deb"
    for a in $arches; do cat "$M/qemu-$a" >"$work/before-$a"; done
    check "$EMURUN" binfmt unregister $arches
    check "$EMURUN" binfmt import "$work"/d/*.conf
    for a in $arches; do check [ "$(cat "$M/qemu-$a")" = "$(cat "$work/before-$a")" ]; done
    check "$EMURUN" binfmt unregister $arches
    check "$EMURUN" binfmt import "$work"/deb/qemu-*
    for a in $arches; do check [ "$(cat "$M/qemu-$a")" = "$(cat "$work/before-$a")" ]; done
    # A file without entries, or a FIFO, among good ones: nothing registered, exit 125, named.
    check "$EMURUN" binfmt unregister $arches
    printf '# nothing here\n\n' >"$work/empty.conf"
    mkfifo "$work/fifo.conf"
    for bad in empty.conf fifo.conf; do
        rc=0; timeout 10 "$EMURUN" binfmt import "$work"/d/*.conf "$work/$bad" \
            >"$work/bad.out" 2>&1 || rc=$?
        check [ "$rc" -eq 125 ]
        check grep -q "$work/$bad" "$work/bad.out"
        for a in $arches; do check test ! -e "$M/qemu-$a"; done
    done
    ;;
debian|tonistiigi)
    # The exact line the distro or the tool writes: kept, verified through, owner reported.
    [ -x /usr/bin/qemu-aarch64-static ] && [ -x /usr/bin/qemu-aarch64 ] &&
        [ -e /usr/libexec/qemu-binfmt/aarch64-binfmt-P ] &&
        [ -x "$EMURUN_FIXTURE_DIR/aarch64/probe-static" ] ||
        { echo "SKIP: needs qemu-user-static's aarch64 files and the aarch64 probe"; exit 125; }
    magic='\x7f\x45\x4c\x46\x02\x01\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x02\x00\xb7\x00'
    mask='\xff\xff\xff\xff\xff\xff\xff\x00\xff\xff\xff\xff\xff\xff\xff\xff\xfe\xff\xff\xff'
    if [ "$1" = debian ]; then
        line=":qemu-aarch64:M::$magic:$mask:/usr/libexec/qemu-binfmt/aarch64-binfmt-P:OPF"
        owner="provided by qemu-user-static"
    else
        line=":qemu-aarch64:M::$magic:$mask:/usr/bin/qemu-aarch64:POCF"
        owner="provided by another tool (tonistiigi/binfmt or docker/setup-qemu-action)"
    fi
    printf '%s\n' "$line" >"$M/register" || exit 98
    before=$(cat "$M/qemu-aarch64")
    check "$EMURUN" binfmt register aarch64 >"$work/out" 2>"$work/err"
    check grep -q "^keep .*qemu-aarch64 (kept: $owner" "$work/out"
    check [ "$before" = "$(cat "$M/qemu-aarch64")" ]
    check "$EMURUN" binfmt verify --probe-dir "$EMURUN_FIXTURE_DIR" aarch64
    "$EMURUN" doctor --no-probe >"$work/doctor" 2>&1
    check grep -q "^WARN  binfmt.entry.qemu-aarch64: .*: $owner: flag [CO]" "$work/doctor"
    # Without C/O the same entry is simply OK.
    echo -1 >"$M/qemu-aarch64"
    printf '%s\n' "${line%:*}:PF" >"$M/register" || exit 97
    "$EMURUN" doctor --no-probe >"$work/doctor" 2>&1
    check grep -q "^OK    binfmt.entry.qemu-aarch64: .*: $owner" "$work/doctor"
    # --replace takes it over, and warns when a distro file restores theirs.
    check "$EMURUN" binfmt register --replace aarch64 2>"$work/err"
    check grep -q "^interpreter /usr/bin/qemu-aarch64-static" "$M/qemu-aarch64"
    if [ -e /usr/lib/binfmt.d/qemu-aarch64.conf ]; then
        check grep -q "registered again by /usr/lib/binfmt.d/qemu-aarch64.conf" "$work/err"
    fi
    ;;
dangling|disabled)
    # A handler whose interpreter is a dangling symlink to a qemu, and Debian's entry disabled:
    # neither is kept as a provider; register names why, verify and doctor point at the entry.
    [ -e /usr/libexec/qemu-binfmt/aarch64-binfmt-P ] &&
        [ -x "$EMURUN_FIXTURE_DIR/aarch64/probe-static" ] ||
        { echo "SKIP: needs qemu-user-static's aarch64 files and the aarch64 probe"; exit 125; }
    magic='\x7f\x45\x4c\x46\x02\x01\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x02\x00\xb7\x00'
    mask='\xff\xff\xff\xff\xff\xff\xff\x00\xff\xff\xff\xff\xff\xff\xff\xff\xfe\xff\xff\xff'
    if [ "$1" = dangling ]; then
        mkdir -p "$work/bin"
        ln -s "$work/gone/qemu-aarch64-static" "$work/bin/qemu-aarch64-static"
        printf '%s\n' ":qemu-aarch64:M::$magic:$mask:$work/bin/qemu-aarch64-static:P" >"$M/register" || exit 98
        why="interpreter $work/bin/qemu-aarch64-static registered"
        doctor="^FAIL  binfmt.entry.qemu-aarch64: .*interpreter missing"
    else
        printf '%s\n' ":qemu-aarch64:M::$magic:$mask:/usr/libexec/qemu-binfmt/aarch64-binfmt-P:OPF" >"$M/register" || exit 98
        echo 0 >"$M/qemu-aarch64"
        why="disabled: 'emurun binfmt enable qemu-aarch64' if it should serve"
        doctor="^WARN  binfmt.entry.qemu-aarch64: .*: disabled"
    fi
    before=$(cat "$M/qemu-aarch64")
    rc=0; "$EMURUN" binfmt register aarch64 >"$work/out" 2>"$work/err" || rc=$?
    check [ "$rc" -eq 125 ]
    check grep -qF "$why" "$work/err"
    check [ "$before" = "$(cat "$M/qemu-aarch64")" ]
    if "$EMURUN" binfmt verify --probe-dir "$EMURUN_FIXTURE_DIR" aarch64 >"$work/verify"; then
        echo "FAILED: verify passed through a $1 entry"; fails=$((fails + 1))
    fi
    [ "$1" = dangling ] && check grep -q "interpreter of the binfmt_misc entry for aarch64 is missing" "$work/verify"
    "$EMURUN" doctor --no-probe >"$work/doctor" 2>&1
    check grep -q "$doctor" "$work/doctor"
    if [ "$1" = disabled ]; then
        # binfmt_misc switched off as a whole: register still works, and says nothing will run.
        echo -1 >"$M/qemu-aarch64"
        echo 0 >"$M/status"
        check "$EMURUN" binfmt register aarch64 2>"$work/err"
        check grep -q "is disabled as a whole" "$work/err"
        echo 1 >"$M/status"
    fi
    ;;
*)
    echo "FAILED: no scenario '$1'"; exit 97
    ;;
esac
exit $fails
EOF

# status: 0 when every scenario passed, 1 when one failed, 125 when none failed but one skipped
# (a skipped scenario is never counted as passed).
status=0
for scenario in $scenarios; do
    echo "== $scenario"
    unshare --user --map-root-user --mount bash "$inner" "$scenario"
    rc=$?
    if [ $rc -eq 125 ]; then
        echo "   scenario $scenario skipped"; [ $status -eq 0 ] && status=125
    elif [ $rc -ne 0 ]; then
        echo "   scenario $scenario failed ($rc)"; status=1
    fi
done
[ $status -ne 1 ] && rm -rf "$work"
exit $status
