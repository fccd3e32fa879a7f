// doctor: registered binfmt entries against emurun's table, and the JSON form of a report.
#include "doctor/doctor_internal.hpp"

#include <nlohmann/json.hpp>

#include <unistd.h>

namespace emurun {
namespace fs = std::filesystem;

namespace {

/// The arch an entry serves: by the table's magic, else by emurun's name "qemu-<cpu>".
const Arch* entry_arch(const BinfmtEntry& e) {
    if (const Arch* a = binfmt_entry_arch(e)) {
        return a;
    }
    if (auto p = binfmt_entry_provider(e)) {
        return p->arch;
    }
    for (const auto& a : all_arches()) {
        if (e.name == "qemu-" + a.qemu) {
            return &a;
        }
    }
    return nullptr;
}

/// Which fields differ from what emurun registers for `arch` (empty: none).
std::string differences_from_ours(const BinfmtEntry& e, const BinfmtEntry& want) {
    std::string d;
    auto note = [&](const std::string& s) { d += (d.empty() ? "" : ", ") + s; };
    if (e.name != want.name) {
        note("name " + e.name + " (emurun: " + want.name + ")");
    }
    if (e.type != want.type || e.offset != want.offset || e.magic != want.magic ||
        e.mask != want.mask) {
        note("magic/mask differ from emurun's table");
    }
    if (!want.interpreter.empty() && e.interpreter != want.interpreter) {
        note("interpreter " + e.interpreter + " (emurun: " + want.interpreter + ")");
    }
    if (!(e.flags == want.flags)) {
        note("flags " + e.flags.to_string() + " (emurun: " + want.flags.to_string() + ")");
    }
    return d;
}

// The entry `emurun binfmt register ARCH` would write: the found emulator, P, and F when that
// emulator is static (default_binfmt_flags(), decided here from the facts).
BinfmtEntry wanted_entry(const DoctorFacts& f, const Arch& arch) {
    BinfmtFlags flags;
    flags.preserve_argv0 = true;
    for (const auto& e : f.emulators) {
        if (e.arch == arch.name) {
            flags.fix_binary = e.is_static;
            return binfmt_entry_for(arch, e.path, flags);
        }
    }
    return binfmt_entry_for(arch, "", flags);
}

// An interpreter that is the qemu of another CPU cannot run this arch's programs.
std::optional<std::string> wrong_qemu(const BinfmtEntry& e, const Arch& arch) {
    const std::string cpu = binfmt_interpreter_qemu_cpu(e);
    if (cpu.empty() || cpu == arch.qemu) {
        return std::nullopt;
    }
    return ": the interpreter is qemu for " + cpu + ", not for " + arch.qemu + ": " + arch.name +
           " programs fail under it";
}

DoctorCheck judge_entry(const DoctorFacts& f, const BinfmtEntry& e, const Arch& arch) {
    const BinfmtEntry want = wanted_entry(f, arch);
    const std::string id = "binfmt.entry." + e.name;
    const std::string head = e.name + " (" + arch.name + ", " + e.interpreter + ", flags " +
                             (e.flags.to_string().empty() ? "none" : e.flags.to_string()) + ")";
    const std::string replace =
        "put emurun's entry in its place: 'emurun binfmt register " + arch.name + "'";
    if (auto why = wrong_qemu(e, arch)) {
        return {id, CheckStatus::fail, head + *why, replace, "replace"};
    }
    const auto provider = binfmt_entry_provider(e);
    const std::string owner = provider ? ": provided by " + provider->owner : "";
    if (provider && !e.flags.credentials && !e.flags.open_binary &&
        ::access(e.interpreter.c_str(), X_OK) != 0) {
        // A tool run in a container (tonistiigi/binfmt) registers its own path with F.
        return {id, CheckStatus::ok, head + owner + ": emulator pinned by F, not on this disk", ""};
    }
    if (::access(e.interpreter.c_str(), X_OK) != 0) {
        // With F the kernel holds the file open, so the entry still works until re-registered.
        return e.flags.fix_binary
                   ? DoctorCheck{id, CheckStatus::warn,
                                 head + ": interpreter no longer on disk (pinned by F)", replace,
                                 "replace"}
                   : DoctorCheck{id, CheckStatus::fail,
                                 head + ": interpreter missing, " + arch.name +
                                     " programs fail to start",
                                 replace, "replace"};
    }
    if (!e.enabled) {
        return {id, CheckStatus::warn, head + ": disabled", "emurun binfmt enable " + e.name};
    }
    if (e.flags.credentials || e.flags.open_binary) {
        std::string why;
        if (e.flags.credentials) {
            why += ": flag C: setuid foreign binaries run with raised privileges";
        }
        if (e.flags.open_binary) {
            why += std::string(why.empty() ? ":" : ";") +
                   " flag O: the emulator is handed binaries users cannot read";
        }
        return {id, CheckStatus::warn, head + owner + why, replace, "replace"};
    }
    const std::string d = differences_from_ours(e, want);
    if (d.empty()) {
        return {id, CheckStatus::ok, head + ": as emurun registers it", ""};
    }
    if (provider && provider->arch == &arch) {
        return {id, CheckStatus::ok, head + owner + " (emurun uses it as it is)", ""};
    }
    return {id, CheckStatus::warn, head + ": differs from emurun's entry: " + d,
            "leave it if it works ('emurun binfmt verify'), or " + replace, "replace"};
}

nlohmann::json opt(const auto& v) {
    return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

nlohmann::json facts_json(const DoctorFacts& f) {
    const auto kv = parse_kernel_version(f.kernel_release);
    nlohmann::json j;
    j["kernel"] = {{"release", f.kernel_release},
                   {"f_flag", kv && kv->at_least(4, 8)},
                   {"userns_binfmt", kv && kv->at_least(6, 7)}};
    j["binfmt"] = {
        {"mount", f.mount.string()}, {"mounted", f.mounted}, {"enabled", opt(f.binfmt_enabled)}};
    j["binfmt"]["entries"] = nlohmann::json::array();
    for (const auto& e : f.entries) {
        const Arch* a = entry_arch(e);
        j["binfmt"]["entries"].push_back(
            {{"name", e.name},
             {"enabled", e.enabled},
             {"interpreter", e.interpreter},
             {"flags", e.flags.to_string()},
             {"arch", a ? nlohmann::json(a->name) : nlohmann::json(nullptr)}});
    }
    j["userns"] = {{"max_user_namespaces", opt(f.max_user_namespaces)},
                   {"unprivileged_userns_clone", opt(f.unprivileged_userns_clone)},
                   {"apparmor_restrict_unprivileged_userns", opt(f.apparmor_restrict_userns)},
                   {"sandbox_probe", f.sandbox_probed ? nlohmann::json(!f.sandbox_probe_error)
                                                      : nlohmann::json(nullptr)},
                   {"sandbox_probe_error", opt(f.sandbox_probe_error)}};
    j["emulators"] = nlohmann::json::array();
    for (const auto& e : f.emulators) {
        j["emulators"].push_back({{"arch", e.arch},
                                  {"path", e.path.string()},
                                  {"version", opt(e.version)},
                                  {"static", e.is_static}});
    }
    j["arches_without_emulator"] = f.arches_without_emulator;
    j["systemd_binfmt"] = {{"present", !f.systemd_binfmt.empty()}, {"warnings", f.systemd_binfmt}};
    return j;
}

} // namespace

namespace detail {

void judge_binfmt_entries(const DoctorFacts& f, std::vector<DoctorCheck>& out) {
    std::string others;
    for (const auto& e : f.entries) {
        if (const Arch* a = entry_arch(e)) {
            out.push_back(judge_entry(f, e, *a));
        } else {
            others += (others.empty() ? "" : ", ") + e.name;
        }
    }
    if (!others.empty()) {
        out.push_back(
            {"binfmt.others", CheckStatus::ok, "not emurun's, left alone: " + others, ""});
    }
}

void judge_auto_fallback(const DoctorFacts& f, std::vector<DoctorCheck>& out) {
    const auto v = parse_kernel_version(f.kernel_release);
    const bool old_kernel = v && !v->at_least(6, 7);
    if (!old_kernel && !(f.sandbox_probed && f.sandbox_probe_error)) {
        return;
    }
    std::string served;
    for (const auto& e : f.entries) {
        const auto p = binfmt_entry_provider(e);
        if (f.binfmt_enabled.value_or(false) && p && p->sane() &&
            served.find(p->arch->name) == std::string::npos) {
            served += (served.empty() ? "" : ", ") + p->arch->name;
        }
    }
    if (!served.empty()) {
        out.push_back({"auto.host", CheckStatus::ok,
                       "no sandbox here: emulation \"auto\" and 'emurun sandbox' run foreign "
                       "programs through the host's handlers for " +
                           served,
                       ""});
        return;
    }
    out.push_back({"auto.host", CheckStatus::warn,
                   "no sandbox here and no sane host handler (QEMU's magic/mask, a qemu of that "
                   "arch, F or static): foreign steps in emulation \"auto\" fail",
                   "as root: emurun binfmt register ARCH (or apt-get install qemu-user-static); "
                   "or a Linux >= 6.7 kernel with user namespaces"});
}

} // namespace detail

nlohmann::json doctor_json(const DoctorReport& report, FieldSpelling spell) {
    nlohmann::json j{{"schema", 1}, {"ok", !report.has_failure()}};
    j["facts"] = facts_json(report.facts);
    j["checks"] = nlohmann::json::array();
    for (const auto& c : report.checks) {
        j["checks"].push_back({{"id", c.id},
                               {"status", c.status == CheckStatus::ok     ? "ok"
                                          : c.status == CheckStatus::warn ? "warn"
                                                                          : "fail"},
                               {"summary", c.summary},
                               {"fix", c.fix_text(spell)}});
    }
    return j;
}

} // namespace emurun
