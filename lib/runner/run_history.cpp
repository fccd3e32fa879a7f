// The timing history `emurun run` keeps by itself, per pipeline, so that a second run schedules
// longest-first without being given --previous (as ctest keeps its cost data): one small JSON
// file per pipeline in a directory (the cache dir's run-history/ by default, or one a CI
// caches), each step's last measured wall time.
#include "util/cache.hpp"
#include "util/file.hpp"
#include "util/hash.hpp"

#include <emurun/runner.hpp>

#include <nlohmann/json.hpp>

#include <chrono>

namespace emurun {
namespace fs = std::filesystem;

namespace {

constexpr int k_schema = 1;

/// Letters, digits, '-', '_' and '.' of the pipeline's name (the file's readable part).
std::string file_safe(std::string_view name) {
    std::string out;
    for (char c : name.substr(0, 40)) {
        const bool keep = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                          (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.';
        out += keep ? c : '_';
    }
    return out.empty() ? "pipeline" : out;
}

/// NAME-HEX.json, as run_history_file names them.
bool is_history_name(const std::string& f) {
    const auto dash = f.rfind('-');
    return f.ends_with(".json") && dash != std::string::npos && f.size() - dash == 22 &&
           f.find_first_not_of("0123456789abcdef", dash + 1) == dash + 17;
}

/// Histories nobody has written for k_keep_days (pipelines of deleted temp dirs, old
/// branches) are removed, so the directory does not grow with every pipeline path ever run.
constexpr int k_keep_days = 30;

void prune(const fs::path& dir) {
    std::error_code ec;
    const auto cutoff = fs::file_time_type::clock::now() - std::chrono::hours(24 * k_keep_days);
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
        const std::string f = it->path().filename().string();
        std::error_code e;
        if (is_history_name(f) && it->is_regular_file(e) && it->last_write_time(e) < cutoff && !e) {
            fs::remove(it->path(), e);
        }
    }
}

} // namespace

fs::path run_history_file(const fs::path& dir, const fs::path& pipeline_file,
                          std::string_view pipeline_name, std::string_view variant) {
    std::error_code ec;
    const fs::path abs = fs::absolute(pipeline_file, ec).lexically_normal();
    const std::string key = (ec ? pipeline_file : abs).string() + '\n' +
                            std::string(pipeline_name) + '\n' + std::string(variant);
    return dir / (file_safe(pipeline_name) + "-" + util::fnv1a64_hex(key) + ".json");
}

Result<fs::path> default_run_history_dir() {
    const fs::path cache = EMURUN_TRY(util::checked_cache_dir());
    return util::own_cache_subdir(cache, "run-history");
}

History load_run_history(const fs::path& file) {
    History h;
    const auto text = util::read_file(file);
    if (!text) {
        return h; // none yet (or unreadable): the run schedules as without history
    }
    const auto j = nlohmann::json::parse(*text, nullptr, false);
    if (!j.is_object() || j.value("schema", 0) != k_schema || !j.contains("steps") ||
        !j["steps"].is_object()) {
        return h;
    }
    for (const auto& [name, wall] : j["steps"].items()) {
        if (wall.is_number() && wall.get<double>() >= 0) {
            h[name] = wall.get<double>();
        }
    }
    return h;
}

Result<void> save_run_history(const fs::path& file, const Report& report) {
    History h = load_run_history(file);
    for (const auto& [name, wall] : report.history()) {
        h[name] = wall; // the latest measurement; steps this run did not run keep theirs
    }
    nlohmann::json steps = nlohmann::json::object();
    for (const auto& [name, wall] : h) {
        steps[name] = wall;
    }
    const nlohmann::json j{{"schema", k_schema}, {"pipeline", report.pipeline}, {"steps", steps}};
    std::error_code ec;
    fs::create_directories(file.parent_path(), ec);
    EMURUN_TRY(util::write_file_atomic(file, j.dump(1) + "\n", 0644, util::Durability::cache));
    prune(file.parent_path());
    return {};
}

} // namespace emurun
