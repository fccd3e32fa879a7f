// The hot path: a process started as a shim execs its tool. Kept lean (one readlink, one open)
// because every run of a shimmed tool pays for it.
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

namespace {

/// The emulator recorded at creation time, or a fresh search when it has gone away.
Result<fs::path> emulator_for(const ShimInfo& shim) {
    if (::access(shim.emulator.c_str(), X_OK) == 0) {
        return shim.emulator;
    }
    auto arch = EMURUN_TRY(find_arch(shim.arch));
    auto emu = EMURUN_TRY(find_emulator(*arch));
    return emu.path;
}

} // namespace

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

std::optional<Error> run_if_shim(int argc, char** argv) {
    auto exe = util::self_exe();
    if (!exe) {
        return std::nullopt;
    }
    auto text = util::read_file(sidecar_path(*exe));
    if (!text) {
        return std::nullopt; // not a shim: emurun itself
    }
    auto shim = from_sidecar(*text, *exe, sidecar_path(*exe));
    if (!shim) {
        return shim.error();
    }
    if (!shim->native) {
        auto emu = emulator_for(*shim);
        if (!emu) {
            return emu.error();
        }
        shim->emulator = *emu;
    }
    std::vector<std::string> args(argv, argv + argc);
    auto command = shim_command(*shim, args);
    const fs::path& file = shim->native ? shim->target : shim->emulator;
    const auto failure =
        exec_replace(Command{.argv = std::move(command),
                             .env = util::with_overrides(util::current_environment(), shim->env),
                             .program = file});
    return system_error("shim " + exe->string() + ": execve " + file.string(), failure.err,
                        "check the shims of " + exe->parent_path().string() +
                            " ('emurun shim list')");
}

std::map<std::string, std::string> shim_environment(const fs::path& dir,
                                                    std::map<std::string, std::string> env) {
    std::error_code ec;
    return util::with_path_prefix(std::move(env),
                                  {fs::absolute(dir, ec).lexically_normal().string()});
}

} // namespace emurun
