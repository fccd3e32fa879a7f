// emurun calibrate --arch A: measure qemu's slowdown for `--timeout-multiplier auto`.
#include "cli.hpp"

#include <emurun/arch.hpp>
#include <emurun/calibrate.hpp>
#include <emurun/json.hpp>

#include <nlohmann/json.hpp>

#include <cstdio>
#include <iostream>
#include <memory>

namespace emurun::cli {
namespace {

struct CalibrateArgs {
    std::vector<std::string> arches;
    std::string output, native, emulated;
    bool json = false;
};

void print_calibration(const Calibration& c) {
    std::printf("%s: native %.2fs, emulated %.2fs, slowdown %.1fx\n", c.arch.c_str(),
                c.native_seconds, c.emulated_seconds, c.slowdown());
    for (const auto& p : c.phases) {
        std::printf("  %-9s native %.3fs, emulated %.3fs, %.1fx\n", p.name.c_str(),
                    p.native_seconds, p.emulated_seconds, p.slowdown());
    }
}

int calibrate_arches(const CalibrateArgs& a) {
    std::filesystem::path file =
        a.output.empty() ? default_calibration_file() : std::filesystem::path(a.output);
    unwrap(check_calibration_file(file));
    std::vector<Calibration> done;
    for (const auto& name : a.arches) {
        const Arch* arch = unwrap(find_arch(name));
        CalibrateOptions o;
        if (!a.native.empty()) {
            o.native_program = a.native;
        }
        if (!a.emulated.empty()) {
            o.emulated_program = a.emulated;
        }
        Calibration c = unwrap(calibrate(*arch, o));
        unwrap(store_calibration(file, c));
        done.push_back(c);
        if (!a.json) {
            print_calibration(c);
        }
    }
    if (a.json) {
        std::cout << json_text(calibration_json(file, done)) << '\n';
    } else {
        std::printf("stored in %s\n", file.c_str());
    }
    return 0;
}

} // namespace

void add_calibrate(CLI::App& root, Action& action) {
    auto* sub = root.add_subcommand(
        "calibrate", "Measure emulation slowdown per arch for --timeout-multiplier auto");
    auto a = std::make_shared<CalibrateArgs>();
    sub->add_option("--arch", a->arches, "Architecture(s) to measure")->required();
    sub->add_option("-o,--output", a->output,
                    "Calibration file (default $XDG_CACHE_HOME/emurun/"
                    "calibration.json)");
    sub->add_option("--native-program", a->native, "Prebuilt host workload (default: compile)");
    sub->add_option("--emulated-program", a->emulated,
                    "Prebuilt static workload for the arch (default: compile with <triplet>-gcc)");
    sub->add_flag("--json", a->json,
                  "Machine-readable: {file, calibrations: [{arch, native_seconds, "
                  "emulated_seconds, slowdown, phases}]}");
    sub->callback([&action, a] { action = [a] { return calibrate_arches(*a); }; });
}

} // namespace emurun::cli
