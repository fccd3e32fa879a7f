// How one step becomes a Command, by emulation mode (native/host, exec via launch, sandbox,
// auto resolved to sandbox or host).
#include "runner/runner_internal.hpp"

#include <emurun/arch.hpp>
#include <emurun/launch.hpp>
#include <emurun/root.hpp>
#include <emurun/sandbox.hpp>
#include <emurun/shim.hpp>

#include <fmt/format.h>

#include <cctype>

namespace emurun::detail {
namespace {

// The variables that tell a step's programs how they run, so that a test harness can scale its
// own per-test timeouts (docs/guides/pipelines.md "What a step sees"). Set on every step, so
// that a value inherited from an outer emurun never describes this one; the step's env wins.
void add_emurun_variables(const Step& step, double timeout_factor,
                          std::map<std::string, std::string>& env) {
    const Arch* host = host_arch();
    env["EMURUN_ARCH"] = step.arch ? *step.arch : host ? std::string(host->name) : "";
    env["EMURUN_EMULATED"] =
        std::string(1, step.emulated() ? '1' : '0'); // not a char*: GCC 12's -Wrestrict misfires
    env["EMURUN_TIMEOUT_MULTIPLIER"] = fmt::format("{}", step.emulated() ? timeout_factor : 1.0);
}

std::map<std::string, std::string> step_environment(const Step& step, double timeout_factor) {
    auto env = current_environment();
    add_emurun_variables(step, timeout_factor, env);
    for (const auto& [k, v] : step.env) {
        env[k] = v;
    }
    // exec mode passes -cpu; elsewhere the qemu a binfmt handler starts reads QEMU_CPU.
    if (step.cpu && step.emulated() && step.emulation != Emulation::exec) {
        env["QEMU_CPU"] = *step.cpu;
    }
    // Shims come first so that a build finds the target-arch tools before host ones; the
    // first shim dir listed is searched first.
    for (auto it = step.shim_dirs.rbegin(); it != step.shim_dirs.rend(); ++it) {
        env = shim_environment(*it, std::move(env));
    }
    return env;
}

Result<Command> exec_command(const Step& step, const Arch* arch, const EmulatorSearch& emulators,
                             Command cmd) {
    LaunchRequest request;
    request.program = step.argv.front();
    request.args.assign(step.argv.begin() + 1, step.argv.end());
    request.arch = arch;
    request.sysroots = step.sysroots;
    request.emulators = emulators;
    request.cpu = step.cpu;
    const auto plan = EMURUN_TRY(plan_launch(request));
    Command launched = launch_command(plan, std::move(*cmd.env));
    launched.cwd = std::move(cmd.cwd);
    return launched;
}

Result<Command> sandbox_command(const Step& step, const Arch* arch, const EmulatorSearch& emulators,
                                Command cmd) {
    SandboxSpec spec;
    spec.arches = {arch};
    for (const auto& dir : step.sysroots) {
        spec.sysroots.push_back(SandboxSysroot{arch, dir});
    }
    spec.emulators = emulators;
    auto argv = EMURUN_TRY(sandbox_argv(spec, step.argv));
    cmd.argv = argv;
    return cmd;
}

// The environment a step that runs through the host's handlers needs (auto's fallback): what
// the sandbox would set, QEMU_LD_PREFIX for the step's sysroots or their defaults. The step's
// own env wins.
Result<void> add_host_handlers_env(const Step& step, const Arch* arch,
                                   std::map<std::string, std::string>& env) {
    SandboxSpec spec;
    spec.arches = {arch};
    for (const auto& dir : step.sysroots) {
        spec.sysroots.push_back(SandboxSysroot{arch, dir});
    }
    const auto plan = EMURUN_TRY(plan_host_handlers(spec));
    for (const auto& [k, v] : plan.env) {
        if (!step.env.contains(k)) {
            env[k] = v;
        }
    }
    return {};
}

// resolve_auto_emulation() could not decide: decide again, failing with the reason.
Result<Command> undecided_auto_command(const Step& step, const Arch* arch,
                                       const EmulatorSearch& emulators, Command cmd) {
    const auto mode = EMURUN_TRY(choose_auto_mode({arch}));
    if (mode == AutoMode::sandbox) {
        return sandbox_command(step, arch, emulators, std::move(cmd));
    }
    EMURUN_TRY(add_host_handlers_env(step, arch, *cmd.env));
    return cmd;
}

/// `emurun root run` of the step inside its root: the step's cwd bound at the same path and
/// used as the cwd; only emurun's variables and the step's own env (the root's environment is
/// clean). Planned here, so that a root that cannot be entered fails the step with the reason.
/// The root plan's mismatches as the report records them.
std::vector<ToolchainMismatch> report_mismatches(const std::vector<ToolMismatch>& list) {
    std::vector<ToolchainMismatch> out;
    for (const auto& m : list) {
        const auto& id = m.identity;
        const auto source = [](const ToolSource& s) {
            return s.source.empty() ? std::string{} : s.source + " " + s.version;
        };
        const std::optional<std::string> probe =
            !m.probe ? std::nullopt
                     : std::optional<std::string>(m.probe->identical ? "identical" : m.probe->why);
        out.push_back(ToolchainMismatch{id.tool, id.root.package, source(id.root), id.host.package,
                                        source(id.host), m.accelerated, m.text(), probe});
    }
    return out;
}

Result<Command> root_command(const Step& step, const Arch* arch, const EmulatorSearch& emulators,
                             double timeout_factor, Command cmd, RootOutcome* outcome) {
    auto exe = find_emurun_exe(SandboxSpec{});
    if (!exe) {
        return std::unexpected(exe.error());
    }
    RootSpec spec;
    spec.dir = step.root.value_or("");
    spec.arch = arch;
    if (step.qemu) { // the root's own static-first search, narrowed to the step's choice
        spec.emulators = emulators;
    }
    spec.binds.push_back(RootBind{step.cwd, step.cwd, false});
    spec.cwd = step.cwd;
    std::map<std::string, std::string> env;
    add_emurun_variables(step, timeout_factor, env);
    for (const auto& [k, v] : step.env) {
        env[k] = v;
    }
    spec.env.assign(env.begin(), env.end());
    if (step.accelerate) {
        spec.accelerate = EMURUN_TRY(parse_acceleration(step.accelerate_tools));
        spec.accelerate.allow_revision_mismatch = step.allow_revision_mismatch;
    }
    auto plan = plan_root(spec);
    if (!plan) {
        return std::unexpected(plan.error());
    }
    if (outcome != nullptr) {
        *outcome = RootOutcome{plan->accelerated, report_mismatches(plan->mismatches)};
    }
    std::vector<std::string> argv = step.argv;
    EMURUN_TRY(apply_root_image(spec, argv)); // an imported root's Env before the step's own
    cmd.argv = EMURUN_TRY(root_argv(*exe, spec, argv));
    cmd.cwd.reset();
    return cmd;
}

} // namespace

Result<Command> step_command(const Step& step, const EmulatorSearch& run_emulators,
                             double timeout_factor, RootOutcome* root) {
    const EmulatorSearch emulators = EMURUN_TRY(step_search(step, run_emulators));
    Command cmd;
    cmd.argv = step.argv;
    cmd.env = step_environment(step, timeout_factor);
    cmd.cwd = step.cwd;
    const Arch* arch = nullptr;
    if (step.arch) {
        auto found = EMURUN_TRY(find_arch(*step.arch));
        arch = found;
    }
    switch (step.emulation) {
    case Emulation::exec:
        return exec_command(step, arch, emulators, std::move(cmd));
    case Emulation::sandbox:
        return sandbox_command(step, arch, emulators, std::move(cmd));
    case Emulation::automatic:
        return undecided_auto_command(step, arch, emulators, std::move(cmd));
    case Emulation::root:
        return root_command(step, arch, emulators, timeout_factor, std::move(cmd), root);
    case Emulation::native:
    case Emulation::host:
        break;
    }
    return cmd;
}

void resolve_auto_emulation(Pipeline& pipeline, const DiagnosticSink& diagnostics) {
    for (auto& step : pipeline.steps) {
        if (step.emulation != Emulation::automatic || !step.arch) {
            continue;
        }
        auto arch = find_arch(*step.arch);
        if (!arch) {
            continue; // step_command() reports the unknown arch
        }
        auto mode = choose_auto_mode({*arch});
        const std::string what = "step \"" + step.name + "\": emulation auto ";
        if (mode && *mode == AutoMode::sandbox) {
            step.emulation = Emulation::sandbox;
            emit(diagnostics, Severity::debug, what + "runs in a sandbox (a private binfmt_misc)");
        } else if (mode && add_host_handlers_env(step, *arch, step.env)) {
            step.emulation = Emulation::host;
            emit(diagnostics, Severity::warning,
                 what + "runs through the host's binfmt_misc handlers: no sandbox can be set up "
                        "here (a private binfmt_misc needs Linux >= 6.7 and user namespaces)");
        }
    }
}

} // namespace emurun::detail

