// The merged QEMU_LD_PREFIX: one directory of symlinks serving several arches and sysroots.
//
// Cache layout under <cache>/prefix/:
//   <key>               a symlink to the current version; <key> hashes the arches and sysroot
//                       paths only, so a shim's sidecar can name it and stay valid across
//                       rebuilds
//   .v-<key>-<stamp>    one version of the farm; <stamp> hashes the identity (inode, mtime,
//                       ctime) of every directory the farm was made from, so unpacking a package
//                       into a sysroot yields a new stamp and a rebuild; it holds .emurun-sources
//                       (the sysroots, one a line) for pruning
#include "sysroot/sysroot_internal.hpp"
#include "util/cache.hpp"
#include "util/file.hpp"

#include <emurun/sysroot.hpp>

#include <algorithm>
#include <functional>
#include <sstream>
#include <sys/stat.h>
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

constexpr const char* k_top_dirs[] = {"lib", "lib64", "lib32"};

void add_arch(const fs::path& prefix, const ArchSysroots& a) {
    const Arch& arch = *a.arch;
    const fs::path farm = prefix / "lib" / arch.triplet;
    auto is_loader = [](const std::string& n) {
        return n.starts_with("ld-") || n.starts_with("ld64");
    };
    auto any = [](const std::string&) { return true; };
    for (const auto& root : a.sysroots) {
        for (const char* top : k_top_dirs) {
            link_objects(root / top, arch, prefix / top, is_loader);
        }
        for (const auto& d : detail::default_lib_dirs(arch)) {
            link_objects(root / d, arch, farm, any);
        }
    }
}

std::string hex_hash(const std::string& s) {
    std::ostringstream hex;
    hex << std::hex << std::hash<std::string>{}(s);
    return hex.str();
}

/// The arches and absolute sysroot paths: the stable name of a prefix.
std::string path_key(const std::vector<ArchSysroots>& arches) {
    std::string key;
    for (const auto& a : arches) {
        key += a.arch->name + '=';
        for (const auto& r : a.sysroots) {
            std::error_code ec;
            key += fs::absolute(r, ec).lexically_normal().string() + ';';
        }
        key += '|';
    }
    return hex_hash(key);
}

/// Identity of one directory: a package unpacked into it adds entries, which changes its mtime
/// (and a directory replaced wholesale changes its inode). Absent directories count too.
std::string dir_identity(const fs::path& dir) {
    struct stat st {};
    if (::stat(dir.c_str(), &st) != 0) {
        return dir.string() + ":-;";
    }
    std::ostringstream s;
    s << dir.string() << ':' << st.st_dev << ':' << st.st_ino << ':' << st.st_mtim.tv_sec << '.'
      << st.st_mtim.tv_nsec << ':' << st.st_ctim.tv_sec << '.' << st.st_ctim.tv_nsec << ';';
    return s.str();
}

/// The directories of `root` a prefix for `arch` is made from: the root, its top lib dirs and
/// the loader's default dirs.
std::vector<fs::path> source_dirs(const fs::path& root, const Arch& arch) {
    std::vector<fs::path> dirs{root};
    for (const char* top : k_top_dirs) {
        dirs.push_back(root / top);
    }
    for (const auto& d : detail::default_lib_dirs(arch)) {
        dirs.push_back(root / d);
    }
    return dirs;
}

/// A hash over the identity of every directory the farm is made from.
std::string content_stamp(const std::vector<ArchSysroots>& arches) {
    std::string all;
    for (const auto& a : arches) {
        for (const auto& root : a.sysroots) {
            for (const auto& dir : source_dirs(root, *a.arch)) {
                all += dir_identity(dir);
            }
        }
    }
    return hex_hash(all);
}

std::string sources_text(const std::vector<ArchSysroots>& arches) {
    std::string out;
    for (const auto& a : arches) {
        for (const auto& r : a.sysroots) {
            std::error_code ec;
            out += fs::absolute(r, ec).lexically_normal().string() + '\n';
        }
    }
    return out;
}

