// Calibration: how much slower emulation is on this machine, per arch, measured once and
// stored; the timeout multipliers a run derives from it (or is given). Part of the runner module.
// Layer: runner. Still evolving: its types may change between minor versions
// (docs/api/mainpage.md).
#pragma once

#include <emurun/arch.hpp>
#include <emurun/error.hpp>
#include <emurun/export.hpp>
#include <emurun/qemu.hpp>
#include <emurun/report.hpp>

#include <nlohmann/json_fwd.hpp>

#include <chrono>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace emurun {

/// Scales the timeouts of emulated steps: one factor for all arches, or one per arch.
struct TimeoutMultiplier {
    double all = 1; ///< the factor for every arch not in per_arch
    std::map<std::string, double, std::less<>> per_arch; ///< canonical arch names

    /// The factor for `arch` (per_arch, else `all`).
    [[nodiscard]] EMURUN_EXPORT double for_arch(std::string_view arch) const;
};

/// The largest factor parse_timeout_multiplier() accepts (and a calibration file may hold).
inline constexpr double k_max_timeout_multiplier = 1000;

/// `timeout` times `factor`, saturating: a factor that would overflow (inf, 1e308) gives the
/// longest Duration rather than a negative one; NaN or a factor <= 0 gives `timeout` unscaled.
[[nodiscard]] EMURUN_EXPORT std::chrono::milliseconds
scaled_timeout(std::chrono::milliseconds timeout, double factor);

/// Parse "8", "aarch64=8,ppc64le=12" or "auto" (factors from `calibration_file`, written by
/// `emurun calibrate`). Factors lie in (0, k_max_timeout_multiplier]. Errors name the bad part.
[[nodiscard]] EMURUN_EXPORT Result<TimeoutMultiplier>
parse_timeout_multiplier(std::string_view text, const std::filesystem::path& calibration_file);

/// An arch's slowdown learned from a previous run: the largest emulated/native wall factor
/// of its steps, and how many steps showed one.
struct LearnedSlowdown {
    double factor = 0;     ///< the largest emulated/native wall-time ratio
    std::size_t steps = 0; ///< the steps that gave a ratio
};

/// Per arch (canonical names): the largest wall(emulated) / wall(native) over the emulated steps
/// of `previous` that passed (accelerated root steps left out), the native wall taken from
/// `baseline`'s same step that passed natively, else from the step's own baseline_wall. Steps
/// whose native run took under a second count only for an arch without a longer one.
[[nodiscard]] EMURUN_EXPORT std::map<std::string, LearnedSlowdown, std::less<>>
learn_slowdowns(const Report& previous, const Report* baseline);

/// Where `--timeout-multiplier auto` looks: the run's history first, then calibration.
struct AutoHistory {
    const Report* previous = nullptr;       ///< the last run's report; nullptr = none
    const Report* baseline = nullptr;       ///< its native baseline's report; nullptr = none
    std::filesystem::path calibration_file; ///< `emurun calibrate`'s file (load_calibration)
};

/// The factor for each of `arches` (canonical names): learned from the history (learn_slowdowns)
/// where it has the arch, else `emurun calibrate`'s slowdown. An arch with neither is an error
/// naming the three ways to give one. `notes` gets one line per arch saying where it came from.
[[nodiscard]] EMURUN_EXPORT Result<TimeoutMultiplier>
auto_timeout_multiplier(const std::vector<std::string>& arches, const AutoHistory& history,
                        std::vector<std::string>* notes = nullptr);

