// Private: the per-arch view of a report: one row per template, one column per arch.
#pragma once

#include <emurun/report.hpp>

#include <string>
#include <vector>

namespace emurun::detail {

/// {"step", arch...} then one row per template of per-arch steps (first appearance order),
/// each cell "12.3s 4.1x" (wall, x baseline), a status that is not passed before the wall
/// ("failed 3.0s"), or "-" for an arch without that step. Empty without per-arch steps.
std::vector<std::vector<std::string>> arch_rows(const Report& report);
/// "wall" or "CPU": what a factor column divides, for headers.
std::string basis_label(FactorBasis basis);

} // namespace emurun::detail
