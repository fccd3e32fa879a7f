#!/bin/bash
# ctest-tier: quick
# The man page and the shell completions follow the CLI: every subcommand (and sub-subcommand)
# that 'emurun --help' lists has a section in emurun(1) (generated from docs/reference/emurun.adoc) and is completed by bash; every option in
# a subcommand's --help is completed; bash's compgen really offers them; man renders the pages
# without warnings; zsh loads its completion. Parts: bash, man (needs man), zsh (needs zsh); a
# part whose tool is missing is reported as skipped.
# The page says what the code does (part facts): its EXIT STATUS has every code emurun-sysroot
# exits with (emurun passes them on) and 130/143/129 with root create among their commands,
# inspect's "shared library", and root run's mismatch warnings printed by default.
# ctest-parts: bash man zsh facts value_names
. "$(dirname "$0")/lib/common.sh"

src=$EMURUN_SOURCE_DIR
man=$EMURUN_BUILD_DIR/man/emurun.1
bashcomp=$src/tools/completions/emurun.bash
[ -f "$man" ] || skip "man page not generated in the build tree ($man)"
# The page's text with roff's escaped hyphens as hyphens (asciidoctor writes \- for every -).
mantext=$T/emurun.1.txt
sed 's/\\-/-/g' "$man" >"$mantext"

# subcommands_of ARGS...: the names under "Subcommands:" in 'emurun ARGS --help'.
subcommands_of() {
    "$EMURUN" "$@" --help | sed -n '/^Subcommands:/,/^$/p' | sed -n 's/^  \([a-z][a-z-]*\).*/\1/p'
}
# options_of ARGS...: the long options of 'emurun ARGS --help'.
options_of() {
    "$EMURUN" "$@" --help | sed -n '/^Options:/,/^$/p' |
        grep -oE '^ +(-[a-zA-Z],)?--[a-z][a-z0-9-]*' | grep -oE -- '--[a-z0-9-]+' |
        grep -v -- '^--help$'
}
. "$bashcomp"

top=$(subcommands_of)

