// Small helpers of the root module: mount points and binds, dpkg status, the clean
// environment, capturing a tool's output, the private binfmt entry.
#include "process/spawn.hpp"
#include "root/root_internal.hpp"
#include "util/env.hpp"
#include "util/fd.hpp"
#include "util/file.hpp"

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <ctime>
#include <fcntl.h>
#include <iterator>
#include <linux/openat2.h>
#include <map>
#include <sstream>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
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

/// /dev itself, or a device node, link or the devpts of the root's private /dev.
bool is_private_dev(const fs::path& target) {
    if (target == "/dev" || target == "/dev/") {
        return true;
    }
    if (target.parent_path() != "/dev") {
        return false;
    }
    const std::string name = target.filename().string();
    return name == "pts" || std::ranges::find(k_dev_nodes, name) != k_dev_nodes.end() ||
           std::ranges::find(k_dev_links, name,
                             &std::pair<std::string_view, std::string_view>::first) !=
               k_dev_links.end();
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
    if (const fs::path first = *b.target.relative_path().lexically_normal().begin();
        first == "proc" || first == "sys") {
        return fail(what,
                    "/proc and /sys are emurun's own mounts in the root (the kernel's views of "
                    "the root's processes and of the system): a bind at or below them is refused",
                    "bind onto another directory inside the root, e.g. /src");
    }
    if (is_private_dev(b.target.lexically_normal())) {
        return fail(what,
                    "/dev and its device nodes are the root's private /dev (a tmpfs with the "
                    "host's null, zero, full, random, urandom and tty): a bind there would hide it "
                    "or send what the root writes to a device into a file on the host",
                    "bind onto another directory inside the root, e.g. /src");
    }
    return {};
}

} // namespace

Result<void> check_mount_points(const fs::path& root) {
    for (const char* name : {"proc", "dev", "sys", "tmp"}) {
        struct stat st {};
        if (::lstat((root / name).c_str(), &st) != 0 || S_ISDIR(st.st_mode)) {
            continue; // missing: made when entering
        }
        std::error_code ec;
        const std::string what =
            S_ISLNK(st.st_mode)
                ? "a symlink (to " + fs::read_symlink(root / name, ec).string() + ")"
                : "no directory";
        return fail("use " + root.string() + " as a root",
                    "its /" + std::string(name) + " is " + what + ": emurun mounts its own /" +
                        name + " there and follows no symlink of the root for it",
                    "make it an empty directory: rm " + (root / name).string() + " && mkdir " +
                        (root / name).string());
    }
    return {};
}

