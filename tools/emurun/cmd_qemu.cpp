#include "cli.hpp"
#include "cli_common.hpp"

#include <emurun/arch.hpp>
#include <emurun/json.hpp>
#include <emurun/qemu.hpp>
#include <emurun/sysroot.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <iomanip>
#include <iostream>

namespace emurun::cli {
namespace {

struct QemuArgs {
    std::string suite;
    std::string mirror;
    bool refresh = false;
    bool json = false;
    std::vector<std::string> arches;
};

nlohmann::json emulators_json(const std::vector<AvailableEmulator>& list) {
    auto out = nlohmann::json::array();
    for (const auto& a : list) {
        out.push_back({{"arch", a.emulator.arch->name},
                       {"version", a.version},
                       {"static", a.emulator.is_static},
                       {"source", a.source},
                       {"suite", a.suite},
                       {"path", a.emulator.path.string()}});
    }
    return out;
}

void print_table(const std::vector<AvailableEmulator>& list) {
    std::size_t arch_w = 4, source_w = 6;
    for (const auto& a : list) {
        arch_w = std::max(arch_w, a.emulator.arch->name.size());
        source_w = std::max(source_w, a.source.size());
    }
    std::cout << std::left << std::setw(int(arch_w) + 2) << "ARCH" << std::setw(10) << "VERSION"
              << std::setw(8) << "STATIC" << std::setw(int(source_w) + 2) << "SOURCE"
              << "PATH\n";
    for (const auto& a : list) {
        std::cout << std::setw(int(arch_w) + 2) << a.emulator.arch->name << std::setw(10)
                  << (a.version.empty() ? "?" : a.version) << std::setw(8)
                  << (a.emulator.is_static ? "yes" : "no") << std::setw(int(source_w) + 2)
                  << a.source << a.emulator.path.string() << '\n';
    }
}

void print_emulators(const std::vector<AvailableEmulator>& list, bool json) {
    if (json) {
        std::cout << json_text(emulators_json(list)) << '\n';
    } else {
        print_table(list);
    }
}

/// `emurun qemu list`: every emulator emurun can use, for ARCH... (default: every foreign arch).
int qemu_list(const QemuArgs& a) {
    std::vector<AvailableEmulator> list;
    if (a.arches.empty()) {
        list = list_emulators();
    }
    for (const auto& name : a.arches) {
        const Arch* arch = unwrap(find_arch(name));
        auto more = list_emulators(arch);
        list.insert(list.end(), more.begin(), more.end());
    }
    print_emulators(list, a.json);
    return 0;
}

const Arch& fetch_host_arch() {
    for (const auto& arch : all_arches()) {
        if (runs_natively(arch)) {
            return arch;
        }
    }
    throw Failure(Error{"qemu fetch", "this host's arch is not in emurun's table", ""});
}

/// `emurun qemu fetch`: the suite's qemu-user-static for this host unpacked by emurun-sysroot
/// (apt and dpkg, the host's apt state untouched), its emulators for ARCH... into the cache.
int qemu_fetch(const QemuArgs& a) {
    std::vector<const Arch*> arches;
    for (const auto& name : a.arches) {
        arches.push_back(unwrap(find_arch(name)));
    }
    auto fetch = unwrap(QemuFetch::begin(a.suite));
    SysrootRequest request;
    request.op = SysrootOp::fetch;
    request.arch = fetch_host_arch().debian;
    request.dir = fetch.tree();
    request.suite = fetch.suite();
    request.mirror = a.mirror;
    request.refresh = a.refresh;
    request.packages = {QemuFetch::package()};
    if (const int code = run_sysroot_tool(request); code != 0) {
        return code;
    }
    print_emulators(unwrap(fetch.adopt(arches)), a.json);
    return 0;
}

} // namespace

void add_qemu(CLI::App& root, Action& action) {
    auto a = std::make_shared<QemuArgs>();
    auto* sub = root.add_subcommand("qemu", "QEMU emulators: list them, fetch a Debian release's");
    sub->require_subcommand(1);
    auto* list = sub->add_subcommand(
        "list", "Every emulator emurun can use, with its version and where it comes from");
    list->add_flag("--json", a->json, "Machine-readable output");
    list->add_option("arches", a->arches, "Arches (default: every foreign arch)");
    list->callback([a, &action] { action = [a] { return qemu_list(*a); }; });
    auto* fetch = sub->add_subcommand(
        "fetch", "Take a Debian release's static QEMU emulators from the archive into emurun's "
                 "cache (nothing is installed); a step selects them with \"qemu\": SUITE");
    fetch->add_option("--suite", a->suite,
                      "Debian release: bookworm, bookworm-backports, trixie, ... (default: the "
                      "host's)");
    fetch->add_option("--mirror", a->mirror, "Debian mirror URI (default: the host's)");
    fetch->add_flag("--refresh", a->refresh, "Update the package lists even when they are recent");
    fetch->add_flag("--json", a->json, "Machine-readable output");
    fetch->add_option("arches", a->arches, "Arches whose emulators to take (aarch64 s390x ...)")
        ->required();
    fetch->callback([a, &action] { action = [a] { return qemu_fetch(*a); }; });
}

} // namespace emurun::cli
