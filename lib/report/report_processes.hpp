// Private: a stopped step's process tree in the report's JSON.
#pragma once

#include "util/json.hpp"

#include <emurun/report.hpp>

namespace emurun::detail {

/// [{"pid", "ppid", "state", "wchan", "cpu", "cmdline"}...]
util::Json processes_json(const std::vector<ProcessRecord>& processes);
/// The step's "processes" member; absent gives none. Errors name the place.
Result<std::vector<ProcessRecord>> processes_from(const util::Json& step, const util::Place& at);

} // namespace emurun::detail
