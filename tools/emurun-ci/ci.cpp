// CI log conventions: folded sections (GitHub groups, GitLab sections), annotations, the step
// summary and CI_NODE_* shards.
#include "emurun_ci.hpp"

#include <cstdlib>

namespace emurun {
namespace {

/// An environment variable, nullopt when unset or empty.
std::optional<std::string> env(const char* name) {
    const char* v = std::getenv(name);
    return v != nullptr && *v != '\0' ? std::optional<std::string>(v) : std::nullopt;
}

// GitLab section names may hold only [A-Za-z0-9_.-].
std::string section_name(std::string_view id) {
    std::string out = "emurun_";
    for (char c : id) {
        const bool keep = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                          (c >= '0' && c <= '9') || c == '_' || c == '.' || c == '-';
        out += keep ? c : '_';
    }
    return out;
}

// A title on one line: a newline would end the group header early.
std::string one_line(std::string_view text) {
    std::string out(text);
    for (char& c : out) {
        if (c == '\n' || c == '\r') {
            c = ' ';
        }
    }
    return out;
}

} // namespace

CiLog ci_log_from_env() {
    if (env("GITHUB_ACTIONS") == "true") {
        return CiLog::github;
    }
    return env("GITLAB_CI") == "true" ? CiLog::gitlab : CiLog::plain;
}

std::vector<std::string> ci_annotations(const Report& report, CiLog ci) {
    return ci == CiLog::github ? annotations(report) : std::vector<std::string>{};
}

Result<void> append_step_summary(const Report& report) {
    const auto summary = env("GITHUB_STEP_SUMMARY");
    if (!summary) {
        return {};
    }
    return append_markdown(report, *summary,
                           MarkdownCap{k_step_summary_max,
                                       "\n… cut here: GitHub's step summary holds at most 1 MiB; "
                                       "the whole summary is in the run's report (emurun report "
                                       "show --format markdown REPORT)\n"});
}

Result<std::optional<Shard>> ci_shard_from_env() {
    const auto index = env("CI_NODE_INDEX");
    const auto total = env("CI_NODE_TOTAL");
    if (!index || !total) {
        return std::nullopt;
    }
    auto shard = parse_shard(*index + "/" + *total);
    if (!shard) {
        return fail(ErrorKind::bad_input, "CI_NODE_INDEX=" + *index + ", CI_NODE_TOTAL=" + *total,
                    shard.error().why, "unset them, or give the shard as K/N", "shard");
    }
    return *shard;
}

std::string fold_start(CiLog ci, std::string_view id, std::string_view title,
                       std::int64_t unix_time) {
    if (ci == CiLog::github) {
        return "::group::" + one_line(title) + "\n";
    }
    if (ci == CiLog::gitlab) {
        return "\033[0Ksection_start:" + std::to_string(unix_time) + ":" + section_name(id) +
               "[collapsed=true]\r\033[0K" + one_line(title) + "\n";
    }
    return {};
}

std::string fold_end(CiLog ci, std::string_view id, std::int64_t unix_time) {
    if (ci == CiLog::github) {
        return "::endgroup::\n";
    }
    if (ci == CiLog::gitlab) {
        return "\033[0Ksection_end:" + std::to_string(unix_time) + ":" + section_name(id) +
               "\r\033[0K\n";
    }
    return {};
}

} // namespace emurun
