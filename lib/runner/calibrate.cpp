// Timeout multipliers: parsing, and calibration by running one workload natively and emulated.
#include "runner/runner_internal.hpp"
#include "util/cache.hpp"
#include "util/file.hpp"
#include "util/json.hpp"
#include "util/temp_dir.hpp"

#include <emurun/arch.hpp>
#include <emurun/calibrate.hpp>
#include <emurun/json.hpp>

#include <algorithm>
#include <array>
#include <charconv>
#include <cstdio>
#include <optional>
#include <unistd.h>

namespace emurun {
namespace {

namespace fs = std::filesystem;

// The workload: one program, a phase per argument, each ~0.05-0.1 s natively. Alone, an integer
// loop runs ~1.5x slower under qemu and a process start-up ~17x: the phases together stand for
// what test suites do (docs/guides/pipelines.md, "Timeouts that fit emulation").
constexpr std::string_view k_workload = R"(#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int compare(const void* a, const void* b) {
    unsigned x = *(const unsigned*)a, y = *(const unsigned*)b;
    return x < y ? -1 : x > y;
}

static unsigned long compute(void) {
    unsigned long x = 1, acc = 0;
    for (unsigned long i = 0; i < 40000000UL; ++i) {
        x ^= x << 13; x ^= x >> 7; x ^= x << 17;
        acc += x % 1000003UL;
    }
    return acc;
}

static unsigned long libc_calls(void) {
    static unsigned keys[4096];
    unsigned long acc = 0;
    char buf[128];
    for (unsigned long i = 0; i < 400000UL; ++i) {
        int len = snprintf(buf, sizeof buf, "test_case_%lu/%s:%lu", i, "fixture", acc);
        char* p = malloc((size_t)len + 1);
        if (p == NULL) return acc;
        memcpy(p, buf, (size_t)len + 1);
        acc += strlen(p) + (strstr(p, "fixture") != NULL) + strtoul(p + 10, NULL, 10);
        free(p);
        keys[i % 4096] = (unsigned)(acc * 2654435761UL);
        if (i % 4096 == 4095) {
            qsort(keys, 4096, sizeof keys[0], compare);
            acc += keys[0];
        }
    }
    return acc;
}

static unsigned long syscalls(const char* self) {
    unsigned long acc = 0;
    char buf[256];
    struct stat st;
    for (unsigned long i = 0; i < 25000UL; ++i) {
        int fd = open(self, O_RDONLY | O_CLOEXEC);
        if (fd < 0) return acc;
        acc += (unsigned long)read(fd, buf, sizeof buf);
        if (fstat(fd, &st) == 0) acc += (unsigned long)st.st_size;
        close(fd);
        acc += (unsigned long)getppid();
    }
    return acc;
}

int main(int argc, char** argv) {
    const char* phase = argc > 1 ? argv[1] : "";
    unsigned long acc = 0;
    int all = argc < 2;
    if (strcmp(phase, "startup") == 0) return 0;
    if (all || strcmp(phase, "compute") == 0) acc += compute();
    if (all || strcmp(phase, "libc") == 0) acc += libc_calls();
    if (all || strcmp(phase, "syscalls") == 0) acc += syscalls(argv[0]);
    printf("%lu\n", acc);
    return 0;
}
)";

constexpr std::array<std::string_view, 4> k_phases = {"compute", "libc", "syscalls", "startup"};

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

// The shortest native CPU time a phase may measure: below it the ratio is timer noise.
constexpr double k_min_native_seconds = 0.01;

// Run `cmd` under a Supervisor and return how it ended and its CPU seconds (user + sys); a stop
// signal (options.interrupted) stops it and is an error saying so.
struct ChildRun {
    ExitStatus status;
    double cpu = 0;
};

Result<ChildRun> run_child(const Command& cmd, const CalibrateOptions& options) {
    Supervisor sup;
    EMURUN_TRY(sup.spawn(cmd));
    int stopped_by = 0;
    while (true) {
        auto done = EMURUN_TRY(sup.wait_any(std::chrono::milliseconds(100)));
        if (stopped_by == 0 && options.interrupted) {
            if ((stopped_by = options.interrupted()) != 0) {
                sup.stop_all();
            }
        }
        for (const auto& c : done) {
            if (c.start_error) {
                return std::unexpected(*c.start_error);
            }
            if (stopped_by != 0) {
                return fail("calibrate", "interrupted by signal " + std::to_string(stopped_by),
                            "the arch being measured was not stored");
            }
            return ChildRun{c.status, std::chrono::duration<double>(c.user + c.sys).count()};
        }
    }
}

