#include "cli.hpp"
#include "cli_output.hpp"

#include <emurun/doctor.hpp>
#include <emurun/json.hpp>
#include <emurun_term.hpp>

#include <nlohmann/json.hpp>

#include <iostream>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace emurun::cli {
namespace {

struct DoctorArgs {
    bool json = false;
    std::string mount{k_binfmt_default_mount};
    bool no_probe = false;
};

/// The emulator checks that passed, one line per kind of emulator ("/usr/bin/qemu-*-static
/// 7.2.22, static: x86_64 i386 ..."): 35 lines of the same fact say less than one. -v (and
/// --json) keep a check per arch; a WARN or FAIL is always its own line.
DoctorReport group_emulators(DoctorReport report) {
    std::vector<DoctorCheck> kept;
    std::map<std::string, std::vector<std::string>> kinds; // "/usr/bin/qemu-*-static 7.2" -> arches
    std::size_t first = std::string::npos;
    for (auto& c : report.checks) {
        const std::string arch = c.id.starts_with("emulator.") ? c.id.substr(9) : "";
        const auto at = c.summary.find("qemu-" + arch);
        if (arch.empty() || c.status != CheckStatus::ok || at == std::string::npos) {
            kept.push_back(std::move(c));
            continue;
        }
        first = std::min(first, kept.size());
        kinds[c.summary.substr(0, at) + "qemu-*" + c.summary.substr(at + 5 + arch.size())]
            .push_back(arch);
    }
    std::vector<DoctorCheck> grouped;
    for (const auto& [kind, arches] : kinds) {
        std::string list;
        for (const auto& a : arches) {
            list += (list.empty() ? "" : " ") + a;
        }
        grouped.push_back({"emulators", CheckStatus::ok,
                           std::to_string(arches.size()) + " arches, " + kind + ": " + list +
                               " (-v: a line each)",
                           ""});
    }
    if (first != std::string::npos) {
        kept.insert(kept.begin() + static_cast<std::ptrdiff_t>(first), grouped.begin(),
                    grouped.end());
    }
    report.checks = std::move(kept);
    return report;
}

} // namespace

void add_doctor(CLI::App& root, Action& action) {
    auto args = std::make_shared<DoctorArgs>();
    auto* sub = root.add_subcommand(
        "doctor", "Pre-flight check: kernel, binfmt_misc, user namespaces, emulators, entries");
    sub->add_flag("--json", args->json,
                  "Machine-readable output (schema: docs/reference/doctor-json.md)");
    sub->add_option("--mount", args->mount, "binfmt_misc directory to examine")
        ->capture_default_str();
    sub->add_flag("--no-probe", args->no_probe, "Do not fork the user-namespace probe");
    sub->footer("Exit status: 0 unless a check is FAIL (then 1).");
    sub->callback([&action, args] {
        action = [args] {
            DoctorOptions options;
            options.mount = args->mount;
            options.probe_sandbox = !args->no_probe;
            const DoctorReport report = diagnose(options);
            if (args->json) {
                std::cout << json_text(doctor_json(report, flag_spelling)) << '\n';
            } else {
                std::cout << format_doctor_text(verbose_output() ? report : group_emulators(report),
                                                flag_spelling);
            }
            return report.has_failure() ? 1 : 0;
        };
    });
}

} // namespace emurun::cli
