// Timeout multipliers: parsing, and calibration by running one workload natively and emulated.
#include "runner/runner_internal.hpp"
#include "util/cache.hpp"
#include "util/file.hpp"
#include "util/json.hpp"

#include <emurun/arch.hpp>
#include <emurun/calibrate.hpp>
#include <emurun/json.hpp>

#include <charconv>
#include <unistd.h>

namespace emurun {
namespace {

namespace fs = std::filesystem;

// A fixed integer workload (~0.2 s natively): enough to dwarf qemu's start-up.
constexpr std::string_view k_workload = R"(#include <stdio.h>
int main(void) {
    unsigned long x = 1, acc = 0;
    for (unsigned long i = 0; i < 60000000UL; ++i) {
        x ^= x << 13; x ^= x >> 7; x ^= x << 17;
        acc += x % 1000003UL;
    }
    printf("%lu\n", acc);
    return 0;
}
)";

Result<double> parse_factor(std::string_view text, std::string_view what) {
    double v = 0;
    auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (ec != std::errc{} || ptr != text.data() + text.size() || !(v > 0) ||
        !(v <= k_max_timeout_multiplier)) {
        return fail("timeout multiplier " + std::string(what),
                    "expected a number from 0 (exclusive) to 1000, got \"" + std::string(text) +
                        "\"",
                    "e.g. 8, aarch64=8,ppc64le=12, or auto");
    }
    return v;
}

// Run `cmd` under a Supervisor and return its CPU seconds (user + sys). Errors name `program`
// (the workload), not qemu, which is argv[0] of the emulated run.
Result<double> measure(Command cmd, const fs::path& program) {
    Supervisor sup;
    EMURUN_TRY(sup.spawn(cmd));
    while (true) {
        auto done = EMURUN_TRY(sup.wait_any());
        for (const auto& c : done) {
            if (c.start_error) {
                return std::unexpected(*c.start_error);
            }
            if (!c.status.success()) {
                return fail("calibration workload " + program.string(), c.status.describe(),
                            "check that it exists and runs (or omit it to compile the workload)");
            }
            return std::chrono::duration<double>(c.user + c.sys).count();
        }
    }
}

Result<fs::path> compile(const std::string& compiler, const fs::path& dir, const fs::path& src,
                         const std::string& name) {
    fs::path out = dir / name;
    Command cmd;
    cmd.argv = {compiler, "-O1", "-static", "-o", out.string(), src.string()};
    auto status = run_foreground(cmd);
    if (!status) {
        return fail("compile the calibration workload with " + compiler, status.error().why,
                    "install the cross compiler, or pass the programs explicitly");
    }
    if (!status->success()) {
        return fail("compile the calibration workload with " + compiler, status->describe());
    }
    return out;
}

// Removes a temporary directory on every way out of calibrate(), failures included.
struct RemoveOnExit {
    fs::path dir;
    ~RemoveOnExit() {
        std::error_code ec;
        if (!dir.empty()) {
            fs::remove_all(dir, ec);
        }
    }
};

} // namespace

fs::path default_calibration_file() {
    return util::cache_dir() / "calibration.json";
}

Result<std::map<std::string, double, std::less<>>> load_calibration(const fs::path& file) {
    auto text = util::read_file(file);
    if (!text) {
        return fail("read calibration " + file.string(), text.error().why,
                    "calibrate each arch first ('emurun calibrate')");
    }
    auto j = EMURUN_TRY(util::parse_json_text(*text, file.string()));
    std::map<std::string, double, std::less<>> out;
    if (!j.is_object() || !j.contains("arches") || !j["arches"].is_object()) {
        return fail(file.string(), "not an emurun calibration file (no \"arches\" object)");
    }
    util::Place at(file.string());
    for (const auto& [arch, entry] : j["arches"].items()) {
        util::Place slowdown = at.key("arches").key(arch).key("slowdown");
        if (!entry.is_object() || !entry.contains("slowdown")) {
            continue; // an arch not calibrated yet
        }
        auto v = EMURUN_TRY(util::get_number(entry["slowdown"], slowdown));
        if (!(v > 0 && v <= k_max_timeout_multiplier)) {
            return slowdown.fail("expected a number from 0 (exclusive) to 1000, got " +
                                     util::describe(entry["slowdown"]),
                                 "run 'emurun calibrate --arch " + arch + "' again");
        }
        out[arch] = v;
    }
    return out;
}

