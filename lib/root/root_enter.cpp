// Entering a root: the mounts made in the namespace child, pivot_root, and the command.
#include "process/namespaces.hpp"
#include "root/root_internal.hpp"
#include "util/fd.hpp"
#include "util/text.hpp"

#include <cerrno>
#include <fcntl.h>
#include <linux/capability.h>
#include <map>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace emurun {
namespace fs = std::filesystem;
using namespace root_detail;

namespace {

constexpr const char* k_binfmt = "proc/sys/fs/binfmt_misc";
constexpr unsigned long k_special_fs = MS_NOSUID | MS_NODEV | MS_NOEXEC;

Result<void> write_register(const fs::path& mount_point, const BinfmtEntry& entry) {
    auto line = format_binfmt_line(entry);
    if (!line) {
        return std::unexpected(line.error());
    }
    const fs::path reg = mount_point / "register";
    const util::UniqueFd fd(::open(reg.c_str(), O_WRONLY | O_CLOEXEC));
    if (!fd) {
        return std::unexpected(system_error("open " + reg.string(), errno));
    }
    const ssize_t n = ::write(fd.get(), line->data(), line->size()); // one write: one entry
    const int err = errno;
    if (n != static_cast<ssize_t>(line->size())) {
        return std::unexpected(system_error("register " + entry.name +
                                                " in the private "
                                                "binfmt_misc",
                                            n < 0 ? err : EIO));
    }
    return {};
}

Result<void> mount_fs(const char* type, const fs::path& where, unsigned long flags,
                      const char* data = nullptr) {
    if (auto r = make_dirs(where); !r) {
        return r;
    }
    if (::mount(type, where.c_str(), type, flags, data) != 0) {
        return std::unexpected(
            system_error(std::string("mount ") + type + " on " + where.string(), errno));
    }
    return {};
}

/// The host's /etc/resolv.conf over the root's, read-only, unless the root's is a symlink (it
/// would be resolved against the host's tree).
Result<void> bind_resolv_conf(const fs::path& root) {
    struct stat st {};
    if (::stat("/etc/resolv.conf", &st) != 0 ||
        (::lstat((root / "etc/resolv.conf").c_str(), &st) == 0 && S_ISLNK(st.st_mode))) {
        return {};
    }
    return bind_into(root, "/etc/resolv.conf", "/etc/resolv.conf", true);
}

/// The root's private /dev: a tmpfs with the host's harmless device nodes bound onto files
/// of it, a devpts instance of its own, a private /dev/shm and the usual symlinks. Nothing of
/// the host's /dev is writable from the root but these nodes (never a new file on the host, no
/// /dev/kmsg, no disk).
Result<void> mount_private_dev(const fs::path& r) {
    const fs::path dev = r / "dev";
    EMURUN_TRY(mount_fs("tmpfs", dev, MS_NOSUID | MS_NOEXEC, "mode=755,size=1m"));
    for (const auto node : k_dev_nodes) {
        const fs::path host = fs::path("/dev") / node;
        struct stat st {};
        if (::stat(host.c_str(), &st) == 0 && S_ISCHR(st.st_mode)) {
            EMURUN_TRY(bind_into(r, host, host, false));
        }
    }
    EMURUN_TRY(mount_fs("devpts", dev / "pts", MS_NOSUID | MS_NOEXEC,
                        "newinstance,ptmxmode=0666,mode=0620"));
    EMURUN_TRY(mount_fs("tmpfs", dev / "shm", MS_NOSUID | MS_NODEV | MS_NOEXEC, "mode=1777"));
    for (const auto& [name, to] : k_dev_links) {
        if (::symlink(std::string(to).c_str(), (dev / name).c_str()) != 0) {
            return std::unexpected(system_error("symlink " + (dev / name).string(), errno));
        }
    }
    return {};
}

Result<void> mount_basics(const RootPlan& plan) {
    const fs::path& r = plan.dir;
    if (::mount(r.c_str(), r.c_str(), nullptr, MS_BIND | MS_REC, nullptr) != 0) {
        return std::unexpected(system_error("bind " + r.string() + " onto itself", errno));
    }
    EMURUN_TRY(check_mount_points(r)); // again, right before: the root may have changed
    if (auto x = mount_fs("proc", r / "proc", k_special_fs); !x) {
        return x;
    }
    if (auto x = mount_binfmt(r / k_binfmt, nullptr); !x) {
        return x;
    }
    if (auto x = mount_private_dev(r); !x) {
        return x;
    }
    if (auto x = bind_into(r, "/sys", "/sys", true); !x) {
        return x;
    }
    if (auto x = mount_fs("tmpfs", r / "tmp", MS_NOSUID | MS_NODEV, "mode=1777"); !x) {
        return x;
    }
    return bind_resolv_conf(r);
}

Result<void> pivot_into(const fs::path& root) {
    if (::chdir(root.c_str()) != 0) {
        return std::unexpected(system_error("chdir " + root.string(), errno));
    }
    if (::syscall(SYS_pivot_root, ".", ".") != 0) {
        return std::unexpected(system_error("pivot_root " + root.string(), errno));
    }
    if (::umount2(".", MNT_DETACH) != 0) {
        return std::unexpected(system_error("detach the host's root", errno));
    }
    if (::chdir("/") != 0) {
        return std::unexpected(system_error("chdir /", errno));
    }
    return {};
}

Command root_command(const RootPlan& plan, const std::vector<std::string>& argv) {
    return Command{.argv = argv,
                   .env = std::map<std::string, std::string>(plan.env.begin(), plan.env.end()),
                   .cwd = plan.cwd};
}

} // namespace

