// Safety checks on interpreters, warnings about the environment, and verification through the
// kernel path.
#include "process/spawn.hpp"
#include "util/file.hpp"

#include <emurun/binfmt.hpp>
#include <emurun/elf.hpp>
#include <emurun/process.hpp>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <sys/stat.h>
#include <unistd.h>

namespace emurun {
namespace {

std::string octal(unsigned mode) {
    std::string out;
    do {
        out.insert(out.begin(), static_cast<char>('0' + (mode & 7)));
        mode >>= 3;
    } while (mode != 0);
    return out;
}

// Inside a user namespace, files of unmapped users (real root among them) show the kernel's
// overflow uid: from in there that owner cannot be judged, so it is let through.
bool in_user_namespace() {
    auto map = util::read_file("/proc/self/uid_map");
    return map && map->find("4294967295") == std::string::npos;
}

// Who may own the interpreter and the directories above it: root, or the user registering it
// (who could replace it anyway). Any other unprivileged owner could rewrite or rename it.
bool trusted_owner(uid_t uid) {
    static const bool userns = in_user_namespace();
    return uid == 0 || uid == ::geteuid() || (userns && uid == 65534);
}

Result<void> check_owner(const std::filesystem::path& interp, const std::filesystem::path& path,
                         const struct stat& st, bool is_dir) {
    if (trusted_owner(st.st_uid)) {
        return {};
    }
    return fail("interpreter " + interp.string(),
                std::string(is_dir ? "the directory " + path.string() + " above it" : "it") +
                    " is owned by uid " + std::to_string(st.st_uid) +
                    ", who could replace it: every binary of this arch would run what they put "
                    "there",
                "use an emulator owned by root, such as /usr/bin/qemu-<arch>-static");
}

// A directory that others may write to without the sticky bit lets them swap the interpreter,
// and so does any directory above it (rename the subdirectory, put another in its place).
Result<void> check_directories(const std::filesystem::path& interp,
                               const std::filesystem::path& file) {
    for (auto dir = file.parent_path();; dir = dir.parent_path()) {
        struct stat st {};
        if (::stat(dir.c_str(), &st) != 0) {
            return std::unexpected(system_error("stat " + dir.string(), errno));
        }
        if ((st.st_mode & S_IWOTH) && !(st.st_mode & S_ISVTX)) {
            return fail("interpreter " + interp.string(),
                        "the directory " + dir.string() +
                            " is writable by others without the sticky bit, so anyone could "
                            "replace it",
                        "install the emulator in a root-owned directory such as /usr/bin");
        }
        EMURUN_TRY(check_owner(interp, dir, st, true));
        if (dir == dir.root_path() || dir.parent_path() == dir) {
            return {};
        }
    }
}

Result<void> check_file(const std::filesystem::path& interp, const BinfmtFlags& flags) {
    std::string what = "interpreter " + interp.string();
    struct stat st {};
    if (::stat(interp.c_str(), &st) != 0) {
        Error e = system_error("stat " + interp.string(), errno,
                               flags.fix_binary
                                   ? "with F the kernel opens it at registration: it must exist "
                                     "(apt-get install qemu-user-static)"
                                   : "apt-get install qemu-user-static, or give the "
                                     "interpreter's path");
        e.field = flags.fix_binary ? "" : "interpreter";
        return std::unexpected(std::move(e));
    }
    if (!S_ISREG(st.st_mode) || !(st.st_mode & S_IXUSR)) {
        return fail(what, "not an executable regular file", "point to the qemu-<arch> binary");
    }
    if (st.st_mode & (S_IWGRP | S_IWOTH)) {
        return fail(what,
                    "writable by group or others (mode " + octal(st.st_mode & 07777) +
                        "): every binary of this arch would run whatever they put there",
                    "chmod go-w " + interp.string());
    }
    return check_owner(interp, interp, st, false);
}

} // namespace

Result<void> check_binfmt_interpreter(const std::filesystem::path& interp, const BinfmtFlags& flags,
                                      BinfmtWarnings& warnings) {
    if (!interp.is_absolute()) {
        return fail("interpreter " + interp.string(), "not an absolute path",
                    "the kernel resolves it in whatever directory a program is started from");
    }
    if (auto f = check_file(interp, flags); !f) {
        return f;
    }
    std::error_code ec;
    auto real = std::filesystem::canonical(interp, ec);
    for (const auto& p : {interp, ec ? interp : real}) {
        EMURUN_TRY(check_directories(interp, p.lexically_normal()));
    }
    if (flags.fix_binary) {
        auto elf = read_elf(interp, 1 << 20);
        if (elf && !elf->is_static()) {
            warnings.push_back("interpreter " + interp.string() +
                               " is dynamically linked: with F it breaks inside chroots and "
                               "containers: use qemu-user-static");
        }
    }
    if (flags.credentials) {
        warnings.push_back("flag C: setuid/setgid binaries of this arch will run with raised "
                           "privileges through the emulator; a bug in qemu becomes a root hole");
    } else if (flags.open_binary) {
        warnings.push_back("flag O: the emulator is given binaries the user cannot read; combined "
                           "with setuid binaries that widens what an unprivileged user can do");
    }
    return {};
}

BinfmtWarnings binfmt_environment_warnings() {
    BinfmtWarnings out;
    std::error_code ec;
    // Inside a user namespace (a sandbox) the table is private: systemd-binfmt cannot flush it.
    auto mine = std::filesystem::read_symlink("/proc/self/ns/user", ec);
    auto init = std::filesystem::read_symlink("/proc/1/ns/user", ec);
    if (ec || mine != init) {
        return out;
    }
    for (const char* p : {"/lib/systemd/systemd-binfmt", "/usr/lib/systemd/systemd-binfmt",
                          "/lib/systemd/system/systemd-binfmt.service",
                          "/usr/lib/systemd/system/systemd-binfmt.service"}) {
        if (std::filesystem::exists(p, ec)) {
            out.push_back(std::string("systemd-binfmt is present (") + p +
                          "): restarting systemd-binfmt.service flushes every binfmt_misc entry, "
                          "these included; persist them as binfmt.d files in /etc/binfmt.d "
                          "('emurun binfmt export')");
            break;
        }
    }
    return out;
}

BinfmtVerifyResult verify_binfmt(const Arch& arch, const std::filesystem::path& probe) {
    using namespace std::chrono_literals;
    BinfmtVerifyResult v{arch.name, false, {}};
    // No PATH search for the probe: a bare name is a file in the working directory.
    const auto file = probe.has_parent_path() ? probe : std::filesystem::path(".") / probe;
    // A hung emulator must not hang verify: killed after 30 s.
    auto r = detail::run_captured(Command{.argv = {probe.string(), "uname"}, .program = file},
                                  detail::CaptureOptions{.timeout = 30s, .max_output = 4096});
    if (!r) {
        v.detail = r.error().message();
        return v;
    }
    while (!r->out.empty() && (r->out.back() == '\n' || r->out.back() == '\r')) {
        r->out.pop_back();
    }
    const auto& status = r->status;
    std::error_code ec;
    if (r->start_errno == ENOEXEC) {
        v.detail = "exec " + probe.string() + ": " + std::strerror(ENOEXEC) +
                   ": the kernel has no handler for " + arch.name + " binaries";
    } else if (r->start_errno == ENOENT && std::filesystem::exists(file, ec)) {
        // The probe is there: the kernel's ENOENT is about the handler's interpreter.
        v.detail = "exec " + probe.string() + ": " + std::strerror(ENOENT) +
                   ", though the probe exists: the interpreter of the binfmt_misc entry for " +
                   arch.name + " is missing (an uninstalled emulator or a dangling symlink; " +
                   "'emurun doctor' names the entry)";
    } else if (r->start_error) {
        v.detail = r->start_error->message();
    } else if (r->timed_out) {
        v.detail = "probe still running after 30 s: killed";
    } else if (status.signal()) {
        v.detail = "probe died of signal " + std::to_string(*status.signal());
    } else if (!status.success() || r->out.empty()) {
        v.detail = "probe exited " + std::to_string(status.code().value_or(-1)) + " printing '" +
                   r->out + "'";
    } else {
        v.ok = true;
        v.detail = "ran through the kernel's handler, uname says " + r->out;
    }
    return v;
}

} // namespace emurun
