# bash completion for emurun (installed as share/bash-completion/completions/emurun).
# tests/integration/test_man_completion.sh checks these lists against 'emurun --help'.

_emurun_words() { # the words for "CMD [SUB]"
    case "$1" in
        "") echo "inspect exec binfmt sandbox shim sysroot run report calibrate root qemu doctor" ;;
        binfmt) echo "status register unregister enable disable verify export import" ;;
        shim) echo "add list remove" ;;
        sysroot) echo "check fetch source build-dep" ;;
        report) echo "show compare merge" ;;
        root) echo "create import export install run" ;;
        qemu) echo "list fetch" ;;
        inspect) echo "--sysroot --json" ;;
        exec) echo "--arch --sysroot --cpu --env --argv0 --qemu-dir" ;;
        sandbox) echo "--arch --sysroot --env --qemu-dir --cpu" ;;
        run) echo "--jobs --shard --matrix --baseline --previous --history --no-history --threshold --factor-basis --job-limit
                  --job-limit-share --timeout-multiplier --calibration --grace --heartbeat --report --junit
                  --markdown --log-dir --fail-on-flag --quiet --pack --unpack --build-once --arch --native" ;;
        calibrate) echo "--arch --output --native-program --emulated-program --json" ;;
        doctor) echo "--json --mount --no-probe" ;;
        "binfmt status") echo "--mount --lock-file --json" ;;
        "binfmt register") echo "--mount --lock-file --dry-run --replace --flags --interpreter
                                 --allow-credentials --allow-open-binary --json" ;;
        "binfmt unregister" | "binfmt import") echo "--mount --lock-file --dry-run --replace
                                 --flags --allow-credentials --allow-open-binary --json" ;;
        "binfmt enable" | "binfmt disable") echo "--mount --lock-file" ;;
        "binfmt verify") echo "--probe-dir --json" ;;
        "binfmt export") echo "--mount --lock-file --binfmt-d --update-binfmts" ;;
        "shim add") echo "--target --arch --sysroot --env --cpu --launcher --dir" ;;
        "shim list") echo "--dir --json" ;;
        "shim remove") echo "--dir" ;;
        "sysroot check") echo "--sysroot" ;;
        "sysroot fetch") echo "--arch --dir --mirror --suite --cache --refresh" ;;
        "sysroot source") echo "--dir --mirror --suite --cache --refresh" ;;
        "sysroot build-dep") echo "--arch --dir --mirror --suite --cache --refresh --profiles" ;;
        "root create") echo "--arch --suite --include --mirror --pin-toolchain --json" ;;
        "root import") echo "--arch --platform --no-cache --json" ;;
        "root export") echo "--format --tag --json" ;;
        "root install") echo "--arch --env" ;;
        "root run") echo "--arch --env --bind --ro-bind --cwd --accelerate --allow-revision-mismatch" ;;
        "report show") echo "--format --json --factor-basis --baseline --threshold --log-dir" ;;
        "report compare") echo "--json --baseline --threshold" ;;
        "report merge") echo "--output --junit --log-dir" ;;
        "qemu list") echo "--json" ;;
        "qemu fetch") echo "--suite --mirror --refresh --json" ;;
    esac
}

# The arch names of binfmt/arches.json, in its order (test_man_completion.sh checks them).
_emurun_arches() {
    echo "x86_64 i386 aarch64 arm ppc64le s390x riscv64 armeb aarch64_be ppc ppc64
    riscv32 mips mipsel mipsn32 mipsn32el mips64 mips64el loongarch64 sparc
    sparc32plus sparc64 m68k alpha sh4 sh4eb hppa microblaze microblazeel xtensa
    xtensaeb or1k hexagon"
}

_emurun() {
    local cur prev cmd="" sub="" i w
    COMPREPLY=()
    cur=${COMP_WORDS[COMP_CWORD]}
    prev=${COMP_WORDS[COMP_CWORD - 1]}
    for ((i = 1; i < COMP_CWORD; i++)); do
        w=${COMP_WORDS[i]}
        [ "$w" = "--" ] && return 0 # the program's own arguments: nothing to offer
        case "$w" in -*) continue ;; esac
        [ "${COMP_WORDS[i - 1]}" = "--color" ] && continue
        if [ -z "$cmd" ]; then cmd=$w
        elif [ -z "$sub" ] && [ -n "$(_emurun_words "$cmd")" ] &&
            [[ " $(_emurun_words "$cmd") " == *" $w "* ]]; then sub=$w
        fi
    done
    case "$prev" in
        --color) mapfile -t COMPREPLY < <(compgen -W "auto always never" -- "$cur"); return 0 ;;
        --format) mapfile -t COMPREPLY < <(compgen -W "table json junit markdown" -- "$cur"); return 0 ;;
        --suite) mapfile -t COMPREPLY < <(compgen -W "bullseye bookworm bookworm-backports trixie sid" -- "$cur"); return 0 ;;
        --arch) mapfile -t COMPREPLY < <(compgen -W "$(_emurun_arches)" -- "$cur"); return 0 ;;
        --sysroot | --dir | --qemu-dir | --log-dir | --mount | --probe-dir | --binfmt-d | \
            --update-binfmts | --cache | --bind | --ro-bind)
            mapfile -t COMPREPLY < <(compgen -d -- "$cur"); return 0 ;;
    esac
    local words
    if [ -z "$cmd" ]; then
        words=$(_emurun_words "")
        [[ $cur == -* ]] && words="--verbose --quiet --color --version --help"
    elif [ -z "$sub" ] && [[ $cur != -* ]] && [ -n "$(_emurun_words "$cmd")" ] &&
        [[ $(_emurun_words "$cmd") != -* ]]; then
        words=$(_emurun_words "$cmd")
    else
        words="$(_emurun_words "${cmd}${sub:+ $sub}") --help"
        [[ $cur == -* ]] || { mapfile -t COMPREPLY < <(compgen -f -- "$cur"); return 0; }
    fi
    mapfile -t COMPREPLY < <(compgen -W "$words" -- "$cur")
}
complete -o filenames -F _emurun emurun
