#include "cli.hpp"
#include "cli_common.hpp"

#include <emurun/launch.hpp>
#include <emurun/process.hpp>

#include <spdlog/spdlog.h>

namespace emurun::cli {
namespace {

struct ExecArgs {
    std::string arch;
    std::vector<std::string> sysroots;
    std::string cpu;
    std::vector<std::string> env;
    std::string argv0;
    std::vector<std::string> qemu_dirs;
    std::vector<std::string> command;
    std::vector<std::string> words; ///< argv after `exec` when exec is argv[1], else empty
};

/// Plans the launch (emulator, libraries, merged loader prefix: every check and every file it
/// needs happen here), then becomes the program: qemu or the native program replaces emurun, so
/// its exit code and fatal signal reach the caller untouched and no second process starts.
int run_exec(const ExecArgs& a) {
    LaunchRequest req;
    req.program = a.command.front();
    req.args.assign(a.command.begin() + 1, a.command.end());
    if (!a.argv0.empty()) {
        req.argv0 = a.argv0;
    }
    if (!a.arch.empty()) {
        req.arch = unwrap(find_arch(a.arch));
    }
    req.sysroots = to_paths(a.sysroots);
    if (!a.cpu.empty()) {
        req.cpu = a.cpu;
    }
    req.env = parse_env_assignments(a.env);
    req.emulators.dirs = to_paths(a.qemu_dirs);
    const auto record = take_record_request();
    LaunchPlan plan = unwrap(plan_launch(req));
    spdlog::debug("exec {} [mode: {}] [arch: {}]", plan.program.string(), to_string(plan.mode),
                  plan.arch ? plan.arch->name : "-");
    for (const auto& n : plan.notes) {
        spdlog::debug("{}", n);
    }
    // The launcher found no valid record for this request: leave one for the next run. A
    // record that cannot be written costs only speed.
    if (record && launcher_reads_alike(a.words, a.command)) {
        auto saved = save_exec_record(plan, *record);
        spdlog::debug("launch record {}: {}", record->string(),
                      !saved   ? saved.error().message()
                      : *saved ? "written"
                               : "not for this plan");
    }
    throw Failure(exec_replace(launch_command(plan, current_environment())).error);
}

} // namespace

void add_exec(CLI::App& root, Action& action, int argc, char** argv) {
    auto args = std::make_shared<ExecArgs>();
    if (argc > 1 && std::string_view(argv[1]) == "exec") {
        args->words.assign(argv + 2, argv + argc);
    }
    auto* sub = root.add_subcommand(
        "exec", "Run one program: a foreign ELF under qemu (arch from its header), a native one "
                "directly. A #! script runs natively; foreign programs it starts need "
                "'emurun sandbox' or registered binfmt handlers.");
    sub->add_option("--arch", args->arch, "Expected architecture (default: from the ELF header)");
    sub->add_option("--sysroot", args->sysroots,
                    "Directory holding the target's loader and libraries (repeatable; default: "
                    "/usr/<triplet> and Debian multiarch dirs)");
    sub->add_option("--cpu", args->cpu, "CPU model for qemu (-cpu)");
    sub->add_option("--env", args->env, "Set K=V for the program (repeatable)");
    sub->add_option("--argv0", args->argv0, "argv[0] the program sees (default: PROGRAM as given)");
    sub->add_option("--qemu-dir", args->qemu_dirs,
                    "Search this directory for qemu-<cpu>[-static] first (repeatable)");
    sub->add_option("command", args->command, "PROGRAM and its arguments")->required();
    sub->positionals_at_end();
    sub->callback([args, &action] { action = [args] { return run_exec(*args); }; });
}

} // namespace emurun::cli
