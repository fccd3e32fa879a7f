#!/bin/bash
# Action step 3: unprivileged user namespaces ('emurun sandbox' needs them). Ubuntu 24.04 runners
# set kernel.apparmor_restrict_unprivileged_userns=1, which blocks them for programs without an
# AppArmor profile. With EMURUN_RELAX_APPARMOR=true (input 'relax-apparmor') this sets it to 0
# for the rest of the job; without, it says in one line that the sandbox will not work and what
# to set. EMURUN_SYSCTL_DIR (default /proc/sys) lets the test point it at a fake tree.
. "$(dirname "$0")/common.sh"

dir=${EMURUN_SYSCTL_DIR:-/proc/sys}
knob=$dir/kernel/apparmor_restrict_unprivileged_userns
if [ ! -e "$knob" ]; then
    echo "emurun: $knob does not exist: no AppArmor user-namespace restriction to relax"
    exit 0
fi
value=$(cat "$knob")
if [ "$value" = "0" ]; then
    echo "emurun: kernel.apparmor_restrict_unprivileged_userns is already 0"
    exit 0
fi
if [ "${EMURUN_RELAX_APPARMOR:-false}" != "true" ]; then
    echo "::warning title=emurun::user namespaces are restricted here (kernel.apparmor_restrict_unprivileged_userns=$value), so 'emurun sandbox' and sandbox steps will fail: set 'relax-apparmor: true' in the action's inputs"
    exit 0
fi
echo "0" | as_root tee "$knob" >/dev/null
echo "::notice title=emurun::set kernel.apparmor_restrict_unprivileged_userns=0 (was $value) so that 'emurun sandbox' can create user namespaces"
