// Requests to the emurun-sysroot tool: checked here, carried out by apt and dpkg in the tool.
#include "sysroot/sysroot_versions.hpp"
#include <emurun/sysroot.hpp>

#include "util/cache.hpp"

#include <algorithm>
#include <array>
#include <string_view>

namespace emurun {
namespace fs = std::filesystem;

namespace {

/// The Debian arches the emurun-sysroot tool makes sysroots for (its debian_arch()).
constexpr std::array<std::string_view, 7> k_tool_arches{"arm64", "ppc64el", "s390x", "riscv64",
                                                        "armhf", "i386",    "amd64"};

bool tool_serves(std::string_view debian) {
    return std::ranges::find(k_tool_arches, debian) != k_tool_arches.end();
}

/// The Debian name of an arch emurun knows and the tool serves, or an error listing those.
Result<std::string> debian_arch(const std::string& name) {
    auto arch = find_arch(name);
    const bool served = arch && tool_serves((*arch)->debian);
    if (served) {
        return (*arch)->debian;
    }
    std::string known;
    for (const auto& a : all_arches()) {
        if (tool_serves(a.debian)) {
            known += (known.empty() ? "" : ", ") + a.name + " (" + a.debian + ")";
        }
    }
    const std::string why = !arch ? "not an architecture emurun knows"
                            : (*arch)->debian.empty()
                                ? "Debian has no port for " + (*arch)->name
                                : "emurun-sysroot makes no sysroots for " + (*arch)->name + " (" +
                                      (*arch)->debian + ")";
    return fail(ErrorKind::bad_input, "architecture " + name, why, "use one of " + known, "arch");
}

Result<void> check_request(const SysrootRequest& r) {
    if (r.dir.empty()) {
        return fail(ErrorKind::bad_input,
                    "sysroot " + std::string(r.op == SysrootOp::source ? "source" : "fetch"),
                    "no directory given", "name the directory to unpack into", "dir");
    }
    std::error_code ec;
    if (fs::exists(r.dir, ec) && !fs::is_directory(r.dir, ec)) {
        return fail("directory " + r.dir.string(), "is not a directory",
                    "name the directory to unpack into (it is created when missing)");
    }
    if (r.packages.empty()) {
        return fail("sysroot request", "no package named",
                    r.op == SysrootOp::build_dep ? "name a source package or a source directory"
                                                 : "name the Debian packages, e.g. libpng-dev");
    }
    if (r.op != SysrootOp::fetch && r.packages.size() != 1) {
        return fail("sysroot request",
                    "takes one package, got " + std::to_string(r.packages.size()),
                    "run it once per package");
    }
    if (r.op != SysrootOp::source && r.arch.empty()) {
        return fail(ErrorKind::bad_input, "sysroot request", "no architecture given",
                    "name the architecture, e.g. arm64", "arch");
    }
    return {};
}

} // namespace

Result<std::vector<std::string>> sysroot_tool_argv(const SysrootRequest& given,
                                                   const fs::path& tool) {
    std::optional<SysrootRequest> upgraded;
    const SysrootRequest* ours = EMURUN_TRY(util::caller_form(given, upgraded));
    const SysrootRequest& r = *ours;
    EMURUN_TRY(check_request(r));
    static constexpr const char* k_ops[] = {"fetch", "source", "build-dep"};
    std::vector<std::string> argv{tool.string(), k_ops[static_cast<int>(r.op)]};
    if (r.op != SysrootOp::source) {
        auto deb = EMURUN_TRY(debian_arch(r.arch));
        argv.insert(argv.end(), {"--arch", deb});
    }
    argv.insert(argv.end(), {"--dir", r.dir.string()});
    // The cache is always named: the tool's own default knows nothing of util's cache rule.
    fs::path cache = r.cache;
    if (cache.empty()) {
        const fs::path own = EMURUN_TRY(util::checked_cache_dir());
        cache = EMURUN_TRY(util::own_cache_subdir(own, "apt"));
    }
    argv.insert(argv.end(), {"--cache", cache.string()});
    for (const auto& [flag, value] :
         {std::pair{"--mirror", r.mirror}, std::pair{"--suite", r.suite},
          std::pair{"--profiles", r.profiles}}) {
        if (!value.empty()) {
            argv.insert(argv.end(), {flag, value});
        }
    }
    if (r.refresh) {
        argv.emplace_back("--refresh");
    }
    argv.emplace_back("--"); // packages and paths are never options
    argv.insert(argv.end(), r.packages.begin(), r.packages.end());
    return argv;
}

} // namespace emurun
