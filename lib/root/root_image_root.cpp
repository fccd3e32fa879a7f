// The cache of imports, `images/KEY` of the cache dir (KEY: the image's digest and the platform
// taken, as the image names it): an image's platform imported once (under the image's lock),
// each entry checked before it is used (ours, its record ours and no symlink, the image and
// platform its name says, no setuid file), then copied: into a directory of this process for each
// run (make_image_root), so a run starts from the image and never from what an earlier run changed,
// or into the directory `emurun root import` names (import_root with RootImportSpec::cache).
#include "root/root_internal.hpp"
#include "util/cache.hpp"
#include "util/fd.hpp"
#include "util/file.hpp"
#include "util/temp_dir.hpp"

#include <emurun/root.hpp>

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <map>
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

/// The first 24 hex digits of the image's digest: what its imports' names begin with.
std::string digest_stem(const std::string& digest) {
    return digest.substr(digest.find(':') + 1, 24);
}

/// A platform as the rest of an import's name: "linux/arm64/v8" is "aarch64-v8"; empty for a
/// platform whose arch emurun does not know.
std::string platform_key(const std::string& platform) {
    const auto p = parse_oci_platform(platform);
    if (!p) {
        return {};
    }
    std::string variant; // "v8": a name part, never a path
    for (const char c : p->variant) {
        if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')) {
            variant += c;
        }
    }
    return p->arch->name + (variant.empty() ? "" : "-" + variant);
}

/// The platform of `offered` (an image's RootImage::platforms) that `spec` takes, by the
/// index's rule (import_root): the one that matches its arch and variant; empty when none or
/// several do (then an import says why). An image that offers none (a rootfs tarball without
/// bin/sh) is of the platform the request names, as its import recorded it.
std::string resolve_platform(const std::vector<std::string>& offered, const ImageRequest& spec) {
    if (offered.empty() && spec.arch != nullptr) {
        const auto [arch, variant] = oci_platform_of(*spec.arch);
        const std::string v = spec.variant.empty() ? variant : spec.variant;
        return "linux/" + arch + (v.empty() ? "" : "/" + v);
    }
    std::string chosen;
    int matching = 0;
    for (const auto& platform : offered) {
        const auto p = parse_oci_platform(platform);
        const Arch* arch = p ? p->arch : nullptr;
        if ((spec.arch == nullptr || (arch != nullptr && arch == spec.arch)) &&
            (spec.variant.empty() || (p && p->variant == spec.variant))) {
            chosen = platform;
            ++matching;
        }
    }
    return matching == 1 ? chosen : std::string();
}