part_bash() {
    [ "$(echo "$top" | wc -w)" -ge 10 ] || not_ok "emurun --help lists too few subcommands: $top"
    for cmd in $top; do
        grep -q "^\.SS \"$cmd\b" "$mantext" && ok "emurun(1) has $cmd" || not_ok "emurun(1) has no .SS section for $cmd"
        expect_contains "bash completes $cmd" " $(_emurun_words "") " " $cmd "
        subs=$(subcommands_of "$cmd")
        for sub in $subs; do
            grep -q "$cmd $sub\|$cmd [a-z|-]*$sub" "$mantext" && ok "emurun(1) mentions $cmd $sub" ||
                not_ok "emurun(1) does not mention $cmd $sub"
            expect_contains "bash completes $cmd $sub" " $(_emurun_words "$cmd") " " $sub "
            for opt in $(options_of "$cmd" "$sub"); do
                expect_contains "bash completes $cmd $sub $opt" " $(echo $(_emurun_words "$cmd $sub")) " " $opt "
            done
        done
        if [ -z "$subs" ]; then
            for opt in $(options_of "$cmd"); do
                expect_contains "bash completes $cmd $opt" " $(echo $(_emurun_words "$cmd")) " " $opt "
            done
        fi
    done

    # What a user sees pressing TAB: compgen through the completion function.
    complete_line() { # WORDS... (the last one is being completed)
        COMP_WORDS=("$@")
        COMP_CWORD=$(($# - 1))
        _emurun
        echo "${COMPREPLY[*]}"
}
expect_eq "TAB after 'emurun'" "$(echo $top)" "$(complete_line emurun "")"
expect_eq "TAB on 'emurun sa'" "sandbox" "$(complete_line emurun sa)"
expect_eq "TAB on 'emurun binfmt reg'" "register" "$(complete_line emurun binfmt reg)"
expect_eq "TAB on 'emurun run --sh'" "--shard" "$(complete_line emurun run --sh)"
expect_eq "TAB on 'emurun --color='" "always" "$(complete_line emurun --color al)"
expect_eq "TAB on 'emurun -v report compare --j'" "--json" "$(complete_line emurun -v report compare --j)"
expect_eq "nothing after --" "" "$(complete_line emurun exec -- ls --a)"
expect_eq "TAB on 'emurun sandbox --arch aa'" "aarch64 aarch64_be" "$(complete_line emurun sandbox --arch aa)"
local names
names=$(python3 -c 'import json, sys; print(" ".join(a["name"] for a in json.load(open(sys.argv[1]))["arches"]))' \
    "$src/binfmt/arches.json" 2>/dev/null) || names="(python3 could not read binfmt/arches.json)"
expect_eq "bash completes --arch with every arch of binfmt/arches.json" "$names" "$(echo $(_emurun_arches))"
}

# man renders both pages without warnings (lintian runs the same check).
part_man() {
    command -v man >/dev/null || { skip_part "man not installed (man-db; tools/install-deps installs it)"; return; }
    for page in "$man" "$EMURUN_BUILD_DIR/man/emurun-sysroot.1"; do
        warnings=$(LC_ALL=C.UTF-8 MANROFFSEQ='' MANWIDTH=80 man --warnings -E UTF-8 -l -Tutf8 -Z "$page" 2>&1 >/dev/null)
        expect_eq "man renders $(basename "$page") cleanly" "" "$warnings"
    done
}

part_zsh() {
    command -v zsh >/dev/null || { skip_part "zsh not installed (tools/install-deps installs it)"; return; }
    zsh -n "$src/tools/completions/_emurun" && ok "zsh: _emurun parses" || not_ok "zsh: _emurun has syntax errors"
    loaded=$(zsh -fc "fpath=($src/tools/completions \$fpath); autoload -Uz compinit; compinit -u -d $T/zcompdump; print -r -- \${_comps[emurun]}")
    expect_eq "zsh: compinit maps emurun to _emurun" "_emurun" "$loaded"
    for cmd in $top; do
        grep -q "'$cmd:" "$src/tools/completions/_emurun" && ok "zsh completes $cmd" || not_ok "zsh does not list $cmd"
    done
}

part_facts() {
    local status code codes
    # Each code emurun-sysroot exits with (its "Exit codes:" comment; emurun passes them on, its
    # usage error 2 aside) and 128 + SIGINT/SIGTERM/SIGHUP of an interrupted run or create.
    codes=$(sed -n '/^# Exit codes:/,/^[^#]/p' "$src/tools/emurun-sysroot" | grep -oE '(^|[ ,]) ?[0-9]+ ' |
        grep -oE '[0-9]+' | grep -vx 2 | sort -un)
    [ -n "$codes" ] || { not_ok "no 'Exit codes:' comment in tools/emurun-sysroot"; return; }
    status=$(sed -n '/^\.SH "EXIT STATUS"/,/^\.SH /p' "$mantext")
    for code in $codes 130 143 129; do
        grep -qE "^\\\\fB([0-9]+\\\\fP, \\\\fB)*$code\\\\fP" <<<"$status" && ok "emurun(1) EXIT STATUS has $code" ||
            not_ok "emurun(1) EXIT STATUS lacks $code"
    done
    expect_contains "emurun(1): sysroot's 5 said" "$(sed -n '/^\\fB5\\fP/,/^\.RE/p' <<<"$status")" "sysroot"
    expect_contains "emurun(1): an interrupted root create's 130" \
        "$(sed -n '/^\\fB130\\fP/,/^\.RE/p' <<<"$status" | tr '\n' ' ')" "root create"
    expect_contains "emurun(1): inspect's shared library" "$(sed -n '/^\.SS "inspect/,/^\.SS /p' "$mantext")" \
        "shared library"
    case $(sed -n '/^\.SS "root/,/^\.SS /p' "$mantext" | tr '\n' ' ') in
    *"are printed with"*) not_ok "emurun(1) says root run's notes need -v (its warnings are printed by default)" ;;
    *) ok "emurun(1): root run's warnings by default" ;;
    esac
}

# Every value in every --help is named for what it is (--env K=V, --sysroot DIR), never CLI11's
# TEXT (cli_names.cpp).
part_value_names() {
    local cmd sub where
    for where in "" $top; do
        for sub in "" $( [ -n "$where" ] && subcommands_of $where); do
            case $("$EMURUN" $where $sub --help) in
                *" TEXT"*) not_ok "emurun $where $sub --help names a value TEXT: $("$EMURUN" $where $sub --help | grep -m1 ' TEXT')" ;;
                *) ok "emurun $where $sub --help names its values" ;;
            esac
        done
    done
}

run_parts bash man zsh facts value_names
finish