/// calibration.json in cache_dir() (sysroot.hpp): $XDG_CACHE_HOME/emurun/calibration.json, ...
/// An error when that dir is not this user's alone (see cache_dir).
[[nodiscard]] EMURUN_EXPORT Result<std::filesystem::path> default_calibration_file();
/// The largest calibration file read (a real one is under 1 KiB per arch).
inline constexpr std::size_t k_calibration_max_bytes = std::size_t{1} << 20;
/// Slowdown factors by arch from a calibration file ({"arches": {"aarch64": {"slowdown": 9.1,
/// ...}}}). A missing file is an error that says to run `emurun calibrate`; so is a file over
/// k_calibration_max_bytes or one that is not a calibration file.
[[nodiscard]] EMURUN_EXPORT Result<std::map<std::string, double, std::less<>>>
load_calibration(const std::filesystem::path& file);
/// OK when `file` does not exist or is a calibration file store_calibration() may add to; an
/// error naming it otherwise (a pipeline, a report, a directory, a file over the limit): checked
/// before measuring, so nothing is measured for a file that would be refused.
[[nodiscard]] EMURUN_EXPORT Result<void> check_calibration_file(const std::filesystem::path& file);

/// One part of the calibration workload, run natively and emulated (CPU seconds).
struct CalibrationPhase {
    std::string name; ///< "compute", "libc", "syscalls", "startup"; "program" for given programs
    double native_seconds = 0;   ///< CPU seconds of the native run
    double emulated_seconds = 0; ///< CPU seconds of the emulated run
    /// emulated / native seconds; 0 when nothing was measured natively.
    [[nodiscard]] double slowdown() const {
        return native_seconds > 0 ? emulated_seconds / native_seconds : 0;
    }
};

/// One calibration measurement.
struct Calibration {
    std::string arch;                     ///< the emulated arch's canonical name
    double native_seconds = 0;            ///< the phases' sum
    double emulated_seconds = 0;          ///< the phases' sum
    std::vector<CalibrationPhase> phases; ///< each phase measured, in the order run

    /// The mean of the phases' slowdowns: a suite spending equal native time on integer work,
    /// libc calls, system calls and process start-ups (docs/guides/pipelines.md);
    /// without phases, emulated / native seconds.
    [[nodiscard]] EMURUN_EXPORT double slowdown() const;
};

/// How to calibrate: the workload programs are built from an embedded C source with the host
/// compiler and `<triplet>-gcc` -static (in a private mkdtemp directory) unless given. Given
/// programs (both or neither: one alone would compare two different programs) run once without
/// arguments as the one phase "program", whose slowdown is then the calibration's. A phase whose
/// native run takes under 0.01 s of CPU is refused as timer noise; so is the host's own arch.
struct CalibrateOptions {
    std::optional<std::filesystem::path> native_program;   ///< a host build of the workload
    std::optional<std::filesystem::path> emulated_program; ///< the same for the emulated arch
    std::filesystem::path work_dir; ///< where to compile; empty = a temporary directory
    EmulatorSearch emulators;       ///< where to look for the emulator
    int startups = 150;             ///< process start-ups of the "startup" phase

    /// Polled every 100 ms while a program runs: a signal number stops it (calibrate() then
    /// fails "interrupted by signal N", its temporary directory removed); 0 goes on.
    std::function<int()> interrupted;
};

/// Run the workload natively and under qemu (exec mode), phase by phase, and measure both (CPU
/// time of each run's process tree). The compiled workload's phases: "compute" (an integer
/// loop), "libc" (snprintf, malloc, string functions, qsort), "syscalls" (open, read, fstat,
/// close, getppid) and "startup" (options.startups runs of a program that exits at once).
[[nodiscard]] EMURUN_EXPORT Result<Calibration> calibrate(const Arch& arch,
                                                          const CalibrateOptions& options);
/// Merge one measurement into a calibration file (atomically).
[[nodiscard]] EMURUN_EXPORT Result<void> store_calibration(const std::filesystem::path& file,
                                                           const Calibration& c);

/// The `emurun calibrate --json` document: {file, calibrations: [{arch,
/// native_seconds, emulated_seconds, slowdown, phases: [{name, native_seconds,
/// emulated_seconds, slowdown}]}]}, the measurements in the order given.
[[nodiscard]] EMURUN_EXPORT nlohmann::json
calibration_json(const std::filesystem::path& file, const std::vector<Calibration>& calibrations);

} // namespace emurun
