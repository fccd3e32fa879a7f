// An image's layers applied to a new root, bottom to top, with Debian's tar (started through
// the process module). Each layer is listed and checked before anything of it is extracted:
// tar itself follows a symlink that a lower layer left on the way to a member, so no member,
// hard link target or whiteout may pass through one. Whiteouts are carried out by emurun
// (tar would unpack them as empty files) and excluded from the extract.
#include "process/spawn.hpp"
#include "root/root_internal.hpp"
#include "util/file.hpp"
#include "util/path.hpp"
#include "util/temp_dir.hpp"

#include <emurun/root.hpp>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <set>
#include <sstream>
#include <sys/stat.h>
#include <unistd.h>

namespace emurun {
namespace fs = std::filesystem;

namespace {

constexpr std::string_view k_whiteout = ".wh.";
constexpr std::string_view k_opaque = ".wh..wh..opq";

/// One member of a layer as `tar -tv` lists it.
struct Member {
    std::string raw;  ///< the name as tar lists it ("./etc/x", escaped)
    std::string name; ///< normalized: no "./" in front, no "/" behind; "" for the top
    char type = '-';  ///< '-', 'd', 'l', 'h', 'c', 'b', 'p', ...
    std::string link; ///< a hard link's target, normalized
    std::uint64_t size = 0;
};

/// What a layer does: members to extract, paths its whiteouts remove, directories its opaque
/// markers empty, members tar must skip.
struct LayerPlan {
    std::vector<Member> members;
    std::vector<std::string> removed, emptied, excluded;
    std::uint64_t bytes = 0;
    std::size_t devices_skipped = 0;
};

std::string normalized(std::string name) {
    while (name.starts_with("./")) {
        name.erase(0, 2);
    }
    while (!name.empty() && name.back() == '/') {
        name.pop_back();
    }
    return name == "." ? "" : name;
}

std::vector<std::string> split_lines(const std::string& text) {
    std::vector<std::string> out;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) {
        out.push_back(line);
    }
    return out;
}

/// (Listings take -P: tar would otherwise print "/a" and "../a" as "a", and hide what it strips.)
// tar with `args`, its output (stderr too with `merge`), or an error naming `what`.
Result<std::string> run_tar(std::vector<std::string> args, const std::string& what,
                            bool merge = false) {
    detail::CaptureOptions o;
    o.timeout = std::chrono::hours(6);
    o.max_output = util::k_max_tar_listing;
    o.merge_stderr = merge;
    auto run = EMURUN_TRY(detail::run_tar(std::move(args), o));
    if (run.interrupted_by != 0) {
        root_detail::note_interrupted(run.interrupted_by);
        return fail(what, std::string("interrupted by SIG") + ::sigabbrev_np(run.interrupted_by),
                    "nothing was imported");
    }
    if (run.timed_out || !run.status.success()) {
        std::string said = run.out.substr(0, 600);
        std::ranges::replace(said, '\n', ';');
        return fail(what,
                    (run.timed_out ? "tar took too long" : run.status.describe()) +
                        (said.empty() ? "" : ": " + said),
                    "is it a tar archive (plain, gzip, zstd or xz)? nothing was imported");
    }
    return run.out;
}

/// The member of `verbose` (a `tar -tv --quoting-style=escape` line) whose name is `raw`.
Result<Member> parse_member(const std::string& raw, const std::string& verbose,
                            const std::string& what) {
    Member m;
    m.raw = raw;
    m.name = normalized(raw);
    m.type = verbose.empty() ? '?' : verbose[0];
    std::istringstream fields(verbose);
    std::string mode, owner, size, date, time;
    fields >> mode >> owner >> size >> date >> time;
    m.size = std::strtoull(size.c_str(), nullptr, 10); // "8,1" of a device: its major only
    const std::streamoff after = fields ? static_cast<std::streamoff>(fields.tellg()) : 0;
    const auto at =
        verbose.find(" " + raw, static_cast<std::size_t>(std::max<std::streamoff>(after, 0)));
    const std::string rest = at == std::string::npos ? "" : verbose.substr(at + 1 + raw.size());
    if (m.type == 'h') {
        const std::string_view link_to = " link to ";
        if (!rest.starts_with(link_to)) {
            return fail(what, "cannot read tar's listing of the hard link " + raw);
        }
        m.link = normalized(rest.substr(link_to.size()));
    }
    return m;
}

/// Error unless `name` (a normalized member name) stays in the root.
Result<void> check_name(const std::string& name, const std::string& raw, const std::string& what) {
    if (name.empty() || (util::is_plain_relative(name) && name.find('\\') == std::string::npos &&
                         !raw.starts_with("/"))) {
        return {};
    }
    return fail(what,
                "the member '" + raw +
                    "' is absolute or holds \"..\", a control character or a backslash",
                "an image layer never does: the image is damaged or hostile; nothing was imported");
}

/// The layer's members, from two listings that tar prints in the same order.
Result<std::vector<Member>> list_layer(const fs::path& layer, const std::string& what) {
    const auto names = split_lines(EMURUN_TRY(run_tar(
        {"-t", "-P", "--quoting-style=escape", "-f", layer.string()}, "list " + layer.string())));
    const auto lines = split_lines(EMURUN_TRY(run_tar(
        {"-t", "-v", "-P", "--numeric-owner", "--quoting-style=escape", "-f", layer.string()},
        "list " + layer.string())));
    if (names.size() != lines.size()) {
        return fail(what, "tar's two listings of " + layer.string() + " differ");
    }
    std::vector<Member> out;
    for (std::size_t i = 0; i < names.size(); ++i) {
        out.push_back(EMURUN_TRY(parse_member(names[i], lines[i], what)));
        EMURUN_TRY(check_name(out.back().name, names[i], what));
        if (out.back().type == 'h') {
            EMURUN_TRY(check_name(out.back().link, out.back().link, what));
        }
    }
    return out;
}

std::string parent_of(const std::string& rel) {
    const auto slash = rel.rfind('/');
    return slash == std::string::npos ? "" : rel.substr(0, slash);
}

std::string leaf_of(const std::string& rel) {
    const auto slash = rel.rfind('/');
    return slash == std::string::npos ? rel : rel.substr(slash + 1);
}

std::string joined(const std::string& dir, const std::string& name) {
    return dir.empty() ? name : dir + "/" + name;
}

bool is_symlink_at(const fs::path& root, const std::string& rel) {
    struct stat st {};
    return !rel.empty() && ::lstat((root / rel).c_str(), &st) == 0 && S_ISLNK(st.st_mode);
}

/// Error when the directory of `rel` passes through a symlink: one of `links` (the layer's
/// own) or one already in `root`; `self` checks `rel` itself too (a directory over a symlink).
Result<void> check_beneath(const fs::path& root, const std::string& rel,
                           const std::set<std::string>& links, bool self, const std::string& raw,
                           const std::string& what) {
    const std::string dir = self ? rel : parent_of(rel);
    std::string at;
    for (const auto& part : fs::path(dir)) {
        at = joined(at, part.string());
        if (links.contains(at) || is_symlink_at(root, at)) {
            return fail(what,
                        "the member '" + raw + "' is reached through the symlink '" + at + "'" +
                            (links.contains(at) ? " of the same layer" : " of a lower layer"),
                        "tar would follow it, perhaps out of the root; an image built by docker, "
                        "buildah or umoci never does this: nothing was imported");
        }
    }
    return {};
}

/// The layer's plan: its members checked, its whiteouts and device nodes sorted out.
Result<LayerPlan> plan_layer(const fs::path& root, const fs::path& layer, const std::string& what) {
    LayerPlan plan;
    plan.members = EMURUN_TRY(list_layer(layer, what));
    std::set<std::string> links;
    for (const auto& m : plan.members) {
        if (m.type == 'l') {
            links.insert(m.name);
        }
    }
    for (const auto& m : plan.members) {
        EMURUN_TRY(check_beneath(root, m.name, links, m.type == 'd', m.raw, what));
        plan.bytes += m.type == '-' ? m.size : 0;
        const std::string leaf = leaf_of(m.name);
        if (m.type == 'h') {
            EMURUN_TRY(check_beneath(root, m.link, links, false, m.raw, what));
        } else if (leaf == k_opaque) {
            plan.emptied.push_back(parent_of(m.name));
        } else if (leaf.starts_with(k_whiteout)) {
            const std::string target = leaf.substr(k_whiteout.size());
            if (target.empty() || target == "." || target == ".." ||
                target.starts_with(k_whiteout)) {
                return fail(what, "the whiteout '" + m.raw + "' removes no name of its directory",
                            "the image is damaged or hostile; nothing was imported");
            }
            plan.removed.push_back(joined(parent_of(m.name), target));
        } else if (m.type == 'c' || m.type == 'b') {
            if (!m.name.starts_with("dev/")) {
                return fail(what, "the member '" + m.raw + "' is a device node outside dev/",
                            "device nodes cannot be made in emurun's user namespace, and a root "
                            "gets a private /dev: rebuild the image without it; nothing was "
                            "imported");
            }
            ++plan.devices_skipped;
        } else if (m.type != '-' && m.type != 'd' && m.type != 'l' && m.type != 'p') {
            return fail(what,
                        "the member '" + m.raw + "' is of a type tar lists as '" +
                            std::string(1, m.type) + "'",
                        "a root holds files, directories, links and FIFOs only; nothing was "
                        "imported");
        }
        if (leaf.starts_with(k_whiteout) || m.type == 'c' || m.type == 'b') {
            plan.excluded.push_back(m.raw);
        }
    }
    return plan;
}

/// `rel` below `root` removed with all it holds (read-only directories opened up).
Result<void> remove_below(const fs::path& root, const std::string& rel, const std::string& what) {
    const fs::path path = root / rel;
    std::error_code ec;
    if (!fs::exists(fs::symlink_status(path, ec))) {
        return {};
    }
    { const auto gone = util::TempDir::adopt(path); }
    if (fs::exists(fs::symlink_status(path, ec))) {
        return fail(what, "cannot remove " + rel + " (a whiteout of a higher layer)",
                    "is its directory read-only? nothing was imported");
    }
    return {};
}

/// The whiteouts of `plan`, carried out on the layers below (before the layer is extracted).
Result<void> apply_whiteouts(const fs::path& root, const LayerPlan& plan, const std::string& what) {
    for (const auto& dir : plan.emptied) {
        std::error_code ec;
        std::vector<std::string> children;
        for (fs::directory_iterator it(dir.empty() ? root : root / dir, ec), end; !ec && it != end;
             it.increment(ec)) {
            children.push_back(joined(dir, it->path().filename().string()));
        }
        for (const auto& child : children) {
            EMURUN_TRY(remove_below(root, child, what));
        }
    }
    for (const auto& rel : plan.removed) {
        EMURUN_TRY(remove_below(root, rel, what));
    }
    return {};
}

/// Room for `bytes` more on the file system of `root`.
Result<void> check_room(const fs::path& root, std::uint64_t bytes, const std::string& what) {
    std::error_code ec;
    const auto room = fs::space(root, ec);
    if (ec || room.available >= bytes) {
        return {};
    }
    constexpr std::uint64_t k_mib = 1024 * 1024;
    return fail(what,
                "its files hold " + std::to_string(bytes / k_mib) + " MiB and " + root.string() +
                    " has " + std::to_string(room.available / k_mib) + " MiB free",
                "free some space, or import into a directory on a larger file system");
}

Result<void> extract_layer(const fs::path& root, const fs::path& layer, const LayerPlan& plan,
                           const std::string& what) {
    std::string excluded;
    for (const auto& name : plan.excluded) {
        excluded += name + "\n";
    }
    const fs::path list = root.parent_path() / ("." + root.filename().string() + ".exclude");
    EMURUN_TRY(util::write_file_atomic(list, excluded));
    // As root, the image's numeric owners are kept: ids 0-65535 are themselves in emurun's
    // namespaces. Another user's tar cannot give files away: they stay the user's own.
    std::vector<std::string> owners{"--no-same-owner"};
    if (::geteuid() == 0) {
        owners = {"--same-owner", "--numeric-owner"};
    }
    std::vector<std::string> argv{"-x", "-p"};
    argv.insert(argv.end(), owners.begin(), owners.end());
    argv.insert(argv.end(), {"--no-wildcards", "--anchored", "--exclude-from=" + list.string(),
                             "-f", fs::absolute(layer).string(), "-C", root.string()});
    auto out = run_tar(argv, what + ": extract " + layer.filename().string(), true);
    std::error_code ec;
    fs::remove(list, ec);
    return out ? Result<void>{} : std::unexpected(out.error());
}

/// Setuid and setgid bits of the files below `root` cleared (they would be the user's own on
/// the host, or, imported as root, the host's root's); how many.
std::size_t clear_setid(const fs::path& root) {
    std::size_t cleared = 0;
    std::error_code ec;
    for (fs::recursive_directory_iterator
             it(root, fs::directory_options::skip_permission_denied, ec),
         end;
         !ec && it != end; it.increment(ec)) {
        struct stat st {};
        if (::lstat(it->path().c_str(), &st) == 0 && S_ISREG(st.st_mode) &&
            (st.st_mode & (S_ISUID | S_ISGID)) != 0) {
            ::chmod(it->path().c_str(), st.st_mode & 07777 & ~(S_ISUID | S_ISGID));
            ++cleared;
        }
    }
    return cleared;
}

} // namespace

