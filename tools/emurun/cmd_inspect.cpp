#include "cli.hpp"
#include "cli_common.hpp"

#include <emurun/elf.hpp>
#include <emurun/sysroot.hpp>

#include <nlohmann/json.hpp>

#include <iostream>

namespace emurun::cli {
namespace {

struct InspectArgs {
    std::vector<std::string> files;
    std::vector<std::string> sysroots;
    bool json = false;
};

struct Inspected {
    std::string file;
    ElfInfo elf;
    LinkMap links;
};

nlohmann::json lookup_json(const LibraryLookup& l) {
    nlohmann::json j{{"name", l.name}, {"needed_by", l.needed_by}};
    j["path"] = l.path ? nlohmann::json(l.path->string()) : nlohmann::json(nullptr);
    if (!l.package_hint.empty()) {
        j["package"] = l.package_hint;
    }
    return j;
}

nlohmann::json to_json(const Inspected& in) {
    const ElfInfo& e = in.elf;
    nlohmann::json j{{"file", in.file},
                     {"arch", e.arch ? nlohmann::json(e.arch->name) : nlohmann::json(nullptr)},
                     {"class", e.elf_class == 2 ? 64 : 32},
                     {"endianness", e.endianness()},
                     {"machine", e.machine},
                     {"type", e.type_name()},
                     {"static", e.is_static()},
                     {"runpath", e.runpath},
                     {"rpath", e.rpath}};
    j["soname"] = e.soname ? nlohmann::json(*e.soname) : nlohmann::json(nullptr);
    j["interpreter"] =
        in.links.interpreter ? lookup_json(*in.links.interpreter) : nlohmann::json(nullptr);
    j["needed"] = e.needed;
    j["libraries"] = nlohmann::json::array();
    for (const auto& l : in.links.libraries) {
        j["libraries"].push_back(lookup_json(l));
    }
    j["missing"] = in.links.missing();
    j["sysroots"] = nlohmann::json::array();
    for (const auto& s : in.links.sysroots) {
        j["sysroots"].push_back(s.string());
    }
    return j;
}

std::string where(const LibraryLookup& l) {
    if (l.path) {
        return l.path->string();
    }
    return "MISSING" + (l.package_hint.empty() ? "" : " (Debian: " + l.package_hint + ")");
}

void print_human(const Inspected& in) {
    const ElfInfo& e = in.elf;
    std::cout << in.file << ": "
              << (e.arch ? e.arch->name
                         : "unknown arch (e_machine " + std::to_string(e.machine) + ")")
              << ", ELF " << (e.elf_class == 2 ? 64 : 32) << "-bit " << e.endianness() << "-endian "
              << e.type_name() << ", " << (e.is_static() ? "static" : "dynamic") << '\n';
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
        std::cout << "  missing: " << m.size() << " of " << in.links.libraries.size() + 1 << '\n';
    }
}

int run_inspect(const InspectArgs& a) {
    std::vector<Inspected> results;
    for (const auto& f : a.files) {
        ElfInfo elf = unwrap(read_elf(f));
        std::vector<std::filesystem::path> roots = to_paths(a.sysroots);
        if (roots.empty() && elf.arch != nullptr) {
            roots = default_sysroots(*elf.arch);
        }
        LinkMap links =
            elf.is_static() && elf.needed.empty() ? LinkMap{} : resolve_libraries(f, elf, roots);
        links.sysroots = roots;
        results.push_back({f, std::move(elf), std::move(links)});
    }
    bool missing = false;
    nlohmann::json all = nlohmann::json::array();
    for (const auto& r : results) {
        missing = missing || !r.links.complete();
        if (a.json) {
            all.push_back(to_json(r));
        } else {
            print_human(r);
        }
    }
    if (a.json) {
        std::cout << all.dump(2) << '\n';
    }
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
