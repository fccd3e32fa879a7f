#include "util/cache.hpp"

#include "util/env.hpp"

#include <cstdlib>
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

} // namespace

fs::path private_dir(const fs::path& wanted) {
    ::mkdir(wanted.c_str(), 0700); // EEXIST: judged below like any other
    if (ours_and_closed(wanted) && ::chmod(wanted.c_str(), 0700) == 0) {
        return wanted;
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
