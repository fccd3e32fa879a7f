// Toolchain identity: a root's compiler or binutils is served by the host's cross package only
// when both were built from the same source at the same version, Debian revision included
// (bookworm's gcc-12 12.2.0-14+deb12u1 fixes CVE-2023-4039's -fstack-protector on aarch64; the
// cross gcc-12-aarch64-linux-gnu 12.2.0-14cross1 is built from gcc-12 12.2.0-14 and emits other
// code with -fstack-protector-strong). Pure: dpkg's status files are read as text.
#include "root/root_internal.hpp"

#include <algorithm>
#include <map>
#include <optional>

namespace emurun {
namespace {

using Fields = std::map<std::string, std::string, std::less<>>;

std::string_view trim(std::string_view s) {
    const auto b = s.find_first_not_of(" \t");
    if (b == std::string_view::npos) {
        return {};
    }
    return s.substr(b, s.find_last_not_of(" \t") - b + 1);
}

/// The fields of the first installed stanza of `package` (continuation lines joined).
std::optional<Fields> installed_stanza(std::string_view text, std::string_view package) {
    std::size_t pos = 0;
    while (pos < text.size()) {
        std::size_t end = text.find("\n\n", pos);
        end = end == std::string_view::npos ? text.size() : end;
        Fields f;
        std::string last;
        std::size_t line_start = pos;
        while (line_start < end) {
            std::size_t nl = text.find('\n', line_start);
            nl = nl == std::string_view::npos || nl > end ? end : nl;
            const std::string_view line = text.substr(line_start, nl - line_start);
            if (!line.empty() && (line[0] == ' ' || line[0] == '\t')) {
                if (!last.empty()) {
                    f[last] += " " + std::string(trim(line));
                }
            } else if (const auto colon = line.find(':'); colon != std::string_view::npos) {
                last = std::string(line.substr(0, colon));
                f[last] = std::string(trim(line.substr(colon + 1)));
            }
            line_start = nl + 1;
        }
        const auto status = f.find("Status");
        if (f["Package"] == package && status != f.end() &&
            status->second.ends_with(" installed")) {
            return f;
        }
        pos = end + 2;
    }
    return std::nullopt;
}

/// "name (version)" or "name (= version)" or "name": the name and the version (may be empty).
std::pair<std::string, std::string> name_and_version(std::string_view item) {
    item = trim(item);
    const auto paren = item.find('(');
    if (paren == std::string_view::npos) {
        return {std::string(item), ""};
    }
    std::string_view v = item.substr(paren + 1);
    v = v.substr(0, v.find(')'));
    v = trim(v);
    if (v.starts_with("=")) {
        v = trim(v.substr(1));
    }
    return {std::string(trim(item.substr(0, paren))), std::string(v)};
}

/// The Built-Using entry naming `source`, if any.
std::optional<std::string> built_using(const Fields& f, std::string_view source) {
    const auto it = f.find("Built-Using");
    if (source.empty() || it == f.end()) {
        return std::nullopt;
    }
    std::string_view rest = it->second;
    while (!rest.empty()) {
        const auto comma = rest.find(',');
        auto [name, version] = name_and_version(rest.substr(0, comma));
        if (name == source && !version.empty()) {
            return version;
        }
        rest = comma == std::string_view::npos ? std::string_view{} : rest.substr(comma + 1);
    }
    return std::nullopt;
}

/// The package pairs (root's, host's) a tool group is made of.
std::vector<std::pair<std::string, std::string>>
group_packages(const std::string& group, const std::string& triplet, const std::string& major) {
    const auto pair = [&](const std::string& base) {
        return std::pair{base + "-" + major, base + "-" + major + "-" + triplet};
    };
    if (group == "gcc") {
        return {pair("gcc"), pair("cpp")};
    }
    if (group == "g++" || group == "cpp") {
        return {pair(group)};
    }
    return {{"binutils-" + triplet, "binutils-" + triplet}};
}

std::string describe(const ToolSource& s) {
    return s.source.empty() ? "not installed" : s.source + " " + s.version;
}

} // namespace

std::string root_detail::toolchain_group(const std::string& tool) {
    if (tool == "cc") {
        return "gcc";
    }
    if (tool == "c++") {
        return "g++";
    }
    return tool == "gcc" || tool == "g++" || tool == "cpp" ? tool : "binutils";
}

std::string root_detail::dpkg_version_of(std::string_view status_text, std::string_view package) {
    const auto f = installed_stanza(status_text, package);
    const auto v = f ? f->find("Version") : Fields::const_iterator{};
    return f && v != f->end() ? v->second : std::string{};
}

ToolSource dpkg_tool_source(std::string_view status_text, std::string_view package,
                            std::string_view source_hint) {
    ToolSource out{std::string(package), "", ""};
    const auto f = installed_stanza(status_text, package);
    if (!f) {
        return out;
    }
    const auto version = f->find("Version");
    const std::string own = version == f->end() ? "" : version->second;
    if (auto v = built_using(*f, source_hint)) {
        out.source = std::string(source_hint);
        out.version = *v;
        return out;
    }
    if (const auto src = f->find("Source"); src != f->end()) {
        auto [name, v] = name_and_version(src->second);
        out.source = name;
        out.version = v.empty() ? own : v;
        return out;
    }
    out.source = std::string(package);
    out.version = own;
    return out;
}

std::vector<ToolIdentity> toolchain_identity(std::string_view root_status,
                                             std::string_view host_status,
                                             const std::string& triplet,
                                             const std::string& gcc_major,
                                             const std::vector<std::string>& tools) {
    std::vector<ToolIdentity> out;
    for (const auto& tool : tools) {
        const std::string group = root_detail::toolchain_group(tool);
        if (std::ranges::any_of(out, [&](const ToolIdentity& t) { return t.tool == group; })) {
            continue;
        }
        ToolIdentity id;
        for (const auto& [root_pkg, host_pkg] : group_packages(group, triplet, gcc_major)) {
            id.tool = group;
            id.root = dpkg_tool_source(root_status, root_pkg);
            id.host = dpkg_tool_source(host_status, host_pkg, id.root.source);
            if (!id.same()) {
                break;
            }
        }
        out.push_back(std::move(id));
    }
    return out;
}

namespace {

/// The library packages (lib*) of `package`'s Pre-Depends and Depends in `status_text`, every
/// alternative counted, without architecture qualifiers.
std::vector<std::string> library_dependencies(std::string_view status_text,
                                              std::string_view package) {
    std::vector<std::string> out;
    const auto f = installed_stanza(status_text, package);
    for (const char* field : {"Pre-Depends", "Depends"}) {
        const auto it = f ? f->find(field) : Fields::const_iterator{};
        if (!f || it == f->end()) {
            continue;
        }
        std::string_view rest = it->second;
        while (!rest.empty()) {
            const auto sep = rest.find_first_of(",|");
            std::string name = name_and_version(rest.substr(0, sep)).first;
            name = name.substr(0, name.find(':'));
            if (name.starts_with("lib") && std::ranges::find(out, name) == out.end()) {
                out.push_back(std::move(name));
            }
            rest = sep == std::string_view::npos ? std::string_view{} : rest.substr(sep + 1);
        }
    }
    return out;
}

bool is_toolchain_group(std::string_view tool) {
    return tool == "gcc" || tool == "g++" || tool == "cpp" || tool == "binutils";
}

} // namespace

ToolIdentity root_detail::native_tool_identity(std::string_view root_status,
                                               std::string_view host_status,
                                               const NativeTool& tool) {
    const std::string pkg(tool.package);
    std::vector<std::string> packages{pkg};
    for (auto& lib : library_dependencies(root_status, pkg)) {
        packages.push_back(std::move(lib));
    }
    ToolIdentity id;
    for (const auto& p : packages) {
        id = ToolIdentity{std::string(tool.name), dpkg_tool_source(root_status, p),
                          dpkg_tool_source(host_status, p)};
        if (!id.same()) {
            return id;
        }
    }
    id.root = dpkg_tool_source(root_status, pkg);
    id.host = dpkg_tool_source(host_status, pkg);
    return id;
}

std::string ToolIdentity::why() const {
    if (same()) {
        return {};
    }
    std::string out = "the root's " + root.package + " is built from " + describe(root) +
                      ", the host's " + host.package + " from " + describe(host);
    if (root.source.empty() || host.source.empty()) {
        return out + ": without both records the code they emit cannot be known to be the same";
    }
    if (!is_toolchain_group(tool)) {
        return out + ": the host's program (or a library it runs with) would behave as another "
                     "revision of the source, not as the root's";
    }
    return out + ": another revision of the source can emit other code (a Debian revision "
                 "may carry fixes such as CVE-2023-4039's -fstack-protector on aarch64)";
}

namespace {

/// "; the probe corpus ...": the probe's part of a mismatch's sentence.
std::string probe_part(const std::optional<ProbeVerdict>& probe) {
    if (!probe) {
        return {};
    }
    if (probe->identical) {
        return "; the probe corpus compiled to the same objects both ways (beyond .comment)";
    }
    return "; the probe corpus (the root's hardening flags) compiled both ways: " + probe->why;
}

/// Why the tools asked for with `tool` stay emulated with it.
std::string company_text(const std::string& tool) {
    if (tool == "binutils") {
        return " and the compilers with them (the host's cross compiler hands ld and ar its LTO "
               "plugin, an x86-64 library the emulated binutils cannot load)";
    }
    return " and the binutils with it (the emulated compiler's LTO plugin, a library of the "
           "root's arch, cannot load into the host's ld or ar)";
}

/// " (FIELD spelled)", or nothing when the spelling names nothing.
std::string spelled(FieldSpelling spell, std::string_view field) {
    const std::string text = spell(field);
    return text.empty() ? std::string() : " (" + text + ")";
}

} // namespace

std::string ToolMismatch::text(FieldSpelling spell) const {
    const std::string why = identity.same() ? "the probe corpus (the root's hardening flags) "
                                              "compiled both ways: " +
                                                  (probe ? probe->why : std::string{})
                                            : identity.why() + probe_part(probe);
    if (accelerated) {
        return identity.tool + " accelerated although " +
               (identity.same() ? "its objects differ" : "the sources differ") +
               " (a revision mismatch allowed): " + why;
    }
    return identity.tool + " kept emulated" + (company_follows ? company_text(identity.tool) : "") +
           ": " + why + "; to accelerate it anyway, allow the revision mismatch" +
           spelled(spell, "allow_revision_mismatch");
}

std::vector<std::pair<std::string, std::string>> toolchain_pins(std::string_view host_status,
                                                                const std::string& triplet) {
    std::vector<std::pair<std::string, std::string>> out;
    const std::string suffix = "-" + triplet;
    for (std::string_view rest = host_status; !rest.empty();) { // each "Package: gcc-N-TRIPLET"
        const auto at = rest.find("Package: gcc-");
        if (at == std::string_view::npos) {
            break;
        }
        rest = rest.substr(at + 9);
        const std::string name(rest.substr(0, rest.find('\n')));
        const std::string major =
            name.substr(4, name.size() - 4 - std::min(name.size() - 4, suffix.size()));
        if (!name.ends_with(suffix) || major.empty() ||
            !std::ranges::all_of(major, [](char c) { return c >= '0' && c <= '9'; })) {
            continue;
        }
        const ToolSource src = dpkg_tool_source(host_status, name, "gcc-" + major);
        if (src.source == "gcc-" + major) {
            out.emplace_back(src.source, src.version);
        }
    }
    const ToolSource bin = dpkg_tool_source(host_status, "binutils" + suffix, "binutils");
    if (!bin.source.empty()) {
        out.emplace_back(bin.source, bin.version);
    }
    return out;
}

std::string toolchain_preferences(const std::vector<std::pair<std::string, std::string>>& pins) {
    std::string out;
    for (const auto& [source, version] : pins) {
        out += (out.empty() ? "" : "\n") + std::string("Package: src:") + source +
               "\nPin: version " + version + "\nPin-Priority: 1001\n";
    }
    return out;
}

} // namespace emurun
