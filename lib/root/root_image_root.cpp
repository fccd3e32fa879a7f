// The cache of imports, `images/KEY` of the cache dir: an image's platform imported once
// (under a lock), then copied: into a directory of this process for each run (make_image_root),
// so a run starts from the image and never from what an earlier run changed, or into the
// directory `emurun root import` names (import_root with RootImportSpec::cache).
#include "root/root_internal.hpp"
#include "util/cache.hpp"
#include "util/fd.hpp"
#include "util/temp_dir.hpp"

#include <emurun/root.hpp>

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

namespace emurun {
namespace fs = std::filesystem;

namespace {

/// What names the image's content: the sha256 of the tarball, or of an OCI layout's
/// index.json (its blobs are named by their digests, which the import checks).
Result<std::string> image_digest(const fs::path& source) {
    std::error_code ec;
    if (!fs::exists(source, ec)) {
        return fail(ErrorKind::bad_input, "use " + source.string() + " as an image root",
                    "it does not exist",
                    "name an OCI image layout, an image tarball, or a root directory");
    }
    if (fs::is_directory(source, ec)) {
        if (!fs::is_regular_file(source / "oci-layout", ec)) {
            return fail(ErrorKind::bad_input, "use " + source.string() + " as an image root",
                        "it is a directory without an oci-layout file",
                        "name an OCI image layout, an image tarball, or a root directory");
        }
        return root_detail::sha256_of(source / "index.json");
    }
    return root_detail::sha256_of(source);
}

/// An image and the platform to take from it: what names an import in the cache.
struct ImageRequest {
    fs::path source;
    const Arch* arch = nullptr;
    std::string variant;
};

/// The import's name in the cache: 24 hex digits of the digest and the platform asked for.
std::string import_key(const std::string& digest, const ImageRequest& spec) {
    std::string key = digest.substr(digest.find(':') + 1, 24) + "-";
    key += spec.arch != nullptr ? spec.arch->name : "only";
    std::string variant; // "v8": a name part, never a path
    for (const char c : spec.variant) {
        if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')) {
            variant += c;
        }
    }
    return variant.empty() ? key : key + "-" + variant;
}

/// What an import of KEY killed outright (SIGKILL, or a signal between its tools) left beside
/// `images/KEY`: its partial root, the image's unpacked blobs, the exclude list
/// (`.KEY.emurun-*`, `..KEY.emurun-*`), each as big as the image. Removed under KEY's lock,
/// when no import of KEY runs.
void remove_dead_imports(const fs::path& images, const std::string& key) {
    for (const auto& entry : root_detail::list_dir(images)) {
        const std::string name = entry.filename().string();
        if (name.starts_with("." + key + ".emurun-") || name.starts_with(".." + key + ".emurun-")) {
            (void)util::TempDir::adopt(entry); // removed with what it holds
        }
    }
}

/// A SIGINT, SIGTERM or SIGHUP pending (a run blocks them outside its steps), else 0.
int pending_stop_signal() {
    sigset_t pending;
    sigemptyset(&pending);
    ::sigpending(&pending);
    for (const int sig : {SIGINT, SIGTERM, SIGHUP}) {
        if (sigismember(&pending, sig) == 1) {
            return sig;
        }
    }
    return 0;
}

/// KEY's lock (flock of `images/KEY.lock`), waited for while another run imports the image; a
/// stop signal pending meanwhile ends the wait at once (root_interrupted_by() names it), not
/// when that import is done.
Result<util::UniqueFd> lock_import(const fs::path& lock) {
    util::UniqueFd fd(::open(lock.c_str(), O_RDONLY | O_CLOEXEC | O_CREAT, 0644));
    if (!fd) {
        return std::unexpected(system_error("open lock " + lock.string(), errno));
    }
    while (::flock(fd.get(), LOCK_EX | LOCK_NB) != 0) {
        if (errno != EWOULDBLOCK && errno != EINTR) {
            return std::unexpected(system_error("flock " + lock.string(), errno));
        }
        if (const int sig = pending_stop_signal(); sig != 0) {
            root_detail::note_interrupted(sig);
            return fail("wait for another run's import (" + lock.string() + ")",
                        std::string("interrupted by SIG") + ::sigabbrev_np(sig));
        }
        ::usleep(100'000);
    }
    return fd;
}

/// The image file of a whole import `entry` (import_root writes it last, with the digest),
/// else why the entry is not one (an import of an older emurun, a damaged or removed file).
Result<RootImage> whole_import(const fs::path& entry) {
    std::error_code ec;
    if (!fs::is_directory(fs::symlink_status(entry, ec))) {
        return fail("use " + entry.string(), "it is not a directory");
    }
    const auto image = EMURUN_TRY(read_root_image(entry));
    if (!image || image->digest.empty()) {
        return fail("use " + entry.string(),
                    "it has no " + std::string(k_root_image_file) + " with the image's digest");
    }
    return *image;
}

/// What the cache holds of an image and platform (checked by import_fresh against the
/// platform asked for, which is part of KEY).
struct CachedImport {
    fs::path dir;            // images/KEY
    std::string key;         // KEY
    bool from_cache = false; // imported before; else just now
    RootImported import;
};

/// The cached import `images/KEY`, made when missing or not whole (all or nothing: import_fresh
/// renames a complete root into place); under a lock, so two runs never import one image at once.
Result<CachedImport> cached_import(const fs::path& images, const ImageRequest& spec) {
    const std::string digest = EMURUN_TRY(image_digest(spec.source));
    CachedImport out;
    out.key = import_key(digest, spec);
    out.dir = images / out.key;
    const auto lock = EMURUN_TRY(lock_import(images / (out.key + ".lock")));
    remove_dead_imports(images, out.key);
    std::error_code ec;
    if (auto image = whole_import(out.dir); image) {
        out.from_cache = true;
        out.import.notes = image->notes; // what the import said holds for each copy
        out.import.image = std::move(*image);
        out.import.arch =
            EMURUN_TRY(oci_platform_arch(out.import.image.architecture, out.import.image.variant));
        return out;
    } else if (fs::exists(fs::symlink_status(out.dir, ec))) {
        // Moved aside first, so that a removal cut short leaves a dead import's name, which the
        // next import of KEY removes.
        const fs::path dead =
            images / ("." + out.key + ".emurun-stale-" + std::to_string(::getpid()));
        if (::rename(out.dir.c_str(), dead.c_str()) != 0) {
            return std::unexpected(
                system_error("rename " + out.dir.string() + " to " + dead.string(), errno));
        }
        (void)util::TempDir::adopt(dead); // removed with what it holds
        out.import.notes.push_back("the cache's " + out.key + " was not a whole import (" +
                                   image.error().why + "): imported again");
    }
    RootImportSpec into;
    into.source = spec.source;
    into.dir = out.dir;
    into.arch = spec.arch;
    into.variant = spec.variant;
    auto done = EMURUN_TRY(root_detail::import_fresh(into));
    // Named by the digest taken before the import: an image replaced at its path meanwhile
    // would put another image's content under this key.
    if (auto again = image_digest(spec.source); !again || *again != digest) {
        (void)util::TempDir::adopt(out.dir); // removed with what it holds, under the lock
        return fail("import " + spec.source.string(),
                    "the image changed while it was imported (its digest was " + digest +
                        (again ? ", now " + *again : std::string()) + ")",
                    "import it again once it is written completely; nothing was cached");
    }
    done.notes.insert(done.notes.begin(), out.import.notes.begin(), out.import.notes.end());
    out.import = std::move(done);
    return out;
}

/// The cache dir's `images/`, checked as ours.
Result<fs::path> images_dir(const std::optional<fs::path>& cache_dir) {
    const fs::path cache = EMURUN_TRY(util::own_cache_dir(cache_dir.value_or(util::cache_dir())));
    return util::own_cache_subdir(cache, "images");
}

/// cp -a --reflink=auto of the import `from` into the directory `to` (made, empty).
Result<void> copy_import(const fs::path& from, const fs::path& to, const std::string& what) {
    EMURUN_TRY(root_detail::run_tool(
        {"cp", "-a", "--reflink=auto", "--", (from / ".").string(), to.string()}, what));
    ::chmod(to.c_str(), 0755); // mkdtemp made it 0700
    return {};
}

/// A new directory `run/N` (mkdtemp) for this process's fresh root.
Result<fs::path> fresh_dir(const fs::path& run) {
    std::string tmpl = (run / "root-XXXXXX").string();
    if (::mkdtemp(tmpl.data()) == nullptr) {
        return std::unexpected(system_error("make a directory in " + run.string(), errno));
    }
    return fs::path(tmpl);
}

/// This process's hold on its `run-PID` dir (a shared flock, kept while the dir is): a run in
/// another PID namespace sharing the cache (CI containers on one volume), where this PID is no
/// process or another one, sees the dir in use and leaves it.
int g_run_hold = -1;

void hold_run_dir(const fs::path& run) {
    if (g_run_hold >= 0) {
        return;
    }
    const int fd = ::open(run.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd >= 0 && ::flock(fd, LOCK_SH) == 0) {
        g_run_hold = fd;
    } else if (fd >= 0) {
        ::close(fd);
    }
}

/// Some process (of any PID namespace) holds `dir` (hold_run_dir).
bool run_dir_held(const fs::path& dir) {
    const util::UniqueFd fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    return fd && ::flock(fd.get(), LOCK_EX | LOCK_NB) != 0 && errno == EWOULDBLOCK;
}

/// The fresh roots of runs whose process is gone (SIGKILL) and that no process holds: removed.
void remove_stale_runs(const fs::path& images) {
    for (const auto& stale : root_detail::stale_pid_dirs(images, "run-", root_detail::pid_alive)) {
        if (!run_dir_held(stale)) {
            (void)util::TempDir::adopt(stale); // removed with what it holds
        }
    }
}

} // namespace

bool is_root_image(const fs::path& path) {
    std::error_code ec;
    const auto st = fs::status(path, ec);
    return fs::is_regular_file(st) ||
           (fs::is_directory(st) && fs::is_regular_file(path / "oci-layout", ec));
}

Result<ImageRoot> make_image_root(const ImageRootSpec& spec) {
    root_detail::note_interrupted(0);
    const fs::path images = EMURUN_TRY(images_dir(spec.cache_dir));
    remove_stale_runs(images);
    auto cached = EMURUN_TRY(cached_import(images, {spec.source, spec.arch, spec.variant}));
    ImageRoot out;
    out.key = cached.key;
    out.from_cache = cached.from_cache;
    out.arch = cached.import.arch;
    out.notes = std::move(cached.import.notes);
    out.image = std::move(cached.import.image);
    const fs::path run =
        EMURUN_TRY(util::own_cache_subdir(images, "run-" + std::to_string(::getpid())));
    hold_run_dir(run);
    out.dir = EMURUN_TRY(fresh_dir(run));
    auto copied =
        copy_import(cached.dir, out.dir,
                    "copy the imported image " + spec.source.string() + " into a fresh root");
    if (!copied) {
        remove_image_root(out);
        return std::unexpected(copied.error());
    }
    return out;
}

Result<RootImported> root_detail::import_through_cache(const RootImportSpec& spec) {
    EMURUN_TRY(root_detail::check_new_root_dir(spec.dir));
    auto checked = images_dir(spec.cache_dir);
    if (!checked) { // the cache dir is not ours: say that an import needs none
        Error e = std::move(checked.error());
        e.hint += std::string(e.hint.empty() ? "" : ", ") + "or import without the cache";
        e.field = "cache=false";
        return std::unexpected(std::move(e));
    }
    const fs::path images = *checked;
    auto cached = EMURUN_TRY(cached_import(images, {spec.source, spec.arch, spec.variant}));
    std::error_code ec;
    const fs::path dir = fs::absolute(spec.dir, ec);
    EMURUN_TRY(root_detail::make_dirs(dir.parent_path()));
    // Removed with what it holds unless the copy is complete: all or nothing, as an import.
    auto partial = EMURUN_TRY(util::TempDir::make(
        dir.parent_path() / ("." + dir.filename().string() + ".emurun-partial-")));
    EMURUN_TRY(copy_import(cached.dir, partial.path(),
                           "copy the imported image " + spec.source.string() + " from the cache"));
    if (::rename(partial.path().c_str(), dir.c_str()) != 0) { // onto an absent or empty dir
        return std::unexpected(
            system_error("rename " + partial.path().string() + " to " + dir.string(), errno));
    }
    cached.import.from_cache = cached.from_cache;
    return std::move(cached.import);
}

void remove_image_root(const ImageRoot& root) {
    if (root.dir.empty()) {
        return;
    }
    (void)util::TempDir::adopt(root.dir); // removed with what it holds
    if (::rmdir(root.dir.parent_path().c_str()) == 0 && g_run_hold >= 0) {
        ::close(g_run_hold); // this process's run dir, once it is empty, and its hold
        g_run_hold = -1;
    }
}

} // namespace emurun
