#!/bin/bash
# Action step 4: the emulators of the wanted arches (EMURUN_ARCHES, input 'arches': names or
# aliases separated by commas or spaces, or 'all').
#   EMURUN_QEMU (input 'qemu') a Debian suite: 'emurun qemu fetch --suite SUITE ARCHES' takes
#                that release's static emulators into emurun's cache (restored by the action's
#                cache), and EMURUN_QEMU_DIR names their dir for the rest of the job;
#              a directory: EMURUN_QEMU_DIR names it;
#              empty: arches without an emulator get the runner's qemu-user-static (apt).
# Output 'arches': the arches emurun has an emulator for now (canonical names, comma-separated).
. "$(dirname "$0")/common.sh"

emurun=${EMURUN:-emurun}
wanted=$(echo "${EMURUN_ARCHES:-all}" | tr ',' ' ')
[ "$wanted" != all ] || wanted=""

# The arches `emurun qemu list` shows an emulator for (of ARCH..., or every foreign one).
ready() { "$emurun" qemu list "$@" | awk 'NR > 1 { print $1 }' | sort -u; }

qemu=${EMURUN_QEMU:-}
if [ -n "$qemu" ] && [ -d "$qemu" ]; then
    export EMURUN_QEMU_DIR=$qemu
    github_file GITHUB_ENV "EMURUN_QEMU_DIR=$qemu"
elif [ -n "$qemu" ]; then
    [ -n "$wanted" ] || { echo "::error title=emurun::input 'qemu: $qemu' needs the arches to fetch (input 'arches', not 'all')"; exit 1; }
    echo "::group::emurun qemu fetch --suite $qemu $wanted"
    # shellcheck disable=SC2086
    out=$("$emurun" qemu fetch --suite "$qemu" $wanted) || { echo "$out"; echo "::endgroup::"; exit 1; }
    echo "$out"
    echo "::endgroup::"
    dir=$(dirname "$(echo "$out" | awk 'NR == 2 { print $NF }')")
    export EMURUN_QEMU_DIR=$dir
    github_file GITHUB_ENV "EMURUN_QEMU_DIR=$dir"
else
    missing=""
    for a in $wanted; do
        [ -n "$(ready "$a")" ] || missing="$missing $a"
    done
    if [ -n "$missing" ] || { [ -z "$wanted" ] && [ -z "$(ready)" ]; }; then
        echo "::group::emurun: apt-get install qemu-user-static (no emulator for${missing:- any arch})"
        as_root apt-get update -q
        as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends qemu-user-static
        echo "::endgroup::"
    fi
fi
# shellcheck disable=SC2086
have=$(ready $wanted | paste -sd, -)
# shellcheck disable=SC2086
"$emurun" qemu list $wanted
for a in $wanted; do
    [ -n "$(ready "$a")" ] || { echo "::error title=emurun::no emulator for $a"; exit 1; }
done
echo "emurun: arches ready: ${have:-none}"
github_file GITHUB_OUTPUT "arches=$have"
