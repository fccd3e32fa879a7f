// doctor: pure rules from facts to OK / WARN / FAIL lines, and the text and JSON output.
#include "doctor/doctor_internal.hpp"

#include <nlohmann/json.hpp>

namespace emurun {
namespace fs = std::filesystem;

namespace {

using Checks = std::vector<DoctorCheck>;

constexpr const char* k_no_sandbox_fix =
    "emurun sandbox is unavailable here: use 'emurun exec -- PROG', 'emurun shim add', or "
    "'emurun binfmt register ARCH' as root";

void add(Checks& out, std::string id, CheckStatus s, std::string summary, std::string fix = {}) {
    out.push_back(DoctorCheck{std::move(id), s, std::move(summary), std::move(fix)});
}

void judge_kernel(const DoctorFacts& f, Checks& out) {
    const auto v = parse_kernel_version(f.kernel_release);
    if (!v) {
        add(out, "kernel", CheckStatus::warn,
            "cannot read the kernel version from '" + f.kernel_release + "'",
            "check 'uname -r'; emurun needs Linux >= 4.8 (F flag) and >= 6.7 for the sandbox");
    } else if (!v->at_least(4, 8)) {
        add(out, "kernel", CheckStatus::warn,
            "Linux " + f.kernel_release + ": no binfmt F flag (needs 4.8), no sandbox (needs 6.7)",
            "upgrade the kernel; until then register without F (flags P)");
    } else if (!v->at_least(6, 7)) {
        add(out, "kernel", CheckStatus::warn,
            "Linux " + f.kernel_release +
                ": F flag supported, binfmt_misc in user namespaces not (needs 6.7)",
            k_no_sandbox_fix);
    } else {
        add(out, "kernel", CheckStatus::ok,
            "Linux " + f.kernel_release + ": F flag and binfmt_misc in user namespaces supported");
    }
}

void judge_mount(const DoctorFacts& f, Checks& out) {
    const std::string m = f.mount.string();
    if (!f.mounted) {
        add(out, "binfmt.mount", CheckStatus::warn,
            "binfmt_misc is not mounted at " + m + ": no host-wide registration",
            "as root: mount -t binfmt_misc binfmt_misc " + m +
                " (or use 'emurun sandbox', which needs no host mount)");
    } else if (f.binfmt_enabled == false) {
        add(out, "binfmt.mount", CheckStatus::warn,
            "binfmt_misc at " + m + " is disabled as a whole: no entry is used",
            "as root: echo 1 > " + m + "/status");
    } else if (f.entries_error) {
        add(out, "binfmt.mount", CheckStatus::warn,
            "cannot read entries in " + m + ": " + *f.entries_error,
            "run as root, or check that " + m + " is a binfmt_misc mount");
    } else {
        add(out, "binfmt.mount", CheckStatus::ok,
            "binfmt_misc mounted at " + m + ", enabled, " + std::to_string(f.entries.size()) +
                " entries");
    }
}

void judge_userns(const DoctorFacts& f, Checks& out) {
    std::string problems;
    std::string fixes;
    auto note = [&](const std::string& p, const std::string& fx) {
        problems += (problems.empty() ? "" : "; ") + p;
        fixes += (fixes.empty() ? "" : "; ") + fx;
    };
    if (f.max_user_namespaces == 0L) {
        note("user.max_user_namespaces is 0", "sysctl -w user.max_user_namespaces=15000");
    }
    if (!f.is_root && f.unprivileged_userns_clone == 0L) {
        note("kernel.unprivileged_userns_clone is 0",
             "sysctl -w kernel.unprivileged_userns_clone=1");
    }
    if (!f.is_root && f.apparmor_restrict_userns == 1L) {
        note("AppArmor restricts unprivileged user namespaces",
             "sysctl -w kernel.apparmor_restrict_unprivileged_userns=0, or an AppArmor profile "
             "that allows userns for emurun");
    }
    if (problems.empty()) {
        const auto max = f.max_user_namespaces ? std::to_string(*f.max_user_namespaces) : "unknown";
        add(out, "userns.sysctl", CheckStatus::ok, "user namespaces allowed (max " + max + ")");
    } else {
        add(out, "userns.sysctl", CheckStatus::warn, problems, fixes);
    }
    if (!f.sandbox_probed) {
        return;
    }
    if (f.sandbox_probe_error) {
        add(out, "userns.probe", CheckStatus::warn,
            "sandbox probe failed: " + *f.sandbox_probe_error, k_no_sandbox_fix);
    } else {
        add(out, "userns.probe", CheckStatus::ok,
            "a user + mount namespace with its own binfmt_misc works: 'emurun sandbox' is "
            "available");
    }
}

void judge_emulators(const DoctorFacts& f, Checks& out) {
    for (const auto& e : f.emulators) {
        const std::string what = e.path.string() + " " + e.version.value_or("(version unknown)");
        if (e.is_static) {
            add(out, "emulator." + e.arch, CheckStatus::ok, what + ", static");
        } else {
            add(out, "emulator." + e.arch, CheckStatus::warn,
                what + ", dynamic: with flag F it breaks inside chroots and containers",
                "apt-get install qemu-user-static");
        }
    }
    if (f.emulators.empty()) {
        add(out, "emulators", CheckStatus::fail, "no QEMU user-mode emulator found",
            "apt-get install qemu-user-static (or set EMURUN_QEMU_DIR)");
    } else if (!f.arches_without_emulator.empty()) {
        std::string names;
        for (const auto& n : f.arches_without_emulator) {
            names += (names.empty() ? "" : ", ") + n;
        }
        add(out, "emulators.missing", CheckStatus::warn, "no emulator for " + names,
            "apt-get install qemu-user-static (or set EMURUN_QEMU_DIR)");
    }
}

void judge_systemd(const DoctorFacts& f, Checks& out) {
    if (f.systemd_binfmt.empty()) {
        add(out, "systemd-binfmt", CheckStatus::ok,
            "systemd-binfmt not present: nothing flushes entries");
        return;
    }
    std::string text;
    for (const auto& w : f.systemd_binfmt) {
        text += (text.empty() ? "" : "; ") + w;
    }
    add(out, "systemd-binfmt", CheckStatus::warn, text,
        "persist entries with 'emurun binfmt export' into /etc/binfmt.d, so a restart restores "
        "them");
}

} // namespace

std::string_view to_string(CheckStatus status) {
    switch (status) {
    case CheckStatus::ok:
        return "OK";
    case CheckStatus::warn:
        return "WARN";
    case CheckStatus::fail:
        return "FAIL";
    }
    return "?";
}

std::vector<DoctorCheck> judge_doctor_facts(const DoctorFacts& facts) {
    Checks out;
    judge_kernel(facts, out);
    judge_mount(facts, out);
    detail::judge_binfmt_entries(facts, out);
    judge_userns(facts, out);
    detail::judge_auto_fallback(facts, out);
    judge_emulators(facts, out);
    judge_systemd(facts, out);
    return out;
}

std::string DoctorCheck::fix_text(FieldSpelling spell) const {
    return hint_text(fix, field, spell);
}

} // namespace emurun
