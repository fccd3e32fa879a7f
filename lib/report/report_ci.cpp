// CI log conventions: folded sections (GitHub groups, GitLab sections) and log tails for JUnit.
#include <emurun/report.hpp>

#include "util/env.hpp"
#include "util/file.hpp"

#include <cstdint>
#include <filesystem>

namespace emurun {
namespace {

bool env_is_true(const char* name) {
    return util::get_env(name) == "true";
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

// `markdown` cut at a line so that a summary file of `used` bytes stays within
// k_step_summary_max (GitHub refuses the whole summary over it), with a note where it all is.
std::string within(std::string markdown, std::uintmax_t used) {
    const std::string note = "\n… cut here: GitHub's step summary holds at most 1 MiB; the "
                             "whole summary is in the run's report "
                             "(emurun report show --format markdown REPORT)\n";
    const std::size_t room =
        used >= k_step_summary_max ? 0 : k_step_summary_max - static_cast<std::size_t>(used);
    if (markdown.size() <= room) {
        return markdown;
    }
    if (room <= note.size()) {
        return {};
    }
    const auto cut = markdown.rfind('\n', room - note.size() - 1);
    markdown.resize(cut == std::string::npos ? 0 : cut + 1);
    return markdown + note;
}

} // namespace

CiLog ci_log_from_env() {
    if (env_is_true("GITHUB_ACTIONS")) {
        return CiLog::github;
    }
    return env_is_true("GITLAB_CI") ? CiLog::gitlab : CiLog::plain;
}

std::vector<std::string> ci_annotations(const Report& report, CiLog ci) {
    return ci == CiLog::github ? annotations(report) : std::vector<std::string>{};
}

Result<void> append_step_summary(const Report& report) {
    const auto summary = util::get_env("GITHUB_STEP_SUMMARY");
    if (!summary) {
        return {};
    }
    std::error_code ec;
    const auto size = std::filesystem::file_size(*summary, ec); // what earlier steps wrote
    return util::append_file(*summary, within(to_markdown(report), ec ? 0 : size));
}

Result<std::optional<Shard>> ci_shard_from_env() {
    const auto index = util::get_env("CI_NODE_INDEX");
    const auto total = util::get_env("CI_NODE_TOTAL");
    if (!index || !total) {
        return std::nullopt;
    }
    auto shard = parse_shard(*index + "/" + *total);
    if (!shard) {
        return fail("CI_NODE_INDEX=" + *index + ", CI_NODE_TOTAL=" + *total, shard.error().why,
                    "unset them, or give the shard as K/N (option shard)");
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

std::string log_tail(const std::filesystem::path& log, std::size_t max_lines,
                     std::size_t max_bytes) {
    std::uint64_t size = 0;
    std::string text = util::read_tail(log, max_bytes, &size);
    const bool mid_file = size > text.size();
    // Keep the last max_lines lines (a final newline does not start another line); when the
    // read began mid-file, its first, partial line goes too.
    std::size_t cut = 0, found = 0;
    std::size_t p = !text.empty() && text.back() == '\n' ? text.size() - 1 : text.size();
    while (p > 0) {
        const std::size_t nl = text.rfind('\n', p - 1);
        if (nl == std::string::npos) {
            break;
        }
        if (++found == max_lines) {
            cut = nl + 1;
            break;
        }
        p = nl;
    }
    if (cut == 0 && mid_file) {
        const std::size_t nl = text.find('\n');
        cut = nl == std::string::npos ? 0 : nl + 1;
    }
    text.erase(0, cut);
    const std::uint64_t omitted = size - text.size();
    if (omitted > 0) {
        text = "[" + std::to_string(omitted) + " earlier bytes omitted; full log: " + log.string() +
               "]\n" + text;
    }
    return text;
}

} // namespace emurun
