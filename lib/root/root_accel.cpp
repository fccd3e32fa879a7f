// Acceleration: the host's x86-64 cross toolchain for the root's triplet, mounted so that the
// root's own compiler names run it with the native compiler's search paths. Debian's multiarch
// layout keeps the two apart: the host's x86-64 libraries and GCC's private dir sit at paths an
// arm64/ppc64el/s390x root never uses. See docs/guides/foreign-roots.md.
#include "root/root_internal.hpp"

#include <array>
#include <cerrno>
#include <sys/mount.h>
#include <unistd.h>

namespace emurun::root_detail {
namespace fs = std::filesystem;

namespace {

constexpr const char* k_hidden = "/usr/lib/emurun-host/gcc-cross";

Result<void> link(const fs::path& target, const fs::path& name) {
    if (::symlink(target.c_str(), name.c_str()) != 0 && errno != EEXIST) {
        return std::unexpected(system_error("symlink " + name.string(), errno));
    }
    return {};
}

/// A tmpfs at `where` (mount point created in the root), to be filled with symlinks.
Result<void> tmpfs_at(const fs::path& where) {
    if (auto r = make_dirs(where); !r) {
        return r;
    }
    if (::mount("tmpfs", where.c_str(), "tmpfs", MS_NOSUID | MS_NODEV, "mode=755") != 0) {
        return std::unexpected(system_error("mount tmpfs on " + where.string(), errno));
    }
    return {};
}

Result<void> read_only(const fs::path& where) {
    if (::mount(nullptr, where.c_str(), nullptr, MS_REMOUNT | MS_BIND | MS_RDONLY, nullptr) != 0) {
        return std::unexpected(system_error("remount read-only " + where.string(), errno));
    }
    return {};
}

/// One version dir of the farm: the host's x86-64 programs (cc1, collect2, lto plugin...),
/// everything else (include/, crt*.o, libgcc*, specs) from the root's native GCC dir, so that
/// headers, start files and the paths recorded in debug info are the native compiler's.
Result<void> farm_version(const RootPlan& plan, const fs::path& host_ver, const fs::path& dir) {
    const std::string& t = plan.arch->triplet;
    const std::string v = host_ver.filename().string();
    if (auto r = make_dirs(dir); !r) {
        return r;
    }
    std::error_code ec;
    for (const auto& e : list_dir(host_ver)) {
        const std::string f = e.filename().string();
        const fs::path native = fs::path("/usr/lib/gcc") / t / v / f;
        const bool host = is_host_elf(e) || !fs::exists(plan.dir / native.relative_path(), ec);
        if (auto r = link(host ? fs::path(k_hidden) / t / v / f : native, dir / f); !r) {
            return r;
        }
    }
    return {};
}

Result<void> gcc_cross_farm(const RootPlan& plan) {
    const fs::path host = "/usr/lib/gcc-cross/" + plan.arch->triplet;
    if (auto r = bind_into(plan.dir, host, fs::path(k_hidden) / plan.arch->triplet, true); !r) {
        return r;
    }
    const fs::path farm = plan.dir / host.relative_path();
    if (auto r = tmpfs_at(farm); !r) {
        return r;
    }
    for (const auto& v : list_dir(host)) {
        if (auto r = farm_version(plan, v, farm / v.filename()); !r) {
            return r;
        }
    }
    return read_only(farm);
}

Result<void> link_entries(const fs::path& root, const fs::path& from, const fs::path& into) {
    for (const auto& e : list_dir(root / from.relative_path())) {
        const fs::path name = e.filename();
        if (auto r = link(from / name, into / name); !r) {
            return r;
        }
    }
    return {};
}

/// The cross g++ looks for libstdc++'s headers in /usr/TRIPLET/include/c++/N (and has no
/// /usr/local/include); its tool include dir sits where the native /usr/local/include does.
/// A tmpfs there gets: the root's /usr/local/include entries; c++/N/* -> /usr/include/c++/N/*;
/// c++/N/TRIPLET -> /usr/include/TRIPLET/c++/N. The search order is then the native one.
Result<void> header_farm(const RootPlan& plan) {
    const std::string& t = plan.arch->triplet;
    const fs::path farm = plan.dir / "usr" / t / "include";
    if (auto r = tmpfs_at(farm); !r) {
        return r;
    }
    if (auto r = link_entries(plan.dir, "/usr/local/include", farm); !r) {
        return r;
    }
    for (const auto& v : list_dir(plan.dir / "usr/include/c++")) {
        const std::string ver = v.filename().string();
        const fs::path dir = farm / "c++" / ver;
        if (auto r = make_dirs(dir); !r) {
            return r;
        }
        if (auto r = link_entries(plan.dir, "/usr/include/c++/" + ver, dir); !r) {
            return r;
        }
        if (auto r = link("/usr/include/" + t + "/c++/" + ver, dir / t); !r) {
            return r;
        }
    }
    return read_only(farm);
}

} // namespace

Result<void> mount_acceleration(const RootPlan& plan) {
    const std::string& t = plan.arch->triplet;
    for (const char* p : {"/usr/lib/x86_64-linux-gnu", "/lib64/ld-linux-x86-64.so.2"}) {
        if (auto r = bind_into(plan.dir, p, p, true); !r) {
            return r;
        }
    }
    if (!plan.gcc_major.empty()) {
        if (auto r = gcc_cross_farm(plan); !r) {
            return r;
        }
        if (auto r = header_farm(plan); !r) {
            return r;
        }
    }
    // Tool dir: as/ld... as relative symlinks to ../../bin/TRIPLET-* (bound below or emulated),
    // where the host's cross gcc looks for them: only with the compilers (an emulated gcc
    // would find it too, and record /usr/TRIPLET/bin/ld where it says /usr/bin/ld).
    if (std::error_code ec; !plan.gcc_major.empty() && fs::is_directory("/usr/" + t + "/bin", ec)) {
        if (auto r = bind_into(plan.dir, "/usr/" + t + "/bin", "/usr/" + t + "/bin", true); !r) {
            return r;
        }
    }
    for (const auto& tool : plan.tools) {
        if (auto r = bind_into(plan.dir, tool.host, tool.target, true); !r) {
            return r;
        }
    }
    return {};
}

} // namespace emurun::root_detail
