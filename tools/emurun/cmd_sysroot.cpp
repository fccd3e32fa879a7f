#include "cli.hpp"
#include "cli_common.hpp"

#include <emurun/elf.hpp>
#include <emurun/process.hpp>
#include <emurun/sysroot.hpp>

#include <cstring>
#include <filesystem>
#include <iostream>

namespace emurun::cli {
namespace {

namespace fs = std::filesystem;

struct SysrootArgs {
    std::vector<std::string> sysroots;
    std::vector<std::string> files;
    std::vector<std::string> fetch_args;
};

/// `emurun sysroot check`: foreign ldd of each file (or every ELF program in SYSROOT/usr/bin
/// and SYSROOT/bin) against the sysroots; exit 1 when something is missing.
int sysroot_check(const SysrootArgs& a) {
    const auto roots = to_paths(a.sysroots);
    std::vector<fs::path> files = to_paths(a.files);
    for (const auto& root : roots) {
        for (const char* sub : {"usr/bin", "bin"}) {
            std::error_code ec;
            for (const auto& e : fs::directory_iterator(root / sub, ec)) {
                if (a.files.empty() && e.is_regular_file() && looks_like_elf(e.path())) {
                    files.push_back(e.path());
                }
            }
        }
    }
    int missing = 0;
    for (const auto& f : files) {
        const ElfInfo elf = unwrap(read_elf(f));
        const LinkMap map = resolve_libraries(f, elf, roots);
        if (map.complete()) {
            std::cout << f.string() << ": ok (" << map.libraries.size() << " libraries)\n";
        } else {
            std::cout << f.string() << ": " << map.missing_error(f).message() << '\n';
            ++missing;
        }
    }
    return missing == 0 ? 0 : 1;
}

/// `emurun sysroot fetch ...` is the emurun-sysroot script (apt and dpkg do the work); exec it
/// from beside this binary or from PATH.
int sysroot_fetch(const SysrootArgs& a) {
    const std::string script = sysroot_script().string();
    std::vector<std::string> args{script, "fetch"};
    args.insert(args.end(), a.fetch_args.begin(), a.fetch_args.end());
    const auto failure = exec_replace(Command{.argv = std::move(args)});
    throw Failure(Error{"exec " + script, std::strerror(failure.err),
                        "install emurun-sysroot (tools/emurun-sysroot) next to emurun or in PATH"});
}

} // namespace

void add_sysroot(CLI::App& root, Action& action) {
    auto a = std::make_shared<SysrootArgs>();
    auto* sub = root.add_subcommand("sysroot", "Sysroots for foreign programs");
    sub->require_subcommand(1);
    auto* check = sub->add_subcommand(
        "check", "Report, per program, whether its loader and libraries resolve in the sysroots");
    check->add_option("--sysroot", a->sysroots, "Sysroot directory (repeatable)")->required();
    check->add_option("files", a->files, "Programs (default: every ELF in SYSROOT/usr/bin, /bin)");
    check->callback([a, &action] { action = [a] { return sysroot_check(*a); }; });
    auto* fetch = sub->add_subcommand(
        "fetch", "Download Debian packages for an arch into a sysroot: --arch A --dir D PKG...");
    fetch->allow_extras();
    fetch->prefix_command();
    fetch->callback([a, &action, fetch] {
        for (const auto& x : fetch->remaining()) {
            a->fetch_args.push_back(x);
        }
        action = [a] { return sysroot_fetch(*a); };
    });
}

} // namespace emurun::cli
