// Private: "arches" — a step written once with ${arch}, ${triplet}, ${debian_arch} (or
// "per_arch": true) becomes one step per arch; --native makes each such template one native
// step for the host (docs/guides/pipelines.md).
#pragma once

#include "util/json.hpp"

#include <emurun/arch.hpp>
#include <emurun/pipeline.hpp>

#include <cstddef>
#include <set>
#include <string>
#include <vector>

namespace emurun::detail {

/// What to expand: the arches (canonical, in order), or the host alone for the native baseline.
struct ArchPlan {
    bool active = false; ///< the pipeline has "arches"
    std::vector<const Arch*> arches;
    const Arch* native = nullptr; ///< set: the native baseline run for this host arch
    bool defaults_have_arch = false;
};

/// One step object to load: a step as written, or one arch's instance of a template.
struct StepSource {
    util::Json obj;
    std::size_t index = 0;     ///< steps[index] in the file
    std::string template_name; ///< per-arch instances: the step's name as written
    std::string arch;          ///< per-arch instances: canonical arch
};

/// The plan from the document's "arches" and the caller's selection (an arch outside the
/// pipeline's arches, --arch without "arches", --native with --arch are errors).
Result<ArchPlan> plan_arches(const util::Json& root, const util::Place& at,
                             const ArchSelection& selection);

/// Error when `defaults` uses a placeholder (placeholders belong to the steps).
Result<void> check_defaults_placeholders(const util::Json& defaults, const util::Place& at);

/// Every step object to load, in file order, templates expanded; `dropped` receives the names
/// of steps left out of a native run ("native": false).
Result<std::vector<StepSource>> expand_steps(const util::Json& steps, const util::Place& at,
                                             const ArchPlan& plan, std::set<std::string>& dropped);

/// A need naming a template becomes the same arch's instance (for an instance) or every
/// instance (for a step that is not per arch); a need on a dropped step goes away.
void rewire_needs(std::vector<Step>& steps, const std::set<std::string>& dropped);

} // namespace emurun::detail
