#!/bin/bash
# ctest-tier: packaging
# The core's ABI matches the baseline stored in abi/libemurun.abi: tools/abi-baseline --check
# builds a shared libemurun with debug info (in BUILD/abi, incrementally) and compares the
# exports of the core modules with abidiff. A change that breaks programs linked against the
# baseline's libemurun.so.N fails, saying how to keep compatibility or how to update the
# baseline with the SOVERSION (CONTRIBUTING.md, "The library's ABI").
# The same build is then checked against planted baselines: one in which emurun::Command is 64
# bits smaller (as if a field had been added since) must fail and name the change; one without
# Supervisor::stop_all (as if the function were new) passes with a note to refresh it. A field
# added at the end of a versioned struct (emurun::SysrootRequest) passes; one added before its
# others fails.
. "$(dirname "$0")/lib/common.sh"
for tool in abidw abidiff; do
    command -v "$tool" >/dev/null || skip "$tool not installed (Debian's abigail-tools: tools/install-deps --full)"
done
command -v cmake >/dev/null || skip "cmake not installed"
baseline=$EMURUN_SOURCE_DIR/abi/libemurun.abi

# check LABEL EXPECTED_STATUS [--baseline FILE]: tools/abi-baseline --check exits with
# EXPECTED_STATUS; its output is in $out. False (after not_ok) when the status differs.
check() {
    local label=$1 expected=$2 rc=0
    shift 2
    "$EMURUN_SOURCE_DIR/tools/abi-baseline" --check "$@" "$EMURUN_BUILD_DIR/abi" >"$T/check.log" 2>&1 || rc=$?
    out=$(cat "$T/check.log")
    [ "$rc" = "$expected" ] && { ok "$label"; return 0; }
    echo "$out"
    not_ok "$label: tools/abi-baseline exited $rc, expected $expected"
    return 1
}

# plant NAME PERL_PROGRAM: the baseline rewritten by perl -0pe PROGRAM into $T/NAME.abi, which
# must differ from it.
plant() {
    perl -0pe "$2" "$baseline" >"$T/$1.abi"
    cmp -s "$T/$1.abi" "$baseline" && { not_ok "could not plant '$1' in the baseline"; return 1; }
    return 0
}

if check "the core's ABI matches abi/libemurun.abi" 0; then
    echo "$out"
else
    # 1: an incompatible change (abidiff's report and what to do are above); 2: no check ran.
    finish
fi

if plant grown "s/(<class-decl name='Command' size-in-bits=')(\d+)/\$1 . (\$2 - 64)/e" &&
    check "a grown emurun::Command fails the check" 1 --baseline "$T/grown.abi"; then
    expect_contains "abidiff names the struct" "$out" "struct emurun::Command"
    expect_contains "and its size change" "$out" "type size changed"
    expect_contains "the failure says how to update the baseline" "$out" \
        "raise the SOVERSION (EMURUN_SOVERSION in lib/CMakeLists.txt) and run tools/abi-baseline"
fi

# in_struct NAME PERL: a perl -0pe program that runs PERL on the class-decl of emurun::NAME
# alone ($c holds it; helpers: members() lists its data members as [offset, text]).
in_struct() {
    printf '%s' "s{(<class-decl name='$1' .*?</class-decl>)}{my \$c = \$1; $2; \$c}se"
}
# SysrootRequest, a versioned struct, as it was before its last field was added at its end
# (the baseline's copy loses the field and shrinks to where it began) ...
drop_last='$c =~ s{\n\s*<data-member[^\n]*layout-offset-in-bits=.(\d+).>\s*<var-decl[^\n]*\s*</data-member>(\s*</class-decl>)$}{$2}s
    or die; my $at = $1; $c =~ s/size-in-bits=.\d+./size-in-bits='"'"'$at'"'"'/'
# ... and as it was before `mirror` was added among the others (later offsets move back).
drop_mirror='$c =~ s{\n\s*<data-member[^\n]*layout-offset-in-bits=.(\d+).>\s*<var-decl name=.mirror.[^\n]*\s*</data-member>}{}s
    or die; my $at = $1; $c =~ s/size-in-bits=.(\d+)./"size-in-bits='"'"'" . ($1 - 256) . "'"'"'"/e;
    $c =~ s/layout-offset-in-bits=.(\d+)./"layout-offset-in-bits='"'"'" . ($1 > $at ? $1 - 256 : $1) . "'"'"'"/ge'
if plant appended "$(in_struct SysrootRequest "$drop_last")" &&
    check "a field added at the end of a versioned struct passes" 0 --baseline "$T/appended.abi"; then
    expect_lacks "abidiff is silent about it" "$out" "SysrootRequest"
fi
if plant inserted "$(in_struct SysrootRequest "$drop_mirror")" &&
    check "a field added before others in a versioned struct fails" 1 --baseline "$T/inserted.abi"; then
    expect_contains "abidiff names the insertion" "$out" "'std::string mirror', at offset"
fi

if plant older "s{\n *<elf-symbol name='_ZN6emurun10Supervisor8stop_allEv'[^\n]*}{};
        s{\s*<member-function access='public'>\s*<function-decl name='stop_all'.*?</member-function>}{}s" &&
    check "a function the baseline lacks passes" 0 --baseline "$T/older.abi"; then
    expect_contains "abidiff names it" "$out" "emurun::Supervisor::stop_all()"
    expect_contains "with a note to refresh the baseline" "$out" "the core gained exports the baseline lacks"
fi
finish
