// emurun calibrate --arch A: measure qemu's slowdown for `--timeout-multiplier auto`.
#include "cli.hpp"
#include "cli_common.hpp"

#include <emurun/arch.hpp>
#include <emurun/calibrate.hpp>
#include <emurun/json.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <iostream>
#include <memory>

namespace emurun::cli {
namespace {

struct CalibrateArgs {
    std::vector<std::string> arches;
    std::string output, native, emulated;
    bool output_given = false;
    bool json = false;
};

volatile std::sig_atomic_t g_signal = 0;

extern "C" void note_calibrate_signal(int sig) {
    g_signal = sig;
}

// SIGINT, SIGTERM and SIGHUP stop the measurement (calibrate() polls them): the temporary
// directory goes, nothing is stored, emurun exits as a shell would (130, 143, 129).
void catch_stop_signals() {
    struct sigaction sa {};
    sa.sa_handler = note_calibrate_signal;
    sigemptyset(&sa.sa_mask);
    for (int sig : {SIGINT, SIGTERM, SIGHUP}) {
        ::sigaction(sig, &sa, nullptr);
    }
}

// The calibration file: -o as given (its directory must exist, as for reports), else the
// default in the cache directory (created when needed).
std::filesystem::path output_file(const CalibrateArgs& a) {
    if (!a.output_given) {
        return unwrap(default_calibration_file());
    }
    std::filesystem::path file(a.output);
    unwrap(check_calibration_file(file));
    std::error_code ec;
    auto dir = file.parent_path().empty() ? std::filesystem::path(".") : file.parent_path();
    if (!std::filesystem::is_directory(dir, ec)) {
        throw Failure(Error{"output " + a.output,
                            "its directory " + dir.string() + " does not exist",
                            "create it, or write the calibration somewhere else"});
    }
    return file;
}

// The arches named (--arch A --arch B, or A,B), each once by its canonical name.
std::vector<const Arch*> arches_of(const CalibrateArgs& a) {
    std::vector<const Arch*> out;
    for (const auto& name : split_list(a.arches)) {
        const Arch* arch = unwrap(find_arch(name));
        if (std::ranges::find(out, arch) == out.end()) {
            out.push_back(arch);
        }
    }
    return out;
}

void print_calibration(const Calibration& c) {
    std::printf("%s: native %.2fs, emulated %.2fs, slowdown %.1fx\n", c.arch.c_str(),
                c.native_seconds, c.emulated_seconds, c.slowdown());
    for (const auto& p : c.phases) {
        std::printf("  %-9s native %.3fs, emulated %.3fs, %.1fx\n", p.name.c_str(),
                    p.native_seconds, p.emulated_seconds, p.slowdown());
    }
}

Calibration measure_arch(const Arch& arch, const CalibrateArgs& a) {
    CalibrateOptions o;
    if (!a.native.empty()) {
        o.native_program = a.native;
    }
    if (!a.emulated.empty()) {
        o.emulated_program = a.emulated;
    }
    o.interrupted = [] { return static_cast<int>(g_signal); };
    auto c = calibrate(arch, o);
    if (!c && g_signal != 0) {
        throw Failure(c.error(), 128 + g_signal);
    }
    return unwrap(std::move(c));
}

int calibrate_arches(const CalibrateArgs& a) {
    const std::filesystem::path file = output_file(a);
    const auto arches = arches_of(a);
    catch_stop_signals();
    std::vector<Calibration> done;
    for (const Arch* arch : arches) {
        Calibration c = measure_arch(*arch, a);
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
    sub->callback([&action, a, sub] {
        a->output_given = sub->get_option("--output")->count() > 0;
        action = [a] { return calibrate_arches(*a); };
    });
}

} // namespace emurun::cli
