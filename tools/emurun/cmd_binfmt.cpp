// emurun binfmt status|register|unregister|enable|disable|verify|export|import
#include "cli.hpp"
#include "cli_common.hpp"

#include <emurun/binfmt.hpp>
#include <emurun/binfmt_files.hpp>
#include <emurun/qemu.hpp>

#include <spdlog/spdlog.h>

#include <algorithm>
#include <iostream>
#include <iterator>

namespace emurun::cli {
namespace {

struct BinfmtArgs {
    std::string mount{k_binfmt_default_mount};
    std::string lock_file;
    std::vector<std::string> targets; // arches (or entry names), or files for import
    std::string interpreter;
    std::string flags; // empty: default_binfmt_flags() of each interpreter
    std::string probe_dir;
    std::string binfmt_d;
    std::string update_binfmts;
    bool allow_credentials = false;
    bool allow_open_binary = false;
    bool dry_run = false;
    bool replace = false;
    bool json = false;
};

BinfmtOptions options_from(const BinfmtArgs& a) {
    BinfmtOptions o;
    o.mount = a.mount;
    if (!a.lock_file.empty()) {
        o.lock_file = a.lock_file;
    }
    o.dry_run = a.dry_run;
    o.replace = a.replace;
    o.allow_credentials = a.allow_credentials;
    o.allow_open_binary = a.allow_open_binary;
    return o;
}

// Through the logger, so that -q silences them like every other warning.
void warn(const std::vector<std::string>& warnings) {
    for (const auto& w : warnings) {
        spdlog::warn("{}", w);
    }
}

std::vector<const Arch*> resolve_arches(const std::vector<std::string>& names) {
    return unwrap(select_arches(split_list(names)));
}

// Entry names: an arch (or alias) means its "qemu-<cpu>" entry; anything else is a literal name.
std::vector<std::string> entry_names(const std::vector<std::string>& targets) {
    std::vector<std::string> out;
    for (const auto& t : split_list(targets)) {
        auto arch = find_arch(t);
        out.push_back(arch ? "qemu-" + (*arch)->qemu : t);
    }
    return out;
}

// C and O need their opt-in (the library refuses them too); here it is a usage error.
BinfmtFlags parse_flags(const BinfmtArgs& a) {
    BinfmtFlags f = unwrap(BinfmtFlags::parse(a.flags));
    if (auto missing = missing_binfmt_opt_in(f, options_from(a))) {
        const bool c = *missing == BinfmtOptIn::credentials;
        throw Failure(Error{"--flags " + a.flags, std::string(opt_in_reason(*missing)),
                            c ? "add --allow-credentials if that is really wanted"
                              : "add --allow-open-binary if that is really wanted"},
                      k_exit_usage);
    }
    return f;
}

int run_status(const BinfmtArgs& a) {
    auto o = options_from(a);
    o.mount_if_missing = false;
    unwrap(ensure_binfmt_mount(o));
    BinfmtTable t = unwrap(read_binfmt_table(o.mount));
    if (a.json) {
        std::cout << binfmt_status_json(a.mount, t) << '\n';
        return 0;
    }
    std::cout << "binfmt_misc at " << a.mount << ": " << (t.enabled ? "enabled" : "disabled")
              << ", " << t.entries.size() << " entries\n";
    for (const auto& e : t.entries) {
        const Arch* arch = binfmt_entry_arch(e);
        std::cout << "  " << e.name << "  " << (e.enabled ? "enabled" : "disabled") << "  "
                  << (arch ? "arch " + arch->name : std::string("other")) << "  " << e.interpreter
                  << "  flags '" << e.flags.to_string() << "'\n";
    }
    return 0;
}

int report_apply(const BinfmtApplyResult& r, const BinfmtArgs& a) {
    warn(r.warnings);
    if (a.json) {
        std::cout << binfmt_apply_json(r) << '\n';
    } else {
        std::cout << (a.dry_run ? "plan (dry run, nothing changed):\n" : "") << r.plan.describe();
    }
    if (a.dry_run && r.plan.has_conflict()) {
        std::cerr << "emurun: error: a conflicting entry exists (see 'conflict' above); "
                     "use --replace or unregister it\n";
        return k_exit_failure;
    }
    return 0;
}

int run_register(const BinfmtArgs& a) {
    const std::optional<BinfmtFlags> flags =
        a.flags.empty() ? std::nullopt : std::optional(parse_flags(a));
    auto arches = resolve_arches(a.targets);
    if (!a.interpreter.empty() && arches.size() != 1) {
        throw Failure(
            Error{"--interpreter", "given for several arches", "register one arch per call"},
            k_exit_usage);
    }
    std::vector<BinfmtEntry> wanted;
    for (const Arch* arch : arches) {
        std::filesystem::path interp = a.interpreter;
        if (interp.empty()) {
            interp = unwrap(find_emulator(*arch)).path;
        }
        wanted.push_back(
            binfmt_entry_for(*arch, interp, flags ? *flags : default_binfmt_flags(interp)));
    }
    warn(binfmt_environment_warnings());
    return report_apply(unwrap(register_binfmt(wanted, options_from(a))), a);
}

int run_unregister(const BinfmtArgs& a) {
    auto r = unwrap(unregister_binfmt(entry_names(a.targets), options_from(a)));
    return report_apply(r, a);
}

int run_verify(const BinfmtArgs& a) {
    int bad = 0;
    std::vector<BinfmtVerifyResult> results;
    for (const Arch* arch : resolve_arches(a.targets)) {
        std::filesystem::path probe =
            std::filesystem::path(a.probe_dir) / arch->name / "probe-static";
        auto v = verify_binfmt(*arch, probe);
        if (!a.json) {
            std::cout << (v.ok ? "ok    " : "FAIL  ") << v.arch << ": " << v.detail << '\n';
        }
        bad += v.ok ? 0 : 1;
        results.push_back(std::move(v));
    }
    if (a.json) {
        std::cout << binfmt_verify_json(results) << '\n';
    }
    return bad ? 1 : 0;
}

int run_export(const BinfmtArgs& a) {
    if (a.binfmt_d.empty() == a.update_binfmts.empty()) {
        throw Failure(Error{"emurun binfmt export",
                            "give exactly one of --binfmt-d DIR, --update-binfmts DIR", ""},
                      k_exit_usage);
    }
    std::vector<BinfmtEntry> entries;
    if (a.targets.empty()) { // default: the entries of emurun's table that are registered
        for (auto& e : unwrap(read_binfmt_table(a.mount)).entries) {
            if (binfmt_entry_arch(e)) {
                entries.push_back(std::move(e));
            }
        }
    }
    for (const auto& n : entry_names(a.targets)) {
        entries.push_back(unwrap(read_binfmt_entry(a.mount, n)));
    }
    const bool conf = !a.binfmt_d.empty();
    const auto format = conf ? BinfmtFileFormat::binfmt_d : BinfmtFileFormat::update_binfmts;
    for (const auto& e : entries) {
        const auto file =
            unwrap(export_binfmt_file(e, format, conf ? a.binfmt_d : a.update_binfmts));
        std::cout << "wrote " << file.string() << '\n';
    }
    return 0;
}

int run_import(const BinfmtArgs& a) {
    std::vector<BinfmtEntry> wanted;
    for (const auto& file : a.targets) {
        std::ranges::move(unwrap(read_binfmt_file(file)), std::back_inserter(wanted));
    }
    for (const auto& e : wanted) { // imported files may carry C/O: the same explicit opt-in
        BinfmtArgs check = a;
        check.flags = e.flags.to_string();
        (void)parse_flags(check);
    }
    warn(binfmt_environment_warnings());
    return report_apply(unwrap(register_binfmt(wanted, options_from(a))), a);
}

void common_options(CLI::App* sub, BinfmtArgs& a) {
    sub->add_option("--mount", a.mount, "binfmt_misc directory (default /proc/sys/fs/binfmt_misc)");
    sub->add_option("--lock-file", a.lock_file, "Lock file (default: lock the mount directory)");
}

void change_options(CLI::App* sub, BinfmtArgs& a) {
    common_options(sub, a);
    sub->add_flag("--dry-run", a.dry_run, "Print the plan, change nothing");
    sub->add_flag("--replace", a.replace, "Replace an entry of the same name with other content");
    sub->add_option("--flags", a.flags,
                    "Flags (default: P, plus F for a static emulator); C and O need "
                    "--allow-credentials / --allow-open-binary");
    sub->add_flag("--allow-credentials", a.allow_credentials,
                  "Permit flag C (setuid binaries run with raised privileges)");
    sub->add_flag("--allow-open-binary", a.allow_open_binary, "Permit flag O");
    sub->add_flag("--json", a.json,
                  "Machine-readable: {applied, conflict, warnings, plan: [{action, name, wanted, "
                  "current, detail}]}");
}

} // namespace

void add_binfmt(CLI::App& root, Action& action) {
    auto a = std::make_shared<BinfmtArgs>();
    auto* sub =
        root.add_subcommand("binfmt", "Register QEMU with the kernel's binfmt_misc: safely, "
                                      "idempotently, all-or-nothing");
    sub->require_subcommand(1);
    auto bind = [&action, a](CLI::App* s, int (*fn)(const BinfmtArgs&)) {
        s->callback([&action, a, fn] { action = [a, fn] { return fn(*a); }; });
    };
    auto* status = sub->add_subcommand("status", "List every entry, marking emurun's arches");
    common_options(status, *a);
    status->add_flag("--json", a->json, "Machine-readable output");
    bind(status, run_status);
    auto* reg = sub->add_subcommand("register", "Register arches (names, aliases or 'all')");
    change_options(reg, *a);
    reg->add_option("--interpreter", a->interpreter,
                    "Emulator path (default: qemu-<cpu>-static found)");
    reg->add_option("arches", a->targets, "Arches")->required();
    bind(reg, run_register);
    auto* unreg = sub->add_subcommand("unregister", "Remove entries (arches or entry names)");
    change_options(unreg, *a);
    unreg->add_option("names", a->targets, "Arches or entry names")->required();
    bind(unreg, run_unregister);
    for (bool on : {true, false}) {
        auto* s = sub->add_subcommand(on ? "enable" : "disable",
                                      on ? "Enable entries" : "Disable entries");
        common_options(s, *a);
        s->add_option("names", a->targets, "Arches or entry names")->required();
        s->callback([&action, a, on] {
            action = [a, on] {
                unwrap(set_binfmt_enabled(entry_names(a->targets), on, options_from(*a)));
                return 0;
            };
        });
    }
    auto* ver = sub->add_subcommand("verify",
                                    "Run each arch's probe through the kernel (no explicit qemu)");
    ver->add_option("--probe-dir", a->probe_dir, "Directory with <arch>/probe-static")->required();
    ver->add_option("arches", a->targets, "Arches or 'all'")->required();
    ver->add_flag("--json", a->json, "Machine-readable: {ok, arches: [{arch, ok, detail}]}");
    bind(ver, run_verify);
    auto* exp = sub->add_subcommand("export", "Write entries as binfmt.d or update-binfmts files");
    common_options(exp, *a);
    exp->add_option("--binfmt-d", a->binfmt_d, "Directory for systemd binfmt.d <name>.conf files");
    exp->add_option("--update-binfmts", a->update_binfmts,
                    "Directory for Debian update-binfmts files");
    exp->add_option("names", a->targets,
                    "Arches or entry names (default: emurun's registered arches)");
    bind(exp, run_export);
    auto* imp = sub->add_subcommand(
        "import", "Register entries from binfmt.d (*.conf) or update-binfmts files");
    change_options(imp, *a);
    imp->add_option("files", a->targets, "Files")->required();
    bind(imp, run_import);
}

} // namespace emurun::cli
