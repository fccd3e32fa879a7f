// The hot path: a process started as a shim execs its tool. Kept lean (one readlink, one open)
// because every run of a shimmed tool pays for it.
#include "shim/shim_config.hpp"

#include <emurun/shim.hpp>

#include <cerrno>
#include <climits>
#include <cstring>
#include <unistd.h>

extern char** environ;

namespace emurun {
namespace fs = std::filesystem;
using namespace shim_detail;

namespace {

/// The path this process was executed by. For a hard link it is the link's own path, which is
/// why shims are hard links and not symlinks (a symlink resolves to emurun itself).
std::optional<fs::path> self_exe() {
    char buf[PATH_MAX];
    const ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
    if (n <= 0) {
        return std::nullopt;
    }
    std::string p(buf, static_cast<std::size_t>(n));
    constexpr std::string_view deleted = " (deleted)";
    if (p.ends_with(deleted)) {
        p.resize(p.size() - deleted.size());
    }
    return fs::path(p);
}

/// The emulator recorded at creation time, or a fresh search when it has gone away.
Result<fs::path> emulator_for(const ShimInfo& shim) {
    if (::access(shim.emulator.c_str(), X_OK) == 0) {
        return shim.emulator;
    }
    auto arch = find_arch(shim.arch);
    if (!arch) {
        return std::unexpected(arch.error());
    }
    auto emu = find_emulator(**arch);
    if (!emu) {
        return std::unexpected(emu.error());
    }
    return emu->path;
}

/// environ with the shim's variables set on top.
std::vector<std::string> shim_env(const ShimInfo& shim) {
    std::vector<std::string> env;
    for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
        std::string_view kv(*e);
        auto key = kv.substr(0, kv.find('='));
        if (!shim.env.contains(std::string(key))) {
            env.emplace_back(kv);
        }
    }
    for (const auto& [k, v] : shim.env) {
        env.push_back(k + "=" + v);
    }
    return env;
}

std::vector<char*> c_strings(std::vector<std::string>& v) {
    std::vector<char*> out;
    out.reserve(v.size() + 1);
    for (auto& s : v) {
        out.push_back(s.data());
    }
    out.push_back(nullptr);
    return out;
}

} // namespace

Result<ShimInfo> read_shim(const fs::path& shim_path) {
    const fs::path file = sidecar_path(shim_path);
    auto text = read_text(file);
    if (!text) {
        return fail(shim_path.string(), "not an emurun shim: " + text.error().message(),
                    "create it with 'emurun shim add'");
    }
    return from_sidecar(*text, shim_path, file);
}

std::vector<std::string> shim_command(const ShimInfo& shim, const std::vector<std::string>& args) {
    const std::string argv0 = args.empty() ? shim.path.string() : args.front();
    std::vector<std::string> argv;
    if (shim.native) {
        argv.push_back(argv0);
    } else {
        argv.push_back(shim.emulator.string());
        if (shim.cpu) {
            argv.insert(argv.end(), {"-cpu", *shim.cpu});
        }
        argv.insert(argv.end(), {"-0", argv0});
        // -L rather than QEMU_LD_PREFIX: the tool's environment stays exactly the caller's.
        if (shim.ld_prefix) {
            argv.insert(argv.end(), {"-L", shim.ld_prefix->string()});
        }
        argv.push_back(shim.target.string());
    }
    argv.insert(argv.end(), args.begin() + (args.empty() ? 0 : 1), args.end());
    return argv;
}

std::optional<Error> run_if_shim(int argc, char** argv) {
    auto exe = self_exe();
    if (!exe) {
        return std::nullopt;
    }
    auto text = read_text(sidecar_path(*exe));
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
    auto env = shim_env(*shim);
    const fs::path& file = shim->native ? shim->target : shim->emulator;
    ::execve(file.c_str(), c_strings(command).data(), c_strings(env).data());
    return system_error("shim " + exe->string() + ": execve " + file.string(), errno,
                        "check 'emurun shim list --dir " + exe->parent_path().string() + "'");
}

std::map<std::string, std::string> shim_environment(const fs::path& dir,
                                                    std::map<std::string, std::string> env) {
    std::error_code ec;
    const std::string first = fs::absolute(dir, ec).lexically_normal().string();
    auto it = env.find("PATH");
    if (it == env.end()) {
        env["PATH"] = first + ":/usr/local/bin:/usr/bin:/bin";
    } else {
        it->second = it->second.empty() ? first : first + ":" + it->second;
    }
    return env;
}

} // namespace emurun
