#include "cli.hpp"
#include "cli_common.hpp"
#include "cli_output.hpp"

#include <emurun/json.hpp>
#include <emurun/root.hpp>

#include <nlohmann/json.hpp>

#include <iostream>
#include <memory>
#include <spdlog/spdlog.h>
#include <type_traits>
#include <utility>

namespace emurun::cli {
namespace {

struct RootArgs {
    std::string dir;
    std::string arch;
    std::string suite = "bookworm";
    std::string mirror;
    std::vector<std::string> include;
    std::vector<std::string> binds;
    std::vector<std::string> ro_binds;
    std::string cwd;
    std::vector<std::string> env;
    std::string accelerate = "none";
    bool allow_revision_mismatch = false;
    bool pin_toolchain = false;
    bool json = false;
    std::string platform;           ///< import: os/arch[/variant]
    std::string source;             ///< import: the image
    bool no_cache = false;          ///< import: extract, not through the cache of imports
    std::string format = "oci";     ///< export: oci, oci-archive, docker-archive
    std::string tag;                ///< export: NAME[:TAG]
    std::string out;                ///< export: the image to write
    std::vector<std::string> roots; ///< export: the roots
    std::vector<std::string> rest;  ///< run: the command; install: the packages
};

const Arch* arch_or_null(const std::string& name) {
    return name.empty() ? nullptr : unwrap(find_arch(name));
}

/// "SRC" or "SRC:DST" (DST inside the root; SRC made absolute). An empty part stays empty:
/// plan_root refuses it with the reason.
RootBind parse_bind(const std::string& item, bool read_only) {
    const auto colon = item.find(':');
    const std::filesystem::path src = item.substr(0, colon);
    std::error_code ec;
    std::filesystem::path abs = src.empty() ? src : std::filesystem::absolute(src, ec);
    if (ec) {
        abs = src;
    }
    return RootBind{
        abs, colon == std::string::npos ? abs : std::filesystem::path(item.substr(colon + 1)),
        read_only};
}

/// `--accelerate none DIR`: the flag takes its list only after '=', so "none" became the root.
/// Said as a usage error when that word names no directory but is a list the flag takes.
void check_detached_list(const RootArgs& a) {
    std::error_code ec;
    if (a.accelerate != "default" || std::filesystem::exists(a.dir, ec) ||
        a.dir.find('/') != std::string::npos || !parse_acceleration(a.dir)) {
        return;
    }
    throw Failure(Error{"--accelerate " + a.dir,
                        "'" + a.dir + "' was taken as the root, not as the flag's list (the list " +
                            "follows an '=')",
                        "write --accelerate=" + a.dir},
                  k_exit_usage);
}

RootSpec make_spec(const RootArgs& a) {
    check_detached_list(a);
    RootSpec spec;
    spec.dir = a.dir;
    spec.arch = arch_or_null(a.arch);
    for (const auto& b : a.binds) {
        spec.binds.push_back(parse_bind(b, false));
    }
    for (const auto& b : a.ro_binds) {
        spec.binds.push_back(parse_bind(b, true));
    }
    if (!a.cwd.empty()) {
        spec.cwd = a.cwd;
    }
    for (const auto& [k, v] : parse_env_assignments(a.env)) {
        spec.env.emplace_back(k, v);
    }
    spec.accelerate = unwrap(parse_acceleration(a.accelerate));
    spec.accelerate.allow_revision_mismatch = a.allow_revision_mismatch;
    spec.diagnostics = log_sink();
    return spec;
}

/// A create's or install's result; interrupted, exit 128 + the signal (130, 143, 129) as `run`.
template <class T> T unwrap_interruptible(Result<T> r) {
    if (!r) {
        const int sig = root_interrupted_by();
        throw Failure(r.error(), sig != 0 ? 128 + sig : k_exit_failure);
    }
    if constexpr (std::is_void_v<T>) {
        return;
    } else {
        return std::move(*r);
    }
}

int run_create(const RootArgs& a) {
    RootCreateSpec spec;
    spec.arch = unwrap(find_arch(a.arch));
    spec.suite = a.suite;
    spec.include = split_list(a.include);
    spec.dir = a.dir;
    if (!a.mirror.empty()) {
        spec.mirror = a.mirror;
    }
    spec.pin_toolchain = a.pin_toolchain;
    spec.diagnostics = log_sink();
    const RootCreated made = unwrap_interruptible(create_root(spec));
    for (const auto& [source, version] : made.pinned) {
        spdlog::warn("the root's {} packages are pinned to {}, the host cross toolchain's "
                     "revision: they lack the fixes of any later revision{}",
                     source, version,
                     source == "gcc-12" && version == "12.2.0-14"
                         ? " (bookworm's 12.2.0-14+deb12u1 fixes CVE-2023-4039: "
                           "-fstack-protector on aarch64)"
                         : "");
    }
    std::cerr << "emurun: created the " << spec.arch->debian << " " << spec.suite << " root "
              << a.dir << (made.from_cache ? " from the cached " : " (cached as ")
              << made.tarball.string() << (made.from_cache ? "" : ")") << "\n";
    if (a.json) {
        nlohmann::json pinned = nlohmann::json::array();
        for (const auto& [source, version] : made.pinned) {
            pinned.push_back({{"source", source}, {"version", version}});
        }
        std::cout << json_text({{"dir", std::filesystem::absolute(a.dir).string()},
                                {"arch", spec.arch->name},
                                {"debian_arch", spec.arch->debian},
                                {"suite", spec.suite},
                                {"tarball", made.tarball.string()},
                                {"from_cache", made.from_cache},
                                {"pinned", pinned}})
                  << '\n';
    }
    return 0;
}

/// "linux/arm64/v8" (or "arm64"): the arch and variant an import takes from an index.
void parse_platform(const std::string& text, RootImportSpec& spec) {
    const OciPlatform p = unwrap(parse_oci_platform(text));
    if (spec.arch != nullptr && spec.arch != p.arch) {
        throw Failure(
            Error{"--platform " + text, "it is not --arch " + spec.arch->name, "give one of them"});
    }
    spec.arch = p.arch;
    spec.variant = p.variant;
}

int run_import(const RootArgs& a) {
    RootImportSpec spec;
    spec.source = a.source;
    spec.dir = a.dir;
    spec.arch = arch_or_null(a.arch);
    if (!a.platform.empty()) {
        parse_platform(a.platform, spec);
    }
    spec.cache = !a.no_cache;
    const RootImported made = unwrap_interruptible(import_root(spec));
    for (const auto& note : made.notes) { // facts the user needs (setuid bits cleared, ...)
        std::cerr << "emurun: " << note << "\n";
    }
    std::cerr << "emurun: " << (made.from_cache ? "copied" : "imported") << " the "
              << made.arch->name << " " << made.image.source_kind << " image " << a.source << " ("
              << made.image.layers.size()
              << (made.image.layers.size() == 1 ? " layer) into " : " layers) into ") << a.dir
              << (made.from_cache ? " from the cache, imported at " + made.image.imported : "")
              << " (" << oci_platform_text(made.image) << ", " << made.image.digest << ")\n";
    if (a.json) {
        std::cout << json_text({{"dir", std::filesystem::absolute(a.dir).string()},
                                {"arch", made.arch->name},
                                {"platform", oci_platform_text(made.image)},
                                {"digest", made.image.digest},
                                {"from_cache", made.from_cache},
                                {"imported", made.image.imported},
                                {"source_kind", made.image.source_kind},
                                {"layers", made.image.layers},
                                {"env", made.image.env},
                                {"working_dir", made.image.working_dir},
                                {"user", made.image.user},
                                {"entrypoint", made.image.entrypoint},
                                {"cmd", made.image.cmd}})
                  << '\n';
    }
    return 0;
}

int run_export(const RootArgs& a) {
    RootExportSpec spec;
    spec.roots.assign(a.roots.begin(), a.roots.end());
    spec.out = a.out;
    spec.format = a.format;
    spec.tag = a.tag;
    const RootExported made = unwrap_interruptible(export_root(spec));
    for (const auto& note : made.notes) { // facts the user needs (setuid bits cleared, ...)
        std::cerr << "emurun: " << note << "\n";
    }
    nlohmann::json platforms = nlohmann::json::array();
    for (const auto& p : made.platforms) {
        const std::string platform =
            "linux/" + p.architecture + (p.variant.empty() ? "" : "/" + p.variant);
        std::cerr << "emurun: exported the " << p.arch->name << " root as " << platform << " ("
                  << p.layer_bytes / 1024 << " KiB layer, manifest " << p.manifest.substr(0, 19)
                  << ")\n";
        platforms.push_back({{"arch", p.arch->name},
                             {"platform", platform},
                             {"manifest", p.manifest},
                             {"layer", p.layer},
                             {"layer_bytes", p.layer_bytes}});
    }
    std::cerr << "emurun: wrote " << a.format << " image " << a.out << "\n";
    if (a.json) {
        std::cout << json_text({{"out", std::filesystem::absolute(a.out).string()},
                                {"format", a.format},
                                {"tag", a.tag},
                                {"platforms", platforms}})
                  << '\n';
    }
    return 0;
}

void add_common(CLI::App* sub, RootArgs& a) {
    sub->add_option("--arch", a.arch, "Expected arch of the root (default: whatever it is)");
    sub->add_option("--env", a.env, "K=V set inside (repeatable)")->allow_extra_args(false);
}

void add_create(CLI::App& parent, Action& action, const std::shared_ptr<RootArgs>& a) {
    auto* sub = parent.add_subcommand("create", "Create a Debian root of a foreign arch, rootless "
                                                "(mmdebstrap in a user namespace; cached)");
    sub->add_option("--arch", a->arch, "aarch64, ppc64le, s390x, ...")->required();
    sub->add_option("--suite", a->suite, "Debian suite")->capture_default_str();
    sub->add_option("--include", a->include, "Extra packages, comma-separated or repeated")
        ->allow_extra_args(false);
    sub->add_option("--mirror", a->mirror, "Debian mirror URL (default: the one apt uses)");
    sub->add_flag("--pin-toolchain", a->pin_toolchain,
                  "Pin the root's gcc and binutils to the revisions the host's cross toolchain "
                  "is built from (so --accelerate serves them; older revisions lack later "
                  "security fixes); fails when the mirror does not have them");
    sub->add_option("dir", a->dir, "The new root's directory")->required();
    sub->add_flag("--json", a->json,
                  "Machine-readable on stdout: {dir, arch, debian_arch, suite, tarball, "
                  "from_cache, pinned: [{source, version}]}");
    sub->callback([&action, a] { action = [a] { return run_create(*a); }; });
}

void add_import(CLI::App& parent, Action& action, const std::shared_ptr<RootArgs>& a) {
    auto* sub = parent.add_subcommand(
        "import", "Import a container image (OCI layout, docker save archive or rootfs "
                  "tarball) as a root, rootless; its Env, WorkingDir and Entrypoint/Cmd kept "
                  "for root run. Each image and platform is imported once into emurun's cache "
                  "(images/, shared with pipeline runs) and copied from there after");
    sub->add_option("--arch", a->arch, "The image's arch to take (and expect): aarch64, ...");
    sub->add_option("--platform", a->platform,
                    "The platform to take from a multi-arch image: linux/arm64, linux/arm/v7, ...");
    sub->add_flag("--no-cache", a->no_cache,
                  "Extract the image's layers even when this image and platform were imported "
                  "before, and keep nothing in the cache of imports");
    sub->add_flag("--json", a->json,
                  "Machine-readable on stdout: {dir, arch, platform, digest, from_cache, "
                  "imported, source_kind, layers, env, working_dir, user, entrypoint, cmd}");
    sub->add_option("source", a->source,
                    "An OCI image layout directory, a 'docker save' archive or a rootfs tarball")
        ->required();
    sub->add_option("dir", a->dir, "The new root's directory (absent or empty)")->required();
    sub->footer("Example: skopeo copy docker://debian:bookworm oci:img:bookworm && "
                "emurun root import --platform linux/arm64 img roots/arm64");
    sub->callback([&action, a] { action = [a] { return run_import(*a); }; });
}

void add_export(CLI::App& parent, Action& action, const std::shared_ptr<RootArgs>& a) {
    auto* sub = parent.add_subcommand(
        "export", "Export roots (created or imported) as one container image, a platform per "
                  "root: an OCI layout, an OCI archive or a docker archive");
    sub->add_option("--format", a->format,
                    "oci (a layout directory), oci-archive (a tarball of one) or docker-archive "
                    "(for docker/podman load; one root)")
        ->check(CLI::IsMember({"oci", "oci-archive", "docker-archive"}))
        ->capture_default_str();
    sub->add_option("--tag", a->tag, "The image's name and tag (TAG default: latest)");
    sub->add_flag("--json", a->json,
                  "Machine-readable on stdout: {out, format, tag, platforms: [{arch, platform, "
                  "manifest, layer, layer_bytes}]}");
    sub->add_option("out", a->out, "The image to write (must not exist)")->required();
    sub->add_option("roots", a->roots, "The roots, one per arch")->required();
    sub->footer("Example: emurun root export --tag myimg:1.0 img roots/arm64 roots/ppc64le && "
                "skopeo copy oci:img:1.0 docker://registry.example/myimg:1.0 --all");
    sub->callback([&action, a] { action = [a] { return run_export(*a); }; });
}

void add_install(CLI::App& parent, Action& action, const std::shared_ptr<RootArgs>& a) {
    auto* sub = parent.add_subcommand("install", "apt-get install packages inside a root");
    add_common(sub, *a);
    sub->add_option("dir", a->dir, "The root")->required();
    sub->add_option("packages", a->rest, "PKG...")->required();
    sub->callback([&action, a] {
        action = [a] {
            unwrap_interruptible(install_in_root(make_spec(*a), a->rest));
            return 0;
        };
    });
}

void add_run_cmd(CLI::App& parent, Action& action, const std::shared_ptr<RootArgs>& a) {
    auto* sub = parent.add_subcommand("run", "Run CMD inside a root (target arch everywhere; "
                                             "compilers optionally accelerated)");
    add_common(sub, *a);
    sub->add_option("--bind", a->binds, "SRC[:DST] bound read-write (repeatable)")
        ->allow_extra_args(false);
    sub->add_option("--ro-bind", a->ro_binds, "SRC[:DST] bound read-only (repeatable)")
        ->allow_extra_args(false);
    sub->add_option("--cwd", a->cwd,
                    "Working directory inside (default: an imported image's WorkingDir, else /)");
    sub->add_flag("--accelerate{default}", a->accelerate,
                  "Run the root's compilers and binutils as the host's cross toolchain and "
                  "its arch-neutral tools (sh, sed, grep, m4, coreutils, ...) as the host's "
                  "programs, each where the identity rule allows: --accelerate "
                  "(toolchain,shell), --accelerate=gcc,g++,ld,ar,nm,ranlib (compilers and "
                  "binutils only together), --accelerate=none; opt-in: "
                  "--accelerate=toolchain,shell,make,cmake,awk,gawk");
    sub->add_flag("--allow-revision-mismatch", a->allow_revision_mismatch,
                  "Accelerate a compiler, binutils or native tool even when the host's package "
                  "was built from another Debian revision of the source than the root's (its "
                  "code may differ; said on stderr); only with --accelerate");
    sub->add_option("dir", a->dir, "The root")->required();
    sub->add_option("command", a->rest, "CMD ARGS... (after --)");
    sub->positionals_at_end();
    sub->footer("Example: emurun root run --accelerate --bind $PWD:/src --cwd /src ROOT -- make\n"
                "Exit status: CMD's (128+N if a signal N killed it); 125 if the root could not "
                "be entered, 127 if CMD was not found.");
    sub->callback([&action, a] {
        action = [a] {
            auto cmd = a->rest;
            if (!cmd.empty() && cmd.front() == "--") { // CLI11 keeps it in a nested subcommand
                cmd.erase(cmd.begin());
            }
            RootSpec spec = make_spec(*a);
            unwrap(apply_root_image(spec, cmd)); // an imported root's Env, WorkingDir, Cmd
            if (cmd.empty()) {
                throw Failure(Error{"emurun root run", "no command given",
                                    "emurun root run DIR -- CMD ARGS"});
            }
            if (spec.accelerate.allow_revision_mismatch &&
                spec.accelerate.mode == Acceleration::Mode::none) {
                spdlog::warn("--allow-revision-mismatch without --accelerate allows nothing: "
                             "every tool runs emulated (ignored)");
            }
            // A tool kept emulated, or accelerated despite a differing source: said always.
            for (const auto& m : unwrap(plan_root(spec)).mismatches) {
                spdlog::warn("{}", m.text(flag_spelling));
            }
            return unwrap(exec_in_root(spec, cmd)).shell_code();
        };
    });
}

} // namespace

void add_root(CLI::App& root, Action& action) {
    auto args = std::make_shared<RootArgs>();
    auto* sub = root.add_subcommand("root", "Foreign-arch Debian roots: create, install, run "
                                            "(accelerated: native cross compilers)");
    sub->require_subcommand(1);
    add_create(*sub, action, args);
    add_import(*sub, action, args);
    add_export(*sub, action, args);
    add_install(*sub, action, args);
    add_run_cmd(*sub, action, args);
}

} // namespace emurun::cli
