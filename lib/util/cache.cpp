#include "util/cache.hpp"

#include "util/env.hpp"
#include "util/fd.hpp"

#include <cerrno>
#include <cstdlib>
#include <fcntl.h>
#include <string>
#include <sys/stat.h>
#include <unistd.h>

namespace emurun::util {
namespace fs = std::filesystem;

namespace {

/// Whether `dir` is a real directory (not a symlink) of this user that no one else can write.
bool ours_and_closed(const fs::path& dir) {
    struct stat st {};
    return ::lstat(dir.c_str(), &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == ::geteuid() &&
           (st.st_mode & 022) == 0;
}

/// `wanted` when it is ours and closed (made 0700 when missing, a 0755 one closed to 0700).
bool take_private(const fs::path& wanted) {
    ::mkdir(wanted.c_str(), 0700); // EEXIST: judged below like any other
    return ours_and_closed(wanted) && ::chmod(wanted.c_str(), 0700) == 0;
}

/// Why someone other than this user can change `st` (a directory); empty when no one can.
/// `parent`: a sticky dir writable by others still keeps them from renaming our entry.
std::string opened_to_others(const struct stat& st, bool parent) {
    const uid_t me = ::geteuid();
    if (st.st_uid != me && !(parent && st.st_uid == 0)) {
        return "owned by uid " + std::to_string(st.st_uid) + ", not by this user (uid " +
               std::to_string(me) + ")";
    }
    if ((st.st_mode & 022) != 0 && !(parent && (st.st_mode & S_ISVTX) != 0)) {
        return std::string((st.st_mode & 002) != 0 ? "writable by others"
                                                   : "writable by its group");
    }
    return {};
}

/// Each parent of the canonical `dir` up to /: no one but this user or root can change it.
Result<void> parents_closed(const fs::path& dir) {
    std::error_code ec;
    const fs::path real = fs::canonical(dir, ec);
    if (ec) {
        return fail("cache directory " + dir.string(), ec.message());
    }
    for (fs::path p = real.parent_path();; p = p.parent_path()) {
        struct stat st {};
        if (::lstat(p.c_str(), &st) != 0) {
            return std::unexpected(system_error("cache directory " + dir.string(), errno));
        }
        if (auto why = opened_to_others(st, true); !why.empty()) {
            return fail("cache directory " + dir.string(),
                        "its parent " + p.string() + " is " + why +
                            ": another user could replace what emurun loads from it",
                        "set EMURUN_CACHE_DIR to a directory of your own");
        }
        if (p == p.root_path()) {
            return {};
        }
    }
}

} // namespace

Result<fs::path> own_cache_dir(const fs::path& dir) {
    std::error_code ec;
    if (!dir.parent_path().empty()) {
        fs::create_directories(dir.parent_path(), ec); // a failure shows in mkdir's
    }
    if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) {
        return std::unexpected(system_error("create cache directory " + dir.string(), errno,
                                            "set EMURUN_CACHE_DIR to a writable directory"));
    }
    struct stat st {};
    if (::lstat(dir.c_str(), &st) != 0) {
        return std::unexpected(system_error("cache directory " + dir.string(), errno));
    }
    if (!S_ISDIR(st.st_mode)) {
        return fail("cache directory " + dir.string(),
                    S_ISLNK(st.st_mode) ? "is a symlink" : "is not a directory",
                    "remove it, or set EMURUN_CACHE_DIR to a directory of your own");
    }
    if (auto why = opened_to_others(st, false); !why.empty()) {
        return fail("cache directory " + dir.string(),
                    "is " + why + ": another user could change what emurun loads from it",
                    "remove it, or set EMURUN_CACHE_DIR to a directory of your own");
    }
    EMURUN_TRY(parents_closed(dir));
    return dir;
}

Result<fs::path> own_cache_subdir(const fs::path& cache, const fs::path& sub) {
    util::UniqueFd dir(::open(cache.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    fs::path at = cache;
    for (const auto& part : sub) {
        at /= part;
        const std::string what = "cache directory " + at.string();
        if (!dir) {
            return std::unexpected(system_error(what, errno));
        }
        if (::mkdirat(dir.get(), part.c_str(), 0755) != 0 && errno != EEXIST) {
            return std::unexpected(system_error("create " + what, errno,
                                                "set EMURUN_CACHE_DIR to a writable directory"));
        }
        struct stat st {};
        if (::fstatat(dir.get(), part.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
            return std::unexpected(system_error(what, errno));
        }
        std::string why = S_ISLNK(st.st_mode)    ? "is a symlink"
                          : !S_ISDIR(st.st_mode) ? "is not a directory"
                                                 : opened_to_others(st, false);
        if (!why.empty()) {
            return fail(what, why + ": another user could change what emurun loads from it",
                        "remove it (emurun makes it again), or set EMURUN_CACHE_DIR to a "
                        "directory of your own");
        }
        dir = util::UniqueFd(
            ::openat(dir.get(), part.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    }
    return at;
}

Result<fs::path> checked_cache_dir() {
    const fs::path dir = cache_dir();
    if (dir.empty()) {
        return fail("cache directory", "no private directory could be made in /tmp",
                    "set EMURUN_CACHE_DIR to a directory of your own");
    }
    return own_cache_dir(dir);
}

fs::path private_dir(const fs::path& wanted) {
    if (take_private(wanted)) {
        return wanted;
    }
    // The same few names every run, before a fresh one: a squatted name costs one dir of ours,
    // not a new one per run.
    for (int i = 1; i <= k_private_tries; ++i) {
        if (const fs::path next = wanted.string() + "-" + std::to_string(i); take_private(next)) {
            return next;
        }
    }
    std::string tmpl = wanted.string() + "-XXXXXX";
    return ::mkdtemp(tmpl.data()) != nullptr ? fs::path(tmpl) : fs::path();
}

fs::path cache_dir() {
    if (auto dir = get_env("EMURUN_CACHE_DIR")) {
        std::error_code ec;
        auto absolute = fs::absolute(*dir, ec);
        return ec ? fs::path(*dir) : absolute;
    }
    if (auto xdg = get_env("XDG_CACHE_HOME"); xdg && xdg->starts_with('/')) {
        return fs::path(*xdg) / "emurun";
    }
    if (auto home = get_env("HOME");
        home && home->starts_with('/') && ::access(home->c_str(), W_OK) == 0) {
        return fs::path(*home) / ".cache" / "emurun";
    }
    // Once per process: a fallback made fresh is then used for the whole run.
    static const fs::path tmp = private_dir("/tmp/emurun-" + std::to_string(::geteuid()));
    return tmp;
}

} // namespace emurun::util
