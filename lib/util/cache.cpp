#include "util/cache.hpp"

#include "util/env.hpp"

#include <string>
#include <unistd.h>

namespace emurun::util {
namespace fs = std::filesystem;

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
    return fs::path("/tmp") / ("emurun-" + std::to_string(::getuid()));
}

} // namespace emurun::util
