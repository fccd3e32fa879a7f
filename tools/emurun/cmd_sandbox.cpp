#include "cli.hpp"
#include "cli_common.hpp"
#include "cli_output.hpp"

#include <emurun/sandbox.hpp>

#include <memory>

namespace emurun::cli {
namespace {

struct SandboxArgs {
    std::vector<std::string> arches;
    std::vector<std::string> sysroots;
    std::string cpu;
    std::vector<std::string> env;
    std::vector<std::string> qemu_dirs;
    std::vector<std::string> command;
};

/// "DIR" or "ARCH=DIR" (an arch name never contains '/', a path here always does or is bare).
SandboxSysroot parse_sysroot(const std::string& item) {
    const auto eq = item.find('=');
    if (eq != std::string::npos && item.find('/') > eq) {
        return SandboxSysroot{unwrap(find_arch(item.substr(0, eq))), item.substr(eq + 1)};
    }
    return SandboxSysroot{nullptr, item};
}

SandboxSpec make_spec(const SandboxArgs& a) {
    SandboxSpec spec;
    for (const auto& name : split_list(a.arches)) {
        spec.arches.push_back(unwrap(find_arch(name))); // an unknown arch is bad input: 125
    }
    for (const auto& s : a.sysroots) {
        spec.sysroots.push_back(parse_sysroot(s));
    }
    for (const auto& [k, v] : parse_env_assignments(a.env)) {
        spec.env.emplace_back(k, v);
    }
    spec.emulators.dirs = to_paths(a.qemu_dirs);
    if (!a.cpu.empty()) {
        spec.cpu = a.cpu;
    }
    return spec;
}

} // namespace

void add_sandbox(CLI::App& root, Action& action) {
    auto args = std::make_shared<SandboxArgs>();
    auto* sub = root.add_subcommand(
        "sandbox", "Run CMD where foreign binaries run transparently, in a private binfmt_misc "
                   "(user namespace, Linux >= 6.7; no root, nothing changes on the host)");
    sub->add_option("--arch", args->arches, "Arches to register, comma-separated or repeated")
        ->required();
    sub->add_option("--sysroot", args->sysroots,
                    "Sysroot for dynamic binaries: DIR (arch detected from its libc) or ARCH=DIR; "
                    "default /usr/<triplet>");
    sub->add_option("--env", args->env, "K=V set inside the sandbox (repeatable)");
    sub->add_option("--qemu-dir", args->qemu_dirs, "Look for qemu-<arch>[-static] here first");
    sub->add_option("--cpu", args->cpu, "CPU model QEMU emulates (QEMU_CPU); one --arch only");
    sub->add_option("command", args->command, "CMD ARGS... (after --)")->required();
    sub->positionals_at_end();
    sub->footer("Example: emurun sandbox --arch aarch64,s390x -- make check\n"
                "Exit status: CMD's (128+N if a signal N killed it); 125 if the sandbox could "
                "not be set up, 127/126 if CMD was not found/not executable.");
    sub->callback([&action, args] {
        action = [args] {
            SandboxSpec spec = make_spec(*args);
            spec.diagnostics = log_sink();
            const auto mode = choose_auto_mode(spec.arches);
            SandboxFailure f = mode && *mode == AutoMode::host
                                   ? exec_through_host_handlers(spec, args->command)
                                   : exec_in_sandbox(spec, args->command);
            throw Failure(f.error, f.exit_code);
            return 0;
        };
    });
}

} // namespace emurun::cli
