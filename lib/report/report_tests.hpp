// Private: a step's own test cases (StepResult::tests) in each report format.
#pragma once

#include <emurun/report.hpp>

#include <nlohmann/json.hpp>

#include <string>

namespace emurun::detail {

/// The longest time a report or a JUnit file may give, in seconds (some 31 years: a step's, a
/// run's or a test's time, never an overflow's): the report reader and the JUnit reader agree.
inline constexpr double k_max_seconds = 1e9;

/// "41 passed, 1 failed, 2 skipped" (only the statuses that occur).
std::string test_counts(const StepResult& step);
/// The table's lines for the steps with tests: a count line each, then their failing and
/// flagged tests and the slowest few, each list capped (docs/guides/pipelines.md).
std::string tests_table(const Report& report);
/// The Markdown section for the steps with tests: a count heading and a table of the same
/// tests as tests_table. Empty when no step has tests.
std::string tests_markdown(const Report& report);
/// One <testsuite> per step with tests, each test a <testcase> (failure, error, skipped; flags
/// as properties and in system-out), indented for <testsuites>.
std::string tests_junit(const Report& report);

/// report compare's tests: [{step, classname, name, before, after, change, before_status,
/// after_status}] for each test of `after` (before's fields null when it had no such test).
nlohmann::json compare_tests_json(const Report& before, const Report& after);
/// report compare's lines for tests whose status changed between the reports, capped.
std::string compare_tests_text(const Report& before, const Report& after);

/// Totals over every step's tests, for the <testsuites> counts.
struct TestTotals {
    std::size_t tests = 0, failures = 0, errors = 0, skipped = 0;
};
TestTotals test_totals(const Report& report);

} // namespace emurun::detail