/// What an import killed outright (SIGKILL, or a signal between its tools) left beside the
/// imports of an image (`stem`): its partial root, the image's unpacked blobs, the exclude
/// list, an entry set aside (`.STEM….emurun-*`, `..STEM….emurun-*`), each as big as the
/// image. Removed under the image's lock, when no import of it runs.
void remove_dead_imports(const fs::path& images, const std::string& stem) {
    for (const auto& entry : root_detail::list_dir(images)) {
        const std::string name = entry.filename().string();
        if ((name.starts_with("." + stem) || name.starts_with(".." + stem)) &&
            name.find(".emurun-") != std::string::npos) {
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

/// The lock of an image's imports (flock of `images/STEM.lock`), waited for while another run
/// imports the image; a stop signal pending meanwhile ends the wait at once
/// (root_interrupted_by() names it), not when that import is done.
Result<util::UniqueFd> lock_import(const fs::path& lock) {
    util::UniqueFd fd(::open(lock.c_str(), O_RDONLY | O_CLOEXEC | O_CREAT | O_NOFOLLOW, 0644));
    if (!fd && (errno == EISDIR || errno == ELOOP)) {
        return fail("lock the cache's imports of an image",
                    lock.string() + " is " + (errno == EISDIR ? "a directory" : "a symlink") +
                        ", not emurun's lock file",
                    "remove it (emurun makes the lock file again)");
    }
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

/// Why someone other than this user could have changed the entry or its image file (`st`,
/// `what`); empty when no one could.
std::string changeable_by_others(const struct stat& st, const std::string& what) {
    if (st.st_uid != ::geteuid()) {
        return what + " is owned by uid " + std::to_string(st.st_uid) + ", not by this user (uid " +
               std::to_string(::geteuid()) + ")";
    }
    if ((st.st_mode & 022) != 0) {
        return what + " is writable by " + ((st.st_mode & 002) != 0 ? "others" : "its group");
    }
    return {};
}

/// The image file of the entry `images/NAME`, read only if the entry is a real directory of
/// this user and the file a regular file of this user (opened O_NOFOLLOW, checked by fstat),
/// neither writable by others; nullopt when there is no entry NAME. Error (its `why`): why the
/// entry is not to be used.
Result<std::optional<RootImage>> entry_image(int images, const std::string& name) {
    struct stat st {};
    if (::fstatat(images, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0 && errno == ENOENT) {
        return std::optional<RootImage>{};
    }
    const util::UniqueFd dir(
        ::openat(images, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!dir || ::fstat(dir.get(), &st) != 0) {
        return fail("use it", "it is not a directory");
    }
    if (auto why = changeable_by_others(st, "it"); !why.empty()) {
        return fail("use it", why);
    }
    const std::string file(k_root_image_file);
    const util::UniqueFd fd(
        ::openat(dir.get(), file.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
    if (!fd) {
        return fail("use it", errno == ENOENT ? "it has no " + file
                              : errno == ELOOP
                                  ? "its " + file + " is a symlink"
                                  : "its " + file + " cannot be opened: " + std::strerror(errno));
    }
    if (::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode)) {
        return fail("use it", "its " + file + " is not a regular file");
    }
    if (auto why = changeable_by_others(st, "its " + file); !why.empty()) {
        return fail("use it", why);
    }
    auto text = util::read_fd(fd.get(), file, 16 * 1024 * 1024);
    auto image = text ? root_detail::root_image_from_text(*text, file)
                      : Result<RootImage>(std::unexpected(text.error()));
    if (!image) {
        return fail("use it", "its " + file + " cannot be read: " + image.error().why);
    }
    if (image->digest.empty()) {
        return fail("use it", "it has no " + file + " with the image's digest");
    }
    return std::optional<RootImage>(std::move(*image));
}

/// Why the whole import `image` may not stand for `digest` under the name `name`: it records
/// another image or another platform than its name says (empty: it may).
std::string misnamed(const RootImage& image, const std::string& name, const std::string& digest) {
    if (image.source_digest != digest) {
        return "it records " +
               (image.source_digest.empty() ? std::string("no image digest")
                                            : "the image " + image.source_digest) +
               ", not " + digest;
    }
    const std::string key = digest_stem(digest) + "-" + platform_key(image.platform);
    if (key != name) {
        return "it records the platform " + image.platform + " (" + key + "), not its name's";
    }
    return {};
}

/// An entry moved aside (and removed) under the image's lock: so that a removal cut short
/// leaves a dead import's name, which the next import of the image removes.
Result<void> set_aside(const fs::path& images, const std::string& name) {
    const fs::path entry = images / name;
    const fs::path dead = images / ("." + name + ".emurun-stale-" + std::to_string(::getpid()));
    if (::rename(entry.c_str(), dead.c_str()) != 0) {
        return std::unexpected(
            system_error("rename " + entry.string() + " to " + dead.string(), errno));
    }
    (void)util::TempDir::adopt(dead); // removed with what it holds
    return {};
}

/// The whole imports of the image `digest` in `images` by name, each checked (entry_image,
/// misnamed); those not to be used are set aside, each said in `notes`.
Result<std::map<std::string, RootImage>>
entries_of(const fs::path& images, const std::string& digest, std::vector<std::string>& notes) {
    const util::UniqueFd dir(::open(images.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!dir) {
        return std::unexpected(system_error("open " + images.string(), errno));
    }
    std::map<std::string, RootImage> out;
    for (const auto& path : root_detail::list_dir(images)) {
        const std::string name = path.filename().string();
        if (!name.starts_with(digest_stem(digest) + "-") || name.ends_with(".lock")) {
            continue; // another image's, or a lock of an earlier emurun
        }
        auto image = entry_image(dir.get(), name);
        std::string why = !image    ? image.error().why
                          : !*image ? ""
                                    : misnamed(**image, name, digest);
        if (!why.empty()) {
            EMURUN_TRY(set_aside(images, name));
            notes.push_back("the cache's " + name + " was not used (" + why + "): removed");
        } else if (*image) {
            out.emplace(name, std::move(**image));
        }
    }
    return out;
}

/// What the cache holds of an image and platform.
struct CachedImport {
    fs::path dir;            // images/KEY
    std::string key;         // KEY: the image's digest stem and the platform taken
    bool from_cache = false; // imported before; else just now
    RootImported import;
};

/// The import of `spec` already in the cache (its entries in `entries`): the entry of the
/// platform the request resolves to among those the image offers, when it holds no setuid or
/// setgid file (an import clears them all; one there now was set since); else nullopt, that
/// entry set aside and said in `notes`.
Result<std::optional<CachedImport>> cache_hit(const fs::path& images, const std::string& stem,
                                              const std::map<std::string, RootImage>& entries,
                                              const ImageRequest& spec,
                                              std::vector<std::string>& notes) {
    if (entries.empty()) {
        return std::optional<CachedImport>{};
    }
    // Every entry of one image records the same platforms: the image's.
    const std::string platform = resolve_platform(entries.begin()->second.platforms, spec);
    const std::string key = stem + "-" + platform_key(platform);
    const auto it = entries.find(key);
    if (platform.empty() || it == entries.end()) {
        return std::optional<CachedImport>{};
    }
    auto setid = root_detail::find_setid(images / key);
    if (!setid || *setid) {
        EMURUN_TRY(set_aside(images, key));
        notes.push_back("the cache's " + key + " was not used (" +
                        (setid ? "its " + (*setid)->string() +
                                     " is setuid or setgid, which an import never leaves"
                               : setid.error().why) +
                        "): imported again");
        return std::optional<CachedImport>{};
    }
    CachedImport out;
    out.key = key;
    out.dir = images / key;
    out.from_cache = true;
    out.import.image = it->second;
    out.import.notes = notes;
    out.import.notes.insert(out.import.notes.end(), it->second.notes.begin(),
                            it->second.notes.end()); // what the import said holds for each copy
    out.import.arch =
        EMURUN_TRY(oci_platform_arch(out.import.image.architecture, out.import.image.variant));
    return std::optional<CachedImport>(std::move(out));
}

/// The cached import of `spec`'s image and platform, made when missing or not to be used (all
/// or nothing: import_fresh renames a complete root into place); under the image's lock, so two
/// runs never import one image at once. An import's name is the image's digest and the
/// platform it took (of those the image offers), so a request naming the platform and one that
/// leaves it to the image find the same import.
Result<CachedImport> cached_import(const fs::path& images, const ImageRequest& spec) {
    const std::string digest = EMURUN_TRY(image_digest(spec.source));
    const std::string stem = digest_stem(digest);
    const auto lock = EMURUN_TRY(lock_import(images / (stem + ".lock")));
    remove_dead_imports(images, stem);
    std::vector<std::string> notes;
    const auto entries = EMURUN_TRY(entries_of(images, digest, notes));
    if (auto hit = EMURUN_TRY(cache_hit(images, stem, entries, spec, notes)); hit) {
        return std::move(*hit);
    }
    // Imported under a dead import's name, then renamed to the name of the platform it took.
    RootImportSpec into;
    into.source = spec.source;
    into.dir = images / ("." + stem + ".emurun-new-" + std::to_string(::getpid()));
    into.arch = spec.arch;
    into.variant = spec.variant;
    auto done = EMURUN_TRY(root_detail::import_fresh(into));
    const util::TempDir fresh = util::TempDir::adopt(into.dir); // removed unless renamed below
    // Named by the digest taken before the import: an image replaced at its path meanwhile
    // would put another image's content under this key.
    if (auto again = image_digest(spec.source); !again || *again != digest) {
        return fail("import " + spec.source.string(),
                    "the image changed while it was imported (its digest was " + digest +
                        (again ? ", now " + *again : std::string()) + ")",
                    "import it again once it is written completely; nothing was cached");
    }
    done.image.source_digest = digest;
    EMURUN_TRY(root_detail::write_root_image(into.dir, done.image));
    CachedImport out;
    out.key = stem + "-" + platform_key(done.image.platform);
    out.dir = images / out.key;
    std::error_code ec; // an entry left there by a request the cache could not resolve
    if (fs::exists(fs::symlink_status(out.dir, ec))) {
        EMURUN_TRY(set_aside(images, out.key));
    }
    if (::rename(into.dir.c_str(), out.dir.c_str()) != 0) {
        return std::unexpected(
            system_error("rename " + into.dir.string() + " to " + out.dir.string(), errno));
    }
    // `fresh` names nothing now: its removal does nothing.
    done.notes.insert(done.notes.begin(), notes.begin(), notes.end());
    out.import = std::move(done);
    return out;
}

/// The cache dir's `images/`, checked as ours and closed to others (0700): an image's world-
/// writable directories (its tmp/) stay so in its entries, and no one else may reach them to
/// put a file there for every later root of the image (a cache dir of the user's own making
/// may be 0755).
Result<fs::path> images_dir(const std::optional<fs::path>& cache_dir) {
    const fs::path cache = EMURUN_TRY(util::own_cache_dir(cache_dir.value_or(util::cache_dir())));
    const fs::path images = EMURUN_TRY(util::own_cache_subdir(cache, "images"));
    if (::chmod(images.c_str(), 0700) != 0) {
        return std::unexpected(system_error("chmod 0700 " + images.string(), errno));
    }
    return images;
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