namespace root_detail {

Result<void> mount_binfmt(const fs::path& mount_point, const BinfmtEntry* entry) {
    if (::mount("binfmt_misc", mount_point.c_str(), "binfmt_misc", k_special_fs, nullptr) != 0) {
        const int err = errno;
        return std::unexpected(system_error(
            "mount binfmt_misc on " + mount_point.string() + " in a user namespace", err,
            "emurun root needs Linux >= 6.7 (binfmt_misc in a user namespace); 'emurun doctor' "
            "checks. On an older kernel, as root: emurun binfmt register ARCH"));
    }
    return entry != nullptr ? write_register(mount_point, *entry) : Result<void>{};
}

/// "natively (the host's programs): gcc, g++, sh, sed, ..." or that nothing runs natively.
std::string describe_native(const RootPlan& plan) {
    if (plan.tools.empty()) {
        return "accelerated: nothing; every program of the root runs emulated";
    }
    std::string names;
    for (const auto& t : plan.tools) {
        names += (names.empty() ? "" : ", ") + t.target.filename().string();
    }
    return "accelerated: " + std::to_string(plan.tools.size()) +
           " programs of the root run as the host's: " + util::printable(names);
}

/// The command may not mount. Every mount of the root is made here by root of the user
/// namespace, which could remount a read-only bind (a host tool over /usr/bin/NAME, the host's
/// /sys, a --ro-bind) read-write or unmount one to reach what is below it; without
/// CAP_SYS_ADMIN the command cannot, and a user namespace it makes of its own gets these mounts
/// locked (the kernel's rule for a less privileged namespace). Dropped from the bounding set of
/// pid 1 after its mounts: the command, forked from it and run as uid 0, never has it (Podman's
/// and Docker's default capability sets leave it out too).
Result<void> drop_mount_capability() {
    if (::prctl(PR_CAPBSET_DROP, CAP_SYS_ADMIN, 0, 0, 0) != 0) {
        return std::unexpected(system_error("drop CAP_SYS_ADMIN from the root's processes", errno));
    }
    return {};
}

Result<void> enter_root(const RootPlan& plan) {
    if (auto r = mount_binfmt("/" + std::string(k_binfmt), &plan.entry); !r) {
        return r;
    }
    if (auto r = mount_basics(plan); !r) {
        return r;
    }
    if (!plan.tools.empty()) {
        if (auto r = mount_acceleration(plan); !r) {
            return r;
        }
    }
    for (const auto& b : plan.binds) {
        if (auto r = check_bind(plan.dir, b); !r) { // again, right before: the root may change
            return r;
        }
        if (auto r = bind_into(plan.dir, b.source, b.target, b.read_only, true); !r) {
            return r;
        }
    }
    EMURUN_TRY(pivot_into(plan.dir));
    return drop_mount_capability();
}

Result<ExitStatus> run_with_binfmt(const BinfmtEntry& entry, const Command& cmd) {
    return process::run_in_namespaces(
        [&entry] { return mount_binfmt("/" + std::string(k_binfmt), &entry); }, cmd,
        process::Interrupts::stop_all);
}

} // namespace root_detail

Result<ExitStatus> exec_in_root(const RootSpec& spec, const std::vector<std::string>& argv) {
    if (argv.empty()) {
        // The field, not a command line: the CLI spells "argv" as its own syntax.
        return fail(ErrorKind::bad_input, "run in " + spec.dir.string(), "no command given",
                    "name the command to run", "argv");
    }
    auto plan = plan_root(spec);
    if (!plan) {
        return std::unexpected(plan.error());
    }
    // They quote the root's dpkg records (an imported image's): printable, as errors are.
    for (const auto& n : plan->notes) {
        emit(spec.diagnostics, Severity::debug, "note: " + util::printable(n, true));
    }
    for (const auto& u : plan->unproven) { // asked for and not given: said always
        emit(spec.diagnostics, Severity::warning, util::printable(u, true));
    }
    if (spec.accelerate.mode != Acceleration::Mode::none) { // -v: what runs as the host's
        emit(spec.diagnostics, Severity::debug, describe_native(*plan));
    }
    return process::run_in_namespaces([&plan] { return enter_root(*plan); },
                                      root_command(*plan, argv));
}

} // namespace emurun
