#include "sysroot/sysroot_internal.hpp"
#include "util/file.hpp"
#include "util/path.hpp"

#include <emurun/sysroot.hpp>

#include <deque>
#include <set>

namespace emurun {
namespace fs = std::filesystem;

namespace detail {

bool is_object_of(const fs::path& p, const Arch& arch) {
    const std::string hdr = util::read_head(p, 64);
    if (hdr.size() < 20) {
        return false;
    }
    // Libraries are ET_DYN; the magic/mask already admits EXEC and DYN alike.
    return arch.matches(std::span<const unsigned char>(
        reinterpret_cast<const unsigned char*>(hdr.data()), hdr.size()));
}

std::vector<fs::path> default_lib_dirs(const Arch& arch) {
    const std::string t = arch.triplet;
    std::vector<fs::path> dirs{"lib/" + t, "usr/lib/" + t, "lib", "usr/lib"};
    if (arch.elf_class == 2) {
        dirs.insert(dirs.end(), {"lib64", "usr/lib64"});
    } else {
        dirs.insert(dirs.end(), {"lib32", "usr/lib32"});
    }
    return dirs;
}

} // namespace detail

using detail::default_lib_dirs;
using detail::is_object_of;

namespace {

bool path_exists(const fs::path& p) {
    std::error_code ec;
    return fs::exists(p, ec);
}

std::string expand_origin(std::string entry, const fs::path& origin) {
    for (const std::string token : {"${ORIGIN}", "$ORIGIN"}) {
        for (auto pos = entry.find(token); pos != std::string::npos; pos = entry.find(token)) {
            entry.replace(pos, token.size(), origin.string());
        }
    }
    return entry;
}

/// A directory to search, and the sysroot it belongs to (none: $ORIGIN, relative, the host).
struct SearchDir {
    fs::path dir;
    std::optional<fs::path> sysroot;
};

/// Directories to search for the libraries `elf` needs, in the loader's order; `origin` is
/// what $ORIGIN stands for in its RUNPATH/RPATH. An absolute RUNPATH/RPATH entry is looked
/// for in each sysroot, then as it is on the host: qemu's QEMU_LD_PREFIX falls back to the host
/// path when the prefix has no such file (a build tree's own libraries, found through CMake's
/// build RUNPATH).
std::vector<SearchDir> search_dirs(const ElfInfo& elf, const fs::path& origin,
                                   const std::vector<fs::path>& sysroots) {
    std::vector<SearchDir> dirs;
    const auto& list = elf.runpath.empty() ? elf.rpath : elf.runpath;
    for (const auto& raw : list) {
        const bool has_origin = raw.find("ORIGIN") != std::string::npos;
        const std::string entry = expand_origin(raw, origin);
        if (has_origin || entry.empty() || entry[0] != '/') {
            dirs.push_back({entry, std::nullopt});
            continue;
        }
        for (const auto& root : sysroots) {
            dirs.push_back({root / fs::path(entry).relative_path(), root});
        }
        dirs.push_back({entry, std::nullopt});
    }
    for (const auto& root : sysroots) {
        for (const auto& d : default_lib_dirs(*elf.arch)) {
            dirs.push_back({root / d, root});
        }
    }
    return dirs;
}

/// The files the loader tries for `name`, in order: `name` itself when it holds a '/', else
/// DIR/name for each of `dirs`.
std::vector<fs::path> library_candidates(const std::string& name,
                                         const std::vector<SearchDir>& dirs) {
    if (name.find('/') != std::string::npos) {
        return {fs::path(name)};
    }
    std::vector<fs::path> out;
    out.reserve(dirs.size());
    for (const auto& d : dirs) {
        out.push_back(d.dir / name);
    }
    return out;
}

/// Look `l.name` up in `dirs`: the first candidate that exists and is an object of `arch` is
/// its path (and its dir's sysroot); what the search passed over is kept in `l.passed_over`.
void find_library(LibraryLookup& l, const std::vector<SearchDir>& dirs, const Arch& arch) {
    const auto candidates = library_candidates(l.name, dirs);
    for (std::size_t i = 0; i < candidates.size(); ++i) {
        if (path_exists(candidates[i]) && is_object_of(candidates[i], arch)) {
            l.path = candidates[i];
            l.sysroot = l.name.find('/') == std::string::npos ? dirs[i].sysroot : std::nullopt;
            break;
        }
    }
    l.passed_over = util::search_inputs(candidates, l.path.value_or(fs::path()));
}

LibraryLookup lookup_interpreter(const ElfInfo& elf, const std::vector<fs::path>& sysroots,
                                 const std::string& needed_by) {
    LibraryLookup l{*elf.interpreter, needed_by, std::nullopt, ""};
    std::vector<fs::path> candidates;
    for (const auto& root : sysroots) {
        auto candidate = root / fs::path(*elf.interpreter).relative_path();
        candidates.push_back(candidate);
        if (path_exists(candidate) && is_object_of(candidate, *elf.arch)) {
            l.path = candidate;
            l.sysroot = root;
            break;
        }
    }
    l.passed_over = util::search_inputs(candidates, l.path.value_or(fs::path()));
    if (!l.path) {
        l.package_hint = elf.arch->debian.empty() ? "" : "libc6:" + elf.arch->debian;
    }
    return l;
}

} // namespace

std::vector<fs::path> default_sysroots(const Arch& arch) {
    std::vector<fs::path> out;
    if (arch.triplet.empty()) {
        return out;
    }
    const fs::path cross = fs::path("/usr") / arch.triplet;
    if (path_exists(cross / "lib")) {
        out.push_back(cross);
    }
    if (path_exists(fs::path("/lib") / arch.triplet) ||
        path_exists(fs::path("/usr/lib") / arch.triplet)) {
        out.emplace_back("/");
    }
    return out;
}

LinkMap resolve_libraries(const fs::path& binary, const ElfInfo& elf,
                          const std::vector<fs::path>& sysroots) {
    LinkMap map;
    map.sysroots = sysroots;
    if (elf.arch == nullptr) {
        return map;
    }
    const std::string self = binary.filename().string();
    if (elf.interpreter) {
        map.interpreter = lookup_interpreter(elf, sysroots, self);
    }
    std::set<std::string> seen;
    // $ORIGIN as ld.so takes it: for the program, the directory of its real path (the loader
    // reads /proc/self/exe, which qemu-user answers with the program's realpath), so a symlink
    // to it elsewhere finds the program's own libraries; for a library, the directory it was
    // found in.
    std::error_code ec;
    const fs::path program_origin =
        fs::weakly_canonical(fs::absolute(binary, ec), ec).parent_path();
    std::deque<std::pair<fs::path, ElfInfo>> queue{{binary, elf}};
    for (bool program = true; !queue.empty(); program = false) {
        auto [path, info] = std::move(queue.front());
        queue.pop_front();
        const auto dirs =
            search_dirs(info, program ? program_origin : path.parent_path(), sysroots);
        const std::string by = info.soname.value_or(path.filename().string());
        for (const auto& name : info.needed) {
            if (!seen.insert(name).second) {
                continue;
            }
            LibraryLookup l{name, by, std::nullopt, ""};
            find_library(l, dirs, *elf.arch);
            if (!l.path) {
                l.package_hint = guess_package(name, *elf.arch);
                l.package_guessed = package_guessed(name);
            } else if (auto sub = read_elf(*l.path); sub && sub->arch != nullptr) {
                queue.emplace_back(*l.path, std::move(*sub));
            }
            map.libraries.push_back(std::move(l));
        }
    }
    return map;
}

bool LinkMap::complete() const {
    return missing().empty();
}

std::vector<std::string> LinkMap::missing() const {
    std::vector<std::string> out;
    if (interpreter && !interpreter->path) {
        out.push_back(interpreter->name);
    }
    for (const auto& l : libraries) {
        if (!l.path) {
            out.push_back(l.name);
        }
    }
    return out;
}

} // namespace emurun
