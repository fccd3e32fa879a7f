#include "cli.hpp"

#include <emurun/doctor.hpp>
#include <emurun/json.hpp>

#include <nlohmann/json.hpp>

#include <iostream>
#include <memory>

namespace emurun::cli {
namespace {

struct DoctorArgs {
    bool json = false;
    std::string mount{k_binfmt_default_mount};
    bool no_probe = false;
};

} // namespace

void add_doctor(CLI::App& root, Action& action) {
    auto args = std::make_shared<DoctorArgs>();
    auto* sub = root.add_subcommand(
        "doctor", "Pre-flight check: kernel, binfmt_misc, user namespaces, emulators, entries");
    sub->add_flag("--json", args->json, "Machine-readable output (schema in README)");
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
                std::cout << json_text(doctor_json(report)) << '\n';
            } else {
                std::cout << format_doctor_text(report);
            }
            return report.has_failure() ? 1 : 0;
        };
    });
}

} // namespace emurun::cli
