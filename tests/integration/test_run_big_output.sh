#!/bin/bash
# ctest-tier: stress
# emurun run: 1 GiB on each of stdout and stderr without deadlock and with the log complete.
# A few seconds and 2 GiB through pipes: the stress tier (tools/test --full).
. "$(dirname "$0")/lib/common.sh"
H=$EMURUN_HELPER_DIR
[ -x "$H/print_bytes" ] || skip "helper programs not built ($H)"
avail=$(df -Pk "$T" | awk 'NR == 2 {print $4}')
[ "$avail" -gt 3000000 ] || skip "less than 3 GB free in $T for the log"
cd "$T"
gib=$((1024 * 1024 * 1024))
cat > p.json <<JSON
{"name": "big", "steps": [{"name": "flood", "argv": ["$H/print_bytes", "$gib", "$gib"],
  "timeout": "5m"}]}
JSON
"$EMURUN" run p.json -q --report r.json >/dev/null 2>&1 && ok "run passed" || not_ok "run failed"
expect_eq "log holds both streams" $((2 * gib)) "$(stat -c %s emurun-logs/flood.log)"
finish
