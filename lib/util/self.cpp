#include "util/self.hpp"

#include "util/env.hpp"
#include "util/file.hpp"
#include "util/path.hpp"

#include <climits>
#include <cstdlib>
#include <string>
#include <string_view>
#include <unistd.h>

namespace emurun::util {
namespace fs = std::filesystem;

namespace {

/// /proc/self/exe as the kernel gives it, and whether the file was deleted since exec.
struct SelfLink {
    fs::path path;
    bool deleted = false;
};

std::optional<SelfLink> read_self_link() {
    char buf[PATH_MAX];
    const ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
    if (n <= 0) {
        return std::nullopt;
    }
    constexpr std::string_view deleted = " (deleted)";
    std::string link(buf, static_cast<std::size_t>(n));
    if (link.ends_with(deleted)) {
        link.resize(link.size() - deleted.size());
        return SelfLink{link, true};
    }
    return SelfLink{link, false};
}

} // namespace

std::optional<fs::path> self_exe() {
    auto link = read_self_link();
    return link ? std::optional<fs::path>(link->path) : std::nullopt;
}

bool is_emurun_name(const fs::path& file) {
    return file.filename() == "emurun" || file.filename() == "emurun-cli";
}

Result<fs::path> find_emurun(const std::optional<fs::path>& explicit_path) {
    if (explicit_path) {
        return *explicit_path;
    }
    // emurun itself never takes another binary from its environment (an inherited $EMURUN_EXE
    // must not swap the program that runs the steps).
    if (auto self = read_self_link(); self && is_emurun_name(self->path)) {
        // A deleted binary still runs through the magic link; its old name would not.
        return self->deleted ? fs::path("/proc/self/exe") : self->path;
    }
    if (auto env = get_env("EMURUN_EXE")) {
        return fs::path(*env);
    }
    if (const fs::path installed = fs::path(EMURUN_INSTALL_BINDIR) / "emurun";
        is_executable_file(installed)) {
        return installed;
    }
    if (auto found = find_executable("emurun")) {
        return *found;
    }
    return fail("find the emurun executable",
                "not in " EMURUN_INSTALL_BINDIR " (where it installs), not in PATH, and "
                "$EMURUN_EXE is not set",
                "set $EMURUN_EXE to the emurun binary (CMake: ${EMURUN_EXECUTABLE}) or pass "
                "its path (SandboxSpec::emurun_exe)");
}

int thread_count() {
    const std::string status = read_file("/proc/self/status").value_or("");
    const auto at = status.find("\nThreads:");
    return at == std::string::npos ? 1 : std::atoi(status.c_str() + at + 9);
}

namespace {

/// `name` beside `emurun`, else in its libexec dir; the symlink is followed second.
std::optional<fs::path> helper_of(const fs::path& emurun, std::string_view name) {
    std::error_code ec;
    const fs::path real = fs::canonical(emurun, ec);
    for (const fs::path& bin : {emurun, ec ? emurun : real}) {
        const fs::path dir = bin.parent_path();
        for (const fs::path& p :
             {dir / name, (dir / EMURUN_LIBEXEC_FROM_BIN / name).lexically_normal()}) {
            if (is_executable_file(p)) {
                return p;
            }
        }
    }
    return std::nullopt;
}

} // namespace

Result<fs::path> find_helper(std::string_view name, const std::optional<fs::path>& emurun) {
    const fs::path bin = emurun ? *emurun : EMURUN_TRY(find_emurun(std::nullopt));
    if (auto helper = helper_of(bin, name)) {
        return *helper;
    }
    const fs::path dir = bin.parent_path();
    return fail(ErrorKind::not_found, "find " + std::string(name),
                std::string(name) + " is neither beside " + bin.string() + " nor at " +
                    (dir / EMURUN_LIBEXEC_FROM_BIN / name).lexically_normal().string(),
                "reinstall emurun (its helper programs are installed with it), or set "
                "$EMURUN_EXE to an emurun binary that has them");
}

} // namespace emurun::util
