// Creating, listing and removing shims. Running one is in shim_run.cpp.
#include "launch/launch_record.h"
#include "shim/shim_config.hpp"
#include "shim/shim_versions.hpp"
#include "util/cache.hpp"
#include "util/file.hpp"
#include "util/path.hpp"
#include "util/self.hpp"

#include <emurun/launch.hpp>
#include <emurun/shim.hpp>

#include <algorithm>
#include <cerrno>
#include <sys/stat.h>
#include <unistd.h>

namespace emurun {
namespace fs = std::filesystem;
using namespace shim_detail;

namespace {

Result<void> check_name(const std::string& name) {
    if (name.empty() || name.find('/') != std::string::npos || name.starts_with('.')) {
        return fail("shim name '" + name + "'", "must be a plain file name not starting with '.'",
                    "name the shim after the tool, e.g. protoc");
    }
    return {};
}

/// Put the launcher at `shim`: a hard link when possible (free, and /proc/self/exe then names
/// the shim), a copy across file systems. Replaces atomically.
Result<void> install_launcher(const fs::path& launcher, const fs::path& shim) {
    const fs::path tmp = shim.parent_path() / k_shim_config_dir /
                         (shim.filename().string() + ".exe" + std::to_string(::getpid()));
    ::unlink(tmp.c_str());
    if (::link(launcher.c_str(), tmp.c_str()) != 0) {
        std::error_code ec;
        fs::copy_file(launcher, tmp, fs::copy_options::overwrite_existing, ec);
        if (ec) {
            return fail("copy " + launcher.string() + " to " + tmp.string(), ec.message());
        }
        ::chmod(tmp.c_str(), 0755);
    }
    if (::rename(tmp.c_str(), shim.c_str()) != 0) {
        const int err = errno;
        ::unlink(tmp.c_str());
        return std::unexpected(system_error("rename " + tmp.string() + " " + shim.string(), err));
    }
    // A shim added again is already a link to the same launcher: rename(2) then does nothing
    // and leaves tmp behind (one stray link per re-add).
    ::unlink(tmp.c_str());
    return {};
}

/// The record a shim's launcher replays: the shim's own command line (shim_command) with the
/// caller's argv[0] left to the launcher, the shim's variables, keyed on what the plan read and
/// on the sidecar it was planned from (written first: an edited sidecar is planned again), for
/// the request of this shim's path as the kernel names the running shim (/proc/self/exe:
/// symlinks resolved), so another shim's record copied over this one is not replayed.
Result<std::string> shim_record(const PlannedShim& s) {
    const ShimInfo& info = s.info;
    LaunchRecord r;
    r.argv = shim_command(info, {std::string()});
    const auto slot = info.native ? r.argv.begin() : std::ranges::find(r.argv, "-0") + 1;
    r.argv0_at = static_cast<std::size_t>(slot - r.argv.begin());
    r.argv.erase(slot);
    r.exe = info.native ? info.target : info.emulator;
    r.env = info.env;
    r.key = s.plan.inputs.empty() ? std::vector<fs::path>{info.target} : s.plan.inputs;
    r.key.push_back(sidecar_path(info.path));
    std::error_code ec;
    r.request = elr_shim_request(fs::weakly_canonical(info.path, ec).c_str());
    return encode_launch_record(r);
}

/// The symlink `link` (replaced atomically) to `launcher`, made absolute: the emurun a shim whose
/// record cannot be replayed hands over to (launch_record.h, ELR_SHIM_EMURUN).
Result<void> link_emurun(const fs::path& link, const fs::path& launcher) {
    std::error_code ec;
    const fs::path target = fs::absolute(launcher, ec).lexically_normal();
    const fs::path tmp = link.string() + ".tmp" + std::to_string(::getpid());
    ::unlink(tmp.c_str());
    if (::symlink(target.c_str(), tmp.c_str()) != 0) {
        return std::unexpected(system_error("symlink " + tmp.string(), errno));
    }
    if (::rename(tmp.c_str(), link.c_str()) != 0) {
        const int err = errno;
        ::unlink(tmp.c_str());
        return std::unexpected(system_error("rename " + tmp.string() + " " + link.string(), err));
    }
    return {};
}

} // namespace

namespace shim_detail {

Result<PlannedShim> plan_shim(const fs::path& dir, const ShimSpec& spec) {
    std::error_code ec;
    const fs::path target = fs::absolute(spec.target, ec).lexically_normal();
    LaunchRequest req;
    req.program = target;
    req.arch = spec.arch;
    req.sysroots = spec.sysroots;
    req.cpu = spec.cpu;
    req.env = spec.env;
    req.emulators = spec.emulators;
    auto plan = plan_launch(req);
    if (!plan) {
        Error e = plan.error();
        e.what = "shim " + spec.name + ": " + e.what;
        return std::unexpected(e);
    }
    ShimInfo info;
    info.name = spec.name;
    info.path = fs::absolute(dir, ec).lexically_normal() / spec.name;
    info.target = target;
    info.native = plan->mode == Emulation::native;
    const Arch* arch = plan->arch != nullptr ? plan->arch : host_arch();
    info.arch = arch != nullptr ? arch->name : "native";
    if (plan->emulator) {
        info.emulator = plan->emulator->path;
    }
    info.ld_prefix = plan->ld_prefix;
    info.env = spec.env;
    info.cpu = spec.cpu;
    for (const auto& r : spec.sysroots) {
        info.sysroots.push_back(fs::absolute(r, ec).lexically_normal());
    }
    return PlannedShim{std::move(info), std::move(*plan)};
}

Result<void> write_shim_files(const PlannedShim& shim, const fs::path& launcher,
                              const std::optional<timespec>& planned_at) {
    auto text = EMURUN_TRY(to_sidecar(shim.info));
    EMURUN_TRY(util::write_file_atomic(sidecar_path(shim.info.path), text));
    EMURUN_TRY(link_emurun(emurun_link_path(shim.info.path), launcher));
    auto record = EMURUN_TRY(shim_record(shim));
    // Checked after the identities were taken: a file changed since the plan began may have been
    // read before it changed.
    if (planned_at) {
        if (auto changed = util::changed_since(shim.plan.inputs, *planned_at, util::cache_dir())) {
            return fail("shim " + shim.info.name, changed->string() + " changed while planned",
                        "the next run plans again");
        }
    }
    return util::write_file_atomic(record_path(shim.info.path), record, 0644,
                                   util::Durability::cache);
}

} // namespace shim_detail

/// The shim dir made ready for `info`'s files, or why it cannot hold a shim safely.
Result<void> prepare_shim_dir(const fs::path& dir, const ShimInfo& info) {
    struct stat st {};
    // Anyone could replace a shim in a dir others may write (without the sticky bit).
    if (::stat(dir.c_str(), &st) == 0 && (st.st_mode & S_IWOTH) != 0 &&
        (st.st_mode & S_ISVTX) == 0) {
        return fail("shim " + info.name,
                    dir.string() + " is writable by others (no sticky bit): anyone could replace "
                                   "the shim with a program of their own",
                    "chmod o-w " + dir.string() + ", or use a shim dir of your own");
    }
    std::error_code ec;
    fs::create_directories(dir / k_shim_config_dir, ec);
    if (ec) {
        return fail("create " + (dir / k_shim_config_dir).string(), ec.message());
    }
    // Files made in another user's .emurun-shims could be replaced by that user: the shim
    // would run what they chose.
    if (!shim_files_ours(info.path)) {
        return fail("shim " + info.name,
                    (dir / k_shim_config_dir).string() +
                        " is not a directory of this user: its owner could make the shim run "
                        "any program",
                    "use a shim dir of your own");
    }
    // The launcher replays a record only from a dir no one else can write (any umask).
    if (::chmod((dir / k_shim_config_dir).c_str(), 0755) != 0) {
        return std::unexpected(system_error("chmod 0755 " + (dir / k_shim_config_dir).string(),
                                            errno, "use a shim dir of your own"));
    }
    return {};
}

Result<ShimInfo> add_shim(const fs::path& dir, const ShimSpec& given, const fs::path& launcher) {
    std::optional<ShimSpec> upgraded;
    const ShimSpec* ours = EMURUN_TRY(util::caller_form(given, upgraded));
    const ShimSpec& spec = *ours;
    EMURUN_TRY(check_name(spec.name));
    if (::access(launcher.c_str(), X_OK) != 0) {
        return std::unexpected(system_error("launcher " + launcher.string(), errno,
                                            "pass the shim launcher (emurun-shim)"));
    }
    auto planned = EMURUN_TRY(plan_shim(dir, spec));
    const ShimInfo* info = &planned.info;
    EMURUN_TRY(prepare_shim_dir(dir, *info));
    const fs::path sidecar = sidecar_path(info->path);
    if (fs::exists(fs::symlink_status(info->path)) && !fs::exists(sidecar)) {
        return fail("shim " + spec.name, info->path.string() + " exists and is not a shim",
                    "remove it or choose another shim dir");
    }
    // All or nothing for a new shim: what a failure (a full disk) left of it is removed, so
    // no half-made shim is listed.
    const bool is_new = !fs::exists(sidecar);
    auto written = write_shim_files(planned, launcher);
    if (written) {
        written = install_launcher(launcher, info->path);
    }
    if (!written) {
        if (is_new) {
            for (const auto& file :
                 {info->path, record_path(info->path), emurun_link_path(info->path), sidecar}) {
                (void)::unlink(file.c_str());
            }
        }
        return std::unexpected(written.error());
    }
    return planned.info;
}

Result<std::vector<ShimInfo>> list_shims(const fs::path& dir) {
    std::vector<ShimInfo> shims;
    std::error_code ec;
    // A dir that is not there is a mistyped path, not an empty shim dir.
    if (const auto st = fs::status(dir, ec); !fs::is_directory(st)) {
        const std::string why = st.type() == fs::file_type::not_found ? "no such directory"
                                : fs::exists(st)                      ? "not a directory"
                                                                      : ec.message();
        return fail("shim dir " + dir.string(), why,
                    "give the directory the shims were added to with 'emurun shim add'");
    }
    fs::directory_iterator it(dir / k_shim_config_dir, ec);
    if (ec) {
        if (ec == std::errc::no_such_file_or_directory) {
            return shims;
        }
        return fail("list " + (dir / k_shim_config_dir).string(), ec.message());
    }
    for (const auto& entry : it) {
        if (entry.path().extension() != ".json") {
            continue;
        }
        auto shim = EMURUN_TRY(read_shim(fs::absolute(dir, ec) / entry.path().stem()));
        shims.push_back(std::move(shim));
    }
    std::ranges::sort(shims, {}, &ShimInfo::name);
    return shims;
}

Result<void> remove_shim(const fs::path& dir, const std::string& name) {
    EMURUN_TRY(check_name(name));
    const fs::path shim = dir / name;
    const fs::path sidecar = sidecar_path(shim);
    if (::access(sidecar.c_str(), F_OK) != 0) {
        return fail("remove shim " + name, "no shim of that name in " + dir.string(),
                    "see which shims it holds ('emurun shim list')");
    }
    if (::unlink(shim.c_str()) != 0 && errno != ENOENT) {
        return std::unexpected(system_error("unlink " + shim.string(), errno));
    }
    for (const auto& file : {record_path(shim), emurun_link_path(shim)}) {
        if (::unlink(file.c_str()) != 0 && errno != ENOENT) {
            return std::unexpected(system_error("unlink " + file.string(), errno));
        }
    }
    if (::unlink(sidecar.c_str()) != 0) {
        return std::unexpected(system_error("unlink " + sidecar.string(), errno));
    }
    return {};
}

Result<fs::path> find_launcher(const std::optional<fs::path>& hint) {
    if (hint) {
        if (::access(hint->c_str(), X_OK) != 0) {
            return std::unexpected(system_error("shim launcher " + hint->string(), errno));
        }
        return *hint;
    }
    // The emurun binary and its helpers by the one rule of util/self.hpp.
    auto launcher = util::find_helper(k_launcher_name);
    if (!launcher) {
        Error e = launcher.error();
        e.what = "find the shim launcher";
        e.hint = "reinstall emurun, or name the launcher's path";
        e.field = "launcher";
        return std::unexpected(e);
    }
    return *launcher;
}

} // namespace emurun
