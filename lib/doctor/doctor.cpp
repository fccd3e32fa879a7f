// doctor: gathering facts about this machine (reads only; the sandbox probe forks a child).
#include "util/file.hpp"

#include <emurun/doctor.hpp>
#include <emurun/sandbox.hpp>

#include <cctype>
#include <charconv>
#include <sys/utsname.h>
#include <unistd.h>

namespace emurun {
namespace fs = std::filesystem;

namespace {

std::optional<std::string> read_small_file(const fs::path& p) {
    auto text = util::read_file(p);
    return text ? std::optional<std::string>(std::move(*text)) : std::nullopt;
}

std::optional<long> read_long(const fs::path& p) {
    auto text = read_small_file(p);
    if (!text) {
        return std::nullopt;
    }
    long v = 0;
    const char* b = text->data();
    auto [ptr, ec] = std::from_chars(b, b + text->size(), v);
    return ec == std::errc() && ptr != b ? std::optional<long>(v) : std::nullopt;
}

void gather_mount(const DoctorOptions& o, DoctorFacts& f) {
    f.mount = o.mount;
    std::error_code ec;
    f.mounted = fs::exists(o.mount / "register", ec) && fs::exists(o.mount / "status", ec);
    if (!f.mounted) {
        return;
    }
    if (auto s = read_small_file(o.mount / "status")) {
        f.binfmt_enabled = s->starts_with("enabled");
    }
    auto table = read_binfmt_table(o.mount);
    if (table) {
        f.entries = std::move(table->entries);
    } else {
        f.entries_error = table.error().message();
    }
}

void gather_userns(const DoctorOptions& o, DoctorFacts& f) {
    f.is_root = ::geteuid() == 0;
    f.max_user_namespaces = read_long(o.proc_sys / "user/max_user_namespaces");
    f.unprivileged_userns_clone = read_long(o.proc_sys / "kernel/unprivileged_userns_clone");
    f.apparmor_restrict_userns =
        read_long(o.proc_sys / "kernel/apparmor_restrict_unprivileged_userns");
    if (o.probe_sandbox) {
        f.sandbox_probed = true;
        if (auto r = probe_sandbox(); !r) {
            f.sandbox_probe_error = r.error().what + ": " + r.error().why;
        }
    }
}

void gather_emulators(const DoctorOptions& o, DoctorFacts& f) {
    for (const auto& arch : all_arches()) {
        auto emu = find_emulator(arch, o.emulators);
        if (!emu) {
            f.arches_without_emulator.push_back(arch.name);
            continue;
        }
        f.emulators.push_back(
            EmulatorFact{arch.name, emu->path, emulator_version(*emu), emu->is_static});
    }
}

} // namespace

std::optional<KernelVersion> parse_kernel_version(std::string_view release) {
    KernelVersion v;
    int* parts[] = {&v.major, &v.minor, &v.patch};
    const char* p = release.data();
    const char* end = p + release.size();
    for (int i = 0; i < 3; ++i) {
        auto [next, ec] = std::from_chars(p, end, *parts[i]);
        if (ec != std::errc()) {
            if (i < 2) {
                return std::nullopt; // "X.Y" at least
            }
            break;
        }
        p = next;
        if (p == end || *p != '.') {
            if (i < 1) {
                return std::nullopt;
            }
            break;
        }
        ++p;
    }
    return v;
}

DoctorFacts gather_doctor_facts(const DoctorOptions& options) {
    DoctorFacts f;
    if (options.kernel_release) {
        f.kernel_release = *options.kernel_release;
    } else {
        struct utsname u {};
        f.kernel_release = ::uname(&u) == 0 ? u.release : "";
    }
    gather_mount(options, f);
    gather_userns(options, f);
    gather_emulators(options, f);
    f.systemd_binfmt = binfmt_environment_warnings();
    return f;
}

DoctorReport diagnose(const DoctorOptions& options) {
    DoctorReport r;
    r.facts = gather_doctor_facts(options);
    r.checks = judge_doctor_facts(r.facts);
    return r;
}

bool DoctorReport::has_failure() const {
    for (const auto& c : checks) {
        if (c.status == CheckStatus::fail) {
            return true;
        }
    }
    return false;
}

} // namespace emurun
