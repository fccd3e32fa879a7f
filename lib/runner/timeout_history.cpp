// --timeout-multiplier auto: each arch's slowdown as this project's own history shows it (the
// previous report's emulated steps against the same steps run natively), `emurun calibrate`'s
// measurement where there is no history.
#include <emurun/calibrate.hpp>
#include <emurun/report.hpp>

#include <algorithm>
#include <cstdio>
#include <set>

namespace emurun {
namespace {

// A step that ran natively in under a second says more about start-up noise than about
// emulation; such steps count only where an arch has no longer one.
constexpr double k_steady_baseline_seconds = 1.0;

// The native wall of `step`: the --baseline report's same step that passed natively, else what
// the previous run itself recorded against its own baseline.
std::optional<double> native_wall(const StepResult& step, const Report* baseline) {
    if (baseline != nullptr) {
        const StepResult* b = baseline->find(step.name);
        if (b != nullptr && b->status == StepStatus::passed && b->emulation == Emulation::native &&
            b->wall > 0) {
            return b->wall;
        }
    }
    if (step.baseline_wall && *step.baseline_wall > 0) {
        return step.baseline_wall;
    }
    return std::nullopt;
}

void keep_largest(std::map<std::string, LearnedSlowdown, std::less<>>& into,
                  const std::string& arch, double factor) {
    auto& seen = into[arch];
    seen.factor = std::max(seen.factor, std::min(factor, k_max_timeout_multiplier));
    ++seen.steps;
}

std::string format_factor(double f) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.3g", f);
    return buf;
}

} // namespace

std::map<std::string, LearnedSlowdown, std::less<>> learn_slowdowns(const Report& previous,
                                                                    const Report* baseline) {
    std::map<std::string, LearnedSlowdown, std::less<>> steady, short_steps;
    for (const auto& step : previous.steps) {
        if (step.emulation == Emulation::native || step.accelerated || step.arch.empty() ||
            step.status != StepStatus::passed || !(step.wall > 0)) {
            continue;
        }
        auto native = native_wall(step, baseline);
        if (!native) {
            continue;
        }
        keep_largest(*native >= k_steady_baseline_seconds ? steady : short_steps, step.arch,
                     step.wall / *native);
    }
    for (auto& [arch, seen] : short_steps) {
        steady.try_emplace(arch, seen);
    }
    return steady;
}

Result<TimeoutMultiplier> auto_timeout_multiplier(const std::vector<std::string>& arches,
                                                  const AutoHistory& history,
                                                  std::vector<std::string>* notes) {
    std::map<std::string, LearnedSlowdown, std::less<>> learned;
    if (history.previous != nullptr) {
        learned = learn_slowdowns(*history.previous, history.baseline);
    }
    std::optional<Result<std::map<std::string, double, std::less<>>>> calibration;
    TimeoutMultiplier m;
    for (const auto& arch : std::set<std::string>(arches.begin(), arches.end())) {
        if (auto it = learned.find(arch); it != learned.end()) {
            m.per_arch[arch] = it->second.factor;
            if (notes != nullptr) {
                notes->push_back(arch + " " + format_factor(it->second.factor) +
                                 " (the slowest of " + std::to_string(it->second.steps) +
                                 " step(s) in the history)");
            }
            continue;
        }
        if (!calibration) {
            calibration = load_calibration(history.calibration_file);
        }
        const auto* cal = *calibration ? &**calibration : nullptr;
        auto found = cal != nullptr ? cal->find(arch) : decltype(cal->end()){};
        if (cal == nullptr || found == cal->end()) {
            return fail(ErrorKind::not_found, "timeout multiplier auto",
                        "no slowdown known for " + arch +
                            ": no emulated step of it that passed in the previous report with "
                            "a native time in the baseline, and " +
                            (cal == nullptr
                                 ? calibration->error().message()
                                 : "no calibration for it in " + history.calibration_file.string()),
                        "give the previous and baseline reports of this pipeline, or calibrate " +
                            arch + " (emurun calibrate), or give the multiplier as a number",
                        "timeout_multiplier");
        }
        m.per_arch[arch] = found->second;
        if (notes != nullptr) {
            notes->push_back(arch + " " + format_factor(found->second) + " (emurun calibrate)");
        }
    }
    return m;
}

} // namespace emurun
