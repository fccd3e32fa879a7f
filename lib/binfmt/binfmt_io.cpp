// Reading the binfmt_misc mount, the lock, and mounting it when it is missing.
#include "binfmt/binfmt_io.hpp"
#include "binfmt/binfmt_versions.hpp"
#include "util/file.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <sys/mount.h>
#include <sys/utsname.h>
#include <unistd.h>

namespace emurun {
namespace detail {

Result<void> write_control(const std::filesystem::path& path, std::string_view data,
                           std::string_view hint) {
    util::UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CLOEXEC));
    if (!fd) {
        int err = errno;
        return std::unexpected(system_error("open " + path.string(), err,
                                            err == EACCES || err == EPERM
                                                ? "run as root, or use 'emurun sandbox'"
                                                : std::string(hint)));
    }
    // One write(2): the kernel takes each control write as one whole command.
    ssize_t n = ::write(fd.get(), data.data(), data.size());
    int err = errno;
    fd.reset();
    if (n < 0) {
        return std::unexpected(system_error("write " + path.string(), err, std::string(hint)));
    }
    if (static_cast<std::size_t>(n) != data.size()) {
        return fail("write " + path.string(), "short write", std::string(hint));
    }
    return {};
}

} // namespace detail

Result<void> write_binfmt_control(const std::filesystem::path& file, std::string_view text) {
    return detail::write_control(file, text);
}

namespace detail {

Result<util::FileLock> lock_binfmt(const BinfmtOptions& options) {
    if (options.lock_file) {
        auto lock = util::FileLock::acquire(*options.lock_file, false, "choose another lock file");
        if (!lock) {
            lock.error().field = "lock_file";
        }
        return lock;
    }
    // Locking the mount directory itself serialises everyone using that binfmt_misc instance,
    // needs no writable place, and works unprivileged inside a sandbox.
    return util::FileLock::acquire(options.mount, true);
}

std::pair<int, int> kernel_version() {
    utsname u{};
    int major = 0;
    int minor = 0;
    if (::uname(&u) == 0 && std::sscanf(u.release, "%d.%d", &major, &minor) == 2) {
        return {major, minor};
    }
    return {0, 0};
}

} // namespace detail

namespace {

bool looks_mounted(const std::filesystem::path& mount) {
    std::error_code ec;
    return std::filesystem::exists(mount / "register", ec) &&
           std::filesystem::exists(mount / "status", ec);
}

} // namespace

Result<void> ensure_binfmt_mount(const BinfmtOptions& given) {
    std::optional<BinfmtOptions> upgraded;
    const BinfmtOptions* ours = EMURUN_TRY(util::caller_form(given, upgraded));
    const BinfmtOptions& options = *ours;
    if (looks_mounted(options.mount)) {
        return {};
    }
    std::string what = "binfmt_misc at " + options.mount.string();
    bool is_default = options.mount == std::filesystem::path(k_binfmt_default_mount);
    if (!is_default) {
        return fail(what, "not a binfmt_misc mount (no register and status files)",
                    "mount -t binfmt_misc binfmt_misc " + options.mount.string());
    }
    if (!options.mount_if_missing || ::geteuid() != 0) {
        return fail(what, "binfmt_misc is not mounted",
                    "as root: mount -t binfmt_misc binfmt_misc " + options.mount.string() +
                        " (or use 'emurun sandbox', which needs no host mount)");
    }
    // We mount it and leave it mounted: other tools expect it there; we never unmount.
    if (::mount("binfmt_misc", options.mount.c_str(), "binfmt_misc", 0, nullptr) != 0) {
        return std::unexpected(system_error(
            "mount -t binfmt_misc binfmt_misc " + options.mount.string(), errno,
            "load the module (modprobe binfmt_misc) or check that /proc/sys/fs is writable"));
    }
    return {};
}

Result<BinfmtEntry> read_binfmt_entry(const std::filesystem::path& mount, std::string_view name) {
    auto text = EMURUN_TRY(util::read_file(mount / std::string(name)));
    return parse_binfmt_entry_file(name, text);
}

Result<BinfmtTable> read_binfmt_table(const std::filesystem::path& mount) {
    BinfmtTable table;
    auto status = util::read_file(mount / "status");
    if (!status) {
        Error e = status.error();
        e.hint = "is binfmt_misc mounted there? name the directory where it is";
        e.field = "mount";
        return std::unexpected(std::move(e));
    }
    table.enabled = status->starts_with("enabled");
    std::error_code ec;
    for (const auto& de : std::filesystem::directory_iterator(mount, ec)) {
        auto name = de.path().filename().string();
        if (name == "register" || name == "status") {
            continue;
        }
        auto e = read_binfmt_entry(mount, name);
        if (!e) {
            // Removed between listing and reading: another tool changed the table; skip it.
            if (e.error().why == std::strerror(ENOENT)) {
                continue;
            }
            return std::unexpected(e.error());
        }
        table.entries.push_back(std::move(*e));
    }
    if (ec) {
        return std::unexpected(system_error("list " + mount.string(), ec.value()));
    }
    std::ranges::sort(table.entries, {}, &BinfmtEntry::name);
    return table;
}

} // namespace emurun
