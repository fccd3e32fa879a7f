// Step log files: one per step, never shared, and a step whose log could not be written fails.
#include "runner/runner_internal.hpp"
#include "util/file.hpp"
#include "util/hash.hpp"

#include <emurun/json.hpp>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>
#include <optional>
#include <sys/stat.h>
#include <unistd.h>
#include <utility>

namespace emurun::detail {
namespace {

constexpr std::size_t k_max_stem = 100; // bytes of the name kept in a log's file name

bool safe_char(char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.';
}

} // namespace

std::string log_file_name(std::string_view step) {
    bool as_is = !step.empty() && step.front() != '.' && step.size() <= k_max_stem &&
                 std::ranges::all_of(step, safe_char);
    if (as_is) {
        return std::string(step) + ".log";
    }
    std::string out = step.empty() || step.front() == '.' ? "step" : "";
    for (char c : step.substr(0, k_max_stem)) {
        out += safe_char(c) ? c : '_';
    }
    // A stable hash, so a log's name is predictable.
    return out + "-" + util::fnv1a64_hex(step) + ".log";
}

std::string attempt_log_file_name(std::string_view step, std::size_t number) {
    const std::string own = log_file_name(step);
    // '@' is in no step log's name (log_file_name keeps letters, digits, '-', '_' and '.'):
    // "a.attempt1.log" was also the log of a step named "a.attempt1", which overwrote it.
    return own.substr(0, own.size() - 4) + "@attempt" + std::to_string(number) + ".log";
}

Result<void> check_log_names(const Pipeline& pipeline, const std::filesystem::path& log_dir) {
    if (!is_utf8(log_dir.string())) {
        return fail(ErrorKind::bad_input, "log directory " + log_dir.string(),
                    "its name is not valid UTF-8, and the report names every log in JSON text",
                    "choose a log directory whose path is UTF-8", "log_dir");
    }
    std::map<std::string, const std::string*> owner;
    for (const auto& step : pipeline.steps) {
        auto [it, fresh] = owner.emplace(log_file_name(step.name), &step.name);
        if (!fresh) {
            return fail("steps \"" + *it->second + "\" and \"" + step.name + "\"",
                        "both would write the log " + (log_dir / it->first).string(),
                        "rename one of them");
        }
    }
    return {};
}

Result<void> check_log_dir(const std::filesystem::path& log_dir) {
    const std::string what = "log directory " + log_dir.string();
    const auto refuse = [&what](ErrorKind kind, std::string why) {
        return fail(kind, what, std::move(why), "choose a log directory emurun can write to",
                    "log_dir");
    };
    // The directory itself, else the nearest existing ancestor it would be created in.
    std::filesystem::path dir = log_dir;
    struct stat st {};
    while (::stat(dir.c_str(), &st) != 0) {
        const std::filesystem::path up = dir.parent_path();
        const bool top = dir == "." || up == dir; // "." or "/" gone: nothing above to look at
        if ((errno != ENOENT && errno != ENOTDIR) || top) {
            return refuse(system_error("stat " + dir.string(), errno).kind,
                          "stat " + dir.string() + " failed: " + std::strerror(errno));
        }
        dir = up.empty() ? std::filesystem::path(".") : up;
    }
    const bool itself = dir == log_dir;
    if (!S_ISDIR(st.st_mode)) {
        return refuse(ErrorKind::bad_input, (itself ? "it" : dir.string()) + " is not a directory");
    }
    if (::access(dir.c_str(), W_OK | X_OK) != 0) {
        return refuse(
            ErrorKind::permission,
            (itself ? "cannot write in it: " : "cannot create it in " + dir.string() + ": ") +
                std::strerror(errno));
    }
    return {};
}

void write_reason_log(StepResult& result) {
    std::error_code ec;
    std::filesystem::remove(result.log, ec); // an earlier run's log of the step is not this one
    const std::string line = std::string(to_string(result.status)) + ": " + result.message + "\n";
    if (!util::append_file(result.log, line)) {
        result.log.clear(); // the report names no log rather than a missing one
    }
}

void note_log_error(StepResult& result, const Error& error) {
    std::string why = "its log is incomplete: " + error.message();
    if (result.status == StepStatus::passed) {
        result.status = StepStatus::failed;
        why = "exited 0, but " + why;
    }
    result.message += (result.message.empty() ? "" : "; ") + why;
}

} // namespace emurun::detail

