// emurun report show|compare|merge: read reports, print or join them.
#include "cli.hpp"
#include "cli_common.hpp"
#include "cli_output.hpp"

#include <emurun/json.hpp>
#include <emurun/report.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <iostream>
#include <memory>
#include <optional>
#include <utility>

#include <spdlog/spdlog.h>

namespace emurun::cli {
namespace {

struct ReportArgs {
    std::string format = "table";
    std::vector<std::string> files;
    std::string before, after, output, junit, factor_basis, log_dir, baseline;
    std::optional<double> threshold; ///< --threshold: else the report's own (its run's)
    bool json = false;
};

// The logs a report names are read only beneath a log dir the user names (none by default).
JunitLogs junit_logs(const ReportArgs& a) {
    return a.log_dir.empty() ? JunitLogs{} : JunitLogs{a.log_dir};
}

/// --baseline: the native run of another job joined now (factors and baseline flags).
void join(Report& r, const ReportArgs& a) {
    if (a.baseline.empty()) {
        return;
    }
    const Report baseline = unwrap(Report::load(a.baseline));
    FlagRules rules;
    rules.basis = factor_basis_from(a.factor_basis).value_or(r.factor_basis);
    rules.baseline_factor = a.threshold.value_or(r.threshold); // the run's, as it flagged
    unwrap(check_rules(rules));
    if (auto note = other_pipeline_note(baseline, a.baseline, r.pipeline)) {
        spdlog::warn("{}", *note);
    }
    warn_baseline_misses(unwrap(join_baseline(r, baseline, a.baseline, rules)), a.baseline);
}

int show(const ReportArgs& a) {
    for (const auto& f : a.files) {
        Report r = unwrap(Report::load(f));
        if (auto basis = factor_basis_from(a.factor_basis)) {
            r.factor_basis = *basis; // the factor columns; flags too only with --baseline
        }
        join(r, a);
        if (a.format == "json") {
            std::cout << json_text(r.to_json()) << '\n';
        } else if (a.format == "junit") {
            std::cout << to_junit(r, junit_logs(a));
        } else if (a.format == "markdown") {
            std::cout << to_markdown(r);
        } else {
            std::cout << r.pipeline << " (" << r.started << ", " << format_seconds(r.wall)
                      << (r.succeeded() ? ", passed" : ", FAILED") << ")\n"
                      << to_table(r, table_style());
        }
    }
    return 0;
}

/// "native", "emulated" or "mixed": how a report's steps ran.
std::string run_kind(const Report& r) {
    const auto native = std::ranges::count_if(
        r.steps, [](const StepResult& s) { return s.emulation == Emulation::native; });
    return native == 0 ? "emulated" : std::cmp_equal(native, r.steps.size()) ? "native" : "mixed";
}

/// Comparing a native run with an emulated one measures emulation, not a change: said.
void warn_native_vs_emulated(const Report& before, const Report& after, const ReportArgs& a) {
    const std::string b = run_kind(before), c = run_kind(after);
    if (b != c && b != "mixed" && c != "mixed" && !before.steps.empty() && !after.steps.empty()) {
        spdlog::warn("{} is a {} run and {} an {} one: the changes below are emulation's cost, not "
                     "a regression (for emulation factors: emurun report show --baseline {} {})",
                     a.before, b, a.after, c, b == "native" ? a.before : a.after,
                     b == "native" ? a.after : a.before);
    }
}

int compare(const ReportArgs& a) {
    Report before = unwrap(Report::load(a.before));
    Report after = unwrap(Report::load(a.after));
    warn_native_vs_emulated(before, after, a);
    join(before, a);
    join(after, a);
    if (a.json) {
        std::cout << json_text(compare_json(before, after)) << '\n';
    } else {
        std::cout << compare_table(before, after);
    }
    return 0;
}

int merge(const ReportArgs& a) {
    std::vector<Report> reports;
    for (const auto& f : a.files) {
        reports.push_back(unwrap(Report::load(f)));
    }
    Report merged = unwrap(merge_reports(reports, a.files));
    unwrap(merged.save(a.output));
    if (!a.junit.empty()) {
        unwrap(save_junit(merged, a.junit, junit_logs(a)));
    }
    std::cout << to_table(merged, table_style());
    return merged.succeeded() ? 0 : 1;
}

constexpr const char* k_log_dir_help =
    "JUnit: put the tails of the logs the reports name into system-out, each read only from "
    "beneath this dir (default: none is read; a report can name any file)";

} // namespace

void add_report(CLI::App& root, Action& action) {
    auto* sub = root.add_subcommand("report", "Show, compare and merge run reports");
    sub->require_subcommand(1);
    auto a = std::make_shared<ReportArgs>();
    auto* s = sub->add_subcommand("show", "Print reports as a table, json, junit or markdown");
    s->add_option("reports", a->files, "Report files")->required();
    auto* format = s->add_option("--format", a->format, "table (default), json, junit, markdown")
                       ->check(CLI::IsMember({"table", "json", "junit", "markdown"}));
    // --json as every command that prints data spells it: --format json
    s->add_flag_callback(
         "--json", [a] { a->format = "json"; }, "Machine-readable: --format json")
        ->excludes(format);
    s->add_option("--factor-basis", a->factor_basis,
                  "The factor columns on wall or cpu time (default: the report's, as the run's "
                  "--factor-basis)")
        ->check(CLI::IsMember({"wall", "cpu"}));
    s->add_option("--log-dir", a->log_dir, k_log_dir_help);
    auto* show_baseline = s->add_option("--baseline", a->baseline,
                                        "A native run's report (emurun run --native) made in "
                                        "another job: factors and baseline flags computed "
                                        "against it now");
    // Without --baseline nothing is flagged against a baseline now: refused, not ignored.
    const auto threshold = [a](CLI::App* app, CLI::Option* baseline) {
        app->add_option_function<double>(
               "--threshold", [a](const double& v) { a->threshold = v; },
               "With --baseline: the factor that flags (default: the one the run used, its "
               "--threshold)")
            ->needs(baseline);
    };
    threshold(s, show_baseline);
    s->callback([&action, a] { action = [a] { return show(*a); }; });
    auto* c = sub->add_subcommand("compare", "Step walls of two reports side by side");
    c->add_option("before", a->before, "Older report")->required();
    c->add_option("after", a->after, "Newer report")->required();
    c->add_flag("--json", a->json,
                "Machine-readable: {steps: [{name, before, after, change, before_status, "
                "after_status}], total}");
    threshold(c, c->add_option("--baseline", a->baseline,
                               "A native run's report: both reports' factors against it (x "
                               "baseline lines)"));
    c->callback([&action, a] { action = [a] { return compare(*a); }; });
    auto* m = sub->add_subcommand("merge", "Join shard reports into one (exit 1 if a step failed)");
    m->add_option("reports", a->files, "Shard reports")->required();
    m->add_option("-o,--output", a->output, "Merged JSON report")->required();
    m->add_option("--junit", a->junit, "Also write the merged JUnit XML here");
    m->add_option("--log-dir", a->log_dir, k_log_dir_help);
    m->callback([&action, a] { action = [a] { return merge(*a); }; });
}

} // namespace emurun::cli
