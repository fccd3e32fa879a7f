// Which QEMU: every emulator emurun can use (the search's dirs, then those `emurun qemu fetch`
// took from Debian's archive into the cache), a step's choice of one by version, suite or path,
// and the fetch's second half (the unpacked package's emulators into the cache).
#include "qemu/qemu_internal.hpp"
#include "util/cache.hpp"
#include "util/env.hpp"
#include "util/file.hpp"
#include "util/path.hpp"
#include "util/temp_dir.hpp"

#include <emurun/elf.hpp>
#include <emurun/qemu.hpp>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <set>
#include <sstream>

#include <fcntl.h>
#include <stdio.h>

namespace emurun {
namespace fs = std::filesystem;

namespace {

constexpr const char* k_fetched = "qemu";
constexpr const char* k_source_suffix = ".source";

std::string fetch_hint(const Arch& arch, std::string_view suite) {
    return "emurun qemu fetch --suite " + std::string(suite) + " " + arch.name +
           "; emurun qemu list shows what there is";
}

bool valid_suite(std::string_view s) {
    return !s.empty() && s.find("..") == std::string_view::npos &&
           std::isalpha(static_cast<unsigned char>(s.front())) &&
           std::ranges::all_of(s, [](unsigned char c) {
               return std::islower(c) || std::isdigit(c) || c == '-' || c == '.';
           });
}

/// Where each search dir came from, for `qemu list`'s source column.
std::string dir_source(const fs::path& dir, const EmulatorSearch& search) {
    if (std::ranges::find(search.dirs, dir) != search.dirs.end()) {
        return dir.string();
    }
    if (auto q = util::get_env("EMURUN_QEMU_DIR")) {
        for (const auto& d : util::path_entries(*q)) {
            if (d == dir) {
                return "$EMURUN_QEMU_DIR";
            }
        }
    }
    return dir == "/usr/bin" ? "/usr/bin" : "PATH";
}

void add_found(std::vector<AvailableEmulator>& out, std::set<fs::path>& seen, const Arch& arch,
               const fs::path& file, std::string source, std::string suite) {
    std::error_code ec;
    const fs::path real = fs::canonical(file, ec);
    if (ec || !seen.insert(real).second) {
        return;
    }
    AvailableEmulator a;
    a.emulator = detail::make_emulator(arch, file);
    a.version = emulator_version(a.emulator).value_or("");
    a.source = std::move(source);
    a.suite = std::move(suite);
    out.push_back(std::move(a));
}

/// The fetched suites' dirs in emurun's cache (none when the cache is not ours or empty).
std::vector<fs::path> fetched_suite_dirs() {
    auto cache = util::checked_cache_dir();
    std::vector<fs::path> dirs;
    std::error_code ec;
    if (!cache || !fs::is_directory(*cache / k_fetched, ec)) {
        return dirs;
    }
    for (const auto& e : fs::directory_iterator(*cache / k_fetched, ec)) {
        const std::string name = e.path().filename().string();
        if (e.is_directory() && valid_suite(name)) {
            dirs.push_back(e.path());
        }
    }
    std::ranges::sort(dirs);
    return dirs;
}

std::string fetched_source(const fs::path& file) {
    auto text = util::read_file(file.string() + k_source_suffix, 4096);
    std::string line = text ? text->substr(0, text->find('\n')) : std::string{};
    return file.parent_path().filename().string() + (line.empty() ? "" : ": " + line);
}

void list_arch(const Arch& arch, const EmulatorSearch& search, std::set<fs::path>& seen,
               std::vector<AvailableEmulator>& out) {
    for (const auto& dir : detail::search_dirs(search)) {
        for (const auto& name : detail::candidate_names(arch, search.prefer_static)) {
            if (util::is_executable_file(dir / name)) {
                add_found(out, seen, arch, dir / name, dir_source(dir, search), "");
            }
        }
    }
    for (const auto& dir : fetched_suite_dirs()) {
        const fs::path file = dir / ("qemu-" + arch.qemu + "-static");
        if (util::is_executable_file(file)) {
            add_found(out, seen, arch, file, fetched_source(file), dir.filename().string());
        }
    }
}

/// "10.0" matches "10.0" and "10.0.13", not "10.01".
bool version_matches(std::string_view version, std::string_view wanted) {
    return version == wanted || (version.starts_with(wanted) && version.size() > wanted.size() &&
                                 version[wanted.size()] == '.');
}

/// A search of only `file`'s directory that finds `file` first.
EmulatorSearch only(const fs::path& file, const EmulatorSearch& base) {
    EmulatorSearch s = base;
    s.dirs = {file.parent_path()};
    s.system = false;
    s.prefer_static = file.filename().string().ends_with("-static");
    return s;
}

Result<EmulatorSearch> choose_path(const Arch& arch, const fs::path& path,
                                   const EmulatorSearch& base) {
    std::error_code ec;
    EmulatorSearch s = base;
    s.dirs = {path};
    s.system = false;
    if (!fs::is_directory(path, ec)) {
        s = only(path, base);
    }
    auto found = find_emulator(arch, s);
    if (!found || (!fs::is_directory(path, ec) && found->path != fs::absolute(path))) {
        return fail("qemu " + path.string() + " for " + arch.name,
                    fs::exists(path, ec) ? "no qemu-" + arch.qemu + "[-static] there"
                                         : "no such file or directory",
                    "name a qemu-" + arch.qemu + " binary or a directory holding one");
    }
    return s;
}

Result<EmulatorSearch> choose_version(const Arch& arch, std::string_view version,
                                      const EmulatorSearch& base) {
    const auto all = list_emulators(&arch, base);
    for (const auto& a : all) {
        if (version_matches(a.version, version)) {
            return only(a.emulator.path, base);
        }
    }
    std::string have;
    for (const auto& a : all) {
        have += (have.empty() ? "" : ", ") + (a.version.empty() ? "?" : a.version) + " (" +
                a.emulator.path.string() + ")";
    }
    return fail("qemu " + std::string(version) + " for " + arch.name,
                "no such emulator here; there " + (have.empty() ? "is none" : "is " + have),
                "fetch a Debian release's QEMU: " + fetch_hint(arch, "trixie"));
}

Result<EmulatorSearch> choose_suite(const Arch& arch, std::string_view suite,
                                    const EmulatorSearch& base) {
    const fs::path dir = EMURUN_TRY(fetched_emulator_dir(suite));
    const fs::path file = dir / ("qemu-" + arch.qemu + "-static");
    if (!util::is_executable_file(file)) {
        return fail("qemu " + std::string(suite) + " for " + arch.name,
                    "no QEMU of " + std::string(suite) + " fetched for " + arch.name + " (no " +
                        file.string() + ")",
                    fetch_hint(arch, suite));
    }
    return only(file, base);
}

/// The unpacked package's static emulator for `arch` (qemu-<cpu>-static, else qemu-<cpu>:
/// trixie's qemu-user holds the static binaries under the plain name).
Result<fs::path> unpacked_emulator(const fs::path& unpacked, const Arch& arch) {
    for (const auto& name : detail::candidate_names(arch, true)) {
        std::error_code ec;
        const fs::path file = fs::canonical(unpacked / "usr/bin" / name, ec);
        if (ec || !file.string().starts_with(fs::canonical(unpacked, ec).string() + "/")) {
            continue;
        }
        auto info = read_elf(file, std::size_t{256} << 20);
        if (info && info->is_static()) {
            return file;
        }
    }
    return fail("qemu fetch " + arch.name, "the package has no static qemu-" + arch.qemu,
                "choose a suite whose qemu-user-static carries it (emurun qemu list)");
}

/// The name=version lines of the packages emurun-sysroot unpacked, as "NAME VERSION".
std::string package_line(const fs::path& unpacked) {
    auto text = util::read_file(unpacked / ".emurun-sysroot-packages", 1 << 16);
    std::istringstream in(text ? *text : "");
    std::string line, best;
    while (std::getline(in, line)) {
        // qemu-user carries the binaries from trixie on; qemu-user-static before.
        if (line.starts_with("qemu-user=") ||
            (best.empty() && line.starts_with("qemu-user-static="))) {
            best = line;
        }
    }
    std::replace(best.begin(), best.end(), '=', ' ');
    return best;
}

Result<void> copy_into(const fs::path& from, const fs::path& to, const std::string& source) {
    std::error_code ec;
    fs::copy_file(from, to, fs::copy_options::overwrite_existing, ec);
    if (ec) {
        return fail("copy " + from.string() + " to " + to.string(), ec.message(),
                    "free disk space in emurun's cache dir");
    }
    fs::permissions(to, fs::perms(0755), ec);
    return util::write_file_atomic(to.string() + k_source_suffix, source + "\n");
}

/// The new suite dir: the old one's files, then the fetched emulators over them.
Result<void> fill_staging(const fs::path& staging, const fs::path& old, const fs::path& unpacked,
                          const std::vector<const Arch*>& arches) {
    std::error_code ec;
    if (fs::is_directory(old, ec)) {
        fs::copy(old, staging, fs::copy_options::recursive | fs::copy_options::overwrite_existing,
                 ec);
        if (ec) {
            return fail("copy " + old.string(), ec.message(),
                        "free disk space in emurun's cache dir");
        }
    }
    const std::string source = package_line(unpacked);
    for (const Arch* arch : arches) {
        const fs::path from = EMURUN_TRY(unpacked_emulator(unpacked, *arch));
        EMURUN_TRY(copy_into(from, staging / ("qemu-" + arch->qemu + "-static"), source));
    }
    return {};
}

/// VERSION_CODENAME of /etc/os-release ("bookworm"); empty when there is none.
std::string host_codename() {
    auto text = util::read_file("/etc/os-release", 1 << 16);
    std::istringstream in(text ? *text : "");
    std::string line;
    while (std::getline(in, line)) {
        if (line.starts_with("VERSION_CODENAME=")) {
            std::string v = line.substr(17);
            std::erase(v, '"');
            return valid_suite(v) ? v : std::string{};
        }
    }
    return {};
}

} // namespace

namespace detail {

std::vector<fs::path> search_dirs(const EmulatorSearch& search) {
    std::vector<fs::path> dirs = search.dirs;
    if (!search.system) {
        return dirs;
    }
    if (auto qemu_dir = util::get_env("EMURUN_QEMU_DIR")) {
        const auto more = util::path_entries(*qemu_dir);
        dirs.insert(dirs.end(), more.begin(), more.end());
    }
    const auto path = util::path_entries(util::path_variable());
    dirs.insert(dirs.end(), path.begin(), path.end());
    dirs.emplace_back("/usr/bin");
    return dirs;
}

std::vector<std::string> candidate_names(const Arch& arch, bool prefer_static) {
    std::string dyn = "qemu-" + arch.qemu;
    std::string sta = dyn + "-static";
    return prefer_static ? std::vector{sta, dyn} : std::vector{dyn, sta};
}

Emulator make_emulator(const Arch& arch, const fs::path& path) {
    Emulator e;
    e.arch = &arch;
    e.path = path.is_absolute() ? path : fs::absolute(path);
    auto info = read_elf(e.path, std::size_t{64} << 20);
    e.is_static = info && info->is_static();
    return e;
}

} // namespace detail

std::vector<AvailableEmulator> list_emulators(const Arch* arch, const EmulatorSearch& search) {
    std::vector<AvailableEmulator> out;
    std::set<fs::path> seen;
    for (const auto& a : all_arches()) {
        if ((arch == nullptr && !runs_natively(a)) || arch == &a) {
            list_arch(a, search, seen, out);
        }
    }
    return out;
}

Result<EmulatorSearch> choose_emulator(const Arch& arch, std::string_view choice,
                                       const EmulatorSearch& search) {
    if (choice.find('/') != std::string_view::npos) {
        return choose_path(arch, fs::path(choice), search);
    }
    if (!choice.empty() && std::isdigit(static_cast<unsigned char>(choice.front()))) {
        return choose_version(arch, choice, search);
    }
    return choose_suite(arch, choice, search);
}

Result<fs::path> fetched_emulator_dir(std::string_view suite) {
    if (!valid_suite(suite)) {
        return fail("qemu suite \"" + std::string(suite) + "\"", "not a Debian suite name",
                    "name a Debian release: bookworm, bookworm-backports, trixie, ...");
    }
    const fs::path cache = EMURUN_TRY(util::checked_cache_dir());
    const fs::path dir = EMURUN_TRY(util::own_cache_subdir(cache, k_fetched));
    return dir / std::string(suite);
}

struct QemuFetch::Impl {
    std::string suite;
    util::TempDir staging;
    fs::path tree;
};

QemuFetch::QemuFetch(std::unique_ptr<Impl> impl) : m_impl(std::move(impl)) {}
QemuFetch::QemuFetch(QemuFetch&&) noexcept = default;
QemuFetch& QemuFetch::operator=(QemuFetch&&) noexcept = default;
QemuFetch::~QemuFetch() = default;

const std::string& QemuFetch::suite() const {
    return m_impl->suite;
}

const fs::path& QemuFetch::tree() const {
    return m_impl->tree;
}

Result<QemuFetch> QemuFetch::begin(std::string suite) {
    if (suite.empty()) {
        suite = host_codename();
        if (suite.empty()) {
            return fail(
                "qemu fetch",
                "this host's Debian release is unknown (no VERSION_CODENAME in /etc/os-release)",
                "name one: --suite bookworm, --suite trixie, ...");
        }
    }
    const fs::path dir = EMURUN_TRY(fetched_emulator_dir(suite));
    auto staging = EMURUN_TRY(util::TempDir::make(dir.parent_path() / ".fetch-"));
    fs::path tree = staging.path() / "tree";
    return QemuFetch(
        std::make_unique<Impl>(Impl{std::move(suite), std::move(staging), std::move(tree)}));
}

Result<std::vector<AvailableEmulator>> QemuFetch::adopt(const std::vector<const Arch*>& arches) {
    const fs::path dir = EMURUN_TRY(fetched_emulator_dir(m_impl->suite));
    const fs::path fresh = m_impl->staging.path() / "suite";
    std::error_code ec;
    fs::create_directory(fresh, ec);
    EMURUN_TRY(fill_staging(fresh, dir, m_impl->tree, arches));
    // One rename: exchanged with the old dir (which goes with the staging dir), or moved in.
    const bool had = fs::exists(dir, ec);
    if (::renameat2(AT_FDCWD, fresh.c_str(), AT_FDCWD, dir.c_str(),
                    had ? RENAME_EXCHANGE : RENAME_NOREPLACE) != 0) {
        return fail("renameat2 " + fresh.string() + " to " + dir.string(), std::strerror(errno),
                    "check emurun's cache dir and fetch again");
    }
    std::vector<AvailableEmulator> out;
    for (const Arch* arch : arches) {
        AvailableEmulator a;
        a.emulator = detail::make_emulator(*arch, dir / ("qemu-" + arch->qemu + "-static"));
        a.version = emulator_version(a.emulator).value_or("");
        a.source = fetched_source(a.emulator.path);
        a.suite = m_impl->suite;
        out.push_back(std::move(a));
    }
    return out;
}

} // namespace emurun