Result<std::optional<fs::path>> root_detail::find_setid(const fs::path& dir) {
    std::error_code ec;
    for (fs::recursive_directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
        struct stat st {};
        if (::lstat(it->path().c_str(), &st) == 0 && S_ISREG(st.st_mode) &&
            (st.st_mode & (S_ISUID | S_ISGID)) != 0) {
            return std::optional<fs::path>(it->path().lexically_relative(dir));
        }
    }
    if (ec) { // a directory that cannot be read: what is below it cannot be vouched for
        return fail("look for setuid files in " + dir.string(), ec.message());
    }
    return std::optional<fs::path>{};
}

Result<void> root_detail::check_digest(const fs::path& file, const std::string& name,
                                       const std::string& digest, const std::string& what) {
    if (digest.empty()) {
        return {};
    }
    const std::string got = EMURUN_TRY(root_detail::sha256_of(file));
    if (got != digest) {
        return fail(what,
                    name + " has the digest " + got + ", not " + digest + " as the image says",
                    "the image is damaged or was altered: save or copy it again; nothing was "
                    "imported");
    }
    return {};
}

Result<std::vector<std::string>> root_detail::tar_member_names(const fs::path& archive,
                                                               const std::string& what) {
    auto names = split_lines(
        EMURUN_TRY(run_tar({"-t", "-P", "--quoting-style=escape", "-f", archive.string()}, what)));
    for (auto& name : names) {
        name = normalized(std::move(name));
    }
    return names;
}