namespace emurun {
namespace {

namespace fs = std::filesystem;

// An output is written as a temporary file in its directory, renamed over it: that directory
// must exist and take new files, checked before the run rather than found out after it.
Result<void> check_output_dir(const fs::path& out, const char* hint) {
    const fs::path dir = out.parent_path().empty() ? fs::path(".") : out.parent_path();
    struct stat st {};
    if (::stat(dir.c_str(), &st) != 0) {
        return fail("output " + out.string(),
                    "its directory " + dir.string() +
                        (errno == ENOENT ? " does not exist"
                                         : " cannot be used: " + std::string(std::strerror(errno))),
                    hint);
    }
    if (!S_ISDIR(st.st_mode)) {
        return fail("output " + out.string(), dir.string() + " is not a directory", hint);
    }
    if (::access(dir.c_str(), W_OK | X_OK) != 0) {
        return fail("output " + out.string(),
                    "cannot write in " + dir.string() + ": " + std::strerror(errno), hint);
    }
    return {};
}

// One output's identity, computed once: its path with symlinks and ".." resolved, and (when it
// exists) its inode, which catches hard links too.
struct FileIdentity {
    fs::path canonical;
    std::optional<std::pair<dev_t, ino_t>> inode;

    explicit FileIdentity(const fs::path& p) {
        std::error_code ec;
        canonical = fs::weakly_canonical(fs::absolute(p, ec), ec);
        if (ec) {
            canonical.clear();
        }
        struct stat st {};
        if (::stat(p.c_str(), &st) == 0) {
            inode = std::pair{st.st_dev, st.st_ino};
        }
    }
    /// The same file as `other`, whose canonical path is `other_canonical` (empty: unknown).
    [[nodiscard]] bool same_as(const fs::path& other, const fs::path& other_canonical) const {
        if (!canonical.empty() && canonical == other_canonical) {
            return true;
        }
        struct stat st {};
        return inode && ::stat(other.c_str(), &st) == 0 &&
               *inode == std::pair{st.st_dev, st.st_ino};
    }
    [[nodiscard]] bool same_as(const fs::path& other) const {
        return same_as(other, FileIdentity(other).canonical);
    }
};

} // namespace

Result<void> check_run_outputs(const Pipeline& pipeline, const RunnerOptions& options,
                               std::span<const std::filesystem::path> outputs) {
    EMURUN_TRY(detail::check_log_names(pipeline, options.log_dir));
    EMURUN_TRY(detail::check_log_dir(options.log_dir));
    const char* hint = "write the reports somewhere else";
    // Log names are plain file names (check_log_names): each log's canonical path is the log
    // dir's plus its name, so the dir is resolved once, not once per step and output.
    const fs::path log_dir = FileIdentity(options.log_dir).canonical;
    for (std::size_t i = 0; i < outputs.size(); ++i) {
        const fs::path& out = outputs[i];
        EMURUN_TRY(util::check_replaceable(out));
        const FileIdentity id(out);
        if (!pipeline.source.empty() && id.same_as(pipeline.source)) {
            return fail("output " + out.string(), "it is the pipeline file " + pipeline.source,
                        hint);
        }
        for (std::size_t j = 0; j < i; ++j) {
            if (id.same_as(outputs[j])) {
                return fail("output " + out.string(),
                            "it is also the output " + outputs[j].string(), hint);
            }
        }
        const bool near_logs = id.canonical.empty() || log_dir.empty() ||
                               id.canonical.parent_path() == log_dir || id.inode.has_value();
        for (const auto& step : pipeline.steps) {
            const std::string name = detail::log_file_name(step.name);
            if (near_logs &&
                id.same_as(options.log_dir / name, log_dir.empty() ? fs::path() : log_dir / name)) {
                return fail("output " + out.string(), "it is the log of step \"" + step.name + "\"",
                            hint);
            }
        }
        EMURUN_TRY(check_output_dir(out, hint));
    }
    return {};
}

} // namespace emurun