namespace emurun {

namespace {

/// An image root's "#PLATFORM": a Linux platform, of the step's arch when it has one.
Result<void> check_root_platform(const Step& step) {
    const std::string what =
        "step \"" + step.name + "\": root " + step.root->string() + "#" + *step.root_platform;
    auto p = parse_oci_platform(*step.root_platform);
    if (!p) {
        Error e = p.error();
        e.what = what + ": " + e.what;
        return std::unexpected(std::move(e));
    }
    const auto arch = step.arch ? find_arch(*step.arch) : Result<const Arch*>(nullptr);
    if (arch && *arch != nullptr && *arch != p->arch) {
        return fail(ErrorKind::bad_input, what,
                    "the platform is " + p->arch->name + ", the step's arch " + (*arch)->name,
                    "name the step's own platform (#" + (*arch)->name + "), or leave its arch out");
    }
    return {};
}

} // namespace

Result<void> check_root_steps(const Pipeline& pipeline) {
    for (const auto& step : pipeline.steps) {
        if (step.root_platform) {
            EMURUN_TRY(check_root_platform(step));
        }
        if (!step.accelerate) { // an allowance from the defaults has nothing to allow here
            continue;
        }
        const std::string what = "step \"" + step.name + "\": accelerate \"" +
                                 (step.accelerate_tools.empty() ? "true" : step.accelerate_tools) +
                                 "\"";
        auto acc = parse_acceleration(step.accelerate_tools);
        if (!acc) {
            return std::unexpected(Error{what, acc.error().why, acc.error().hint});
        }
        acc->allow_revision_mismatch = step.allow_revision_mismatch;
        if (auto checked = check_acceleration(*acc); !checked) {
            return std::unexpected(Error{what, checked.error().why, checked.error().hint});
        }
    }
    return {};
}

} // namespace emurun
