// A root of its own from a container image: the image's platform imported once into the cache
// (import_root, under a lock), then copied into a directory of this process for each run, so
// a run starts from the image and never from what an earlier run changed.
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

/// The import's name in the cache: 24 hex digits of the digest and the platform asked for.
std::string import_key(const std::string& digest, const ImageRootSpec& spec) {
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

/// The cached import `images/KEY`, made when missing (all or nothing: import_root renames a
/// complete root into place); under a lock, so two runs never import one image at once.
Result<bool> cached_import(const fs::path& images, const std::string& key,
                           const ImageRootSpec& spec, std::vector<std::string>& notes) {
    const auto lock = EMURUN_TRY(lock_import(images / (key + ".lock")));
    remove_dead_imports(images, key);
    std::error_code ec;
    if (fs::is_directory(images / key, ec)) {
        return true;
    }
    auto done =
        EMURUN_TRY(import_root(RootImportSpec{spec.source, images / key, spec.arch, spec.variant}));
    notes = std::move(done.notes);
    return false;
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
    const fs::path cache =
        EMURUN_TRY(util::own_cache_dir(spec.cache_dir.value_or(util::cache_dir())));
    const fs::path images = EMURUN_TRY(util::own_cache_subdir(cache, "images"));
    remove_stale_runs(images);
    const std::string digest = EMURUN_TRY(image_digest(spec.source));
    ImageRoot out;
    out.key = import_key(digest, spec);
    out.from_cache = EMURUN_TRY(cached_import(images, out.key, spec, out.notes));
    const auto image = EMURUN_TRY(read_root_image(images / out.key));
    if (image) {
        out.arch = EMURUN_TRY(oci_platform_arch(image->architecture, image->variant));
    }
    const fs::path run =
        EMURUN_TRY(util::own_cache_subdir(images, "run-" + std::to_string(::getpid())));
    hold_run_dir(run);
    out.dir = EMURUN_TRY(fresh_dir(run));
    auto copied = root_detail::run_tool(
        {"cp", "-a", "--reflink=auto", "--", (images / out.key / ".").string(), out.dir.string()},
        "copy the imported image " + spec.source.string() + " into a fresh root");
    if (!copied) {
        remove_image_root(out);
        return std::unexpected(copied.error());
    }
    ::chmod(out.dir.c_str(), 0755); // mkdtemp made it 0700
    return out;
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
