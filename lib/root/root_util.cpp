// Small helpers of the root module: mount points and binds, dpkg status, the clean
// environment, capturing a tool's output, the private binfmt entry.
#include "root/root_internal.hpp"
#include "util/env.hpp"
#include "util/file.hpp"

#include <algorithm>
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
    if (ec && !fs::is_directory(dir, ec)) {
        return fail("mkdir -p " + dir.string(), ec.message());
    }
    return {};
}

std::vector<fs::path> list_dir(const fs::path& dir) {
    std::vector<fs::path> out;
    std::error_code ec;
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
        out.push_back(it->path());
    }
    return out;
}

std::string with_article(const std::string& arch_name) {
    const bool vowel_sound =
        !arch_name.empty() &&
        (std::string_view("aeiox").find(arch_name.front()) != std::string::npos ||
         arch_name.starts_with("s390"));
    return (vowel_sound ? "an " : "a ") + arch_name;
}

Error native_root_error(const std::string& what, const Arch& arch) {
    return Error{what,
                 "this host runs " + arch.name +
                     " programs natively: emurun root is for foreign arches (its private "
                     "binfmt_misc would send the host's own programs to qemu)",
                 "choose a foreign arch (aarch64, ppc64le or s390x); for a native root use "
                 "mmdebstrap itself"};
}

namespace {

bool is_dir(const struct stat& st) {
    return S_ISDIR(st.st_mode);
}

Result<void> check_bind_paths(const RootBind& b) {
    const std::string what = "bind " + b.source.string() + " to " + b.target.string();
    if (b.source.empty() || b.target.empty()) {
        return fail(what,
                    std::string(b.source.empty() ? "the source" : "the destination") +
                        " is an empty path",
                    "give both: the source on the host and the destination inside the root");
    }
    if (!b.target.is_absolute()) {
        return fail(what, "the destination is not an absolute path",
                    "give the path inside the root from its /, e.g. /src");
    }
    if (std::ranges::any_of(b.target, [](const fs::path& c) { return c == ".."; })) {
        return fail(what, "the destination has a '..' component: it could leave the root",
                    "give the path inside the root without '..'");
    }
    if (b.target.relative_path().lexically_normal().empty() || b.target.lexically_normal() == "/") {
        return fail(what, "the destination is the root's / itself: it would hide the whole root",
                    "bind onto a directory inside the root, e.g. /src");
    }
    return {};
}

/// Where `b` goes inside `root`: no symlink of the root on the way, a type that fits the source.
Result<void> check_bind_target(const fs::path& root, const RootBind& b) {
    const std::string what = "bind " + b.source.string() + " to " + b.target.string();
    struct stat src {};
    if (::stat(b.source.c_str(), &src) != 0) {
        return std::unexpected(system_error(what + ": the source on the host", errno));
    }
    std::vector<fs::path> parts;
    for (const auto& c : b.target.relative_path()) {
        if (!c.empty() && c != ".") {
            parts.push_back(c);
        }
    }
    fs::path p = root;
    fs::path inside = "/";
    for (std::size_t i = 0; i < parts.size(); ++i) {
        p /= parts[i];
        inside /= parts[i];
        struct stat st {};
        if (::lstat(p.c_str(), &st) != 0) {
            return {}; // the rest is made as fresh directories
        }
        if (S_ISLNK(st.st_mode)) {
            return fail(what,
                        inside.string() + " is a symlink in the root: emurun follows no symlink "
                                          "of the root for a bind's mount point",
                        "bind onto the path it points to inside the root");
        }
        const bool last = i + 1 == parts.size();
        if (!last && !is_dir(st)) {
            return fail(what, inside.string() + " is not a directory in the root");
        }
        if (last && is_dir(src) != is_dir(st)) {
            return fail(
                what,
                is_dir(src)
                    ? "the source is a directory but " + inside.string() + " is a file in the root"
                    : "the source is a file but " + inside.string() + " is a directory in the root",
                "bind a directory onto a directory and a file onto a file, or choose "
                "another destination");
        }
    }
    return {};
}

} // namespace

Result<void> check_bind(const fs::path& root, const RootBind& bind) {
    if (auto r = check_bind_paths(bind); !r) {
        return r;
    }
    return check_bind_target(root, bind);
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
