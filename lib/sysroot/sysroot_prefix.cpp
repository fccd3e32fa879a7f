// The merged QEMU_LD_PREFIX: one directory of symlinks serving several arches and sysroots.
#include "sysroot/sysroot_internal.hpp"
#include "util/cache.hpp"

#include <emurun/sysroot.hpp>

#include <fstream>
#include <functional>
#include <sstream>
#include <unistd.h>

namespace emurun {
namespace fs = std::filesystem;

namespace {

/// Link `target` at `link` unless something is there already (the first sysroot wins).
void link_once(const fs::path& target, const fs::path& link) {
    std::error_code ec;
    if (fs::exists(fs::symlink_status(link, ec))) {
        return;
    }
    fs::create_directories(link.parent_path(), ec);
    fs::create_symlink(fs::absolute(target), link, ec);
}

/// Every ELF object of `arch` directly inside `dir`, linked into `dest` by file name.
void link_objects(const fs::path& dir, const Arch& arch, const fs::path& dest,
                  const std::function<bool(const std::string&)>& want) {
    std::error_code ec;
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
        const auto name = it->path().filename().string();
        if (want(name) && it->is_regular_file(ec) && detail::is_object_of(it->path(), arch)) {
            link_once(it->path(), dest / name);
        }
    }
}

void add_arch(const fs::path& prefix, const ArchSysroots& a) {
    const Arch& arch = *a.arch;
    const fs::path farm = prefix / "lib" / arch.triplet;
    auto is_loader = [](const std::string& n) {
        return n.starts_with("ld-") || n.starts_with("ld64");
    };
    auto any = [](const std::string&) { return true; };
    for (const auto& root : a.sysroots) {
        for (const char* top : {"lib", "lib64", "lib32"}) {
            link_objects(root / top, arch, prefix / top, is_loader);
        }
        for (const auto& d : detail::default_lib_dirs(arch)) {
            link_objects(root / d, arch, farm, any);
        }
    }
}

std::string prefix_key(const std::vector<ArchSysroots>& arches) {
    std::ostringstream key;
    for (const auto& a : arches) {
        key << a.arch->name << '=';
        for (const auto& r : a.sysroots) {
            std::error_code ec;
            auto t = fs::last_write_time(r, ec).time_since_epoch().count();
            key << fs::absolute(r).string() << '@' << t << ';';
        }
        key << '|';
    }
    std::ostringstream hex;
    hex << std::hex << std::hash<std::string>{}(key.str());
    return hex.str();
}

} // namespace

fs::path cache_dir() {
    return util::cache_dir();
}

Result<fs::path> make_ld_prefix(const std::vector<ArchSysroots>& arches, const fs::path& cache) {
    if (arches.size() == 1 && arches[0].sysroots.size() == 1) {
        return arches[0].sysroots[0];
    }
    const fs::path final_dir = cache / "prefix" / prefix_key(arches);
    std::error_code ec;
    if (fs::is_directory(final_dir, ec)) {
        return final_dir;
    }
    const fs::path tmp = cache / "prefix" / (".tmp-" + std::to_string(::getpid()));
    fs::remove_all(tmp, ec);
    if (!fs::create_directories(tmp, ec) && ec) {
        return fail("create " + tmp.string(), ec.message(), "set XDG_CACHE_HOME to a writable dir");
    }
    for (const auto& a : arches) {
        add_arch(tmp, a);
    }
    // Publish atomically; a concurrent builder may have won the race, which is fine.
    fs::rename(tmp, final_dir, ec);
    if (ec) {
        fs::remove_all(tmp, ec);
        if (!fs::is_directory(final_dir)) {
            return fail("create loader prefix " + final_dir.string(), ec.message());
        }
    }
    return final_dir;
}

} // namespace emurun
