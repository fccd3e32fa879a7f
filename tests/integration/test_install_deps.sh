#!/bin/bash
# ctest-tier: quick
# tools/install-deps against a stub apt (dpkg-query, apt-cache, apt-get, sudo first on PATH;
# nothing is installed): on a release whose archive lacks some of the packages (Debian 13 and
# --full's clang-15, libfuzzer-15-dev, llvm-15) it names all of them and installs nothing,
# instead of apt-get stopping at the first; where all are there it installs the missing ones;
# with apt's lists empty (a fresh container) --print says to update them; --help lists every flag.
. "$(dirname "$0")/lib/common.sh"
deps=$EMURUN_SOURCE_DIR/tools/install-deps
mkdir "$T/bin"
stub() { printf '#!/bin/sh\n%s\n' "$2" >"$T/bin/$1" && chmod +x "$T/bin/$1"; }
# shellcheck disable=SC2016 # the stubs' own shell expands them
stub dpkg-query 'exit 1' # nothing installed
stub sudo 'exec "$@"'
stub apt-get 'echo "$*" >>"$STUB_LOG"'
# apt-cache: libboost-dev is 1.83's (trixie); STUB_ABSENT the packages the archive lacks.
stub apt-cache '[ -z "${STUB_EMPTY:-}" ] || exit 0
case "$1 $2" in
    "depends libboost-dev") echo "  Depends: libboost1.83-dev" ;;
    "pkgnames "*) ;;
    "show "*) case " $STUB_ABSENT " in *" $2 "*) exit 100 ;; esac ;;
esac'
# apt list --upgradable: STUB_UPGRADABLE's lines (none by default).
stub apt '[ "$*" = "list --upgradable" ] && echo Listing... && printf "%s\n" ${STUB_UPGRADABLE:-}'
export STUB_LOG=$T/apt-get.log
run() { PATH=$T/bin:$PATH "$deps" "$@"; }

rc=0 && err=$(STUB_ABSENT="clang-15 libfuzzer-15-dev llvm-15" run --full 2>&1) || rc=$?
expect_eq "trixie, --full: exit 1" 1 "$rc"
expect_contains "... naming every package the archive lacks" "$err" \
    "not in this release's archive: clang-15 libfuzzer-15-dev llvm-15 ("
case "$(cat "$STUB_LOG" 2>/dev/null)" in
    *install*) not_ok "... yet apt-get install ran: $(cat "$STUB_LOG")" ;;
    *) ok "... installing nothing" ;;
esac
rm -f "$STUB_LOG"
rc=0 && STUB_ABSENT="" run --build 2>/dev/null || rc=$?
expect_eq "trixie, --build: exit 0" 0 "$rc"
expect_contains "... apt-get installs the release's packages" "$(cat "$STUB_LOG")" \
    "install -y -q --no-install-recommends asciidoctor ccache"
expect_contains "... with its Boost" "$(cat "$STUB_LOG")" "libboost1.83-dev"
rc=0 && err=$(STUB_EMPTY=1 run --print --build 2>&1) || rc=$?
expect_eq "apt's lists empty (a fresh container), --print: exit 1" 1 "$rc"
expect_contains "... saying to update them, not that the release has no Boost" "$err" \
    "apt knows no packages yet (its lists are empty): run apt-get update first"
# --full: a host behind the archive is brought up to it (the identity rule of accelerated roots
# compares the host's revisions with a root made from the archive today); systemd is left alone.
rm -f "$STUB_LOG"
rc=0 && err=$(STUB_UPGRADABLE="sed/oldstable-security libarchive13/oldstable systemd/oldstable" \
    run --full 2>&1) || rc=$?
expect_eq "--full with upgradable packages: exit 0" 0 "$rc"
expect_contains "... apt-get upgrades them" "$(head -n1 "$STUB_LOG")" \
    "install -y -q --only-upgrade --no-install-recommends sed libarchive13"
expect_contains "... and says why" "$err" "upgrading 2 packages to the archive's revisions"
case "$(head -n1 "$STUB_LOG")" in
    *systemd*) not_ok "... yet systemd was upgraded" ;;
    *) ok "... not systemd" ;;
esac
rm -f "$STUB_LOG"
STUB_ABSENT="" run --build 2>/dev/null
case "$(cat "$STUB_LOG")" in
    *only-upgrade*) not_ok "--build upgraded the host: $(cat "$STUB_LOG")" ;;
    *) ok "--build upgrades nothing" ;;
esac
help=$("$deps" --help)
for flag in --build --demo --full --print; do
    expect_contains "--help names $flag" "$help" "tools/install-deps $flag"
done
finish
