// Slow-step flagging rules and merging of shard reports.
#include "report_emulator.hpp"

#include <emurun/report.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <utility>

namespace emurun {
namespace {

/// The baseline's step for `step` (Report::find_like) when it ran natively: a step of the
/// baseline that ran emulated is no baseline (its factor would be near 1 and mean nothing).
const StepResult* native_like(const Report& baseline, const StepResult& step) {
    const StepResult* like = baseline.find_like(step);
    return like != nullptr && like->emulation == Emulation::native ? like : nullptr;
}

std::string printf_string(const char* format, auto... args) {
    char buf[256];
    std::snprintf(buf, sizeof buf, format, args...);
    return buf;
}

bool ran(const StepResult& s) {
    return s.status != StepStatus::skipped && s.status != StepStatus::not_run;
}

// A step from a report that was measured, for comparison.
const StepResult* measured(const StepResult* s) {
    return s && (s->status == StepStatus::passed || s->status == StepStatus::failed ||
                 s->status == StepStatus::timed_out)
               ? s
               : nullptr;
}

int severity(StepStatus s) {
    switch (s) {
    case StepStatus::passed:
    case StepStatus::reused: // the same result, measured in the build job
        return 0;
    case StepStatus::skipped:
        return 1;
    case StepStatus::not_run:
        return 2;
    case StepStatus::interrupted:
        return 3;
    case StepStatus::timed_out:
        return 4;
    case StepStatus::emulator_crash: // a retry may pass: less final than a plain failure
        return 5;
    case StepStatus::failed:
    case StepStatus::resource_limit:
        break;
    }
    return 6;
}

void add_unique(std::vector<Flag>& into, const Flag& flag) {
    if (std::ranges::find(into, flag) == into.end()) {
        into.push_back(flag);
    }
}

// Rule (b): an emulated step's factor against its native baseline step; a native step gets
// none (it would compare native with native), nor does one whose baseline step ran emulated; a
// step that did not pass is not flagged (its time says how far it got, not how slow emulation
// is), nor one whose baseline time is timer noise.
void flag_baseline(StepResult& result, const FlagRules& rules, const StepResult* base) {
    if (!base || result.emulation == Emulation::native || base->emulation != Emulation::native) {
        return;
    }
    result.baseline_wall = base->wall;
    result.baseline_cpu = base->cpu();
    auto factor = result.factor(rules.basis);
    const bool cpu = rules.basis == FactorBasis::cpu;
    const double base_time = cpu ? base->cpu() : base->wall;
    if (result.status != StepStatus::passed || !factor || !(*factor > rules.baseline_factor) ||
        base_time < rules.test_min_baseline) {
        return;
    }
    add_unique(result.flags,
               {"baseline", printf_string("%.1fx the native baseline's %s (%s), over %gx", *factor,
                                          cpu ? "CPU time" : "wall time",
                                          format_seconds(cpu ? base->cpu() : base->wall).c_str(),
                                          rules.baseline_factor)});
}

// Tests by (classname, name): a step's JUnit files may list thousands.
using TestIndex = std::map<std::pair<std::string_view, std::string_view>, const TestResult*>;

TestIndex index_tests(const StepResult& step) {
    TestIndex index;
    for (const auto& t : step.tests) {
        index.emplace(std::pair<std::string_view, std::string_view>(t.classname, t.name), &t);
    }
    return index;
}

void flag_test(TestResult& t, const TestResult& base, const FlagRules& rules) {
    t.baseline_time = base.time;
    auto factor = t.baseline_factor();
    if (factor && *factor > rules.baseline_factor && base.time >= rules.test_min_baseline &&
        t.status != TestStatus::skipped) {
        add_unique(t.flags,
                   {"slow", printf_string("%.1fx the baseline (%s -> %s), over %gx", *factor,
                                          format_seconds(base.time).c_str(),
                                          format_seconds(t.time).c_str(), rules.baseline_factor)});
    }
    if (t.failing() && base.status == TestStatus::passed) {
        add_unique(t.flags, {"emulation_only_failure",
                             std::string(to_string(t.status)) + " here, passed in the baseline"});
    }
    if (t.status == TestStatus::passed && base.failing()) {
        add_unique(t.flags,
                   {"native_only_failure",
                    "passed here, " + std::string(to_string(base.status)) + " in the baseline"});
    }
}

} // namespace

void flag_tests(StepResult& result, const FlagRules& rules, const StepResult* baseline) {
    if (!baseline || result.tests.empty()) {
        return;
    }
    const TestIndex index = index_tests(*baseline);
    for (auto& t : result.tests) {
        auto it = index.find({t.classname, t.name});
        if (it != index.end()) {
            flag_test(t, *it->second, rules);
        }
    }
}

Result<void> check_rules(const FlagRules& rules) {
    auto in = [](double v, double lo, bool lo_open, double hi) {
        return std::isfinite(v) && (lo_open ? v > lo : v >= lo) && v <= hi;
    };
    struct Rule {
        const char* name;
        double value;
        bool ok;
        const char* range; ///< with its bounds: "a number > 0 and <= 1e9"
        const char* field; ///< the FlagRules field a caller sets
    };
    const Rule checks[] = {
        {"baseline factor", rules.baseline_factor, in(rules.baseline_factor, 0, true, 1e9),
         "a number > 0 and <= 1e9", "baseline_factor"},
        {"regression share", rules.regression_relative,
         in(rules.regression_relative, 0, false, 1e9), "a number >= 0 and <= 1e9", ""},
        {"regression seconds", rules.regression_absolute,
         in(rules.regression_absolute, 0, false, 1e12), "a number >= 0 and <= 1e12", ""},
        {"job limit share", rules.job_limit_share, in(rules.job_limit_share, 0, true, 1),
         "a fraction in (0, 1]", "job_limit_share"},
        {"test minimum baseline", rules.test_min_baseline,
         in(rules.test_min_baseline, 0, false, 1e12), "a number >= 0 and <= 1e12", ""},
    };
    for (const auto& c : checks) {
        if (!c.ok) {
            return fail(ErrorKind::bad_input, std::string("flag rule ") + c.name,
                        std::string("expected ") + c.range + ", got " +
                            printf_string("%.15g", c.value),
                        "", c.field);
        }
    }
    return {};
}

void flag_step(StepResult& result, const FlagRules& rules, const Report* baseline,
               const Report* previous) {
    if (!ran(result)) {
        return;
    }
    if (result.budget && result.wall > *result.budget) {
        add_unique(result.flags,
                   {"budget", "wall " + format_seconds(result.wall) + " is over the budget " +
                                  format_seconds(*result.budget)});
    }
    const StepResult* like = baseline ? native_like(*baseline, result) : nullptr;
    flag_baseline(result, rules, measured(like));
    flag_tests(result, rules, like);
    if (const StepResult* prev = measured(previous ? previous->find(result.name) : nullptr)) {
        double delta = result.wall - prev->wall;
        if (delta > rules.regression_absolute && delta > rules.regression_relative * prev->wall) {
            add_unique(
                result.flags,
                {"regression",
                 printf_string("%s slower than the previous run (%s -> %s, +%.0f%%)",
                               format_seconds(delta).c_str(), format_seconds(prev->wall).c_str(),
                               format_seconds(result.wall).c_str(),
                               prev->wall > 0 ? 100 * delta / prev->wall : 100.0)});
        }
    }
}

Result<void> check_baseline(const Report& baseline, const std::string& name) {
    const bool native = std::ranges::any_of(
        baseline.steps, [](const StepResult& s) { return s.emulation == Emulation::native; });
    if (!native && !baseline.steps.empty()) {
        return fail(ErrorKind::bad_input, "baseline " + name,
                    "none of its steps ran natively: it is an emulated run, not a native baseline",
                    "make the baseline with a native run of the pipeline", "native");
    }
    return {};
}

std::optional<std::string> other_pipeline_note(const Report& baseline, const std::string& name,
                                               std::string_view pipeline) {
    if (pipeline.empty() || baseline.pipeline.empty() || baseline.pipeline == pipeline) {
        return std::nullopt;
    }
    return "baseline " + name + " is a run of the pipeline \"" + baseline.pipeline +
           "\", this one of \"" + std::string(pipeline) +
           "\": its steps are matched to this run's by template, then name (make sure steps of "
           "the same name run the same tests natively, or give the native run of this pipeline)";
}

double projected_total(double elapsed, double remaining, int jobs) {
    return elapsed + std::max(remaining, 0.0) / std::max(jobs, 1);
}

std::optional<Flag> job_limit_flag(double projected, double limit, const FlagRules& rules) {
    if (limit <= 0 || projected <= rules.job_limit_share * limit) {
        return std::nullopt;
    }
    return Flag{"job_limit",
                printf_string("projected total %s is %.0f%% of the job limit %s (flagged above "
                              "%.0f%%)",
                              format_seconds(projected).c_str(), 100 * projected / limit,
                              format_seconds(limit).c_str(), 100 * rules.job_limit_share)};
}

namespace {

bool joinable(const StepResult& s) {
    return ran(s) && s.status != StepStatus::reused && s.emulation != Emulation::native;
}

} // namespace

std::vector<std::string> baseline_misses(const Report& report, const Report& baseline) {
    std::vector<std::string> out;
    for (const auto& s : report.steps) {
        if (joinable(s) && native_like(baseline, s) == nullptr) {
            out.push_back(s.name);
        }
    }
    return out;
}

Result<std::vector<std::string>> join_baseline(Report& report, const Report& baseline,
                                               const std::string& baseline_name,
                                               const FlagRules& rules) {
    EMURUN_TRY(check_baseline(baseline, baseline_name));
    auto misses = baseline_misses(report, baseline);
    const auto joinable_steps = std::ranges::count_if(report.steps, joinable);
    if (!misses.empty() && std::cmp_equal(misses.size(), joinable_steps)) {
        return fail(ErrorKind::bad_input, "baseline " + baseline_name,
                    "none of the report's emulated steps has a native step of the same template "
                    "or name in it (joining it would only wipe the factors the run recorded)",
                    "give the native run of the same version of the pipeline");
    }
    report.factor_basis = rules.basis;
    report.threshold = rules.baseline_factor;
    const auto from_baseline = [](const Flag& f) {
        return f.rule == "baseline" || f.rule == "slow" || f.rule == "emulation_only_failure" ||
               f.rule == "native_only_failure";
    };
    for (auto& step : report.steps) {
        if (!ran(step) || step.status == StepStatus::reused) {
            continue;
        }
        std::erase_if(step.flags, from_baseline);
        step.baseline_wall.reset();
        step.baseline_cpu.reset();
        for (auto& t : step.tests) {
            std::erase_if(t.flags, from_baseline);
            t.baseline_time.reset();
        }
        const StepResult* like = native_like(baseline, step);
        flag_baseline(step, rules, measured(like));
        flag_tests(step, rules, like);
    }
    return misses;
}

void apply_flags(Report& report, const FlagRules& rules, const Report* baseline,
                 const Report* previous) {
    report.factor_basis = rules.basis;
    report.threshold = rules.baseline_factor;
    for (auto& step : report.steps) {
        flag_step(step, rules, baseline, previous);
    }
    bool already =
        std::ranges::any_of(report.flags, [](const Flag& f) { return f.rule == "job_limit"; });
    if (report.job_limit && !already) {
        if (auto f = job_limit_flag(report.wall, *report.job_limit, rules)) {
            report.flags.push_back(*f);
        }
    }
}

namespace {

// Every shard of one run, each once: a missing shard would hide its failures.
Result<void> check_shards(std::span<const Report> reports) {
    const Report& first = reports.front();
    std::vector<int> seen(static_cast<std::size_t>(std::max(first.shard_count, 1)) + 1, 0);
    for (const auto& r : reports) {
        if (r.shard_count != first.shard_count) {
            return fail("merge reports",
                        "shards of different runs: " + std::to_string(first.shard_index) + "/" +
                            std::to_string(first.shard_count) + " and " +
                            std::to_string(r.shard_index) + "/" + std::to_string(r.shard_count),
                        "merge only the shards of one run");
        }
        if (r.shard_index < 1 || r.shard_index > r.shard_count) {
            return fail("merge reports", "shard " + std::to_string(r.shard_index) + " of " +
                                             std::to_string(r.shard_count) + " does not exist");
        }
        if (seen[static_cast<std::size_t>(r.shard_index)]++ != 0) {
            return fail("merge reports",
                        "shard " + std::to_string(r.shard_index) + " of " +
                            std::to_string(r.shard_count) + " is given twice",
                        "pass each shard's report once");
        }
    }
    for (int k = 1; k <= first.shard_count; ++k) {
        if (seen[static_cast<std::size_t>(k)] == 0) {
            return fail("merge reports",
                        "shard " + std::to_string(k) + " of " + std::to_string(first.shard_count) +
                            " is missing",
                        "merge every shard of the run: 1/" + std::to_string(first.shard_count) +
                            " to " + std::to_string(first.shard_count) + "/" +
                            std::to_string(first.shard_count));
        }
    }
    return {};
}

// A test step runs in one shard only: one in two shards is of another run (another pipeline
// version, or a shard given under a second name).
Result<void> check_tests_once(std::span<const Report> shards) {
    std::vector<std::string> seen;
    for (const auto& r : shards) {
        for (const auto& s : r.steps) {
            if (s.kind != StepKind::test || s.status == StepStatus::reused) {
                continue;
            }
            if (std::ranges::find(seen, s.name) != seen.end()) {
                return fail("merge reports",
                            "test step \"" + s.name + "\" is in two shards (shard " +
                                std::to_string(r.shard_index) + "/" +
                                std::to_string(r.shard_count) + " and another)",
                            "merge the shards of one run: each test step runs in one shard");
            }
            seen.push_back(s.name);
        }
    }
    return {};
}

// Every report that records a pipeline digest records the same one (older reports have none).
Result<void> check_digests(std::span<const Report> reports) {
    const Report* first = nullptr;
    for (const auto& r : reports) {
        if (r.pipeline_digest.empty()) {
            continue;
        }
        if (first && r.pipeline_digest != first->pipeline_digest) {
            return fail("merge reports",
                        "they are of two versions of pipeline \"" + r.pipeline + "\" (digest " +
                            first->pipeline_digest + " and " + r.pipeline_digest + ")",
                        "merge the reports of one run, all from the same pipeline file");
        }
        first = first ? first : &r;
    }
    return {};
}

// The reports ran in one image: a step of every shard (a build) or the same reference with the
// same platform and digest in each. Two digests (a tag moved between two CI jobs) would mix two
// images' results in one report. (References differ between checkouts: /builds/ID/app.tar.)
Result<void> check_same_images(std::span<const Report> reports,
                               std::span<const std::string> names) {
    struct Seen {
        const ImageRecord* image;
        const std::string* step;
        std::size_t report;
    };
    const auto name = [&](std::size_t i) {
        return names.size() == reports.size() ? names[i] : "report " + std::to_string(i + 1);
    };
    std::vector<Seen> seen;
    for (std::size_t i = 0; i < reports.size(); ++i) {
        for (const auto& s : reports[i].steps) {
            if (!s.image || s.image->digest.empty()) {
                continue;
            }
            for (const auto& o : seen) {
                const bool same = *o.step == s.name || o.image->reference == s.image->reference;
                if (o.report == i || !same ||
                    (o.image->digest == s.image->digest &&
                     o.image->platform == s.image->platform)) {
                    continue;
                }
                return fail(ErrorKind::bad_input, "merge reports",
                            "they ran in two different images: step \"" + *o.step + "\" of " +
                                name(o.report) + " in " + detail::describe_image(*o.image) +
                                ", step \"" + s.name + "\" of " + name(i) + " in " +
                                detail::describe_image(*s.image),
                            "run every job of one run against the same image (name it by digest, "
                            "or import it once and pass the archive to each job)");
            }
            seen.push_back({&*s.image, &s.name, i});
        }
    }
    return {};
}

// The build job's report (the one that packed artifacts), if any; an error for two.
Result<const Report*> build_report(std::span<const Report> reports) {
    const Report* build = nullptr;
    for (const auto& r : reports) {
        if (r.artifacts && r.artifacts->packed) {
            if (build) {
                return fail("merge reports", "two reports packed artifacts (build jobs)",
                            "merge one build job's report with the shard reports of its run");
            }
            build = &r;
        }
    }
    return build;
}

// Every shard reused the build job's archive, and a shard that reused one has its build report.
Result<void> check_build_link(const Report* build, std::span<const Report> shards) {
    for (const auto& r : shards) {
        const bool reused = r.artifacts && !r.artifacts->packed;
        const std::string shard =
            "shard " + std::to_string(r.shard_index) + "/" + std::to_string(r.shard_count);
        if (reused && !build) {
            return fail(ErrorKind::bad_input, "merge reports",
                        shard + " reused artifacts " + r.artifacts->id +
                            ", but no report of the build job that packed them is given",
                        "add the report of the build job that packed them");
        }
        if (build && (!reused || r.artifacts->id != build->artifacts->id)) {
            return fail("merge reports",
                        shard +
                            (reused ? " reused artifacts " + r.artifacts->id
                                    : std::string(" reused no artifacts")) +
                            ", but the build report packed " + build->artifacts->id,
                        "merge the build job's report with the shard reports of the same run");
        }
    }
    return {};
}

Result<void> add_report(Report& out, const Report& r) {
    if (r.pipeline != out.pipeline) {
        return fail("merge reports",
                    "they are of different pipelines (\"" + out.pipeline + "\" and \"" +
                        r.pipeline + "\")",
                    "merge only the shards of one pipeline run");
    }
    if (r.factor_basis != out.factor_basis) {
        return fail(ErrorKind::bad_input, "merge reports",
                    "their factors divide different times (" +
                        std::string(to_string(out.factor_basis)) + " and " +
                        std::string(to_string(r.factor_basis)) +
                        "): their columns and baseline flags would not compare",
                    "run every job with the same factor basis", "factor_basis");
    }
    if (r.threshold != out.threshold) {
        return fail(ErrorKind::bad_input, "merge reports",
                    "their baseline flags were set over different factors (" +
                        printf_string("%gx and %gx", out.threshold, r.threshold) +
                        "): the merged report could not say which one its flags mean",
                    "run every job with the same threshold", "baseline_factor");
    }
    out.started = std::min(out.started, r.started);
    out.wall = std::max(out.wall, r.wall); // shards run side by side
    out.interrupted_by = out.interrupted_by ? out.interrupted_by : r.interrupted_by;
    for (const auto& f : r.flags) {
        add_unique(out.flags, f);
    }
    for (const auto& s : r.steps) {
        auto it = std::ranges::find(out.steps, s.name, &StepResult::name);
        if (it == out.steps.end()) {
            out.steps.push_back(s);
        } else if (severity(s.status) > severity(it->status)) {
            *it = s;
        }
    }
    return {};
}

// One run's reports: a build job's and its shards' (or one report alone).
Result<Report> merge_run(std::span<const Report> reports) {
    const Report* build = EMURUN_TRY(build_report(reports));
    std::vector<Report> shards;
    for (const auto& r : reports) {
        if (&r != build) {
            shards.push_back(r);
        }
    }
    if (shards.empty()) {
        return fail("merge reports", "only the build job's report is given",
                    "pass the shard reports of its run too");
    }
    EMURUN_TRY(check_shards(shards));
    EMURUN_TRY(check_tests_once(shards));
    EMURUN_TRY(check_build_link(build, shards));
    Report out = shards.front();
    out.steps.clear();
    out.flags.clear();
    out.shard_index = out.shard_count = 1;
    out.artifacts.reset();
    if (build) {
        // The build's steps first: a shard's `reused` copy of one keeps the build's result.
        EMURUN_TRY(add_report(out, *build));
    }
    out.wall = 0;
    for (const auto& r : shards) {
        EMURUN_TRY(add_report(out, r));
    }
    out.wall += build ? build->wall : 0; // the shards start after the build job
    return out;
}

std::string joined(const std::vector<std::string>& names) {
    std::string s;
    for (const auto& n : names) {
        s += (s.empty() ? "" : ", ") + n;
    }
    return s;
}

// The reports grouped by the arches of their per-arch steps (one group per --arch run).
Result<std::vector<std::vector<Report>>> arch_groups(std::span<const Report> reports) {
    std::vector<std::vector<std::string>> keys;
    std::vector<std::vector<Report>> groups;
    for (const auto& r : reports) {
        auto arches = r.arches();
        std::ranges::sort(arches);
        auto it = std::ranges::find(keys, arches);
        if (it == keys.end()) {
            keys.push_back(arches);
            groups.emplace_back();
            it = keys.end() - 1;
        }
        groups[static_cast<std::size_t>(it - keys.begin())].push_back(r);
    }
    std::vector<std::string> seen;
    for (const auto& key : keys) {
        if (groups.size() > 1 && key.empty()) {
            return fail("merge reports",
                        "one report has no per-arch steps, others have (" + joined(keys.back()) +
                            ")",
                        "merge the per-arch reports of one pipeline, or the shards of one run");
        }
        for (const auto& a : key) {
            if (std::ranges::find(seen, a) != seen.end()) {
                return fail(ErrorKind::bad_input, "merge reports",
                            "arch " + a + " is in two reports of different arches",
                            "merge each arch's report once: one run per arch", "arches");
            }
            seen.push_back(a);
        }
    }
    return groups;
}

// A native baseline's report with other runs' reports: it is their baseline, not one more arch
// (the native shards of one run merge as any shards do).
Result<void> check_native_apart(std::span<const Report> reports,
                                std::span<const std::string> names) {
    const auto native = std::ranges::find(reports, true, &Report::native_baseline);
    if (native == reports.end() || std::ranges::all_of(reports, &Report::native_baseline)) {
        return {};
    }
    const auto i = static_cast<std::size_t>(native - reports.begin());
    const std::string name =
        names.size() == reports.size() ? names[i] : "report " + std::to_string(i + 1);
    return fail(ErrorKind::bad_input, "merge reports",
                name + " is the native baseline's report (each per-arch step once, natively), "
                       "not one arch's run",
                "merge the other reports without it: it is their baseline, given to each arch's "
                "run",
                "baseline");
}

} // namespace

Result<Report> merge_reports(std::span<const Report> reports, std::span<const std::string> names) {
    if (reports.empty()) {
        return fail("merge reports", "no reports given", "pass the shard reports to merge");
    }
    EMURUN_TRY(check_native_apart(reports, names));
    EMURUN_TRY(check_digests(reports));
    EMURUN_TRY(check_same_images(reports, names));
    auto groups = EMURUN_TRY(arch_groups(reports));
    Report out = EMURUN_TRY(merge_run(groups.front()));
    for (std::size_t g = 1; g < groups.size(); ++g) {
        const Report part = EMURUN_TRY(merge_run(groups[g]));
        EMURUN_TRY(add_report(out, part)); // wall: the longest, each arch's job runs beside
    }
    return out;
}

} // namespace emurun
