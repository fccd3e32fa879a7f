// emurun_ci: the CI conventions of emurun's CLI (GitHub Actions, GitLab CI), apart from the
// library: which CI's log format applies, folded sections, annotations, the step summary and
// the shard a CI job asks for. The library knows reports, not CIs; the CLI links this target
// (so do emurun's unit tests). Not installed.
#pragma once

#include <emurun/error.hpp>
#include <emurun/pipeline.hpp>
#include <emurun/report.hpp>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace emurun {

/// The most a run adds to $GITHUB_STEP_SUMMARY (GitHub refuses a step summary over 1 MiB).
inline constexpr std::size_t k_step_summary_max = std::size_t{1} << 20;

/// Whose log conventions apply: GITHUB_ACTIONS=true gives github, GITLAB_CI=true gitlab.
enum class CiLog { plain, github, gitlab };
[[nodiscard]] CiLog ci_log_from_env();
/// The annotations a finished run prints on `ci`: annotations(report) on GitHub, none elsewhere.
[[nodiscard]] std::vector<std::string> ci_annotations(const Report& report, CiLog ci);
/// Append to_markdown(report) to $GITHUB_STEP_SUMMARY (GitHub's job summary) when it is set,
/// as append_markdown does; nothing when unset or empty. The file stays within
/// k_step_summary_max: a longer summary is cut at a line, with a note saying where it all is.
[[nodiscard]] Result<void> append_step_summary(const Report& report);
/// The shard a CI job asks for when none is given: GitLab's `parallel:` sets CI_NODE_INDEX
/// (1-based, as Shard::index) and CI_NODE_TOTAL. nullopt when either is unset or empty; an
/// error naming both when they do not make a shard (parse_shard's rules).
[[nodiscard]] Result<std::optional<Shard>> ci_shard_from_env();
/// The line that opens a collapsed section of CI log output: "::group::TITLE" (GitHub), a
/// section_start marker named after `id` (GitLab, collapsed); empty for plain. Ends in '\n'.
[[nodiscard]] std::string fold_start(CiLog ci, std::string_view id, std::string_view title,
                                     std::int64_t unix_time);
/// The line that closes it ("::endgroup::", GitLab's section_end); empty for plain.
[[nodiscard]] std::string fold_end(CiLog ci, std::string_view id, std::int64_t unix_time);

} // namespace emurun
