// Packing and unpacking artifact archives with Debian's tar (and gzip, zstd or xz, chosen by
// the archive's name), started through the process module. Every check runs before anything
// is moved into place, and a failure leaves nothing behind.
#include "process/spawn.hpp"
#include "util/file.hpp"
#include "util/path.hpp"

#include <emurun/artifacts.hpp>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <map>
#include <unistd.h>

namespace emurun {
namespace {

namespace fs = std::filesystem;

constexpr std::chrono::hours k_tar_timeout{6};
constexpr std::size_t k_max_manifest = 64 * 1024 * 1024;
constexpr std::size_t k_max_listing = 256 * 1024 * 1024;

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

// tar with `args` (and the compression option); its stdout. Its stderr is emurun's. A stop
// signal stops it (its process group) and lands in `interrupted_by`.
Result<std::string> tar(std::vector<std::string> args, const std::vector<std::string>& comp,
                        const std::string& what, int& interrupted_by, std::size_t max_output = 0) {
    args.insert(args.begin(), comp.begin(), comp.end());
    args.insert(args.begin(), "tar");
    detail::CaptureOptions o;
    o.timeout = k_tar_timeout;
    o.max_output = max_output;
    o.stop_on_interrupt = true;
    auto run = EMURUN_TRY(detail::run_captured(Command{.argv = args}, o));
    if (run.start_error) {
        return std::unexpected(*run.start_error);
    }
    if (run.interrupted_by != 0) {
        interrupted_by = run.interrupted_by;
        return fail(what, std::string("interrupted by SIG") + ::sigabbrev_np(run.interrupted_by),
                    "nothing was written");
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

// A fresh directory "<prefix>XXXXXX"; removed with all it holds when the owner goes.
class TempDir {
  public:
    static Result<TempDir> make(const fs::path& prefix) {
        std::string tmpl = fs::absolute(prefix).string() + "XXXXXX";
        if (::mkdtemp(tmpl.data()) == nullptr) {
            return fail("mkdtemp " + tmpl, std::strerror(errno));
        }
        return TempDir(tmpl);
    }
    TempDir(TempDir&& o) noexcept : m_path(std::exchange(o.m_path, {})) {}
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;
    TempDir& operator=(TempDir&&) = delete;
    ~TempDir() {
        std::error_code ec;
        if (!m_path.empty()) {
            fs::remove_all(m_path, ec);
        }
    }
    [[nodiscard]] const fs::path& path() const { return m_path; }

  private:
    explicit TempDir(fs::path p) : m_path(std::move(p)) {}
    fs::path m_path;
};

Result<void> fsync_file(const fs::path& file) {
    util::UniqueFd fd(::open(file.c_str(), O_RDONLY | O_CLOEXEC));
    if (!fd || ::fsync(fd.get()) != 0) {
        return fail("fsync " + file.string(), std::strerror(errno));
    }
    return {};
}

// The logs of `report`'s steps (each one's `log` and its attempts') that are files: by file
// name, the name a test job's log directory gives them.
std::map<std::string, fs::path> log_sources(const Report& report) {
    std::map<std::string, fs::path> out;
    auto add = [&](const fs::path& log) {
        std::error_code ec;
        if (!log.empty() && fs::is_regular_file(log, ec)) {
            out.emplace(log.filename().string(), log);
        }
    };
    for (const auto& s : report.steps) {
        add(s.log);
        for (const auto& a : s.attempts) {
            add(a.log);
        }
    }
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
                                  "list " + name, interrupted_by, k_max_listing));
    EMURUN_TRY(check_archive_members(lines(listing), m, name));
    for (const auto& path : m.paths) {
        std::error_code ec;
        if (fs::symlink_status(p.dir / path, ec).type() != fs::file_type::not_found) {
            return fail("artifacts " + name, (p.dir / path).string() + " already exists",
                        "unpack into a fresh checkout, or remove it first: nothing is overwritten");
        }
    }
    return m;
}

// Moves every packed path from `staging` into the pipeline's directory; on failure, the ones
// already moved go back.
Result<void> move_into_place(const Pipeline& p, const fs::path& staging,
                             const std::vector<std::string>& paths) {
    std::vector<std::string> moved;
    for (const auto& path : paths) {
        std::error_code ec;
        fs::create_directories((p.dir / path).parent_path(), ec);
        if (ec || ::rename((staging / path).c_str(), (p.dir / path).c_str()) != 0) {
            const std::string why = ec ? ec.message() : std::strerror(errno);
            for (const auto& back : moved) {
                (void)::rename((p.dir / back).c_str(), (staging / back).c_str());
            }
            return fail("unpack " + path + " into " + p.dir.string(), why);
        }
        moved.push_back(path);
    }
    return {};
}

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

void remove_files(const std::vector<fs::path>& files) {
    for (const auto& f : files) {
        std::error_code ec;
        fs::remove(f, ec);
    }
}

// The packed logs from the unpacked tree `staging` into `log_dir`: the files that were written
// (removed again when the unpack fails later).
Result<std::vector<fs::path>> place_logs(const fs::path& staging, const ArtifactManifest& m,
                                         const fs::path& log_dir) {
    std::vector<fs::path> placed;
    std::error_code ec;
    if (!m.logs.empty()) {
        fs::create_directories(log_dir, ec);
    }
    for (const auto& name : m.logs) {
        const fs::path from = staging / k_logs_member / name;
        const bool file = !ec && fs::symlink_status(from, ec).type() == fs::file_type::regular;
        if (!file ||
            !fs::copy_file(from, log_dir / name, fs::copy_options::overwrite_existing, ec)) {
            remove_files(placed);
            return fail("unpack the log " + name + " into " + log_dir.string(),
                        ec ? ec.message() : "the archive holds no such file",
                        "use the archive as 'emurun run --pack' wrote it; nothing was moved");
        }
        placed.push_back(log_dir / name);
    }
    return placed;
}

// `steps` with each log (and each attempt's) naming its file in `log_dir` when the archive held
// it, else empty.
std::vector<StepResult> relinked(std::vector<StepResult> steps, const ArtifactManifest& m,
                                 const fs::path& log_dir) {
    auto relink = [&](fs::path& log) {
        const std::string name = log.filename().string();
        const bool packed = !log.empty() && std::ranges::find(m.logs, name) != m.logs.end();
        log = packed ? log_dir / name : fs::path();
    };
    for (auto& s : steps) {
        relink(s.log);
        for (auto& a : s.attempts) {
            relink(a.log);
        }
    }
    return steps;
}

Result<ArtifactManifest> pack(const Pipeline& p, const ArtifactManifest& m,
                              const std::vector<std::string>& comp, const fs::path& archive,
                              int& interrupted_by) {
    const fs::path dir = fs::absolute(archive).parent_path();
    auto tmp = EMURUN_TRY(TempDir::make(dir / ("." + archive.filename().string() + ".tmp-")));
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
    args.insert(args.end(),
                {"-C", p.dir.string(), "--null", "--verbatim-files-from", "-T", list.string()});
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
    auto staging = EMURUN_TRY(TempDir::make(p.dir / ".emurun-unpack-"));
    EMURUN_TRY(tar({"-x", "-f", fs::absolute(archive).string(), "-C", staging.path().string(),
                    "--no-same-owner", "--no-overwrite-dir"},
                   comp, "unpack " + archive.string(), interrupted_by));
    EMURUN_TRY(check_unpacked_tree(staging.path()));
    auto logs = EMURUN_TRY(place_logs(staging.path(), m, log_dir));
    if (auto moved = move_into_place(p, staging.path(), m.paths); !moved) {
        remove_files(logs);
        return std::unexpected(moved.error());
    }
    return ReusedSteps{m.id, relinked(m.report.steps, m, log_dir)};
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
