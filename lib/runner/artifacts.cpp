// Artifact manifests and the checks around an archive: which paths a build packs, which members
// and which unpacked tree a test job accepts. The tar side is in artifacts_tar.cpp.
#include "runner/runner_internal.hpp"
#include "util/file.hpp"
#include "util/hash.hpp"
#include "util/json.hpp"
#include "util/path.hpp"

#include <emurun/artifacts.hpp>
#include <emurun/json.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <fcntl.h>
#include <glob.h>
#include <map>
#include <set>
#include <sys/stat.h>
#include <unistd.h>

namespace emurun {
namespace {

using util::is_plain_relative;
using util::Json;
using util::Place;
namespace fs = std::filesystem;

// `path` is `dir` or below it (both relative, lexically normal).
bool is_at_or_below(std::string_view path, std::string_view dir) {
    return path == dir ||
           (path.size() > dir.size() && path.starts_with(dir) && path[dir.size()] == '/');
}

// Drops every path below another one of the list; sorts.
std::vector<std::string> outermost(std::vector<std::string> paths) {
    std::ranges::sort(paths);
    paths.erase(std::unique(paths.begin(), paths.end()), paths.end());
    std::vector<std::string> out;
    for (auto& p : paths) {
        if (out.empty() || !is_at_or_below(p, out.back())) {
            out.push_back(std::move(p));
        }
    }
    return out;
}

Result<std::vector<std::string>> manifest_paths(const Json& j, const Place& at) {
    auto paths = EMURUN_TRY(util::get_string_list(j.value("paths", Json()), at.key("paths")));
    for (std::size_t i = 0; i < paths.size(); ++i) {
        if (!is_plain_relative(paths[i])) {
            return at.key("paths").index(i).fail(
                "unsafe path " + util::describe(Json(paths[i])) +
                    " (absolute, with \".\" or \"..\", or a control character)",
                "use an archive that a build job packed");
        }
    }
    if (outermost(paths).size() != paths.size()) {
        return at.key("paths").fail("lists a path twice, or one below another",
                                    "use an archive that a build job packed");
    }
    return paths;
}

// The manifest's "logs": file names (no directory), each once; absent in older archives.
Result<std::vector<std::string>> manifest_logs(const Json& j, const Place& at) {
    auto logs = EMURUN_TRY(util::get_string_list(j.value("logs", Json::array()), at.key("logs")));
    std::set<std::string> seen;
    for (std::size_t i = 0; i < logs.size(); ++i) {
        if (!is_plain_relative(logs[i]) || logs[i].find('/') != std::string::npos ||
            !seen.insert(logs[i]).second) {
            return at.key("logs").index(i).fail("expected a log's file name, each once, got " +
                                                    util::describe(Json(logs[i])),
                                                "use an archive that a build job packed");
        }
    }
    return logs;
}

bool has_glob(std::string_view s) {
    return s.find_first_of("*?[") != std::string_view::npos;
}

// `text` with glob(3)'s special characters escaped: a directory's name is matched literally.
std::string glob_escape(std::string_view text) {
    std::string out;
    for (char c : text) {
        if (c == '*' || c == '?' || c == '[' || c == '\\') {
            out += '\\';
        }
        out += c;
    }
    return out;
}

// Whether the symlink `link` (below `root`) resolves inside `root`, resolved as the kernel
// does through the tree as it is: component by component from `root` (the link's own path
// first), each
// symlink met followed (a chain such as a -> .., w -> a/a/../../x is seen through), a missing
// name taken as a directory. Absolute targets and more than 40 symlinks are outside.
bool resolves_inside(const fs::path& root, const fs::path& link) {
    const util::UniqueFd root_fd(::open(root.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
    std::vector<std::string> at, todo; // resolved so far; what is left, the next name last
    const fs::path rel_link = link.lexically_relative(root); // its directories resolved too
    if (rel_link.empty() || *rel_link.begin() == "..") {
        return false;
    }
    for (const auto& part : rel_link) {
        todo.insert(todo.begin(), part.string());
    }
    for (int links = 0; root_fd && !todo.empty();) {
        const std::string name = std::move(todo.back());
        todo.pop_back();
        if (name.empty() || name == ".") {
            continue;
        }
        if (name == "..") {
            if (at.empty()) {
                return false;
            }
            at.pop_back();
            continue;
        }
        at.push_back(name);
        std::string rel;
        for (const auto& a : at) {
            rel += (rel.empty() ? "" : "/") + a;
        }
        char buf[PATH_MAX];
        const ssize_t n = ::readlinkat(root_fd.get(), rel.c_str(), buf, sizeof buf);
        if (n < 0) {
            continue; // a directory, a file or a missing name: taken as it is
        }
        const fs::path target(std::string(buf, static_cast<std::size_t>(n)));
        if (++links > 40 || target.is_absolute()) {
            return false;
        }
        at.pop_back();
        std::vector<std::string> parts;
        for (const auto& part : target) {
            parts.push_back(part.string());
        }
        todo.insert(todo.end(), parts.rbegin(), parts.rend());
    }
    return static_cast<bool>(root_fd);
}

// Why `path` (lstat'd as `st`) cannot be in an archive of the tree `root`, or empty: only
// directories, regular files and relative symlinks that resolve inside `root`.
std::string entry_problem(const fs::path& root, const fs::path& path, const struct stat& st) {
    if (S_ISLNK(st.st_mode)) {
        std::error_code ec;
        const fs::path target = fs::read_symlink(path, ec);
        if (ec || target.is_absolute() || !resolves_inside(root, path)) {
            return "is a symlink to " + target.string() +
                   ", outside the archive (symlinks it passes followed)";
        }
    } else if (!S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode)) {
        return "is neither a file, a directory nor a symlink";
    }
    return {};
}

// One entry of an output to pack, under entry_problem's rule; `path` is the entry's lstat.
Result<void> check_packable_entry(const Pipeline& p, const std::string& what, const fs::path& path,
                                  struct stat& st) {
    if (::lstat(path.c_str(), &st) != 0) {
        return fail(what, "lstat " + path.string() + " failed: " + std::strerror(errno));
    }
    if (auto why = entry_problem(p.dir, path, st); !why.empty()) {
        return fail(what, path.lexically_relative(p.dir).string() + " " + why,
                    "an output must stay in the pipeline's directory " + p.dir.string() +
                        ": every unpack would refuse this one");
    }
    return {};
}

// What every unpack checks, checked before packing `rel` (an output, relative to the pipeline's
// directory): its directory, symlinks followed, is inside the pipeline's directory, and all at
// and below it passes entry_problem.
Result<void> check_packable(const Pipeline& p, const std::string& what, const std::string& rel) {
    std::error_code ec;
    const fs::path full = p.dir / rel, root = fs::canonical(p.dir, ec);
    const fs::path real = ec ? fs::path() : fs::canonical(full.parent_path(), ec);
    const fs::path inside = real.lexically_relative(root);
    if (ec || inside.empty() || *inside.begin() == "..") {
        return fail(what,
                    full.string() + " is outside the pipeline's directory (its directory is " +
                        (ec ? ec.message() : real.string()) + ", symlinks followed)",
                    "an output must stay in the pipeline's directory " + p.dir.string() +
                        ": every unpack would refuse this one");
    }
    struct stat st {};
    EMURUN_TRY(check_packable_entry(p, what, full, st));
    if (S_ISDIR(st.st_mode)) { // the iterator does not follow the symlinks below
        for (fs::recursive_directory_iterator it(full, ec), end; !ec && it != end;
             it.increment(ec)) {
            EMURUN_TRY(check_packable_entry(p, what, it->path(), st));
        }
    }
    if (ec) {
        return fail(what, "read " + full.string() + ": " + ec.message());
    }
    return {};
}

// One output of a step: the existing paths it names, relative to the pipeline's directory.
Result<std::vector<std::string>> expand_output(const Pipeline& p, const Step& step,
                                               const std::string& output) {
    const std::string what = "pack outputs: step " + step.name + ": output \"" + output + "\"";
    std::vector<fs::path> found;
    if (has_glob(output)) {
        glob_t g{};
        const std::string pattern = glob_escape(step.cwd.string()) + "/" + output;
        const int rc = ::glob(pattern.c_str(), GLOB_ERR, nullptr, &g);
        for (std::size_t i = 0; rc == 0 && i < g.gl_pathc; ++i) {
            found.emplace_back(g.gl_pathv[i]);
        }
        ::globfree(&g);
        if (rc != 0 && rc != GLOB_NOMATCH) {
            return fail(what, "glob failed in " + step.cwd.string());
        }
    } else {
        struct stat st {};
        fs::path full = step.cwd / output;
        if (::lstat(full.c_str(), &st) != 0) {
            return fail(what, full.string() + " does not exist (" + std::strerror(errno) + ")",
                        "the step passed without making it: fix the step or its \"outputs\"");
        }
        found.push_back(full);
    }
    std::vector<std::string> out;
    for (const auto& f : found) {
        auto rel = f.lexically_normal().lexically_relative(p.dir).string();
        auto in_cwd = f.lexically_normal().lexically_relative(step.cwd).string();
        if (is_plain_relative(rel) && is_plain_relative(in_cwd)) { // glob's "." and ".." go
            EMURUN_TRY(check_packable(p, what, rel));
            out.push_back(rel);
        }
    }
    if (out.empty()) {
        return fail(what, "matches nothing in " + step.cwd.string(),
                    "the step passed without making it: fix the step or its \"outputs\"");
    }
    return out;
}

std::string joined(const std::vector<std::string>& names) {
    std::string out;
    for (const auto& n : names) {
        out += (out.empty() ? "" : ", ") + n;
    }
    return out.empty() ? "no arch" : out;
}

// The archive comes from a run of the same kind (the native baseline, or per-arch runs) and
// holds no per-arch step of an arch this run does not select: a job of one arch never takes
// another arch's build for its own.
Result<void> check_arches(const ArtifactManifest& m, const Pipeline& p, const std::string& what) {
    if (m.report.native_baseline != p.native) {
        return fail(ErrorKind::bad_input, what,
                    m.report.native_baseline
                        ? "packed by the native baseline's run, and this run is not one"
                        : "packed by a run that was not the native baseline, and this run is one",
                    "unpack it in a run like the one that packed it: another run's archive in a "
                    "run that is not the native baseline, the native baseline's in the native "
                    "baseline's run",
                    "native");
    }
    const auto packed = m.report.arches();
    for (const auto& arch : packed) {
        if (std::ranges::find(p.arches, arch) == p.arches.end()) {
            return fail(ErrorKind::bad_input, what,
                        "packed for arch " + joined(packed) + ", and this run selects " +
                            joined(p.arches),
                        "pack one archive in each arch's build job, or unpack it in the run of the "
                        "arches it was packed for",
                        "arches");
        }
    }
    return {};
}

// The manifest's steps: each once, a passed non-test step of the pipeline.
Result<void> check_packed_steps(const ArtifactManifest& m, const Pipeline& p,
                                const std::string& what) {
    std::set<std::string_view> seen;
    for (const auto& s : m.report.steps) {
        const Step* step = p.find(s.name);
        if (!step || step->kind == StepKind::test || s.status != StepStatus::passed) {
            return fail(what,
                        "its manifest lists step \"" + s.name + "\" as " +
                            std::string(to_string(s.status)) +
                            (step ? "" : ", which the pipeline does not have"),
                        "use the archive as the build job packed it");
        }
        if (!seen.insert(s.name).second) {
            return fail(what, "its manifest lists step \"" + s.name + "\" twice",
                        "use the archive as the build job packed it");
        }
    }
    return {};
}

// Each packed log is one of a packed step's own (detail::own_logs): a test job writes it under
// that name, never under another step's.
Result<void> check_packed_logs(const ArtifactManifest& m, const std::string& what) {
    const auto owned = detail::own_logs(m.report);
    for (const auto& name : m.logs) {
        if (!owned.contains(name)) {
            return fail(what,
                        "its manifest lists the log \"" + name +
                            "\", which is not the log of a packed step",
                        "use the archive as the build job packed it");
        }
    }
    return {};
}

// Every field of the manifest but its id: what a test job takes from it, and what the id hashes.
Json manifest_fields(const ArtifactManifest& m) {
    return Json{{"format", ArtifactManifest::k_format},
                {"pipeline", m.pipeline},
                {"digest", m.digest},
                {"paths", m.paths},
                {"logs", m.logs},
                {"report", m.report.to_json()}};
}

} // namespace

std::string artifact_id(const ArtifactManifest& m) {
    // All a test job takes from the manifest: an edit of any of it changes the id.
    return util::fnv1a64_hex(json_text(manifest_fields(m), -1));
}

namespace detail {

std::map<std::string, fs::path> own_logs(const Report& report) {
    std::map<std::string, fs::path> out;
    for (const auto& s : report.steps) {
        for_each_own_log(s, [&](const fs::path& log, const std::string& own) {
            if (!log.empty() && log.filename() == own) {
                out.emplace(own, log);
            }
        });
    }
    return out;
}

} // namespace detail

std::string manifest_json(const ArtifactManifest& m) {
    Json j = manifest_fields(m);
    j["id"] = m.id;
    return json_text(j) + "\n";
}

Result<ArtifactManifest> parse_manifest(std::string_view text, const std::string& source) {
    auto j = EMURUN_TRY(util::parse_json_text(text, source));
    Place at(source);
    EMURUN_TRY(util::check_object(
        j, at, {"format", "pipeline", "digest", "id", "paths", "logs", "report"}));
    auto format = EMURUN_TRY(util::get_integer(j.value("format", Json()), at.key("format"), 1, 1));
    (void)format;
    ArtifactManifest m;
    for (auto [key, into] : {std::pair{"pipeline", &m.pipeline}, std::pair{"digest", &m.digest},
                             std::pair{"id", &m.id}}) {
        auto v = EMURUN_TRY(util::get_string(j.value(key, Json()), at.key(key)));
        *into = v;
    }
    auto paths = EMURUN_TRY(manifest_paths(j, at));
    m.paths = paths;
    auto logs = EMURUN_TRY(manifest_logs(j, at));
    m.logs = logs;
    if (!j.contains("report")) {
        return at.fail("missing required key \"report\"");
    }
    auto report = EMURUN_TRY(Report::from_json(j["report"], source + ": report"));
    m.report = std::move(report);
    return m;
}

Result<void> check_manifest(const ArtifactManifest& m, const Pipeline& p,
                            const std::string& archive) {
    const std::string what = "artifacts " + archive;
    const std::string rebuild =
        "pack and unpack with the same pipeline file: run the build job again for this version";
    if (m.pipeline != p.name) {
        return fail(what, "packed for pipeline \"" + m.pipeline + "\", not \"" + p.name + "\"",
                    rebuild);
    }
    if (m.digest != p.digest) {
        return fail(what,
                    "packed from another version of pipeline \"" + p.name + "\" (digest " +
                        m.digest + ", this file's " + p.digest + ")",
                    rebuild);
    }
    if (artifact_id(m) != m.id) {
        return fail(what,
                    "its manifest's id " + m.id +
                        " does not match its content: the archive was edited after packing, or "
                        "written by another emurun version",
                    "use the archive as the build job of this emurun version packed it (run the "
                    "build job again)");
    }
    EMURUN_TRY(check_arches(m, p, what));
    EMURUN_TRY(check_packed_steps(m, p, what));
    return check_packed_logs(m, what);
}

Result<std::vector<std::string>> collect_outputs(const Pipeline& p, const Report& report) {
    std::vector<std::string> all;
    for (const auto& step : p.steps) {
        const StepResult* r = report.find(step.name);
        if (!r || r->status != StepStatus::passed) {
            continue;
        }
        for (const auto& output : step.outputs) {
            auto found = EMURUN_TRY(expand_output(p, step, output));
            all.insert(all.end(), found.begin(), found.end());
        }
    }
    return outermost(std::move(all));
}

namespace {

// The logs' directory or one of the manifest's logs in it.
bool is_log_member(std::string_view name, const ArtifactManifest& m) {
    if (name == k_logs_member) {
        return true;
    }
    const std::string prefix = std::string(k_logs_member) + "/";
    return name.starts_with(prefix) &&
           std::ranges::find(m.logs, name.substr(prefix.size())) != m.logs.end();
}

} // namespace

Result<void> check_archive_members(std::span<const std::string> members, const ArtifactManifest& m,
                                   const std::string& archive) {
    for (const auto& listed : members) {
        std::string_view name = listed;
        while (name.size() > 1 && name.back() == '/') {
            name.remove_suffix(1); // tar lists directories as "dir/"
        }
        const bool known = name == k_manifest_member || is_log_member(name, m) ||
                           std::ranges::any_of(m.paths, [&](const std::string& p) {
                               return is_at_or_below(name, p);
                           });
        if (!is_plain_relative(name) || !known) {
            return fail("artifacts " + archive,
                        "member \"" + listed + "\" is " +
                            (is_plain_relative(name) ? "not one of the manifest's paths"
                                                     : "not a plain relative path"),
                        "use the archive as the build job packed it; nothing was extracted");
        }
    }
    return {};
}

namespace {

// A file with several hard links: how many of them the tree holds, and one of its names.
struct Links {
    nlink_t total = 0, seen = 0;
    fs::path name;
};

Result<void> check_entry(const fs::path& root, const fs::path& path,
                         std::map<std::pair<dev_t, ino_t>, Links>& linked) {
    struct stat st {};
    if (::lstat(path.c_str(), &st) != 0) {
        return fail("check unpacked " + path.string(), std::strerror(errno));
    }
    if (auto why = entry_problem(root, path, st); !why.empty()) {
        return fail("artifacts: unpacked " + path.lexically_relative(root).string(), why,
                    "use the archive as the build job packed it; nothing was moved");
    }
    constexpr mode_t k_special = S_ISUID | S_ISGID | S_ISVTX;
    if (!S_ISLNK(st.st_mode) && (st.st_mode & k_special) != 0 &&
        ::chmod(path.c_str(), st.st_mode & 0777) != 0) { // (setuid as root: stripped)
        return fail("artifacts: unpacked " + path.lexically_relative(root).string(),
                    std::string("clear its setuid/setgid bits: ") + std::strerror(errno));
    }
    if (S_ISREG(st.st_mode) && st.st_nlink > 1) {
        Links& l = linked[{st.st_dev, st.st_ino}];
        l.total = st.st_nlink;
        ++l.seen;
        l.name = path;
    }
    return {};
}

} // namespace

Result<void> check_unpacked_tree(const fs::path& root) {
    std::error_code ec;
    std::map<std::pair<dev_t, ino_t>, Links> linked;
    for (fs::recursive_directory_iterator it(root, ec), end; !ec && it != end; it.increment(ec)) {
        EMURUN_TRY(check_entry(root, it->path(), linked));
    }
    if (ec) {
        return fail("check unpacked " + root.string(), ec.message());
    }
    for (const auto& [inode, l] : linked) {
        if (l.seen < l.total) {
            return fail("artifacts: unpacked " + l.name.lexically_relative(root).string(),
                        "is a hard link to a file outside the archive",
                        "use the archive as the build job packed it; nothing was moved");
        }
    }
    return {};
}

} // namespace emurun
