#!/bin/bash
# Action step 4 (when the input 'pipeline' is set): emurun run PIPELINE with EMURUN_ARGS, writing
# the JSON report and JUnit XML; emurun itself appends the Markdown summary to
# $GITHUB_STEP_SUMMARY and prints the (capped) annotations. Outputs: report, junit, exit-code.
. "$(dirname "$0")/common.sh"

emurun=${EMURUN:-emurun}
pipeline=${EMURUN_PIPELINE:?the input 'pipeline' is empty}
report=${EMURUN_REPORT:-emurun-report.json}
junit=${EMURUN_JUNIT:-emurun-junit.xml}
# shellcheck disable=SC2206 # the input is a list of words
args=(${EMURUN_ARGS:-})
rc=0
"$emurun" run "$pipeline" --report "$report" --junit "$junit" "${args[@]}" || rc=$?
github_file GITHUB_OUTPUT "report=$report"
github_file GITHUB_OUTPUT "junit=$junit"
github_file GITHUB_OUTPUT "exit-code=$rc"
exit "$rc"