/// Build version `name` in a temporary dir and rename it into place (a concurrent builder of
/// the same version may win the race, which is fine).
Result<void> build_version(const fs::path& base, const std::string& name,
                           const std::vector<ArchSysroots>& arches) {
    const fs::path tmp = base / (".tmp-" + std::to_string(::getpid()));
    std::error_code ec;
    fs::remove_all(tmp, ec);
    if (!fs::create_directories(tmp, ec) && ec) {
        return fail("create " + tmp.string(), ec.message(),
                    "set EMURUN_CACHE_DIR or XDG_CACHE_HOME to a writable directory");
    }
    for (const auto& a : arches) {
        add_arch(tmp, a);
    }
    EMURUN_TRY(util::write_file_atomic(tmp / detail::k_prefix_sources, sources_text(arches)));
    fs::rename(tmp, base / name, ec);
    if (ec) {
        fs::remove_all(tmp, ec);
        if (!fs::is_directory(base / name, ec)) {
            return fail("create loader prefix " + (base / name).string(), "rename failed");
        }
    }
    return {};
}

/// Point the stable name `key` at `version`, atomically (a symlink renamed over the old one).
Result<void> publish(const fs::path& base, const std::string& key, const std::string& version) {
    const fs::path link = base / key;
    std::error_code ec;
    if (fs::read_symlink(link, ec) == fs::path(version)) {
        return {};
    }
    if (fs::is_directory(fs::symlink_status(link, ec))) {
        fs::remove_all(link, ec); // a prefix of an older emurun under the same name
    }
    const fs::path tmp = base / (".lnk-" + key + "-" + std::to_string(::getpid()));
    fs::remove(tmp, ec);
    fs::create_symlink(version, tmp, ec);
    if (!ec) {
        fs::rename(tmp, link, ec);
    }
    if (ec) {
        fs::remove(tmp, ec);
        return fail("publish loader prefix " + link.string(), ec.message(),
                    "check that " + base.string() + " is writable");
    }
    return {};
}

} // namespace

std::vector<fs::path> link_map_inputs(const LinkMap& map, const Arch& arch) {
    std::vector<fs::path> out;
    auto add = [&](const fs::path& p) {
        std::error_code ec;
        const fs::path q = fs::absolute(p, ec).lexically_normal();
        if (std::ranges::find(out, q) == out.end()) {
            out.push_back(q);
        }
    };
    auto add_found = [&](const LibraryLookup& l) {
        if (l.path) {
            add(*l.path);
            add(l.path->parent_path());
        }
        for (const auto& p : l.passed_over) {
            add(p);
        }
    };
    if (map.interpreter) {
        add_found(*map.interpreter);
    }
    for (const auto& l : map.libraries) {
        add_found(l);
    }
    for (const auto& root : map.sysroots) {
        for (const auto& dir : source_dirs(root, arch)) {
            add(dir);
        }
    }
    return out;
}

fs::path cache_dir() {
    return util::cache_dir();
}

Result<fs::path> make_ld_prefix(const std::vector<ArchSysroots>& arches, const fs::path& cache) {
    if (arches.size() == 1 && arches[0].sysroots.size() == 1) {
        return arches[0].sysroots[0];
    }
    EMURUN_TRY(util::own_cache_dir(cache));
    const fs::path base = EMURUN_TRY(util::own_cache_subdir(cache, "prefix"));
    const std::string key = path_key(arches);
    const std::string version = ".v-" + key + "-" + content_stamp(arches);
    std::error_code ec;
    const bool rebuilt = !fs::is_directory(base / version, ec);
    if (rebuilt) {
        EMURUN_TRY(build_version(base, version, arches));
    }
    EMURUN_TRY(publish(base, key, version));
    if (rebuilt) {
        detail::prune_ld_prefixes(base, std::chrono::hours(24));
    }
    return base / key;
}

} // namespace emurun