// CPU seconds of the workload `program` run by `cmd`. Errors name the program, not qemu, which
// is argv[0] of the emulated run.
Result<double> measure(const Command& cmd, const fs::path& program,
                       const CalibrateOptions& options) {
    auto run = EMURUN_TRY(run_child(cmd, options));
    if (!run.status.success()) {
        return fail("calibration workload " + program.string(), run.status.describe(),
                    "check that it exists and runs (or omit it to compile the workload)");
    }
    return run.cpu;
}

// A workload program, run natively (emulator null) or under qemu.
struct Workload {
    fs::path program;
    const Emulator* emulator = nullptr;
};

// CPU seconds of `runs` runs of the workload with `args`.
Result<double> measure_runs(const Workload& w, const std::vector<std::string>& args, int runs,
                            const CalibrateOptions& options) {
    double total = 0;
    for (int i = 0; i < runs; ++i) {
        Command cmd;
        if (w.emulator) {
            cmd.argv = qemu_command(*w.emulator, w.program, args);
        } else {
            cmd.argv = {w.program.string()};
            cmd.argv.insert(cmd.argv.end(), args.begin(), args.end());
        }
        total += EMURUN_TRY(measure(cmd, w.program, options));
    }
    return total;
}

std::string seconds_text(double s) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.4f", s);
    return buf;
}

// One phase natively, then emulated.
Result<CalibrationPhase> measure_phase(std::string_view name, const Workload& native,
                                       const Workload& emulated, const CalibrateOptions& options) {
    std::vector<std::string> args;
    if (name != "program") {
        args.emplace_back(name);
    }
    const int runs = name == "startup" ? std::max(options.startups, 1) : 1;
    CalibrationPhase phase;
    phase.name = std::string(name);
    phase.native_seconds = EMURUN_TRY(measure_runs(native, args, runs, options));
    if (phase.native_seconds < k_min_native_seconds) {
        return fail("calibration phase " + phase.name,
                    "the native run took " + seconds_text(phase.native_seconds) +
                        " s of CPU, too little to measure",
                    "give a workload that runs at least 0.05 s natively (or omit the programs "
                    "to compile emurun's)");
    }
    phase.emulated_seconds = EMURUN_TRY(measure_runs(emulated, args, runs, options));
    return phase;
}

Result<fs::path> compile(const std::string& compiler, const fs::path& dir, const fs::path& src,
                         const std::string& name, const CalibrateOptions& options) {
    fs::path out = dir / name;
    Command cmd;
    cmd.argv = {compiler, "-O1", "-static", "-o", out.string(), src.string()};
    auto run = run_child(cmd, options);
    if (!run) {
        if (run.error().what == "calibrate") {
            return std::unexpected(run.error()); // interrupted
        }
        return fail("compile the calibration workload with " + compiler, run.error().why,
                    "install the cross compiler, or pass the programs explicitly");
    }
    if (!run->status.success()) {
        return fail("compile the calibration workload with " + compiler, run->status.describe());
    }
    return out;
}

// The document of an existing calibration file: read with a size limit, parsed, and checked
// to be one ({"arches": {...}}). A missing file says to calibrate; any other refusal says to
// give a calibration file.
Result<util::Json> read_calibration(const fs::path& file) {
    const std::string other =
        "give a calibration file written by 'emurun calibrate', or a new path";
    auto text = util::read_file(file, k_calibration_max_bytes);
    if (!text) {
        std::error_code ec;
        const bool missing = fs::symlink_status(file, ec).type() == fs::file_type::not_found;
        return fail("read calibration " + file.string(), text.error().why,
                    missing ? "calibrate each arch first ('emurun calibrate')" : other);
    }
    auto j = util::parse_json_text(*text, file.string());
    if (!j) {
        return fail(j.error().what, j.error().why, other);
    }
    if (!j->is_object() || !j->contains("arches") || !(*j)["arches"].is_object()) {
        return fail(file.string(), "not an emurun calibration file (no \"arches\" object)", other);
    }
    return std::move(*j);
}

// Every arch's slowdown in a calibration document, each checked.
Result<std::map<std::string, double, std::less<>>> slowdowns_of(const util::Json& j,
                                                                const fs::path& file) {
    std::map<std::string, double, std::less<>> out;
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
                                 "calibrate " + arch + " again (emurun calibrate)");
        }
        out[arch] = v;
    }
    return out;
}

