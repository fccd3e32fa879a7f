// CI log conventions: folded sections (GitHub groups, GitLab sections) and log tails for JUnit.
#include <emurun/report.hpp>

#include "report/report_text.hpp"

#include "util/env.hpp"
#include "util/file.hpp"

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <fcntl.h>
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

std::string log_tail(const std::filesystem::path& log, std::size_t max_lines,
                     std::size_t max_bytes) {
    std::uint64_t skipped = 0;
    std::string text = util::read_tail(log, max_bytes, &skipped);
    return detail::tail_text(std::move(text), skipped, max_lines, log.string());
}

std::string detail::tail_text(std::string text, std::uint64_t skipped, std::size_t max_lines,
                              const std::string& name) {
    const bool mid_file = skipped > 0;
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
    // Counted from what was skipped and cut, never from the size (a /proc file says 0, a log
    // still being written grows): "18446744073709550201 earlier bytes" was size minus more.
    const std::uint64_t omitted = skipped + cut;
    if (omitted > 0) {
        text = "[" + std::to_string(omitted) + " earlier bytes omitted; full log: " + name + "]\n" +
               text;
    }
    return text;
}

namespace detail {

LogTails::LogTails(const std::optional<std::filesystem::path>& log_dir) {
    if (!log_dir) {
        m_why = "this report was read from a file, not written by this run; a log is read only "
                "beneath the log dir of the run that wrote it";
        return;
    }
    std::error_code ec;
    m_dir = std::filesystem::absolute(*log_dir, ec).lexically_normal();
    m_fd = util::UniqueFd(::open(m_dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!m_fd) {
        m_why = "log dir " + m_dir.string() + ": " + std::strerror(errno);
    }
}

std::string LogTails::tail(const std::filesystem::path& log) const {
    if (log.empty()) {
        return {};
    }
    if (!m_fd) {
        return "[log not included: " + m_why + "]";
    }
    std::error_code ec;
    const auto rel =
        std::filesystem::absolute(log, ec).lexically_normal().lexically_relative(m_dir);
    if (rel.empty() || *rel.begin() == ".." || rel == ".") {
        return "[log not included: outside the run's log dir " + m_dir.string() + "]";
    }
    const util::UniqueFd fd(
        util::openat2_beneath(m_fd.get(), rel.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY, 0));
    if (!fd) {
        if (errno == ENOENT) { // (a relative log is taken from the current directory)
            return "[log not included: no such file in the run's log dir " + m_dir.string() + "]";
        }
        return errno == EXDEV || errno == ELOOP
                   ? "[log not included: it leads outside the run's log dir " + m_dir.string() +
                         " (a symlink)]"
                   : "[log not included: open failed: " + std::string(std::strerror(errno)) + "]";
    }
    std::uint64_t skipped = 0;
    std::string text = util::read_tail_fd(fd.get(), k_log_tail_bytes, &skipped);
    return tail_text(std::move(text), skipped, k_log_tail_lines, log.string());
}

} // namespace detail

} // namespace emurun
