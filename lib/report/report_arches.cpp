// The per-arch view of a report (docs/guides/pipelines.md).
#include "report/report_arches.hpp"

#include "report/report_text.hpp"

#include <algorithm>

namespace emurun::detail {
namespace {

std::string arch_cell(const StepResult& s, FactorBasis basis) {
    std::string cell = s.status == StepStatus::passed ? "" : std::string(to_string(s.status)) + " ";
    cell += format_seconds(s.wall);
    if (auto f = s.factor(basis)) {
        cell += " " + number(*f, "%.1fx");
    }
    return cell;
}

} // namespace

std::string basis_label(FactorBasis basis) {
    return basis == FactorBasis::cpu ? "CPU" : "wall";
}

std::vector<std::vector<std::string>> arch_rows(const Report& report) {
    const auto arches = report.arches();
    if (arches.empty()) {
        return {};
    }
    std::vector<std::vector<std::string>> rows{{"step"}};
    for (const auto& a : arches) {
        rows.front().push_back(printable(a));
    }
    std::vector<std::string> templates;
    for (const auto& s : report.steps) {
        if (s.template_name.empty()) {
            continue;
        }
        auto it = std::ranges::find(templates, s.template_name);
        if (it == templates.end()) {
            templates.push_back(s.template_name);
            rows.emplace_back(arches.size() + 1, "-");
            rows.back().front() = printable(s.template_name);
            it = templates.end() - 1;
        }
        auto column = std::ranges::find(arches, s.arch) - arches.begin();
        rows[static_cast<std::size_t>(it - templates.begin()) + 1]
            [static_cast<std::size_t>(column) + 1] = arch_cell(s, report.factor_basis);
    }
    return rows;
}

} // namespace emurun::detail
