#!/bin/bash
# ctest-tier: quick
# Colour: --color=always|never|auto and NO_COLOR, for the report table (stdout) and the log level
# (stderr). auto means "a terminal, TERM not dumb and NO_COLOR unset or empty"; ctest's pipes are
# no terminal, so script(1) provides one for the auto cases (part "terminal", skipped without it).
# ctest-parts: flags terminal
. "$(dirname "$0")/lib/common.sh"

esc=$'\033['
cd "$T"
echo '{"name": "c", "steps": [{"name": "a", "argv": ["true"]}, {"name": "b", "argv": ["false"]}]}' >p.json
"$EMURUN" run p.json -q --report r.json --log-dir logs >/dev/null 2>&1 || true

has_esc() { case "$2" in *"$esc"*) ok "$1" ;; *) not_ok "$1: no ANSI colour in [$2]" ;; esac; }
no_esc() { case "$2" in *"$esc"*) not_ok "$1: ANSI codes in [$(echo "$2" | cat -v | head -n3)]" ;; *) ok "$1" ;; esac; }

part_flags() {
    has_esc "--color=always colours the table" "$("$EMURUN" --color=always report show r.json)"
    has_esc "--color=always: passed is green" "$("$EMURUN" --color=always report show r.json | grep -F "${esc}32mpassed")"
    has_esc "--color=always wins over NO_COLOR" "$(NO_COLOR=1 "$EMURUN" --color=always report show r.json)"
    no_esc "--color=never" "$("$EMURUN" --color=never report show r.json)"
    no_esc "auto into a pipe" "$("$EMURUN" report show r.json)"
    has_esc "--color=always colours log levels on stderr" \
        "$("$EMURUN" --color=always -v exec -- true 2>&1 >/dev/null)"
    no_esc "--color=never log levels" "$("$EMURUN" --color=never -v exec -- true 2>&1 >/dev/null)"
    rc=0; out=$("$EMURUN" --color=sometimes report show r.json 2>&1) || rc=$?
    expect_eq "--color=sometimes is a usage error" 2 "$rc"
    expect_contains "and names the choices" "$out" "always"
}

part_terminal() {
    if ! command -v script >/dev/null || ! script -qec true /dev/null >/dev/null 2>&1; then
        skip_part "script(1) cannot allocate a terminal here (auto on a terminal not checked)"
        return
    fi
    tty_run() { script -qec "$*" /dev/null </dev/null; }
    has_esc "auto on a terminal colours" "$(TERM=xterm tty_run "$EMURUN" report show r.json)"
    no_esc "auto on a terminal with NO_COLOR=1" "$(TERM=xterm NO_COLOR=1 tty_run "$EMURUN" report show r.json)"
    has_esc "auto on a terminal with NO_COLOR empty" "$(TERM=xterm NO_COLOR= tty_run "$EMURUN" report show r.json)"
    no_esc "auto on a dumb terminal" "$(TERM=dumb tty_run "$EMURUN" report show r.json)"
}

run_parts flags terminal
finish