/// The layer `file` opened once: the open file's path (/proc/PID/fd/N, which tar and sha256sum
/// open as that same file) and the descriptor that keeps it.
struct PinnedLayer {
    util::UniqueFd fd;
    fs::path path;
};

Result<PinnedLayer> pin_layer(const root_detail::LayerFile& layer, const std::string& what) {
    PinnedLayer pin{EMURUN_TRY(util::open_read(layer.first)), {}};
    pin.path = "/proc/" + std::to_string(::getpid()) + "/fd/" + std::to_string(pin.fd.get());
    struct stat held {
    }, named{};
    if (::fstat(pin.fd.get(), &held) != 0 || ::stat(pin.path.c_str(), &named) != 0 ||
        held.st_dev != named.st_dev || held.st_ino != named.st_ino) { // a /proc of another pid ns
        return fail(what, pin.path.string() + " is not the open layer " + layer.first.string(),
                    "import where /proc shows this process (its own PID namespace's /proc)");
    }
    EMURUN_TRY(
        root_detail::check_digest(pin.path, layer.first.filename().string(), layer.second, what));
    return pin;
}

Result<void> root_detail::apply_layers(const std::vector<LayerFile>& layers, const fs::path& dir,
                                       std::vector<std::string>& notes) {
    std::size_t devices = 0;
    for (std::size_t i = 0; i < layers.size(); ++i) {
        const std::string what = "apply layer " + std::to_string(i + 1) + " of " +
                                 std::to_string(layers.size()) + " (" +
                                 layers[i].first.filename().string() + ")";
        const PinnedLayer pin = EMURUN_TRY(pin_layer(layers[i], what));
        const LayerPlan plan = EMURUN_TRY(plan_layer(dir, pin.path, what));
        EMURUN_TRY(check_room(dir, plan.bytes, what));
        EMURUN_TRY(apply_whiteouts(dir, plan, what));
        EMURUN_TRY(extract_layer(dir, pin.path, plan, what));
        devices += plan.devices_skipped;
    }
    if (const std::size_t n = clear_setid(dir); n > 0) {
        notes.push_back("cleared the setuid/setgid bits of " + std::to_string(n) +
                        " files (on the host they would be yours, or root's when imported as "
                        "root; inside, everything runs as root)");
    }
    if (devices > 0) {
        notes.push_back("skipped " + std::to_string(devices) +
                        " device nodes in dev/ (a root gets a private /dev)");
    }
    return {};
}

} // namespace emurun
