// Pruning the merged-prefix cache (layout in sysroot_prefix.cpp).
#include "sysroot/sysroot_internal.hpp"
#include "util/file.hpp"

#include <set>
#include <sstream>

namespace emurun::detail {
namespace fs = std::filesystem;

namespace {

bool older_than(const fs::path& p, std::chrono::seconds age) {
    std::error_code ec;
    const auto t = fs::symlink_status(p, ec).type() == fs::file_type::symlink
                       ? fs::file_time_type::clock::now() // symlinks: decided by their target
                       : fs::last_write_time(p, ec);
    return !ec && fs::file_time_type::clock::now() - t > age;
}

/// Every sysroot listed in `version`'s sources file still exists.
bool sources_exist(const fs::path& version) {
    auto text = util::read_file(version / k_prefix_sources, 1 << 20);
    if (!text) {
        return false;
    }
    std::istringstream in(*text);
    for (std::string line; std::getline(in, line);) {
        std::error_code ec;
        if (!line.empty() && !fs::is_directory(line, ec)) {
            return false;
        }
    }
    return true;
}

std::size_t remove_entry(const fs::path& p) {
    std::error_code ec;
    return fs::remove_all(p, ec) > 0 ? 1 : 0;
}

/// Names (symlinks): drop dangling ones and those whose sysroots are gone; returns the live
/// versions they point to.
std::set<std::string> prune_names(const fs::path& base, std::size_t& removed) {
    std::set<std::string> live;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(base, ec)) {
        if (!e.is_symlink(ec)) {
            continue;
        }
        const fs::path target = fs::read_symlink(e.path(), ec);
        if (ec || !fs::is_directory(base / target, ec) || !sources_exist(base / target)) {
            removed += remove_entry(e.path());
            continue;
        }
        live.insert(target.filename().string());
    }
    return live;
}

} // namespace

std::size_t prune_ld_prefixes(const fs::path& base, std::chrono::seconds grace) {
    std::size_t removed = 0;
    const auto live = prune_names(base, removed);
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(base, ec)) {
        const std::string name = e.path().filename().string();
        if (e.is_symlink(ec) || live.contains(name)) {
            continue;
        }
        if (name.starts_with(".v-")) {
            const bool gone = !sources_exist(e.path());
            if (gone || older_than(e.path(), grace)) {
                removed += remove_entry(e.path());
            }
        } else if (name.starts_with(".tmp-") || name.starts_with(".lnk-")) {
            if (older_than(e.path(), std::chrono::hours(1))) {
                removed += remove_entry(e.path());
            }
        } else if (older_than(e.path(), std::chrono::hours(24 * 30))) {
            removed += remove_entry(e.path()); // a prefix dir of an older emurun
        }
    }
    return removed;
}

} // namespace emurun::detail
