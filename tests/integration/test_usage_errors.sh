#!/bin/bash
# ctest-tier: quick
# Usage errors, every command x five common mistakes (issue 30): each says
# "emurun: error: COMMAND: ..." on stderr ("emurun: error: ..." for emurun's own, the name said
# once), names the closest subcommand or option when a word is misspelt, points at the
# command's --help, prints nothing on stdout and exits 2, the one code for usage errors
# (docs/reference/emurun.adoc, EXIT STATUS).
. "$(dirname "$0")/lib/common.sh"
cd "$T"
echo '{"name": "u", "steps": [{"name": "a", "argv": ["true"]}]}' >p.json

# case 'ARGS' 'COMMAND PATH' 'EXPECTED TEXT' ['PATH OF THE --help NAMED']
case_() {
    local args=$1 path=$2 want=$3 help=${4:-$2} rc=0 out err lead
    # shellcheck disable=SC2086
    out=$("$EMURUN" $args 2>err.txt) || rc=$?
    err=$(cat err.txt)
    lead=${path#emurun}
    lead="emurun: error: ${lead:+${lead# }: }"
    if [ "$rc" = 2 ] && [ -z "$out" ] && [[ $err == "$lead"* ]] &&
        [[ $err != "emurun: error: emurun"* ]] &&
        [[ $err == *"$want"* ]] && [[ $err == *"'$help --help' lists its usage"* ]] &&
        [ "$(echo "$err" | wc -l)" = 1 ]; then
        ok "emurun $args: $want"
    else
        not_ok "emurun $args: exit $rc (want 2), stdout [$out], stderr [$err] (want '$lead...$want...')"
    fi
}

# The command word itself
case_ "exe" "emurun" "unknown command 'exe': did you mean 'emurun exec'?"
case_ "" "emurun" "which command? one of inspect, exec"
case_ "--jsno doctor" "emurun" "unknown option '--jsno'"
case_ "--color bogus doctor" "emurun" "bogus not in {auto,always,never}" # emurun's own option
# An option before the command is emurun's: misspelt, or the command's own given too early.
case_ "--colour=never doctor" "emurun" "unknown option '--colour': did you mean '--color'?"
case_ "--colour never doctor" "emurun" "unknown option '--colour': did you mean '--color'?"
case_ "-x doctor" "emurun" "unknown option '-x' ('emurun --help'"
case_ "--json doctor" "emurun" "the option '--json' belongs to 'emurun doctor' and goes after 'doctor'" "emurun doctor"
case_ "--jobs 2 run p.json" "emurun" "the option '--jobs' belongs to 'emurun run' and goes after 'run'" "emurun run"
case_ "root --arch aarch64 create r" "emurun root" "the option '--arch' belongs to 'emurun root create'" "emurun root create"
case_ "doctor --colour=never" "emurun doctor" "unknown option '--colour': did you mean '--color'?"
# `--name=` is an empty value, not "take the next word" (CLI11 read `--jobs= p.json` as --jobs
# p.json); a word of the program exec runs is the program's.
case_ "doctor --json --color=" "emurun doctor" "the option --color has an empty value"
case_ "--color= doctor" "emurun" "the option --color has an empty value"
case_ "run --jobs= p.json" "emurun run" "the option --jobs has an empty value"
case_ "inspect --sysroot= /bin/true /bin/sh" "emurun inspect" "the option --sysroot has an empty value"
expect_eq "exec: a program's own --arch= is the program's" "--arch=" "$("$EMURUN" exec /bin/echo --arch=)"
case_ "frobnicate" "emurun" "unknown command 'frobnicate'"
# A stray word before a command is the word's fault, not the command's.
case_ "foo run p.json" "emurun" "unknown command 'foo'"
case_ "run --color bogus p.json" "emurun" "bogus not in {auto,always,never}"
case_ "root creat --arch aarch64 r" "emurun root" "did you mean 'emurun root create'?"
# An option whose value would be the '--' that starts the command.
case_ "sandbox --arch -- true" "emurun sandbox" "the option --arch has no value: the '--' after it starts the command"

case_ "inspect" "emurun inspect" "missing the argument FILES"
case_ "inspect --jsno /bin/true" "emurun inspect" "unknown option '--jsno': did you mean '--json'?"
case_ "inspect --sysrot /x /bin/true" "emurun inspect" "did you mean '--sysroot'?"
case_ "inspect --frobnicate /bin/true" "emurun inspect" "unknown option '--frobnicate'"
case_ "inspect /bin/true --sysroot" "emurun inspect" "the option --sysroot needs a value"

case_ "exec" "emurun exec" "missing the argument"
case_ "exec --sysrot /x /bin/true" "emurun exec" "did you mean '--sysroot'?"
case_ "exec --arhc aarch64 /bin/true" "emurun exec" "did you mean '--arch'?"
case_ "exec --qemu-dri /x /bin/true" "emurun exec" "did you mean '--qemu-dir'?"
case_ "exec --frobnicate /bin/true" "emurun exec" "unknown option '--frobnicate'"

case_ "binfmt" "emurun binfmt" "which command? one of status, register"
case_ "binfmt stauts" "emurun binfmt" "did you mean 'emurun binfmt status'?"
case_ "binfmt regster" "emurun binfmt" "did you mean 'emurun binfmt register'?"
case_ "binfmt status --jsno" "emurun binfmt status" "did you mean '--json'?"
case_ "binfmt verify --frobnicate" "emurun binfmt verify" "unknown option '--frobnicate'"

case_ "sandbox" "emurun sandbox" "missing the"
case_ "sandbox --arhc aarch64 -- true" "emurun sandbox" "did you mean '--arch'?"
case_ "sandbox --arch aarch64 --sysrot /x -- true" "emurun sandbox" "did you mean '--sysroot'?"
case_ "sandbox --arch aarch64 --evn K=V -- true" "emurun sandbox" "did you mean '--env'?"
case_ "sandbox --arch aarch64 --frobnicate -- true" "emurun sandbox" "unknown option '--frobnicate'"

case_ "shim" "emurun shim" "which command? one of add"
case_ "shim ad" "emurun shim" "did you mean 'emurun shim add'?"
case_ "shim lsit" "emurun shim" "did you mean 'emurun shim list'?"
case_ "shim list --jsno" "emurun shim list" "did you mean '--json'?"
case_ "shim add" "emurun shim add" "missing the"

case_ "sysroot" "emurun sysroot" "which command? one of check"
case_ "sysroot fech aarch64" "emurun sysroot" "did you mean 'emurun sysroot fetch'?"
case_ "sysroot chekc" "emurun sysroot" "did you mean 'emurun sysroot check'?"
case_ "sysroot check" "emurun sysroot check" "missing the"
case_ "sysroot check --sysrot /x" "emurun sysroot check" "did you mean '--sysroot'?"

case_ "run" "emurun run" "missing the argument PIPELINE"
case_ "run --jbos 2 p.json" "emurun run" "did you mean '--jobs'?"
case_ "run --jobs x p.json" "emurun run" "--jobs: 'x' is not a number"
case_ "run --reprot r.json p.json" "emurun run" "did you mean '--report'?"
case_ "run --frobnicate p.json" "emurun run" "unknown option '--frobnicate'"

case_ "report" "emurun report" "which command? one of show, compare, merge"
case_ "report shwo r.json" "emurun report" "did you mean 'emurun report show'?"
case_ "report show" "emurun report show" "missing the argument REPORTS"
case_ "report show --format yaml r.json" "emurun report show" "yaml not in"
case_ "report compare r.json" "emurun report compare" "missing the argument AFTER"

case_ "calibrate" "emurun calibrate" "missing the option --arch"
case_ "calibrate --arhc aarch64" "emurun calibrate" "did you mean '--arch'?"
case_ "calibrate --arch aarch64 --jsno" "emurun calibrate" "did you mean '--json'?"
case_ "calibrate --arch aarch64 --outptu x" "emurun calibrate" "did you mean '--output'?"
case_ "calibrate --arch aarch64 --frobnicate" "emurun calibrate" "unknown option '--frobnicate'"

case_ "root" "emurun root" "which command? one of create, import, export, install, run"
case_ "root crate" "emurun root" "did you mean 'emurun root create'?"
case_ "root create /tmp/r" "emurun root create" "missing the option --arch"
case_ "root create --arhc aarch64 /tmp/r" "emurun root create" "did you mean '--arch'?"
case_ "root run --accelerat /tmp/r -- true" "emurun root run" "did you mean '--accelerate'?"
# An unknown option where the command would start, before '--': never run as the command.
case_ "root run /tmp/r --acelerate -- true" "emurun root run" "unknown option '--acelerate': did you mean '--accelerate'? (it stands before '--'"
case_ "root run /tmp/r -x -- true" "emurun root run" "unknown option '-x' (it stands before '--'"
case_ "exec --bogus -- /bin/true" "emurun exec" "unknown option '--bogus' (it stands before '--'"
case_ "sandbox --arch aarch64 --bogus -- true" "emurun sandbox" "unknown option '--bogus' (it stands before '--'"

case_ "doctor --jsno" "emurun doctor" "did you mean '--json'?"
case_ "doctor --no-prob" "emurun doctor" "did you mean '--no-probe'?"
case_ "doctor --frobnicate" "emurun doctor" "unknown option '--frobnicate'"
case_ "doctor extra" "emurun doctor" "unexpected argument: extra"
case_ "run --threshold 5x p.json" "emurun run" "--threshold: '5x' is not a number"
rc=0; "$EMURUN" run --baseline '' p.json >/dev/null 2>err.txt || rc=$?
expect_eq "run --baseline '': a usage error (not 'no baseline')" 2 "$rc"
expect_contains "...saying the value is empty" "$(cat err.txt)" "--baseline: an empty value"
rc=0; "$EMURUN" root create --arch aarch64 --mirror '' r >/dev/null 2>err.txt || rc=$?
expect_eq "root create --mirror '': a usage error, nothing downloaded" 2 "$rc"
case_ "doctor --mount" "emurun doctor" "--mount"

# `emurun help [COMMAND...]` is `emurun [COMMAND...] --help`.
out=$("$EMURUN" help) && expect_contains "emurun help: the commands" "$out" "Subcommands:"
out=$("$EMURUN" help report show) && expect_contains "emurun help report show: its options" "$out" "--baseline"
rc=0; "$EMURUN" help frob >/dev/null 2>err.txt || rc=$?
expect_eq "emurun help frob: a usage error" 2 "$rc"
expect_contains "...naming the word" "$(cat err.txt)" "unknown command 'frob'"
finish
