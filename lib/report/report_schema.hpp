#pragma once
// The report reader's rules that cmake/schema/report.schema.json states: generated from the
// schema at build time (cmake/SchemaKeys.cmake), so the reader and the reference cannot drift.

#include <span>
#include <string_view>

namespace emurun::detail {

/// The keys every report has (the schema's top-level "required").
[[nodiscard]] std::span<const std::string_view> report_required_keys();
/// The keys every step has (definitions.step.required); a key may still be null.
[[nodiscard]] std::span<const std::string_view> step_required_keys();
/// The rules a flag may have (definitions.flags.items.properties.rule.enum).
[[nodiscard]] std::span<const std::string_view> flag_rules();

} // namespace emurun::detail
