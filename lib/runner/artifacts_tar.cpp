// Packing and unpacking artifact archives with Debian's tar (and gzip, zstd or xz, chosen by
// the archive's name), started through the process module. Every check runs before anything
// is moved into place, and a failure leaves nothing behind.
#include "process/spawn.hpp"
#include "runner/runner_internal.hpp"
#include "util/file.hpp"
#include "util/path.hpp"
#include "util/temp_dir.hpp"

#include <emurun/artifacts.hpp>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <map>
#include <sstream>
#include <sys/stat.h>
#include <unistd.h>

namespace emurun {
namespace {

namespace fs = std::filesystem;

constexpr std::chrono::hours k_tar_timeout{6};
constexpr std::size_t k_max_manifest = 64 * 1024 * 1024;

bool ends_with(const fs::path& p, std::string_view suffix) {
    return p.filename().string().ends_with(suffix);
}

// tar's compression option for the archive's name, after checking that its program is there.
Result<std::vector<std::string>> compression(const fs::path& archive) {
    struct Kind {
        std::string_view suffix, option, program;
    };
    static constexpr Kind k_kinds[] = {{".tar", "", ""},
                                       {".tar.gz", "--gzip", "gzip"},
                                       {".tgz", "--gzip", "gzip"},
                                       {".tar.zst", "--zstd", "zstd"},
                                       {".tzst", "--zstd", "zstd"},
                                       {".tar.xz", "--xz", "xz"}};
    const std::string hint_install = "install tar and the compressor (apt-get install tar zstd), "
                                     "or name the archive .tar";
    if (!util::find_executable("tar")) {
        return fail("artifacts " + archive.string(), "tar is not in PATH", hint_install);
    }
    for (const auto& k : k_kinds) {
        if (!ends_with(archive, k.suffix)) {
            continue;
        }
        if (!k.program.empty() && !util::find_executable(k.program)) {
            return fail("artifacts " + archive.string(),
                        std::string(k.program) + " is not in PATH (tar needs it for " +
                            std::string(k.suffix) + ")",
                        hint_install);
        }
        return k.option.empty() ? std::vector<std::string>{}
                                : std::vector<std::string>{std::string(k.option)};
    }
    return fail("artifacts " + archive.string(), "unknown archive type",
                "name it .tar, .tar.gz, .tar.zst or .tar.xz");
}

// What tar said, for an error's why: its first lines, at most k_max_said bytes.
std::string tar_said(const std::string& out) {
    constexpr std::size_t k_max_said = 600;
    std::string said = out.substr(0, k_max_said);
    while (!said.empty() && (said.back() == '\n' || said.back() == ' ')) {
        said.pop_back();
    }
    std::ranges::replace(said, '\n', ';');
    return said.empty() ? "tar failed and said nothing" : said;
}

// tar with `args` (and the compression option); its stdout. Its stderr is emurun's, or with
// `refusing` (an extract, which prints nothing on stdout) captured: a failure is then the
// archive refused, tar's message its why. A stop signal stops it (its process group) and lands
// in `interrupted_by`.
Result<std::string> tar(std::vector<std::string> args, const std::vector<std::string>& comp,
                        const std::string& what, int& interrupted_by, std::size_t max_output = 0,
                        const std::string& refusing = {}) {
    args.insert(args.begin(), comp.begin(), comp.end());
    detail::CaptureOptions o;
    o.timeout = k_tar_timeout;
    o.max_output = max_output;
    o.merge_stderr = !refusing.empty();
    auto run = EMURUN_TRY(detail::run_tar(std::move(args), o));
    if (run.interrupted_by != 0) {
        interrupted_by = run.interrupted_by;
        return fail(what, std::string("interrupted by SIG") + ::sigabbrev_np(run.interrupted_by),
                    "nothing was written");
    }
    if (!refusing.empty() && !run.timed_out && !run.status.success()) {
        return fail("artifacts " + refusing, "refused: " + tar_said(run.out),
                    "use the archive as the build job packed it; nothing was moved");
    }
    if (run.timed_out || !run.status.success()) {
        return fail(what,
                    run.timed_out ? "tar took too long"
                                  : "tar failed (" + run.status.describe() + ")",
                    "tar's own message is above");
    }
    if (max_output > 0 && run.out.size() >= max_output) {
        return fail(what, "tar's output is over " + std::to_string(max_output) + " bytes");
    }
    return run.out;
}

using util::TempDir;

Result<void> fsync_file(const fs::path& file) {
    util::UniqueFd fd(::open(file.c_str(), O_RDONLY | O_CLOEXEC));
    if (!fd || ::fsync(fd.get()) != 0) {
        return fail("fsync " + file.string(), std::strerror(errno));
    }
    return {};
}

// The logs of `report`'s steps that are files (detail::own_logs): by file name, the name a
// test job's log directory gives them.
std::map<std::string, fs::path> log_sources(const Report& report) {
    auto out = detail::own_logs(report);
    std::erase_if(out, [](const auto& named) {
        std::error_code ec;
        return !fs::is_regular_file(named.second, ec);
    });
    return out;
}

// The manifest of what `report` packs: its passed steps, their outputs and their logs.
Result<ArtifactManifest> make_manifest(const Pipeline& p, const Report& report) {
    ArtifactManifest m;
    m.pipeline = p.name;
    m.digest = p.digest;
    auto paths = EMURUN_TRY(collect_outputs(p, report));
    m.paths = std::move(paths);
    m.report = report;
    m.report.artifacts.reset();
    std::erase_if(m.report.steps,
                  [](const StepResult& s) { return s.status != StepStatus::passed; });
    for (const auto& [name, source] : log_sources(m.report)) {
        m.logs.push_back(name);
    }
    m.id = artifact_id(m);
    return m;
}

std::vector<std::string> lines(const std::string& text) {
    std::vector<std::string> out;
    std::size_t start = 0;
    while (start < text.size()) {
        auto end = text.find('\n', start);
        end = end == std::string::npos ? text.size() : end;
        out.push_back(text.substr(start, end - start));
        start = end + 1;
    }
    return out;
}

// The bytes the members of a `tar -tv` listing hold (the third field: a sparse file counts at
// its full size), against k_unpack_max_ratio: a small archive never fills the disk.
Result<void> check_unpacked_size(const std::vector<std::string>& listing, const fs::path& archive) {
    std::error_code ec;
    const std::uint64_t packed = fs::file_size(archive, ec);
    const std::uint64_t cap =
        std::max<std::uint64_t>(k_unpack_min_cap, packed * k_unpack_max_ratio);
    std::uint64_t total = 0;
    for (const auto& line : listing) {
        std::istringstream fields(line);
        std::string mode, owner, size;
        fields >> mode >> owner >> size;
        total += std::strtoull(size.c_str(), nullptr, 10); // "8,1" of a device: refused later
        if (total > cap) {
            return fail("artifacts " + archive.string(),
                        "its members hold more than " + std::to_string(cap) +
                            " bytes (the cap: " + std::to_string(k_unpack_max_ratio) +
                            " times the archive's size, at least 1 GiB)",
                        "an archive a build job packed from such outputs cannot be unpacked; "
                        "nothing was extracted");
        }
    }
    return {};
}

// Read and check the manifest and the member list; nothing is extracted yet.
Result<ArtifactManifest> inspect(const Pipeline& p, const fs::path& archive,
                                 const std::vector<std::string>& comp, int& interrupted_by) {
    const std::string name = archive.string();
    EMURUN_TRY(util::open_read(archive)); // a missing archive says so, not tar
    auto text = EMURUN_TRY(tar({"-x", "-O", "-f", name, "--", std::string(k_manifest_member)}, comp,
                               "read the manifest of " + name, interrupted_by, k_max_manifest));
    auto m = EMURUN_TRY(parse_manifest(text, name + ": " + std::string(k_manifest_member)));
    EMURUN_TRY(check_manifest(m, p, name));
    auto listing = EMURUN_TRY(tar({"-t", "--quoting-style=escape", "-f", name}, comp,
                                  "list " + name, interrupted_by, util::k_max_tar_listing));
    EMURUN_TRY(check_archive_members(lines(listing), m, name));
    auto sizes = EMURUN_TRY(tar({"-t", "-v", "--numeric-owner", "-f", name}, comp, "list " + name,
                                interrupted_by, util::k_max_tar_listing));
    EMURUN_TRY(check_unpacked_size(lines(sizes), archive));
    return m;
}

// The pipeline's directory as an unpack's destination: every path in it is opened beneath it
// (openat2 RESOLVE_BENEATH), so a symlink of the checkout (lnk -> ../victim) leads nowhere
// outside, and nothing is overwritten (renameat2 RENAME_NOREPLACE). Until keep(), the
// destructor takes back what was moved and removes the directories made for it.
class Destination {
  public:
    static Result<Destination> open(const fs::path& dir) {
        util::UniqueFd fd(::open(dir.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
        if (!fd) {
            return std::unexpected(system_error("open " + dir.string(), errno));
        }
        return Destination(dir, std::move(fd));
    }
    Destination(Destination&&) = default;
    Destination& operator=(Destination&&) = delete;
    ~Destination() {
        if (m_kept || !m_staging) {
            return;
        }
        for (auto it = m_moved.rbegin(); it != m_moved.rend(); ++it) {
            util::UniqueFd up(util::openat2_beneath(m_fd.get(), parent_of(*it).c_str(), k_dir, 0));
            (void)move_entry(up.get(), leaf_of(*it), m_staging->get(), *it);
        }
        for (auto it = m_made.rbegin(); it != m_made.rend(); ++it) {
            util::UniqueFd up(util::openat2_beneath(m_fd.get(), parent_of(*it).c_str(), k_dir, 0));
            (void)::unlinkat(up.get(), leaf_of(*it).c_str(), AT_REMOVEDIR);
        }
    }

    // Error when `rel` exists, or its directory leads outside the destination.
    Result<void> check_free(const std::string& rel, const std::string& archive) const {
        const std::string what = "artifacts: unpack " + rel + " into " + m_dir.string();
        util::UniqueFd up(util::openat2_beneath(m_fd.get(), parent_of(rel).c_str(), k_dir, 0));
        if (!up && (errno == ENOENT || errno == ENOTDIR)) {
            return {}; // made when moved (or refused then: a file where a directory goes)
        }
        if (!up) {
            return beneath_error(what);
        }
        struct stat st {};
        if (::fstatat(up.get(), leaf_of(rel).c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0) {
            return fail("artifacts " + archive, (m_dir / rel).string() + " already exists",
                        "unpack into a fresh checkout, or remove it first: nothing is overwritten");
        }
        return {};
    }

    // `rel` moved from the staging dir to its place, its missing directories made.
    Result<void> move(const util::UniqueFd& staging, const std::string& rel) {
        m_staging = &staging;
        const std::string what = "unpack " + rel + " into " + m_dir.string();
        auto up = EMURUN_TRY(make_parents(rel, what));
        if (const int err = move_entry(staging.get(), rel, up.get(), leaf_of(rel)); err != 0) {
            return std::unexpected(system_error(what, err));
        }
        m_moved.push_back(rel);
        return {};
    }

    void keep() { m_kept = true; }

  private:
    static constexpr int k_dir = O_PATH | O_DIRECTORY;
    Destination(fs::path dir, util::UniqueFd fd) : m_dir(std::move(dir)), m_fd(std::move(fd)) {}

    // renameat2 RENAME_NOREPLACE; 0 or the errno. A directory moves to another parent only
    // when it may be written (its ".." changes): a read-only one, as packed, is opened to its
    // owner for the move and closed again, so a user that is not root moves it too.
    static int move_entry(int from_dir, const std::string& from, int to_dir,
                          const std::string& to) {
        struct stat st {};
        const bool closed_dir = ::fstatat(from_dir, from.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 &&
                                S_ISDIR(st.st_mode) && (st.st_mode & S_IWUSR) == 0;
        if (closed_dir) {
            ::fchmodat(from_dir, from.c_str(), (st.st_mode & 07777) | S_IWUSR, 0);
        }
        const int rc = ::renameat2(from_dir, from.c_str(), to_dir, to.c_str(), RENAME_NOREPLACE);
        const int err = rc == 0 ? 0 : errno;
        if (closed_dir) {
            ::fchmodat(rc == 0 ? to_dir : from_dir, rc == 0 ? to.c_str() : from.c_str(),
                       st.st_mode & 07777, 0);
        }
        return err;
    }

    static std::string parent_of(const std::string& rel) {
        const auto slash = rel.rfind('/');
        return slash == std::string::npos ? "." : rel.substr(0, slash);
    }
    static std::string leaf_of(const std::string& rel) {
        const auto slash = rel.rfind('/');
        return slash == std::string::npos ? rel : rel.substr(slash + 1);
    }
    std::unexpected<Error> beneath_error(const std::string& what) const {
        if (errno == EXDEV || errno == ELOOP) {
            return std::unexpected(
                Error{what, "its directory leads outside " + m_dir.string() + " (a symlink)",
                      "unpack into a fresh checkout; nothing was moved"});
        }
        return std::unexpected(system_error(what, errno));
    }

    // The directory of `rel`, each missing one made (mkdirat in its parent opened beneath).
    Result<util::UniqueFd> make_parents(const std::string& rel, const std::string& what) {
        std::string at = ".";
        util::UniqueFd dir(util::openat2_beneath(m_fd.get(), ".", k_dir, 0));
        for (const auto& part : fs::path(parent_of(rel))) {
            if (part == ".") {
                continue;
            }
            const std::string next = at == "." ? part.string() : at + "/" + part.string();
            util::UniqueFd fd(util::openat2_beneath(m_fd.get(), next.c_str(), k_dir, 0));
            if (!fd && errno == ENOENT && ::mkdirat(dir.get(), part.c_str(), 0777) == 0) {
                m_made.push_back(next);
                fd = util::UniqueFd(util::openat2_beneath(m_fd.get(), next.c_str(), k_dir, 0));
            }
            if (!fd) {
                return beneath_error(what);
            }
            dir = std::move(fd);
            at = next;
        }
        return dir;
    }

    fs::path m_dir;
    util::UniqueFd m_fd;
    const util::UniqueFd* m_staging = nullptr;
    std::vector<std::string> m_made;  // directories made, outermost first
    std::vector<std::string> m_moved; // paths moved into place
    bool m_kept = false;
};

// Copies of the logs `m` lists into `dir` (created), for tar to pack.
Result<void> stage_logs(const ArtifactManifest& m, const fs::path& dir) {
    if (m.logs.empty()) {
        return {};
    }
    std::error_code ec;
    if (fs::create_directory(dir, ec); ec) {
        return fail("create " + dir.string(), ec.message());
    }
    const auto sources = log_sources(m.report);
    for (const auto& name : m.logs) {
        const auto it = sources.find(name);
        if (it == sources.end() || !fs::copy_file(it->second, dir / name, ec)) {
            return fail("pack the log " + name, it == sources.end() ? "it is gone" : ec.message());
        }
    }
    return {};
}

// Makes `dir` and the directories missing above it; those it made, outermost first.
Result<std::vector<fs::path>> make_directories(const fs::path& dir) {
    std::vector<fs::path> missing;
    std::error_code ec;
    for (fs::path d = dir;
         !d.empty() && fs::symlink_status(d, ec).type() == fs::file_type::not_found;
         d = d.parent_path()) {
        missing.insert(missing.begin(), d);
    }
    for (std::size_t i = 0; i < missing.size(); ++i) {
        if (::mkdir(missing[i].c_str(), 0777) != 0) {
            const int err = errno;
            for (std::size_t j = i; j-- > 0;) {
                ::rmdir(missing[j].c_str());
            }
            Error e = system_error("create the log directory " + dir.string(), err,
                                   "nothing was unpacked; choose a log directory emurun can "
                                   "write to");
            e.field = "log_dir";
            return std::unexpected(std::move(e));
        }
    }
    return missing;
}

// What to do when writing into the log directory `dir` failed with `e`.
std::string placing_hint(const Error& e, const fs::path& dir) {
    const bool full = e.why == std::strerror(ENOSPC) || e.why == std::strerror(EDQUOT);
    return "nothing was unpacked and no step ran; " +
           (full ? "free space in " + dir.string() + " or choose another log directory"
                 : "check that " + dir.string() + " is writable, or choose another log directory");
}

// The packed logs on their way into the log directory: each copied into a new temporary file
// beside its name, then renamed over whatever is there (a symlink is replaced, never followed;
// an empty directory removed), as a run replaces its steps' logs. Until keep(), the destructor
// takes it all back: the temporary files, the logs placed and the directories made for them.
class LogPlacement {
  public:
    explicit LogPlacement(fs::path dir) : m_dir(std::move(dir)) {}
    LogPlacement(const LogPlacement&) = delete;
    LogPlacement& operator=(const LogPlacement&) = delete;
    ~LogPlacement() {
        if (m_kept) {
            return;
        }
        for (std::size_t i = 0; i < m_files.size(); ++i) {
            ::unlink((i < m_renamed ? m_files[i].second : m_files[i].first).c_str());
        }
        for (auto it = m_made.rbegin(); it != m_made.rend(); ++it) {
            ::rmdir(it->c_str());
        }
    }

    // Copies of the logs `names` (file names under k_logs_member in `staging`), not yet in place.
    Result<void> copy(const fs::path& staging, const std::vector<std::string>& names) {
        if (names.empty()) {
            return {};
        }
        m_made = EMURUN_TRY(make_directories(m_dir));
        for (const auto& name : names) {
            const std::string what = "unpack the log " + name + " into " + m_dir.string();
            const fs::path from = staging / k_logs_member / name;
            std::error_code ec;
            if (fs::symlink_status(from, ec).type() != fs::file_type::regular) {
                return fail(what, "the archive holds no such file",
                            "use the archive as the build job packed it; nothing was moved");
            }
            auto tmp = util::copy_to_temporary(from, m_dir / name);
            if (!tmp) {
                return fail(tmp.error().kind, what, tmp.error().message(),
                            placing_hint(tmp.error(), m_dir), "log_dir");
            }
            m_files.emplace_back(*tmp, m_dir / name);
        }
        return {};
    }

    // Each copy renamed over its name.
    Result<void> commit() {
        for (; m_renamed < m_files.size(); ++m_renamed) {
            const auto& [tmp, log] = m_files[m_renamed];
            struct stat st {};
            const bool dir = ::lstat(log.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
            if ((dir && ::rmdir(log.c_str()) != 0) || ::rename(tmp.c_str(), log.c_str()) != 0) {
                const Error e = system_error(dir ? "remove the directory " + log.string()
                                                 : "rename " + tmp.string() + " to " + log.string(),
                                             errno);
                return fail(e.kind,
                            "unpack the log " + log.filename().string() + " into " + m_dir.string(),
                            e.message(), placing_hint(e, m_dir), "log_dir");
            }
        }
        return {};
    }

    void keep() { m_kept = true; }

  private:
    fs::path m_dir;
    std::vector<fs::path> m_made;                       // outermost first
    std::vector<std::pair<fs::path, fs::path>> m_files; // temporary file, the log's name
    std::size_t m_renamed = 0;                          // of m_files, renamed into place
    bool m_kept = false;
};

// Error when a packed log's name in `log_dir` is a directory that is not empty (a run fails
// the step whose log it is: it cannot open it); before anything is written. Whatever else is
// there is replaced, as a run replaces its logs.
Result<void> check_log_targets(const std::vector<std::string>& names, const fs::path& log_dir) {
    for (const auto& name : names) {
        const fs::path log = log_dir / name;
        std::error_code ec;
        if (fs::is_directory(fs::symlink_status(log, ec)) && !fs::is_empty(log, ec)) {
            return fail(ErrorKind::conflict, "unpack the log " + name + " into " + log_dir.string(),
                        log.string() + " is a directory, and not empty (a run fails the step "
                                       "whose log it is: open failed: Is a directory)",
                        "nothing was unpacked and no step ran; remove it, or choose another log "
                        "directory",
                        "log_dir");
        }
    }
    return {};
}

// The names of the packed logs a test job places: those of detail::own_logs, computed from the
// steps' names (check_manifest refused a manifest listing any other).
std::vector<std::string> placed_logs(const ArtifactManifest& m) {
    std::vector<std::string> out;
    for (const auto& [name, log] : detail::own_logs(m.report)) {
        if (std::ranges::find(m.logs, name) != m.logs.end()) {
            out.push_back(name);
        }
    }
    return out;
}

// `steps` with each log (and each attempt's) naming its file in `log_dir` when one of `placed`
// is its own, else empty.
std::vector<StepResult> relinked(std::vector<StepResult> steps,
                                 const std::vector<std::string>& placed, const fs::path& log_dir) {
    for (auto& s : steps) {
        detail::for_each_own_log(s, [&](fs::path& log, const std::string& own) {
            const bool packed = !log.empty() && log.filename() == own &&
                                std::ranges::find(placed, own) != placed.end();
            log = packed ? log_dir / own : fs::path();
        });
    }
    return steps;
}

// The temporary directories of earlier packs of `archive` whose emurun is gone (killed with
// SIGKILL: no destructor ran), removed: ".ARCHIVE.tmp-PID-XXXXXX" of this user with no process
// PID (a pack still running keeps its own).
void remove_stale_packs(const fs::path& dir, const std::string& prefix) {
    std::error_code ec;
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
        const std::string name = it->path().filename().string();
        if (!name.starts_with(prefix)) {
            continue;
        }
        char* after = nullptr;
        const long pid = std::strtol(name.c_str() + prefix.size(), &after, 10);
        struct stat st {};
        if (pid > 0 && *after == '-' && ::lstat(it->path().c_str(), &st) == 0 &&
            S_ISDIR(st.st_mode) && st.st_uid == ::geteuid() &&
            ::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH) {
            (void)TempDir::adopt(it->path()); // removed with what it holds
        }
    }
}

Result<ArtifactManifest> pack(const Pipeline& p, const ArtifactManifest& m,
                              const std::vector<std::string>& comp, const fs::path& archive,
                              int& interrupted_by) {
    const fs::path dir = fs::absolute(archive).parent_path();
    const std::string prefix = "." + archive.filename().string() + ".tmp-";
    remove_stale_packs(dir, prefix);
    auto tmp = EMURUN_TRY(TempDir::make(dir / (prefix + std::to_string(::getpid()) + "-")));
    const fs::path list = tmp.path() / "paths", out = tmp.path() / archive.filename();
    std::string names;
    for (const auto& path : m.paths) {
        names += path + '\0';
    }
    EMURUN_TRY(util::write_file_atomic(tmp.path() / k_manifest_member, manifest_json(m)));
    EMURUN_TRY(util::write_file_atomic(list, names));
    EMURUN_TRY(stage_logs(m, tmp.path() / k_logs_member));
    std::vector<std::string> args{
        "-c", "-f", out.string(), "-C", tmp.path().string(), std::string(k_manifest_member)};
    if (!m.logs.empty()) {
        args.emplace_back(k_logs_member);
    }
    args.insert(args.end(), {"-C", p.dir.string(), "--sparse", "--null", "--verbatim-files-from",
                             "-T", list.string()}); // --sparse: holes stay holes, both ways
    EMURUN_TRY(tar(std::move(args), comp, "pack " + archive.string(), interrupted_by));
    EMURUN_TRY(fsync_file(out));
    if (::rename(out.c_str(), archive.c_str()) != 0) {
        return fail("rename " + out.string() + " to " + archive.string(), std::strerror(errno));
    }
    return m;
}

Result<ReusedSteps> unpack(const Pipeline& p, const fs::path& archive, const fs::path& log_dir,
                           int& interrupted_by) {
    auto comp = EMURUN_TRY(compression(archive));
    auto m = EMURUN_TRY(inspect(p, archive, comp, interrupted_by));
    const auto before = EMURUN_TRY(Destination::open(p.dir));
    for (const auto& path : m.paths) {
        EMURUN_TRY(before.check_free(path, archive.string()));
    }
    const auto placed = placed_logs(m);
    EMURUN_TRY(check_log_targets(placed, log_dir));
    auto staging = EMURUN_TRY(TempDir::make(p.dir / ".emurun-unpack-"));
    EMURUN_TRY(tar({"-x", "-f", fs::absolute(archive).string(), "-C", staging.path().string(),
                    "--no-same-owner", "--no-overwrite-dir"},
                   comp, "unpack " + archive.string(), interrupted_by, util::k_max_tar_listing,
                   archive.string()));
    EMURUN_TRY(check_unpacked_tree(staging.path()));
    const util::UniqueFd staging_fd(
        ::open(staging.path().c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
    auto dest = EMURUN_TRY(Destination::open(p.dir)); // (destroyed first: moves back in staging)
    LogPlacement logs(log_dir);
    EMURUN_TRY(logs.copy(staging.path(), placed));
    EMURUN_TRY(logs.commit());
    for (const auto& path : m.paths) {
        EMURUN_TRY(dest.move(staging_fd, path));
    }
    dest.keep();
    logs.keep();
    return ReusedSteps{m.id, relinked(m.report.steps, placed, log_dir)};
}

} // namespace

Result<ArtifactManifest> pack_artifacts(const Pipeline& p, Report& report,
                                        const fs::path& archive) {
    auto comp = EMURUN_TRY(compression(archive));
    EMURUN_TRY(util::check_replaceable(archive));
    auto m = EMURUN_TRY(make_manifest(p, report));
    int interrupted_by = 0;
    auto packed = pack(p, m, comp, archive, interrupted_by);
    if (interrupted_by != 0) { // raised again once the temporary files are gone
        report.interrupted_by = interrupted_by;
        ::raise(interrupted_by);
    } else if (packed) {
        report.artifacts = ArtifactLink{m.id, true};
    }
    return packed;
}

Result<ReusedSteps> unpack_artifacts(const Pipeline& p, const fs::path& archive,
                                     const fs::path& log_dir) {
    int interrupted_by = 0;
    auto reused = unpack(p, archive, log_dir, interrupted_by);
    if (interrupted_by != 0) { // raised again once the staging directory is gone
        ::raise(interrupted_by);
    }
    return reused;
}

} // namespace emurun
