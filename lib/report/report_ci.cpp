// Log tails: the last lines of a step's log, as JUnit's system-out and the table show them.
#include <emurun/report.hpp>

#include "report/report_text.hpp"

#include "util/file.hpp"

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <fcntl.h>
#include <filesystem>

namespace emurun {

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
