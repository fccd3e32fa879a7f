#include "cli.hpp"
#include "cli_common.hpp"

#include <emurun/elf.hpp>
#include <emurun/sysroot.hpp>

#include <algorithm>
#include <iostream>

namespace emurun::cli {
namespace {

struct InspectArgs {
    std::vector<std::string> files;
    std::vector<std::string> sysroots;
    bool json = false;
};

std::string where(const LibraryLookup& l) {
    if (l.path) {
        return l.path->string();
    }
    if (l.package_hint.empty()) {
        return "MISSING";
    }
    return "MISSING (Debian: " + l.package_hint +
           (l.package_guessed ? "?, a name guessed from the soname by Debian's policy)" : ")");
}

void print_human(const Inspection& in) {
    const ElfInfo& e = in.elf;
    // An object file or core dump is no program binfmt_misc runs (arch: none), but e_machine
    // still names the arch it is for.
    const Arch* named = e.arch != nullptr ? e.arch : e.machine_arch;
    std::cout << in.file.string() << ": "
              << (named != nullptr ? named->name
                                   : "unknown arch (e_machine " + std::to_string(e.machine) + ")")
              << ", ELF " << (e.elf_class == 2 ? 64 : 32) << "-bit " << e.endianness() << "-endian "
              << e.type_name() << ", " << e.linkage() << '\n';
    if (e.soname) {
        std::cout << "  soname: " << *e.soname << '\n';
    }
    if (in.links.interpreter) {
        std::cout << "  interpreter: " << in.links.interpreter->name << " => "
                  << where(*in.links.interpreter) << '\n';
    }
    for (const auto& l : in.links.libraries) {
        std::cout << "  " << l.name << " => " << where(l) << '\n';
    }
    if (auto m = in.links.missing(); !m.empty()) {
        // Of the libraries and the interpreter, when there is one (a shared library has none).
        std::cout << "  missing: " << m.size() << " of "
                  << in.links.libraries.size() + (in.links.interpreter ? 1 : 0) << '\n';
    }
}

/// Each file as it is inspected, a file that cannot be (not ELF, unreadable) said on stderr
/// without keeping the others from being shown; exit 125 then. --json stays all or nothing.
int inspect_each(const InspectArgs& a) {
    bool missing = false, refused = false;
    for (const auto& f : a.files) {
        auto r = inspect_binary(f, to_paths(a.sysroots));
        if (!r) {
            std::cout.flush();
            std::cerr << "emurun: error: " << error_text(r.error()) << '\n';
            refused = true;
            continue;
        }
        missing = missing || !r->links.complete();
        print_human(*r);
    }
    return refused ? k_exit_failure : missing ? 1 : 0;
}

int run_inspect(const InspectArgs& a) {
    if (!a.json) {
        return inspect_each(a);
    }
    std::vector<Inspection> results;
    for (const auto& f : a.files) {
        results.push_back(unwrap(inspect_binary(f, to_paths(a.sysroots))));
    }
    const bool missing =
        std::ranges::any_of(results, [](const Inspection& r) { return !r.links.complete(); });
    std::cout << inspection_json(results) << '\n';
    return missing ? 1 : 0;
}

} // namespace

void add_inspect(CLI::App& root, Action& action) {
    auto args = std::make_shared<InspectArgs>();
    auto* sub = root.add_subcommand(
        "inspect", "Show a binary's arch, class, endianness, interpreter and needed libraries, "
                   "where each resolves in the sysroots, and which are missing (exit 1 if any)");
    sub->add_option("--sysroot", args->sysroots,
                    "Directory to resolve libraries in (repeatable; default: /usr/<triplet> and "
                    "Debian multiarch dirs)");
    sub->add_flag("--json", args->json, "Machine-readable output (an array, one object per file)");
    sub->add_option("files", args->files, "ELF files")->required();
    sub->callback([args, &action] { action = [args] { return run_inspect(*args); }; });
}

} // namespace emurun::cli
