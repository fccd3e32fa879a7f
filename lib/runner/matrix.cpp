// --matrix auto: how many shards keep every CI job under its share of the job limit, projected
// from history (a previous run, or a native baseline times the calibrated slowdowns).
#include <emurun/runner.hpp>

#include <algorithm>

namespace emurun {

History projected_history(const Pipeline& pipeline, const Report* previous, const Report* baseline,
                          const TimeoutMultiplier& multiplier) {
    const History before = previous ? previous->history() : History{};
    const History native = baseline ? baseline->history() : History{};
    History out;
    for (const auto& step : pipeline.steps) {
        if (auto it = before.find(step.name); it != before.end()) {
            out[step.name] = it->second;
        } else if (auto nt = native.find(step.name); nt != native.end()) {
            const double factor = step.emulated() ? multiplier.for_arch(step.arch.value_or("")) : 1;
            out[step.name] = nt->second * factor;
        }
    }
    return out;
}

namespace {

Result<double> build_part(const Pipeline& pipeline, const History& history, const MatrixRequest& r,
                          MatrixChoice& choice) {
    double common = 0;
    for (const auto& step : select_build(pipeline).steps) {
        auto it = history.find(step.name);
        common += it == history.end() ? 0 : it->second;
    }
    const double limit = r.share * r.job_limit;
    if (r.build_once && projected_total(0, common, r.jobs) > limit) {
        return fail(ErrorKind::unspecified, "matrix auto",
                    "the build job alone is projected to take " +
                        format_seconds(projected_total(0, common, r.jobs)) + ", over " +
                        format_seconds(limit) + " (the share of the job limit)",
                    "build faster, or raise the job limit or the share of it a job may take",
                    "job_limit_share");
    }
    choice.common = common;
    return common;
}

} // namespace

Result<MatrixChoice> choose_matrix(const Pipeline& pipeline, const History& history,
                                   const MatrixRequest& r) {
    MatrixChoice choice;
    for (const auto& step : pipeline.steps) {
        choice.unknown += history.contains(step.name) ? 0 : 1;
    }
    if (choice.unknown == pipeline.steps.size()) {
        return fail(ErrorKind::bad_input, "matrix auto",
                    "no history for any step of \"" + pipeline.name + "\"",
                    "give a native run's report as the baseline with calibrated slowdowns (the "
                    "timeout multiplier auto, after emurun calibrate), or a previous report of "
                    "this pipeline",
                    "previous");
    }
    if (r.job_limit <= 0 || !(r.share > 0 && r.share <= 1)) {
        return fail(ErrorKind::bad_input, "matrix auto",
                    "needs a job limit above 0 and a share in (0, 1]", "set the job limit, e.g. 6h",
                    "job_limit");
    }
    const double common = EMURUN_TRY(build_part(pipeline, history, r, choice));
    const double limit = r.share * r.job_limit;
    const auto tests = std::ranges::count(pipeline.steps, StepKind::test, &Step::kind);
    for (int n = 1; n <= std::max<std::ptrdiff_t>(tests, 1); ++n) {
        ShardPlan plan = plan_shards(pipeline, n, history);
        if (n > 1 && std::ranges::any_of(plan.tests, [](const auto& t) { return t.empty(); })) {
            break; // more shards than test groups
        }
        std::vector<double> projected;
        for (double load : plan.load) {
            projected.push_back(projected_total(0, (r.build_once ? 0 : common) + load, r.jobs));
        }
        choice.count = n;
        choice.plan = std::move(plan);
        choice.projected = std::move(projected);
        if (std::ranges::max(choice.projected) <= limit) {
            return choice;
        }
    }
    return fail(ErrorKind::unspecified, "matrix auto",
                "even " + std::to_string(choice.count) + " shards leave one projected at " +
                    format_seconds(std::ranges::max(choice.projected)) + ", over " +
                    format_seconds(limit) + " (the share of the job limit)",
                "split the longest test step, run more steps at once, or raise the job limit",
                "job_limit");
}

} // namespace emurun