std::chrono::milliseconds scaled_timeout(std::chrono::milliseconds timeout, double factor) {
    if (!(factor > 0)) {
        return timeout;
    }
    double scaled = static_cast<double>(timeout.count()) * factor;
    // 2^63 is the first double past the largest rep: compare below it.
    if (!(scaled < 9.2e18)) {
        return std::chrono::milliseconds::max();
    }
    return std::chrono::milliseconds(static_cast<std::chrono::milliseconds::rep>(scaled));
}

Result<void> store_calibration(const fs::path& file, const Calibration& c) {
    util::Json j = {{"arches", util::Json::object()}};
    if (auto text = util::read_file(file)) {
        auto old = util::parse_json_text(*text, file.string());
        if (old && old->is_object() && old->contains("arches") && (*old)["arches"].is_object()) {
            j = *old;
        }
    }
    j["arches"][c.arch] = {{"slowdown", c.slowdown()},
                           {"native_seconds", c.native_seconds},
                           {"emulated_seconds", c.emulated_seconds}};
    std::error_code ec;
    fs::create_directories(file.parent_path(), ec);
    return util::write_file_atomic(file, json_text(j) + "\n");
}

nlohmann::json calibration_json(const fs::path& file,
                                const std::vector<Calibration>& calibrations) {
    nlohmann::json all = nlohmann::json::array();
    for (const auto& c : calibrations) {
        all.push_back({{"arch", c.arch},
                       {"native_seconds", c.native_seconds},
                       {"emulated_seconds", c.emulated_seconds},
                       {"slowdown", c.slowdown()}});
    }
    return {{"file", file.string()}, {"calibrations", std::move(all)}};
}

Result<TimeoutMultiplier> parse_timeout_multiplier(std::string_view text,
                                                   const fs::path& calibration_file) {
    TimeoutMultiplier m;
    if (text == "auto") {
        auto cal = EMURUN_TRY(load_calibration(calibration_file));
        m.per_arch = cal;
        return m;
    }
    if (text.find('=') == std::string_view::npos) {
        auto v = EMURUN_TRY(parse_factor(text, "value"));
        m.all = v;
        return m;
    }
    while (!text.empty()) {
        auto comma = text.find(',');
        auto part = text.substr(0, comma);
        text = comma == std::string_view::npos ? std::string_view{} : text.substr(comma + 1);
        auto eq = part.find('=');
        auto arch = find_arch(part.substr(0, eq));
        if (eq == std::string_view::npos || !arch) {
            return fail("timeout multiplier \"" + std::string(part) + "\"",
                        "expected ARCH=FACTOR with a known arch", "e.g. aarch64=8,ppc64le=12");
        }
        auto v = EMURUN_TRY(parse_factor(part.substr(eq + 1), (*arch)->name));
        m.per_arch[(*arch)->name] = v;
    }
    return m;
}

Result<Calibration> calibrate(const Arch& arch, const CalibrateOptions& options) {
    fs::path dir = options.work_dir;
    if (dir.empty()) {
        dir = fs::temp_directory_path() / ("emurun-calibrate-" + std::to_string(::getpid()));
    }
    RemoveOnExit cleanup{options.work_dir.empty() ? dir : fs::path{}};
    std::error_code ec;
    fs::create_directories(dir, ec);
    fs::path src = dir / "workload.c";
    EMURUN_TRY(util::write_file_atomic(src, k_workload));
    auto native = EMURUN_TRY(options.native_program ? Result<fs::path>(*options.native_program)
                                                    : compile("cc", dir, src, "workload-native"));
    auto foreign = EMURUN_TRY(options.emulated_program ? Result<fs::path>(*options.emulated_program)
                                                       : compile(arch.triplet + "-gcc", dir, src,
                                                                 "workload-" + arch.name));
    auto emu = EMURUN_TRY(find_emulator(arch, options.emulators));
    Command n;
    n.argv = {native.string()};
    Command e;
    e.argv = qemu_command(emu, foreign, {});
    auto tn = EMURUN_TRY(measure(n, native));
    auto te = EMURUN_TRY(measure(e, foreign));
    return Calibration{arch.name, tn, te};
}

} // namespace emurun
