#include "cli.hpp"
#include "cli_common.hpp"

#include <emurun/shim.hpp>

#include <iostream>

namespace emurun::cli {
namespace {

struct ShimArgs {
    std::string name;
    std::string target;
    std::string arch;
    std::vector<std::string> sysroots;
    std::vector<std::string> env;
    std::string cpu;
    std::string dir;
    std::string launcher;
    bool json = false;
};

int shim_add(const ShimArgs& a) {
    ShimSpec spec;
    spec.name = a.name;
    spec.target = a.target;
    if (!a.arch.empty()) {
        spec.arch = unwrap(find_arch(a.arch));
    }
    spec.sysroots = to_paths(a.sysroots);
    spec.env = parse_env_assignments(a.env);
    if (!a.cpu.empty()) {
        spec.cpu = a.cpu;
    }
    std::optional<std::filesystem::path> hint;
    if (!a.launcher.empty()) {
        hint = a.launcher;
    }
    const auto launcher = unwrap(find_launcher(hint));
    const ShimInfo shim = unwrap(add_shim(a.dir, spec, launcher));
    std::cout << shim.path.string() << '\n';
    return 0;
}

int shim_list(const ShimArgs& a) {
    const auto shims = unwrap(list_shims(a.dir));
    if (a.json) {
        std::cout << shim_list_json(shims) << '\n';
        return 0;
    }
    for (const auto& s : shims) {
        std::cout << s.name << " -> " << s.target.string() << " [" << s.arch
                  << (s.native ? ", native" : "")
                  << (s.ld_prefix ? ", sysroot " + s.ld_prefix->string() : std::string()) << "]\n";
    }
    return 0;
}

} // namespace

void add_shim(CLI::App& root, Action& action) {
    auto a = std::make_shared<ShimArgs>();
    auto* sub = root.add_subcommand(
        "shim", "Transparent launchers: SHIMDIR/NAME runs a foreign tool under qemu by execve "
                "(same pid, argv[0], env, stdio, exit code and signals as if native)");
    sub->require_subcommand(1);
    auto* add = sub->add_subcommand("add", "Create or replace shim NAME for the program TARGET");
    add->add_option("name", a->name, "Shim name, the command a build runs (e.g. protoc)")
        ->required();
    add->add_option("--target", a->target, "The foreign program")->required();
    add->add_option("--arch", a->arch, "Expected architecture (checked against the ELF)");
    add->add_option("--sysroot", a->sysroots,
                    "Directory with the target's loader and libraries (repeatable)");
    add->add_option("--env", a->env, "Set K=V whenever the shim runs (repeatable)");
    add->add_option("--cpu", a->cpu, "CPU model for qemu (-cpu)");
    add->add_option("--launcher", a->launcher,
                    "Shim launcher to link (default: emurun-shim beside emurun, else in "
                    "../libexec/emurun)");
    add->add_option("--dir", a->dir, "Shim directory (created if missing)")->required();
    add->callback([a, &action] { action = [a] { return shim_add(*a); }; });
    auto* list = sub->add_subcommand("list", "List the shims in a directory");
    list->add_option("--dir", a->dir, "Shim directory")->required();
    list->add_flag("--json", a->json, "Machine-readable output");
    list->callback([a, &action] { action = [a] { return shim_list(*a); }; });
    auto* rm = sub->add_subcommand("remove", "Remove shim NAME");
    rm->add_option("name", a->name, "Shim name")->required();
    rm->add_option("--dir", a->dir, "Shim directory")->required();
    rm->callback([a, &action] {
        action = [a] {
            unwrap(remove_shim(a->dir, a->name));
            return 0;
        };
    });
}

} // namespace emurun::cli