// {slowdown, native_seconds, emulated_seconds, phases: [{name, ...}]}: a calibration file's
// entry and the --json document's.
util::Json calibration_entry(const Calibration& c) {
    util::Json phases = util::Json::array();
    for (const auto& p : c.phases) {
        phases.push_back({{"name", p.name},
                          {"native_seconds", p.native_seconds},
                          {"emulated_seconds", p.emulated_seconds},
                          {"slowdown", p.slowdown()}});
    }
    return {{"slowdown", c.slowdown()},
            {"native_seconds", c.native_seconds},
            {"emulated_seconds", c.emulated_seconds},
            {"phases", std::move(phases)}};
}

} // namespace

Result<fs::path> default_calibration_file() {
    return EMURUN_TRY(util::checked_cache_dir()) / "calibration.json";
}

Result<std::map<std::string, double, std::less<>>> load_calibration(const fs::path& file) {
    auto j = EMURUN_TRY(read_calibration(file));
    return slowdowns_of(j, file);
}

Result<void> check_calibration_file(const fs::path& file) {
    if (file.empty() || !file.has_filename()) {
        return fail("calibration file \"" + file.string() + "\"", "not a file name",
                    "name a file, or omit the option for the default");
    }
    std::error_code ec;
    if (fs::symlink_status(file, ec).type() == fs::file_type::not_found) {
        return {};
    }
    auto j = EMURUN_TRY(read_calibration(file));
    EMURUN_TRY(slowdowns_of(j, file));
    return {};
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
    EMURUN_TRY(check_calibration_file(file));
    util::Json j = {{"arches", util::Json::object()}};
    if (auto old = read_calibration(file)) {
        j = std::move(*old);
    }
    j["arches"][c.arch] = calibration_entry(c);
    std::error_code ec;
    fs::create_directories(file.parent_path(), ec);
    return util::write_file_atomic(file, json_text(j) + "\n");
}

nlohmann::json calibration_json(const fs::path& file,
                                const std::vector<Calibration>& calibrations) {
    nlohmann::json all = nlohmann::json::array();
    for (const auto& c : calibrations) {
        auto entry = calibration_entry(c);
        entry["arch"] = c.arch;
        all.push_back(std::move(entry));
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

double Calibration::slowdown() const {
    if (phases.empty()) {
        return native_seconds > 0 ? emulated_seconds / native_seconds : 0;
    }
    double sum = 0;
    for (const auto& p : phases) {
        sum += p.slowdown();
    }
    return sum / static_cast<double>(phases.size());
}

Result<void> check_options(const Arch& arch, const CalibrateOptions& options) {
    if (options.native_program.has_value() != options.emulated_program.has_value()) {
        return fail("calibrate " + arch.name,
                    "only one workload program given: the two runs would not run the same work",
                    "give both programs, the same workload built for the host and for the arch, "
                    "or neither to compile emurun's");
    }
    if (runs_natively(arch)) {
        return fail("calibrate " + arch.name,
                    "it is this machine's own arch: its programs run natively, not under qemu",
                    "calibrate the foreign arches your pipelines emulate");
    }
    return {};
}

Result<Calibration> calibrate(const Arch& arch, const CalibrateOptions& options) {
    EMURUN_TRY(check_options(arch, options));
    std::optional<util::TempDir> temp;
    fs::path dir = options.work_dir;
    if (dir.empty()) {
        temp.emplace(
            EMURUN_TRY(util::TempDir::make(fs::temp_directory_path() / "emurun-calibrate-")));
        dir = temp->path();
    }
    std::error_code ec;
    fs::create_directories(dir, ec);
    fs::path src = dir / "workload.c";
    EMURUN_TRY(util::write_file_atomic(src, k_workload));
    const bool given = options.native_program.has_value();
    auto native = EMURUN_TRY(given ? Result<fs::path>(*options.native_program)
                                   : compile("cc", dir, src, "workload-native", options));
    auto foreign = EMURUN_TRY(
        given ? Result<fs::path>(*options.emulated_program)
              : compile(arch.triplet + "-gcc", dir, src, "workload-" + arch.name, options));
    auto emu = EMURUN_TRY(find_emulator(arch, options.emulators));
    std::vector<std::string_view> names(k_phases.begin(), k_phases.end());
    if (given) {
        names = {"program"};
    }
    Calibration c;
    c.arch = arch.name;
    for (auto name : names) {
        auto phase = EMURUN_TRY(measure_phase(name, {native}, {foreign, &emu}, options));
        c.native_seconds += phase.native_seconds;
        c.emulated_seconds += phase.emulated_seconds;
        c.phases.push_back(std::move(phase));
    }
    return c;
}

} // namespace emurun
