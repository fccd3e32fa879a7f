// Running shims from C++: their command line (shim_command), and a shim whose launch record is
// stale planned again (the launcher replays a fresh record itself, tools/emurun-shim).
#include "launch/launch_record.h"
#include "shim/shim_config.hpp"
#include "util/env.hpp"
#include "util/file.hpp"
#include "util/self.hpp"

#include <emurun/process.hpp>
#include <emurun/shim.hpp>

#include <unistd.h>

namespace emurun {
namespace fs = std::filesystem;
using namespace shim_detail;

Result<ShimInfo> read_shim(const fs::path& shim_path) {
    const fs::path file = sidecar_path(shim_path);
    auto text = util::read_file(file);
    if (!text) {
        return fail(shim_path.string(), "not an emurun shim: " + text.error().message(),
                    "create it with 'emurun shim add'");
    }
    return from_sidecar(*text, shim_path, file);
}

std::vector<std::string> shim_command(const ShimInfo& shim, const std::vector<std::string>& args) {
    const std::string argv0 = args.empty() ? shim.path.string() : args.front();
    const std::vector<std::string> rest(args.begin() + (args.empty() ? 0 : 1), args.end());
    if (shim.native) {
        std::vector<std::string> argv{argv0};
        argv.insert(argv.end(), rest.begin(), rest.end());
        return argv;
    }
    // -L rather than QEMU_LD_PREFIX: the tool's environment stays exactly the caller's.
    const QemuOptions options{.cpu = shim.cpu, .argv0 = argv0, .ld_prefix = shim.ld_prefix};
    return qemu_command(Emulator{.path = shim.emulator}, shim.target, rest, options);
}

std::optional<Error> run_if_shim_replan(int argc, char** argv) {
    if (argc < 4 || std::string_view(argv[1]) != ELR_SHIM_REPLAN) {
        return std::nullopt;
    }
    const fs::path shim_path(argv[2]);
    const timespec planned_at = util::realtime_now();
    auto old = read_shim(shim_path);
    if (!old) {
        return old.error();
    }
    ShimSpec spec{.name = old->name, .target = old->target, .env = old->env, .cpu = old->cpu};
    if (!old->native) {
        auto arch = find_arch(old->arch);
        spec.arch = arch ? *arch : nullptr;
        // The emulator's dir of the shim's plan first (EMURUN_QEMU_DIR or a PATH at creation,
        // which this run need not have): a replaced emulator stays the shim's choice.
        if (!old->emulator.empty()) {
            spec.emulators.dirs.push_back(old->emulator.parent_path());
        }
    }
    spec.sysroots = old->sysroots; // empty: the arch's default ones, as at creation
    auto planned = plan_shim(shim_path.parent_path(), spec);
    if (!planned) {
        return planned.error();
    }
    // Another user's shims (even when this user, root, could write them: files of another
    // owner in their .emurun-shims would make the launcher refuse the shim for everyone) are
    // planned on every run instead.
    // A file the plan read that changed since leaves the old record (stale: planned again).
    if (auto launcher = find_launcher(); launcher && shim_files_ours(shim_path)) {
        (void)write_shim_files(*planned, *launcher, planned_at);
    }
    const ShimInfo& shim = planned->info;
    const std::vector<std::string> args(argv + 3, argv + argc);
    const fs::path& file = shim.native ? shim.target : shim.emulator;
    const auto failure =
        exec_replace(Command{.argv = shim_command(shim, args),
                             .env = util::with_overrides(util::current_environment(), shim.env),
                             .program = file});
    return system_error("shim " + shim_path.string() + ": execve " + file.string(), failure.err,
                        "check the shims of " + shim_path.parent_path().string() +
                            " ('emurun shim list')");
}

std::map<std::string, std::string> shim_environment(const fs::path& dir,
                                                    std::map<std::string, std::string> env) {
    std::error_code ec;
    return util::with_path_prefix(std::move(env),
                                  {fs::absolute(dir, ec).lexically_normal().string()});
}

} // namespace emurun
