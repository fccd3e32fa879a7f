#include "cli.hpp"
#include "cli_common.hpp"

#include <emurun/elf.hpp>
#include <emurun/process.hpp>
#include <emurun/sysroot.hpp>

#include <filesystem>
#include <iostream>

namespace emurun::cli {
namespace {

namespace fs = std::filesystem;

struct SysrootArgs {
    std::vector<std::string> sysroots;
    std::vector<std::string> files;
};

constexpr const char* k_fetch_one = "make one with emurun sysroot fetch --arch ARCH --dir ";

/// Every ELF program in ROOT/usr/bin and ROOT/bin.
std::vector<fs::path> sysroot_programs(const fs::path& root) {
    std::vector<fs::path> programs;
    for (const char* sub : {"usr/bin", "bin"}) {
        std::error_code ec;
        for (const auto& e : fs::directory_iterator(root / sub, ec)) {
            if (e.is_regular_file() && looks_like_elf(e.path())) {
                programs.push_back(e.path());
            }
        }
    }
    return programs;
}

/// The files to check: those named, else the sysroots' programs (none found: bad input).
std::vector<fs::path> files_to_check(const SysrootArgs& a, const std::vector<fs::path>& roots) {
    if (!a.files.empty()) {
        return to_paths(a.files);
    }
    std::vector<fs::path> files;
    for (const auto& root : roots) {
        auto programs = sysroot_programs(root);
        files.insert(files.end(), programs.begin(), programs.end());
    }
    if (files.empty()) {
        const std::string first = roots.front().string();
        std::error_code ec;
        const bool libs = fs::is_directory(roots.front() / "usr/lib", ec);
        throw Failure(Error{"sysroot " + first,
                            std::string(libs ? "" : "no usr/lib and ") +
                                "no programs in usr/bin or bin" +
                                (roots.size() > 1 ? " (nor in the other sysroots)" : ""),
                            "name the programs to check after the options, or " +
                                std::string(k_fetch_one) + first + " PACKAGE..."});
    }
    return files;
}

/// `emurun sysroot check`: foreign ldd of each file (or every ELF program in SYSROOT/usr/bin
/// and SYSROOT/bin) against the sysroots; exit 1 when something is missing.
int sysroot_check(const SysrootArgs& a) {
    const auto roots = to_paths(a.sysroots);
    unwrap(check_sysroot_dirs(roots));
    const std::vector<fs::path> files = files_to_check(a, roots);
    int missing = 0;
    for (const auto& f : files) {
        const ElfInfo elf = unwrap(read_elf(f));
        const LinkMap map = resolve_libraries(f, elf, roots);
        if (map.complete()) {
            std::cout << f.string() << ": ok (" << map.libraries.size() << " libraries)\n";
        } else {
            std::cout << f.string() << ": " << error_text(map.missing_error(f)) << '\n';
            ++missing;
        }
    }
    return missing == 0 ? 0 : 1;
}

constexpr const char* k_op_names[] = {"fetch", "source", "build-dep"};

/// No package named is a command line that does not parse (2): say what goes there.
void check_packages_named(const SysrootRequest& r) {
    if (!r.packages.empty()) {
        return;
    }
    const std::string op = k_op_names[static_cast<int>(r.op)];
    const char* example =
        r.op == SysrootOp::fetch ? "fetch --arch arm64 --dir ./sysroot-arm64 libpng-dev libc6-dev"
        : r.op == SysrootOp::source ? "source --dir ./src zlib"
                                    : "build-dep --arch arm64 --dir ./sysroot-arm64 libpng1.6";
    const char* what = r.op == SysrootOp::fetch    ? "no package named"
                       : r.op == SysrootOp::source ? "no source package named"
                                                   : "no source package or source directory named";
    throw Failure(Error{"sysroot " + op, what,
                        std::string("give it after the options, e.g. emurun sysroot ") + example},
                  k_exit_usage);
}

/// `emurun sysroot fetch|source|build-dep`: the emurun-sysroot tool does it.
int sysroot_script_run(const SysrootRequest& request) {
    check_packages_named(request);
    return run_sysroot_tool(request);
}

/// The options every script action takes.
void add_script_options(CLI::App& sub, SysrootRequest& r) {
    sub.add_option("--dir", r.dir, "Directory the files go into (created if missing)")->required();
    sub.add_option("--mirror", r.mirror, "Debian mirror URI (default: the host's, from /etc/apt)");
    sub.add_option("--suite", r.suite, "Debian release (default: the host's, e.g. bookworm)");
    sub.add_option("--cache", r.cache,
                   "apt cache directory (default: apt/ in emurun's cache dir: "
                   "$EMURUN_CACHE_DIR, else $XDG_CACHE_HOME/emurun, else ~/.cache/emurun)");
    sub.add_flag("--refresh", r.refresh, "Update the package lists even when they are recent");
}

/// One script action as a subcommand: `op` is set when the subcommand is the one given.
CLI::App* add_script_action(CLI::App& sysroot, Action& action, SysrootOp op, const char* name,
                            const char* help) {
    auto r = std::make_shared<SysrootRequest>();
    r->op = op;
    auto* sub = sysroot.add_subcommand(name, help);
    if (op != SysrootOp::source) {
        sub->add_option("--arch", r->arch, "Target arch: Debian or emurun name (arm64, aarch64)")
            ->required();
    }
    add_script_options(*sub, *r);
    if (op == SysrootOp::build_dep) {
        sub->add_option("--profiles", r->profiles, "Build profiles, e.g. nocheck,cross");
    }
    const char* what = op == SysrootOp::fetch    ? "Debian binary packages, e.g. zlib1g-dev"
                       : op == SysrootOp::source ? "Debian source package, e.g. zlib or zlib=VER"
                                                 : "Source package name or a source directory";
    // Not required() here: check_packages_named says what is missing, with an example.
    auto* packages = sub->add_option("packages", r->packages, what);
    if (op != SysrootOp::fetch) {
        packages->expected(1);
    }
    sub->callback([r, &action] { action = [r] { return sysroot_script_run(*r); }; });
    return sub;
}

void add_sysroot_script(CLI::App& sysroot, Action& action) {
    add_script_action(sysroot, action, SysrootOp::fetch, "fetch",
                      "Download Debian packages and their dependencies for an arch and unpack "
                      "them into a sysroot (host apt state untouched)");
    add_script_action(sysroot, action, SysrootOp::source, "source",
                      "Download and unpack a Debian source package (PKG or PKG=VERSION) into "
                      "DIR; prints its directory");
    add_script_action(sysroot, action, SysrootOp::build_dep, "build-dep",
                      "Unpack the build-dependencies of a source package (or a source dir with "
                      "debian/control) for an arch into a sysroot");
}

} // namespace

int run_sysroot_tool(const SysrootRequest& request) {
    auto argv = unwrap(sysroot_tool_argv(request, sysroot_script()));
    const std::string script = argv.front();
    const auto status = run_foreground(Command{.argv = std::move(argv)});
    if (!status) {
        throw Failure(Error{"exec " + script, status.error().why,
                            "install emurun-sysroot (tools/emurun-sysroot) next to emurun or in "
                            "PATH"});
    }
    const int code = status->shell_code();
    return code == k_exit_usage ? k_exit_failure : code;
}

void add_sysroot(CLI::App& root, Action& action) {
    auto a = std::make_shared<SysrootArgs>();
    auto* sub = root.add_subcommand("sysroot", "Sysroots for foreign programs");
    sub->require_subcommand(1);
    auto* check = sub->add_subcommand(
        "check", "Report, per program, whether its loader and libraries resolve in the sysroots");
    check->add_option("--sysroot", a->sysroots, "Sysroot directory (repeatable)")->required();
    check->add_option("files", a->files, "Programs (default: every ELF in SYSROOT/usr/bin, /bin)");
    check->callback([a, &action] { action = [a] { return sysroot_check(*a); }; });
    add_sysroot_script(*sub, action);
}

} // namespace emurun::cli
