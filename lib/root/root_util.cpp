// Small helpers of the root module: mount points and binds, dpkg status, the clean
// environment, capturing a tool's output, the private binfmt entry.
#include "root/root_internal.hpp"
#include "util/env.hpp"
#include "util/file.hpp"

#include <cerrno>
#include <fcntl.h>
#include <map>
#include <sstream>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

namespace emurun::root_detail {
namespace fs = std::filesystem;

bool is_host_elf(const fs::path& p) {
    const std::string h = util::read_head(p, 20);
    return h.size() == 20 &&
           h.starts_with("\x7f"
                         "ELF") &&
           h[18] == 62 && h[19] == 0; // EM_X86_64, little-endian
}

Result<void> make_dirs(const fs::path& dir) {
    std::error_code ec;
    fs::create_directories(dir, ec);
    if (ec && !fs::is_directory(dir)) {
        return fail("mkdir -p " + dir.string(), ec.message());
    }
    return {};
}

namespace {

/// An empty file to bind a file onto (its directory created first).
Result<void> make_file(const fs::path& file) {
    if (auto r = make_dirs(file.parent_path()); !r) {
        return r;
    }
    struct stat st {};
    if (::lstat(file.c_str(), &st) == 0) {
        return {};
    }
    const util::UniqueFd fd(::open(file.c_str(), O_CREAT | O_WRONLY | O_CLOEXEC, 0644));
    if (!fd) {
        return std::unexpected(system_error("create mount point " + file.string(), errno));
    }
    return {};
}

} // namespace

Result<void> bind_into(const fs::path& root, const fs::path& source, const fs::path& target,
                       bool read_only) {
    const fs::path where = root / target.relative_path();
    std::error_code ec;
    if (!fs::exists(source, ec)) {
        return fail("bind " + source.string(), "no such file or directory on the host");
    }
    auto made = fs::is_directory(source, ec) ? make_dirs(where) : make_file(where);
    if (!made) {
        return made;
    }
    if (::mount(source.c_str(), where.c_str(), nullptr, MS_BIND | MS_REC, nullptr) != 0) {
        return std::unexpected(
            system_error("mount --rbind " + source.string() + " " + where.string(), errno));
    }
    if (read_only &&
        ::mount(nullptr, where.c_str(), nullptr, MS_BIND | MS_REMOUNT | MS_RDONLY, nullptr) != 0) {
        return std::unexpected(system_error("remount read-only " + where.string(), errno));
    }
    return {};
}

std::string dpkg_version(const fs::path& status, const std::string& name) {
    std::istringstream in(util::read_file(status).value_or(""));
    std::string line;
    bool in_package = false;
    bool installed = false;
    while (std::getline(in, line)) {
        if (line.starts_with("Package: ")) {
            in_package = line.substr(9) == name;
            installed = false;
        } else if (in_package && line.starts_with("Status: ")) {
            installed = line.ends_with(" installed");
        } else if (in_package && installed && line.starts_with("Version: ")) {
            return line.substr(9);
        }
    }
    return {};
}

Result<std::string> capture_stdout(const Command& cmd) {
    Supervisor sup;
    std::string out;
    SpawnOptions options;
    options.on_output = [&out](Stream s, std::string_view data) {
        if (s == Stream::out) {
            out.append(data);
        }
    };
    auto id = sup.spawn(cmd, options);
    if (!id) {
        return std::unexpected(id.error());
    }
    for (;;) {
        auto done = sup.wait_any();
        if (!done) {
            return std::unexpected(done.error());
        }
        for (const auto& r : *done) {
            if (r.start_error) {
                return std::unexpected(*r.start_error);
            }
            if (!r.status.success()) {
                return fail("run " + cmd.argv.front(), r.status.describe());
            }
            return out;
        }
    }
}

std::vector<std::pair<std::string, std::string>>
root_environment(const std::vector<std::pair<std::string, std::string>>& extra) {
    std::map<std::string, std::string> env{
        {"PATH", "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"},
        {"HOME", "/root"},
        {"LANG", "C.UTF-8"},
    };
    if (auto term = util::get_env("TERM")) {
        env["TERM"] = *term;
    }
    for (const auto& [k, v] : extra) {
        env[k] = v;
    }
    return {env.begin(), env.end()};
}

Result<BinfmtEntry> private_binfmt_entry(const Arch& arch, const EmulatorSearch& search) {
    auto emu = find_emulator(arch, search);
    if (!emu) {
        return std::unexpected(emu.error());
    }
    if (!emu->is_static) {
        return fail("emulate " + arch.name + " in a root",
                    emu->path.string() + " is dynamically linked: it cannot start inside a root "
                                         "of another arch",
                    "apt-get install qemu-user-static");
    }
    BinfmtFlags flags;
    flags.preserve_argv0 = true;
    flags.fix_binary = true; // opened at registration, from the host's view
    return binfmt_entry_for(arch, emu->path, flags);
}

} // namespace emurun::root_detail