namespace {

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

/// openat2(2) (Linux 5.6): the kernel resolves `rel` below `dirfd` by `resolve`'s rules, so no
/// symlink swapped in after a check can lead it elsewhere.
int open_beneath(int dirfd, const fs::path& rel, std::uint64_t flags, std::uint64_t resolve) {
    struct open_how how {};
    how.flags = flags | O_CLOEXEC;
    how.resolve = resolve;
    return static_cast<int>(::syscall(SYS_openat2, dirfd, rel.c_str(), &how, sizeof how));
}

/// Make the missing last component of `rel` (below `root_fd`): a directory, or an empty file
/// to bind a file onto. Made by one *at call in its parent as the kernel resolved it.
Result<void> make_component(int root_fd, const fs::path& rel, bool dir, std::uint64_t resolve) {
    const fs::path parent = rel.has_parent_path() ? rel.parent_path() : fs::path(".");
    const util::UniqueFd at(open_beneath(root_fd, parent, O_PATH | O_DIRECTORY, resolve));
    const std::string name = rel.filename().string();
    int rc = -1;
    if (at && dir) {
        rc = ::mkdirat(at.get(), name.c_str(), 0755);
    } else if (at) {
        const int flags = O_CREAT | O_EXCL | O_WRONLY | O_NOFOLLOW | O_CLOEXEC;
        rc = util::UniqueFd(::openat(at.get(), name.c_str(), flags, 0644)) ? 0 : -1;
    }
    if (rc < 0 && errno != EEXIST) {
        return std::unexpected(system_error("create mount point /" + rel.string(), errno));
    }
    return {};
}

/// The mount point `root`/`target`, opened O_PATH, its missing components made on the way.
/// `strict` (a user's bind): no symlink at all (the check before said so, and nothing swapped
/// in since may change it); otherwise symlinks are followed, but inside the root.
Result<util::UniqueFd> open_mount_point(const fs::path& root, const fs::path& target,
                                        bool dir_source, bool strict) {
    const util::UniqueFd root_fd(::open(root.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
    if (!root_fd) {
        return std::unexpected(system_error("open the root " + root.string(), errno));
    }
    const std::uint64_t resolve =
        RESOLVE_NO_MAGICLINKS | (strict ? RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS : RESOLVE_IN_ROOT);
    const fs::path rel = target.relative_path().lexically_normal();
    // No O_NOFOLLOW: with O_PATH it would open a trailing symlink itself; RESOLVE_NO_SYMLINKS
    // refuses it (ELOOP) instead.
    const auto open_at = [&](const fs::path& p) {
        return open_beneath(root_fd.get(), p, O_PATH, resolve);
    };
    fs::path sofar;
    util::UniqueFd fd;
    for (auto it = rel.begin(); it != rel.end(); ++it) {
        sofar /= *it;
        fd.reset(open_at(sofar));
        if (!fd && errno == ENOENT) {
            const bool last = std::next(it) == rel.end();
            if (auto r = make_component(root_fd.get(), sofar, dir_source || !last, resolve); !r) {
                return std::unexpected(r.error());
            }
            fd.reset(open_at(sofar));
        }
        if (!fd) {
            const int err = errno;
            if (strict && (err == ELOOP || err == EXDEV)) {
                return fail("bind onto " + target.string() + " in the root",
                            "/" + sofar.string() +
                                " is a symlink in the root: emurun follows no symlink of the "
                                "root for a bind's mount point",
                            "bind onto the path it points to inside the root");
            }
            return std::unexpected(
                system_error("open mount point " + target.string() + " in the root", err));
        }
    }
    return fd;
}

/// `source`, cloned as a detached mount tree (read-only when asked), moved onto `point`: the
/// mount lands on the file the descriptor holds, whatever its path has become.
Result<void> move_tree_onto(const fs::path& source, int point, const fs::path& target,
                            bool read_only) {
    const util::UniqueFd tree(
        ::open_tree(AT_FDCWD, source.c_str(), OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE));
    if (!tree) {
        return std::unexpected(system_error("open_tree " + source.string(), errno));
    }
    if (read_only) {
        struct mount_attr attr {};
        attr.attr_set = MOUNT_ATTR_RDONLY;
        if (::mount_setattr(tree.get(), "", AT_EMPTY_PATH | AT_RECURSIVE, &attr, sizeof attr) !=
            0) {
            return std::unexpected(
                system_error("make the bind of " + source.string() + " read-only", errno));
        }
    }
    if (::move_mount(tree.get(), "", point, "",
                     MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) != 0) {
        return std::unexpected(system_error("mount --rbind " + source.string() + " onto " +
                                                target.string() + " in the root",
                                            errno));
    }
    return {};
}

} // namespace

Result<void> bind_into(const fs::path& root, const fs::path& source, const fs::path& target,
                       bool read_only, bool strict) {
    struct stat src {};
    if (::stat(source.c_str(), &src) != 0) {
        return fail("bind " + source.string(), "no such file or directory on the host");
    }
    auto point = open_mount_point(root, target, is_dir(src), strict);
    if (!point) {
        return std::unexpected(point.error());
    }
    struct stat st {};
    if (::fstat(point->get(), &st) != 0) {
        return std::unexpected(system_error("stat mount point " + target.string(), errno));
    }
    if (is_dir(st) != is_dir(src)) {
        return fail("bind " + source.string() + " to " + target.string(),
                    target.string() + " is " + (is_dir(st) ? "a directory" : "no directory") +
                        " in the root, the source " + (is_dir(src) ? "is one" : "is not"),
                    "bind a directory onto a directory and a file onto a file");
    }
    return move_tree_onto(source, point->get(), target, read_only);
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

Result<std::string> run_tool(const std::vector<std::string>& argv, const std::string& what) {
    detail::CaptureOptions o;
    o.timeout = std::chrono::hours(6);
    o.stop_on_interrupt = true;
    o.merge_stderr = true;
    auto run = EMURUN_TRY(detail::run_captured(Command{.argv = argv}, o));
    if (run.start_error) {
        return std::unexpected(*run.start_error);
    }
    note_interrupted(run.interrupted_by);
    if (run.interrupted_by != 0) {
        return fail(what,
                    argv.front() + " was interrupted by SIG" + ::sigabbrev_np(run.interrupted_by));
    }
    if (run.timed_out || !run.status.success()) {
        std::string said = run.out.substr(0, 600);
        std::ranges::replace(said, '\n', ';');
        return fail(what, argv.front() + " " +
                              (run.timed_out ? "took too long" : run.status.describe()) +
                              (said.empty() ? "" : ": " + said));
    }
    return run.out;
}

Result<std::string> sha256_of(const fs::path& file) {
    const auto out =
        EMURUN_TRY(run_tool({"sha256sum", "--", file.string()}, "sha256sum " + file.string()));
    if (out.size() < 64) {
        return fail("sha256sum " + file.string(), "it printed no digest: '" + out + "'");
    }
    return "sha256:" + out.substr(0, 64);
}

std::vector<std::pair<std::string, std::string>>
root_environment(const std::vector<std::pair<std::string, std::string>>& extra) {
    std::map<std::string, std::string> env{
        {"PATH", "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"},
        {"HOME", "/root"},
        {"LANG", "C.UTF-8"},
        // Autoconf's configure re-executes itself under bash when /bin/sh lacks $LINENO (dash
        // does), and bash stays emulated (root_native.cpp): with this it stays in /bin/sh, the
        // same shell both ways, and makes Makefiles' SHELL /bin/sh.
        {"CONFIG_SHELL", "/bin/sh"},
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
    flags.preserve_argv0 = qemu_reads_preserve_argv0(*emu); // QEMU >= 6.0
    flags.fix_binary = true; // opened at registration, from the host's view
    return binfmt_entry_for(arch, emu->path, flags);
}

std::string utc_text(std::time_t t) {
    std::tm tm{};
    ::gmtime_r(&t, &tm);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return buf;
}

} // namespace emurun::root_detail
