#!/bin/bash
# Action step 3: 'emurun doctor' in a folded group, its table added to the step summary. A FAIL
# fails the step only when EMURUN_DOCTOR_MUST_PASS=true (input 'doctor-must-pass').
. "$(dirname "$0")/common.sh"

emurun=${EMURUN:-emurun}
echo "::group::emurun doctor"
rc=0
out=$("$emurun" doctor 2>&1) || rc=$?
echo "$out"
echo "::endgroup::"
summary "### emurun doctor"
summary ""
summary '```'
summary "$out"
summary '```'
if [ "$rc" -ne 0 ]; then
    if [ "${EMURUN_DOCTOR_MUST_PASS:-false}" = "true" ]; then
        echo "::error title=emurun doctor::a check failed (see the group above)"
        exit "$rc"
    fi
    echo "::warning title=emurun doctor::a check failed (see the group above); continuing"
fi
exit 0
