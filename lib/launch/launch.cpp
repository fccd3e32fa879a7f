#include "launch/launch_versions.hpp"
#include "util/file.hpp"
#include "util/path.hpp"

#include <emurun/elf.hpp>
#include <emurun/launch.hpp>

#include <algorithm>
#include <cerrno>
#include <sys/stat.h>
#include <unistd.h>

namespace emurun {
namespace fs = std::filesystem;

namespace {

Result<void> check_runnable(const fs::path& p) {
    struct stat st {};
    if (::stat(p.c_str(), &st) != 0) {
        return std::unexpected(system_error("stat " + p.string(), errno, "check the path"));
    }
    if (S_ISDIR(st.st_mode)) {
        return fail(p.string(), "is a directory", "name a program file");
    }
    if (::access(p.c_str(), X_OK) != 0) {
        const std::string head = util::read_head(p, 4);
        if (!head.starts_with("\x7f"
                              "ELF") &&
            !head.starts_with("#!")) {
            return fail(p.string(), "not a program: neither an ELF executable nor a #! script",
                        "name a compiled program (a source file is compiled first, e.g. with "
                        "aarch64-linux-gnu-gcc)");
        }
        return fail(p.string(), "not executable", "chmod +x " + p.string());
    }
    return {};
}

LaunchPlan native_plan(const LaunchRequest& req, const fs::path& program, const Arch* arch) {
    LaunchPlan plan;
    plan.mode = Emulation::native;
    plan.arch = arch;
    plan.program = program;
    plan.exe = program;
    plan.argv.push_back(req.argv0.value_or(req.program.string()));
    plan.args_at = plan.argv.size();
    plan.argv.insert(plan.argv.end(), req.args.begin(), req.args.end());
    plan.env_set = req.env;
    return plan;
}

/// The sysroots the link map actually used: each the interpreter or a library was found in,
/// in the order of first use.
std::vector<fs::path> used_sysroots(const LinkMap& map) {
    std::vector<fs::path> used;
    auto note = [&](const LibraryLookup& l) {
        if (l.sysroot && std::ranges::find(used, *l.sysroot) == used.end()) {
            used.push_back(*l.sysroot);
        }
    };
    if (map.interpreter) {
        note(*map.interpreter);
    }
    for (const auto& l : map.libraries) {
        note(l);
    }
    return used;
}

Result<void> add_library_env(LaunchPlan& plan, const LaunchRequest& req, const ElfInfo& elf) {
    const Arch& arch = *elf.arch;
    auto sysroots = req.sysroots.empty() ? default_sysroots(arch) : req.sysroots;
    LinkMap map = resolve_libraries(plan.program, elf, sysroots);
    if (!map.complete()) {
        return std::unexpected(map.missing_error(plan.program));
    }
    plan.inputs = link_map_inputs(map, arch);
    auto used = used_sysroots(map);
    if (used.empty()) {
        return {};
    }
    auto prefix = EMURUN_TRY(make_ld_prefix({ArchSysroots{&arch, used}}, cache_dir()));
    plan.inputs.push_back(prefix);
    plan.ld_prefix = prefix;
    plan.env_set["QEMU_LD_PREFIX"] = prefix.string();
    plan.notes.push_back("QEMU_LD_PREFIX=" + prefix.string());
    return {};
}

/// Key the plan on what its two searches passed over before their answers: the emulator's
/// (emulator_inputs) and, for a program named without a '/', PATH's. The search lists
/// themselves are the caller's to key (the launcher hashes PATH and EMURUN_QEMU_DIR).
void add_search_inputs(LaunchPlan& plan, const LaunchRequest& req) {
    auto passed = emulator_inputs(*plan.emulator, req.emulators);
    const std::string name = req.program.string();
    if (name.find('/') == std::string::npos) {
        auto more = util::search_inputs(util::executable_candidates(name, util::path_variable()),
                                        plan.program);
        passed.insert(passed.end(), more.begin(), more.end());
    }
    for (auto& p : passed) {
        if (std::ranges::find(plan.inputs, p) == plan.inputs.end()) {
            plan.inputs.push_back(std::move(p));
        }
    }
}

Result<LaunchPlan> emulated_plan(const LaunchRequest& req, const fs::path& program,
                                 const ElfInfo& elf) {
    EMURUN_TRY(check_sysroot_dirs(req.sysroots));
    LaunchPlan plan = native_plan(req, program, elf.arch);
    plan.mode = Emulation::exec;
    if (!elf.is_static()) {
        EMURUN_TRY(add_library_env(plan, req, elf));
    }
    auto emu = EMURUN_TRY(find_emulator(*elf.arch, req.emulators));
    plan.emulator = emu;
    plan.exe = emu.path;
    QemuOptions opts{req.cpu, plan.argv[0]};
    plan.argv = qemu_command(emu, program, req.args, opts);
    plan.args_at = plan.argv.size() - req.args.size();
    plan.inputs.insert(plan.inputs.begin(), {program, emu.path});
    add_search_inputs(plan, req);
    plan.notes.push_back(std::string("emulator ") + emu.path.string() +
                         (emu.is_static ? " (static)" : " (dynamic)"));
    return plan;
}

} // namespace

Command launch_command(const LaunchPlan& plan, std::map<std::string, std::string> env) {
    for (const auto& [k, v] : plan.env_set) {
        env[k] = v;
    }
    Command cmd;
    cmd.argv = plan.argv;
    cmd.program = plan.exe;
    cmd.env = std::move(env);
    return cmd;
}

namespace {

Result<LaunchPlan> plan_current(const LaunchRequest& req) {
    if (req.program.empty()) {
        return fail("run \"\"", "the program name is empty", "give the program to run");
    }
    const auto program = util::find_executable(req.program.string());
    if (!program) {
        return fail(req.program.string(), "not found in PATH", "give the program's path");
    }
    EMURUN_TRY(check_runnable(*program));
    if (util::read_head(*program, 2) == "#!") {
        auto plan = native_plan(req, *program, nullptr);
        plan.notes.push_back("#! script: runs natively; foreign programs it starts need "
                             "'emurun sandbox' or registered binfmt handlers");
        return plan;
    }
    auto elf = read_elf(*program);
    if (!elf) {
        // Keep the reader's kind: not_elf, or not_found / permission / io for the file itself.
        return fail(elf.error().kind, "cannot run " + program->string(), elf.error().why,
                    "emurun runs ELF programs and #! scripts");
    }
    if (elf->arch == nullptr) { // an arch emurun does not know has no QEMU it could use
        return fail(ErrorKind::no_emulator, "cannot run " + program->string(),
                    "ELF machine " + std::to_string(elf->machine) + " (" +
                        std::string(elf->endianness()) + "-endian, " +
                        (elf->elf_class == 2 ? "64" : "32") + "-bit) is not in emurun's table",
                    "see 'emurun inspect " + program->string() + "'");
    }
    if (req.arch != nullptr && req.arch != elf->arch) {
        return fail(ErrorKind::bad_input,
                    "cannot run " + program->string() + " as " + req.arch->name,
                    "the file is a program for " + elf->arch->name,
                    "ask for no arch, or for " + elf->arch->name, "arch");
    }
    if (runs_natively(*elf->arch)) {
        return native_plan(req, *program, elf->arch);
    }
    return emulated_plan(req, *program, *elf);
}

} // namespace

Result<LaunchPlan> plan_launch(const LaunchRequest& given) {
    std::optional<LaunchRequest> upgraded;
    const LaunchRequest* ours = EMURUN_TRY(util::caller_form(given, upgraded));
    return plan_current(*ours);
}

} // namespace emurun
