#!/bin/bash
# ctest-tier: quick
# `emurun sandbox`: a private binfmt_misc in a user namespace where binaries of several arches
# run transparently for every process the command starts; nothing changes on the host.
. "$(dirname "$0")/lib/common.sh"
F=$EMURUN_FIXTURE_DIR
BM=/proc/sys/fs/binfmt_misc

# The error on a kernel without a sandbox: the kernel refuses the user namespace (no_sandbox).
rc=0
err=$(no_sandbox "$EMURUN" sandbox --arch aarch64 -- true 2>&1) || rc=$?
expect_eq "unsupported: exit 125" 125 "$rc"
expect_contains "unsupported: names the requirement" "$err" "Linux >= 6.7"
expect_contains "unsupported: names the alternatives" "$err" "emurun exec"
expect_contains "unsupported: names host registration" "$err" "emurun binfmt register"

# An unknown arch is bad input (125) for sandbox as for exec, named with the known ones.
for args in "sandbox --arch bogus" "sandbox --arch aarch64 --sysroot bogus=/x" "exec --arch bogus"; do
    rc=0
    # shellcheck disable=SC2086 # the words of $args
    err=$("$EMURUN" $args -- true 2>&1) || rc=$?
    expect_eq "$args: exit 125" 125 "$rc"
    expect_contains "$args: names it" "$err" "architecture 'bogus': not known to emurun (known: "
done

if ! unshare --user --map-root-user --mount sh -c "mount -t binfmt_misc binfmt_misc $BM" 2>/dev/null; then
    skip "this kernel cannot mount binfmt_misc in a user namespace (needs Linux >= 6.7)"
fi
for a in aarch64 ppc64le s390x; do need_fixture_arch "$a"; done
for a in aarch64 ppc64le s390x; do
    command -v "qemu-$a-static" >/dev/null || command -v "qemu-$a" >/dev/null ||
        skip "no qemu-$a emulator (apt-get install qemu-user-static)"
done
host_state() { ls -a "$BM" 2>&1; cat "$BM/status" 2>&1 || true; }
before=$(host_state)

# Three arches, dynamic (cross sysroots in /usr/<triplet>) and static, from one shell.
out=$("$EMURUN" sandbox --arch aarch64,ppc64le,s390x -- sh -c \
    '"$1/aarch64/probe" uname; "$1/ppc64le/probe" uname; "$1/s390x/probe" uname
     "$1/aarch64/probe-static" uname; "$1/ppc64le/probe-static" uname; "$1/s390x/probe-static" endian' \
    sh "$F")
expect_eq "three arches, dynamic and static" "aarch64
ppc64le
s390x
aarch64
ppc64le
big 01020304" "$out"

# A pipe between binaries of two arches (one big-endian).
out=$(seq 1 3000 | "$EMURUN" sandbox --arch aarch64,s390x -- sh -c '"$1/aarch64/probe" cat | "$1/s390x/probe" cat' sh "$F")
expect_eq "pipe aarch64 -> s390x" "$(seq 1 3000)" "$out"

# The command itself may be foreign; its exit code and death by signal are emurun's.
for code in 0 3 42; do
    rc=0; "$EMURUN" sandbox --arch aarch64 -- "$F/aarch64/probe" exit "$code" || rc=$?
    expect_eq "exit $code passes through" "$code" "$rc"
done
rc=0; "$EMURUN" sandbox --arch ppc64le -- "$F/ppc64le/probe" signal ABRT 2>/dev/null || rc=$?
expect_eq "death by SIGABRT is 134" 134 "$rc"
rc=0; "$EMURUN" sandbox --arch aarch64 -- no-such-command-emurun 2>/dev/null || rc=$?
expect_eq "command not found is 127" 127 "$rc"
rc=0; err=$("$EMURUN" sandbox --arch aarch64 no-such-command-emurun -- true 2>&1) || rc=$?
expect_eq "--arch takes one value: the next word is the command" 127 "$rc"
expect_contains "and it is named" "$err" "no-such-command-emurun"
echo 'echo hi' >"$T/plain" && chmod -x "$T/plain"
rc=0; "$EMURUN" sandbox --arch aarch64 -- "$T/plain" 2>/dev/null || rc=$?
expect_eq "a file that is not executable is 126" 126 "$rc"
# emurun's one PATH rule has no execvp-style retry under /bin/sh for a script without "#!".
chmod +x "$T/plain"
rc=0; "$EMURUN" sandbox --arch aarch64 -- "$T/plain" 2>/dev/null || rc=$?
expect_eq "a script without #! is not run by /bin/sh: 126" 126 "$rc"

# Flag P: argv[0] as the caller set it, not the path qemu was given.
out=$("$EMURUN" sandbox --arch aarch64 -- bash -c 'exec -a my-name "$1" argv x' bash "$F/aarch64/probe")
expect_eq "argv[0] preserved (flag P)" "[0]=<my-name>
[1]=<argv>
[2]=<x>" "$out"
out=$("$EMURUN" sandbox --arch aarch64 -- cat "$BM/qemu-aarch64")
expect_contains "entry has flags PF inside" "$out" "flags: PF"

# make -> sh script -> foreign binary; --env reaches it.
cat >"$T/run.sh" <<EOF
#!/bin/sh
"$F/s390x/probe" env EMURUN_T_VAR
"$F/riscv64/probe-static" uname 2>/dev/null || echo "no riscv64 handler"
EOF
chmod +x "$T/run.sh"
printf 'all:\n\t./run.sh\n' >"$T/Makefile"
out=$(cd "$T" && "$EMURUN" sandbox --arch s390x --env EMURUN_T_VAR=from-env -- make -s)
expect_eq "make -> sh -> s390x; only requested arches" "from-env
no riscv64 handler" "$out"

# An unprivileged user: everything it runs must be readable to it, so copy to a 755 dir.
if command -v setpriv >/dev/null; then
    U=$(mktemp -d /tmp/emurun-sandbox-it.XXXXXX)
    cleanup+=("$U")
    chmod 755 "$U"
    cp "$EMURUN" "$U/emurun" && cp "$(dirname "$EMURUN")/emurun-cli" "$U/emurun-cli"
    for a in aarch64 ppc64le s390x; do mkdir -p "$U/$a" && cp "$F/$a/probe" "$F/$a/probe-static" "$U/$a/"; done
    # nobody's own home (a 777 one would hold a cache dir others can change: refused, issue 27)
    mkdir -m 755 "$U/home" && chown 65534:65534 "$U/home"
    out=$(cd "$U" && HOME="$U/home" XDG_CACHE_HOME= setpriv --reuid=65534 --regid=65534 --clear-groups \
        "$U/emurun" sandbox --arch aarch64,ppc64le,s390x -- sh -c \
        'id -u; "$1/aarch64/probe" uname; "$1/ppc64le/probe" uname; "$1/s390x/probe-static" uname' sh "$U" 2>&1)
    expect_eq "unprivileged user: three arches" "0
aarch64
ppc64le
s390x" "$out"
fi

expect_eq "host binfmt_misc unchanged" "$before" "$(host_state)"
finish
