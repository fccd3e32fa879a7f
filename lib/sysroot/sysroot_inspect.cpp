// `emurun inspect`: a binary's ELF facts and its resolved libraries, and their JSON.
#include <emurun/json.hpp>
#include <emurun/sysroot.hpp>

#include <nlohmann/json.hpp>

namespace emurun {
namespace {

using Json = nlohmann::json;

Json lookup_json(const LibraryLookup& l) {
    Json j{{"name", l.name}, {"needed_by", l.needed_by}};
    j["path"] = l.path ? Json(l.path->string()) : Json(nullptr);
    if (!l.package_hint.empty()) {
        j["package"] = l.package_hint;
        j["package_guessed"] = l.package_guessed;
    }
    return j;
}

} // namespace

Result<Inspection> inspect_binary(const std::filesystem::path& file,
                                  const std::vector<std::filesystem::path>& sysroots) {
    EMURUN_TRY(check_sysroot_dirs(sysroots));
    auto elf = EMURUN_TRY(read_elf(file));
    std::vector<std::filesystem::path> roots = sysroots;
    if (roots.empty() && elf.arch != nullptr) {
        roots = default_sysroots(*elf.arch);
    }
    LinkMap links =
        elf.is_static() && elf.needed.empty() ? LinkMap{} : resolve_libraries(file, elf, roots);
    links.sysroots = roots;
    return Inspection{file, std::move(elf), std::move(links)};
}

namespace {

Json one_inspection(const Inspection& in) {
    const ElfInfo& e = in.elf;
    Json j{{"file", in.file.string()},
           {"arch", e.arch ? Json(e.arch->name) : Json(nullptr)},
           {"machine_arch", e.machine_arch ? Json(e.machine_arch->name) : Json(nullptr)},
           {"class", e.elf_class == 2 ? 64 : 32},
           {"endianness", e.endianness()},
           {"machine", e.machine},
           {"type", e.type_name()},
           {"static", e.linkage() == "static"},
           {"linkage", e.linkage()},
           {"runpath", e.runpath},
           {"rpath", e.rpath}};
    j["soname"] = e.soname ? Json(*e.soname) : Json(nullptr);
    j["interpreter"] = in.links.interpreter ? lookup_json(*in.links.interpreter) : Json(nullptr);
    j["needed"] = e.needed;
    j["libraries"] = Json::array();
    for (const auto& l : in.links.libraries) {
        j["libraries"].push_back(lookup_json(l));
    }
    j["missing"] = in.links.missing();
    j["sysroots"] = Json::array();
    for (const auto& s : in.links.sysroots) {
        j["sysroots"].push_back(s.string());
    }
    return j;
}

} // namespace

std::string inspection_json(std::span<const Inspection> inspections, int indent) {
    Json all = Json::array();
    for (const auto& in : inspections) {
        all.push_back(one_inspection(in));
    }
    return json_text(all, indent);
}

} // namespace emurun
