// Planning a root session: which root, which arch, which emulator, and which host tools serve
// the root's compilers and binutils (decided before anything is mounted).
#include "root/root_internal.hpp"
#include "util/file.hpp"

#include <emurun/elf.hpp>

#include <algorithm>
#include <array>
#include <iterator>
#include <set>
#include <sys/stat.h>

namespace emurun {
namespace fs = std::filesystem;
using namespace root_detail;

namespace {

/// Versioned compiler drivers (TRIPLET-NAME-MAJOR) per user-facing name.
const std::vector<std::pair<std::string, std::vector<std::string>>>& driver_table() {
    static const std::vector<std::pair<std::string, std::vector<std::string>>> t{
        {"gcc", {"gcc", "gcc-ar", "gcc-nm", "gcc-ranlib", "lto-dump"}},
        {"g++", {"g++"}},
        {"cpp", {"cpp"}},
    };
    return t;
}

/// Binutils (TRIPLET-NAME) per user-facing name.
const std::vector<std::pair<std::string, std::vector<std::string>>>& binutils_table() {
    static const std::vector<std::pair<std::string, std::vector<std::string>>> t{
        {"as", {"as"}},
        {"ld", {"ld.bfd", "ld.gold"}},
        {"ld.bfd", {"ld.bfd"}},
        {"ld.gold", {"ld.gold"}},
        {"ar", {"ar"}},
        {"ranlib", {"ranlib"}},
        {"nm", {"nm"}},
        {"objcopy", {"objcopy"}},
        {"objdump", {"objdump"}},
        {"strip", {"strip"}},
        {"readelf", {"readelf"}},
        {"size", {"size"}},
        {"strings", {"strings"}},
        {"c++filt", {"c++filt"}},
        {"addr2line", {"addr2line"}},
        {"elfedit", {"elfedit"}},
    };
    return t;
}

bool is_shell_tool(const std::string& name) {
    return find_native_tool(name) != nullptr;
}

/// Named sets of tools: "toolchain" (compilers and binutils), "shell" (the native tools proven
/// the same both ways); the default is both.
std::vector<std::string> group_members(std::string_view group) {
    std::vector<std::string> out;
    const auto add = [&out](const auto& table) {
        for (const auto& [n, _] : table) {
            out.push_back(n);
        }
    };
    if (group == "toolchain") {
        add(driver_table());
        add(binutils_table());
    } else if (group == "shell") {
        for (const auto& n : native_tools()) {
            if (n.in_shell_group) {
                out.emplace_back(n.name);
            }
        }
    }
    return out;
}

std::string canonical_tool(std::string name) {
    if (name == "cc") {
        return "gcc";
    }
    return name == "c++" ? "g++" : name;
}

bool is_file(const fs::path& p) {
    struct stat st {};
    return ::lstat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

std::string first_line(const fs::path& p) {
    const std::string head = util::read_head(p, 4096);
    return head.substr(0, head.find('\n'));
}

/// The root's GCC major (from usr/bin/TRIPLET-gcc-NN, the one TRIPLET-gcc points to first).
std::string root_gcc_major(const fs::path& dir, const std::string& triplet) {
    std::error_code ec;
    const fs::path link = fs::read_symlink(dir / "usr/bin" / (triplet + "-gcc"), ec);
    const std::string prefix = triplet + "-gcc-";
    if (!ec && link.filename().string().starts_with(prefix)) {
        return link.filename().string().substr(prefix.size());
    }
    std::string best;
    for (const auto& e : list_dir(dir / "usr/bin")) {
        const std::string n = e.filename().string();
        if (n.starts_with(prefix) && n.size() > prefix.size() &&
            std::all_of(n.begin() + static_cast<long>(prefix.size()), n.end(),
                        [](char c) { return c >= '0' && c <= '9'; })) {
            best = std::max(best, n.substr(prefix.size()));
        }
    }
    return best;
}

std::string upstream(const std::string& debian_version) {
    const auto colon = debian_version.find(':');
    std::string v = colon == std::string::npos ? debian_version : debian_version.substr(colon + 1);
    return v.substr(0, v.rfind('-'));
}

/// Same GCC version on both sides, or an error naming both; a differing revision is a note.
Result<void> check_versions(const RootPlan& plan, const std::string& host_driver) {
    const std::string pkg = "gcc-" + plan.gcc_major;
    std::string root_ver = dpkg_version(plan.dir / "var/lib/dpkg/status", pkg);
    if (root_ver.empty()) {
        root_ver = dpkg_version(plan.dir / "var/lib/dpkg/status", "cpp-" + plan.gcc_major);
    }
    auto host_out = capture_stdout(Command{.argv = {host_driver, "-dumpfullversion"}});
    if (!host_out) {
        return std::unexpected(host_out.error());
    }
    std::string host_full = *host_out;
    host_full.erase(host_full.find_last_not_of(" \n") + 1);
    if (upstream(root_ver) != host_full) {
        return fail(ErrorKind::bad_input, "accelerate the root's gcc-" + plan.gcc_major,
                    "the root's gcc is " + upstream(root_ver) + " (" + pkg + " " + root_ver +
                        ") but the host's " + host_driver + " -dumpfullversion is " + host_full +
                        "; different GCC versions emit different code",
                    "create a root of the host's Debian release with emurun root create, install "
                    "the matching cross compiler, or run without acceleration",
                    "accelerate=none");
    }
    return {};
}

Error missing_cross(const Arch& arch, const std::string& major, const fs::path& driver) {
    return Error{"accelerate the " + arch.name + " root's gcc-" + major,
                 "the host has no x86-64 cross compiler " + driver.string(),
                 "apt-get install g++-" + arch.triplet + " (gcc " + major + ": g++-" + major + "-" +
                     arch.triplet + "), or run without acceleration",
                 ErrorKind::not_found, "accelerate=none"};
}

std::vector<std::string> wanted_tools(const Acceleration& acc) {
    std::vector<std::string> out;
    if (acc.mode == Acceleration::Mode::defaults) {
        out = group_members("toolchain");
        for (auto& n : group_members("shell")) {
            out.push_back(std::move(n));
        }
        return out;
    }
    for (const auto& t : acc.tools) {
        auto members = group_members(t);
        if (members.empty()) {
            members.push_back(canonical_tool(t));
        }
        for (auto& m : members) { // "shell,sed": sed once
            if (std::ranges::find(out, m) == out.end()) {
                out.push_back(std::move(m));
            }
        }
    }
    return out;
}

bool wants_compiler(const std::vector<std::string>& names) {
    return std::ranges::any_of(names, [](const std::string& n) {
        return std::ranges::any_of(driver_table(), [&](const auto& d) { return d.first == n; });
    });
}

/// A list both company rules accept that keeps what was asked for: gcc, g++ (dropped where the
/// root has none), ld, ar, nm, ranlib and the other tools of `asked`.
std::string company_example(const std::vector<std::string>& asked) {
    std::string out = "gcc,g++,ld,ar,nm,ranlib";
    for (const auto& n : asked) {
        const std::string item = "," + n + ",";
        if (("," + out + ",").find(item) == std::string::npos) {
            out += "," + n;
        }
    }
    return out;
}

/// The asked-for binutils ("ld", "as", ...) and the compiler drivers that must be accelerated
/// with them but are not asked for: gcc, and g++ where the root has it (`root_has_gxx`). An
/// emulated gcc or g++ hands ld and ar its LTO plugin, a library of the root's arch, which the
/// host's x86-64 binutils cannot load: every link through it would fail.
Result<void> check_binutils_company(const std::vector<std::string>& names, bool root_has_gxx) {
    std::vector<std::string> binutils;
    for (const auto& n : names) {
        if (!is_shell_tool(n) && toolchain_group(n) == "binutils" &&
            std::ranges::find(binutils, n) == binutils.end()) {
            binutils.push_back(n);
        }
    }
    std::vector<std::string> missing;
    for (const char* driver : {"gcc", "g++"}) {
        if (std::ranges::find(names, driver) == names.end() &&
            (std::string_view(driver) == "gcc" || root_has_gxx)) {
            missing.emplace_back(driver);
        }
    }
    if (binutils.empty() || missing.empty()) {
        return {};
    }
    std::string asked, without;
    for (const auto& b : binutils) {
        asked += (asked.empty() ? "" : ",") + b;
    }
    for (const auto& m : missing) {
        without += (without.empty() ? "" : " and ") + m;
    }
    return fail(ErrorKind::bad_input, "accelerate " + asked,
                "the binutils are accelerated only together with the compilers that run them, "
                "and " +
                    without +
                    " would stay emulated: an emulated gcc or g++ hands ld and ar its LTO "
                    "plugin, a library of the root's arch, which the host's x86-64 binutils "
                    "cannot load (every link would fail)",
                "leave the binutils emulated, or accelerate " + without + " too, e.g. " +
                    company_example(binutils) + ", or the default list (toolchain)",
                "accelerate");
}

/// The binutils an accelerated gcc or g++ hands its LTO plugin (collect2 runs ld with
/// `-plugin`, gcc-ar/gcc-nm/gcc-ranlib run ar, nm and ranlib with `--plugin`): the host's cross
/// compiler's plugin is an x86-64 library the root's emulated binutils cannot load.
constexpr std::array<std::string_view, 4> k_plugin_binutils{"ld", "ar", "nm", "ranlib"};

bool wants_binutil(const std::vector<std::string>& names, std::string_view tool) {
    return std::ranges::any_of(names, [&](const std::string& n) {
        return n == tool || (tool == "ld" && (n == "ld.bfd" || n == "ld.gold"));
    });
}

/// The other direction of check_binutils_company: gcc or g++ asked for without the binutils
/// that load their LTO plugin. Every link would fail.
Result<void> check_compiler_company(const std::vector<std::string>& names) {
    std::string compilers, missing;
    for (const char* driver : {"gcc", "g++"}) {
        if (std::ranges::find(names, driver) != names.end()) {
            compilers += (compilers.empty() ? "" : ",") + std::string(driver);
        }
    }
    for (const auto tool : k_plugin_binutils) {
        if (!wants_binutil(names, tool)) {
            missing += (missing.empty() ? "" : ",") + std::string(tool);
        }
    }
    if (compilers.empty() || missing.empty()) {
        return {};
    }
    return fail(ErrorKind::bad_input, "accelerate " + compilers,
                "the compilers are accelerated only together with the binutils that load their "
                "LTO plugin (ld, ar, nm, ranlib), and " +
                    missing +
                    " would stay emulated: the host's cross compiler hands them its plugin, an "
                    "x86-64 library the root's emulated binutils cannot load (every link would "
                    "fail)",
                "leave the compilers emulated, or accelerate " + missing + " too, e.g. " +
                    company_example(names) + ", or the default list (toolchain)",
                "accelerate");
}

/// Compilers and binutils go together, both ways.
Result<void> check_company(const std::vector<std::string>& names, bool root_has_gxx) {
    EMURUN_TRY(check_binutils_company(names, root_has_gxx));
    return check_compiler_company(names);
}

/// Bind host /usr/bin/TRIPLET-X over the root's where both exist.
void add_tool(RootPlan& plan, const std::string& file, std::set<std::string>& seen) {
    const fs::path host = fs::path("/usr/bin") / (plan.arch->triplet + "-" + file);
    if (seen.insert(file).second && is_file(host) && is_file(plan.dir / host.relative_path())) {
        plan.tools.push_back(RootToolBind{host, host});
        plan.accelerated.push_back(file);
    }
}

/// Bind the host's /usr/bin/NAME over the root's where both are regular files and the host's
/// is an x86-64 program (never through a symlink: the root's sh -> dash gets dash).
void add_host_tool(RootPlan& plan, const std::string& file, std::set<std::string>& seen) {
    const fs::path p = fs::path("/usr/bin") / file;
    if (seen.insert(file).second && is_file(p) && is_file(plan.dir / p.relative_path()) &&
        is_host_elf(p)) {
        plan.tools.push_back(RootToolBind{p, p});
        plan.accelerated.push_back(file);
    }
}

/// Drop the `refused` groups from `names`. Compilers and binutils stay emulated together (the
/// LTO plugin each compiler hands ld and ar is a library of its own arch): a refused gcc or g++
/// takes the asked-for binutils with it, refused binutils take gcc and g++ (said on the
/// refused tool's mismatch).
void drop_refused(RootPlan& plan, std::vector<std::string>& names, std::set<std::string> refused) {
    const auto asked = [&names](bool compilers) {
        return std::ranges::any_of(names, [&](const std::string& n) {
            const std::string g = is_shell_tool(n) ? "" : toolchain_group(n);
            return compilers ? g == "gcc" || g == "g++" : g == "binutils";
        });
    };
    const bool compiler_refused = refused.contains("gcc") || refused.contains("g++");
    const bool follow =
        compiler_refused ? asked(false) : refused.contains("binutils") && asked(true);
    if (follow) {
        refused.insert({"gcc", "g++", "binutils"});
        auto it = std::ranges::find_if(plan.mismatches, [&](const ToolMismatch& m) {
            const std::string& t = m.identity.tool;
            return !m.accelerated &&
                   (compiler_refused ? t == "gcc" || t == "g++" : t == "binutils");
        });
        if (it != plan.mismatches.end()) {
            it->company_follows = true;
        }
    }
    std::erase_if(names, [&](const std::string& n) {
        return !is_shell_tool(n) && refused.contains(toolchain_group(n));
    });
}

struct Statuses {
    std::string root, host; ///< dpkg status files' text
};

/// The tools of `names` whose root and host sources differ: kept out of `names` unless the
/// acceleration allows a revision mismatch; each recorded in the plan.
void check_identity(const RootSpec& spec, RootPlan& plan, const Statuses& st,
                    std::vector<std::string>& names) {
    const bool allow = spec.accelerate.allow_revision_mismatch;
    std::vector<std::string> toolchain;
    std::ranges::copy_if(names, std::back_inserter(toolchain),
                         [](const std::string& n) { return !is_shell_tool(n); });
    std::set<std::string> refused;
    for (auto& id :
         toolchain_identity(st.root, st.host, plan.arch->triplet, plan.gcc_major, toolchain)) {
        if (id.same()) {
            continue;
        }
        if (id.root.source.empty()) { // the root has no such package: nothing to accelerate
            std::erase_if(names, [&](const std::string& n) {
                return !is_shell_tool(n) && toolchain_group(n) == id.tool;
            });
            if (id.tool == "gcc" && !plan.gcc_major.empty()) { // its program is there, though
                plan.unproven.push_back(
                    "gcc not accelerated: " + plan.dir.string() + " has usr/bin/" +
                    plan.arch->triplet + "-gcc-" + plan.gcc_major +
                    " but its dpkg status lists no gcc-" + plan.gcc_major +
                    " package, so it cannot be proven the host's cross compiler's twin; it runs "
                    "emulated (reinstall it: emurun root install " +
                    plan.dir.string() + " gcc)");
            }
            continue;
        }
        if (!allow) {
            refused.insert(id.tool);
        }
        plan.mismatches.push_back(ToolMismatch{std::move(id), allow});
    }
    drop_refused(plan, names, std::move(refused));
}

/// Drop the native tools from `names`, saying why in the plan's notes.
void drop_native(RootPlan& plan, std::vector<std::string>& names, const std::string& why) {
    std::string dropped;
    std::erase_if(names, [&](const std::string& n) {
        const bool native = find_native_tool(n) != nullptr;
        dropped += native ? (dropped.empty() ? "" : ",") + n : "";
        return native;
    });
    if (!dropped.empty()) {
        plan.notes.push_back(dropped + " kept emulated: " + why);
    }
}

/// The native tools of `names` the root may run as the host's programs: in a root of the host's
/// byte order only (the host's C library reads the root's locale files), and each only when
/// the root's and the host's packages (and the libraries they run with) are built from the same
/// sources (native_tool_identity); a difference keeps it emulated unless a revision mismatch is
/// allowed, recorded as a compiler's is. A package either side lacks has nothing to serve.
void check_native(const RootSpec& spec, RootPlan& plan, const Statuses& st,
                  std::vector<std::string>& names) {
    const Arch* host = host_arch();
    if (host == nullptr || host->elf_data != plan.arch->elf_data) {
        drop_native(plan, names,
                    "the root is " + std::string(plan.arch->endianness()) +
                        "-endian and the host's C library could not read its locale files");
        return;
    }
    const bool allow = spec.accelerate.allow_revision_mismatch;
    std::erase_if(names, [&](const std::string& n) {
        const NativeTool* tool = find_native_tool(n);
        if (tool == nullptr) {
            return false;
        }
        ToolIdentity id = native_tool_identity(st.root, st.host, *tool);
        if (id.same()) {
            return false;
        }
        const std::string pkg(tool->package);
        if (dpkg_version_of(st.root, pkg).empty() || dpkg_version_of(st.host, pkg).empty()) {
            return true;
        }
        plan.mismatches.push_back(ToolMismatch{std::move(id), allow});
        return !allow;
    });
}

/// The probe corpus' verdict for compilers still to be accelerated: recorded on their
/// mismatch (or a new one when only the probe differs); a difference keeps gcc and g++ (and
/// the binutils with them) emulated unless a revision mismatch is allowed.
void check_probe(const RootSpec& spec, RootPlan& plan, const Statuses& st,
                 std::vector<std::string>& names) {
    const bool gcc = std::ranges::find(names, "gcc") != names.end();
    const bool gxx = std::ranges::find(names, "g++") != names.end();
    if (!spec.accelerate.probe || plan.gcc_major.empty() || !(gcc || gxx)) {
        return; // cpp alone: the corpus compiles with gcc and g++, which stay emulated
    }
    const ProbeVerdict v = probe_toolchain(spec, plan, st.root, st.host);
    plan.probe = v;
    const bool allow = spec.accelerate.allow_revision_mismatch;
    const std::string tool = gcc ? "gcc" : "g++";
    auto it = std::ranges::find_if(plan.mismatches, [&](const ToolMismatch& m) {
        return m.accelerated && m.identity.tool == tool;
    });
    if (it != plan.mismatches.end()) {
        it->probe = v;
    } else if (!v.identical) {
        auto id = toolchain_identity(st.root, st.host, plan.arch->triplet, plan.gcc_major, {tool});
        plan.mismatches.push_back(ToolMismatch{std::move(id.front()), allow, false, v});
    }
    if (!v.identical && !allow) {
        drop_refused(plan, names, {"gcc", "g++", "cpp"});
    }
}

/// Which of `names` the host's cross toolchain may serve: the identity of the sources, the
/// GCC version when a mismatch is allowed, then the probe corpus.
Result<void> check_toolchain(const RootSpec& spec, RootPlan& plan,
                             std::vector<std::string>& names) {
    const Statuses st{util::read_file(plan.dir / "var/lib/dpkg/status").value_or(std::string{}),
                      util::read_file("/var/lib/dpkg/status").value_or(std::string{})};
    check_identity(spec, plan, st, names);
    check_native(spec, plan, st, names);
    if (!plan.gcc_major.empty() && wants_compiler(names) &&
        spec.accelerate.allow_revision_mismatch) {
        const std::string driver = "/usr/bin/" + plan.arch->triplet + "-gcc-" + plan.gcc_major;
        EMURUN_TRY(check_versions(plan, driver));
    }
    check_probe(spec, plan, st, names);
    if (!wants_compiler(names)) {
        plan.gcc_major.clear(); // no compiler accelerated: no farms
    }
    return {};
}

Result<void> plan_tools(const RootSpec& spec, RootPlan& plan) {
    auto names = wanted_tools(spec.accelerate);
    if (names.empty()) {
        return {};
    }
    std::error_code ec;
    if (!fs::exists(plan.dir / "var/lib/dpkg/status", ec)) {
        plan.unproven.push_back(
            "nothing accelerated: " + plan.dir.string() +
            " has no dpkg status (var/lib/dpkg/status: an image not based on Debian), so no "
            "tool of it can be proven the same as the host's; every program runs emulated");
        return {};
    }
    const std::string& t = plan.arch->triplet;
    if (wants_compiler(names)) {
        plan.gcc_major = root_gcc_major(plan.dir, t);
        if (plan.gcc_major.empty()) {
            return fail(ErrorKind::not_found, "accelerate the root's compilers",
                        plan.dir.string() + " has no gcc (no usr/bin/" + t + "-gcc-NN)",
                        "emurun root install " + plan.dir.string() +
                            " gcc g++, or run without acceleration",
                        "accelerate=none");
        }
        const fs::path driver = "/usr/bin/" + t + "-gcc-" + plan.gcc_major;
        if (!is_file(driver) ||
            !fs::is_directory("/usr/lib/gcc-cross/" + t + "/" + plan.gcc_major, ec)) {
            return std::unexpected(missing_cross(*plan.arch, plan.gcc_major, driver));
        }
    }
    const bool root_has_gxx = fs::exists(
        fs::symlink_status(plan.dir / "usr/bin" / (t + "-g++"), ec)); // the driver's link
    EMURUN_TRY(check_company(names, root_has_gxx));
    if (auto r = check_toolchain(spec, plan, names); !r) {
        return r;
    }
    std::set<std::string> seen;
    for (const auto& n : names) {
        for (const auto& [name, files] : driver_table()) {
            for (const auto& f : name == n ? files : std::vector<std::string>{}) {
                add_tool(plan, f + "-" + plan.gcc_major, seen);
            }
        }
        for (const auto& [name, files] : binutils_table()) {
            for (const auto& f : name == n ? files : std::vector<std::string>{}) {
                add_tool(plan, f, seen);
            }
        }
        if (const NativeTool* tool = find_native_tool(n)) {
            for (const auto& f : tool->files) {
                add_host_tool(plan, std::string(f), seen);
            }
        }
    }
    return {};
}

} // namespace

std::vector<std::string> root_tool_names() {
    std::vector<std::string> out{"toolchain", "shell", "cc", "c++"};
    for (auto& n : group_members("toolchain")) {
        out.push_back(std::move(n));
    }
    for (const auto& n : native_tools()) {
        out.emplace_back(n.name);
    }
    return out;
}

std::string acceleration_name(const Acceleration& acc) {
    switch (acc.mode) {
    case Acceleration::Mode::none:
        return "none";
    case Acceleration::Mode::defaults:
        return "toolchain,shell";
    case Acceleration::Mode::listed:
        break;
    }
    std::string out;
    for (const auto& t : acc.tools) {
        out += (out.empty() ? "" : ",") + t;
    }
    return out;
}

Result<Acceleration> parse_acceleration(std::string_view text) {
    if (text == "none") {
        return Acceleration{};
    }
    if (text.empty() || text == "default" || text == "all") {
        return Acceleration{Acceleration::Mode::defaults, {}};
    }
    Acceleration acc{Acceleration::Mode::listed, {}};
    const auto known = root_tool_names();
    std::string item;
    for (std::size_t i = 0; i <= text.size(); ++i) {
        if (i < text.size() && text[i] != ',') {
            item += text[i];
            continue;
        }
        if (item.empty()) {
            continue;
        }
        if (std::ranges::find(known, item) == known.end()) {
            std::string list;
            for (const auto& k : known) {
                list += (list.empty() ? "" : ",") + k;
            }
            return fail("accelerate " + std::string(text), "unknown tool '" + item + "'",
                        "name some of: " + list + "; or none, or nothing for the default list");
        }
        acc.tools.push_back(item);
        item.clear();
    }
    return acc;
}

Result<void> check_acceleration(const Acceleration& acc) {
    if (acc.mode == Acceleration::Mode::listed) {
        return check_company(wanted_tools(acc), false); // g++: known with the root
    }
    return {};
}

Result<const Arch*> root_arch(const fs::path& dir) {
    std::error_code ec;
    if (!fs::exists(dir, ec)) {
        return fail(ErrorKind::not_found, "use " + dir.string() + " as a root", "it does not exist",
                    "create one there with emurun root create");
    }
    if (!fs::is_directory(dir, ec)) {
        return fail(ErrorKind::bad_input, "use " + dir.string() + " as a root",
                    "it is not a directory (a root is a Debian root's directory)",
                    "create one in a directory of its own with emurun root create");
    }
    if (auto image = read_root_image(dir); !image || *image) { // an imported root
        return image ? oci_platform_arch((*image)->architecture, (*image)->variant)
                     : std::unexpected(image.error());
    }
    if (!fs::is_directory(dir / "var/lib/dpkg", ec) || !fs::exists(dir / "bin/sh", ec)) {
        return fail(ErrorKind::bad_input, "use " + dir.string() + " as a root",
                    "not a Debian root (no var/lib/dpkg or bin/sh in it)",
                    "create one there with emurun root create");
    }
    if (const std::string deb = first_line(dir / "var/lib/dpkg/arch"); !deb.empty()) {
        return find_arch(deb);
    }
    return root_detail::shell_arch(dir);
}

Result<const Arch*> root_detail::shell_arch(const fs::path& dir) {
    std::error_code ec;
    fs::path sh = dir / "bin/sh";
    for (int i = 0; i < 8 && fs::is_symlink(sh, ec); ++i) {
        const fs::path to = fs::read_symlink(sh, ec);
        sh = to.is_absolute() ? dir / to.relative_path() : sh.parent_path() / to;
    }
    auto info = read_elf(sh);
    if (!info) {
        return std::unexpected(info.error());
    }
    if (info->arch == nullptr) {
        return fail("use " + dir.string() + " as a root", "its bin/sh is of an unknown arch");
    }
    return info->arch;
}

namespace {

/// The root's directory, absolute: never empty, never the host's /.
Result<fs::path> root_dir(const fs::path& dir) {
    if (dir.empty()) {
        return fail("use a root", "no directory given (an empty path)",
                    "name the root's directory, one emurun root create made");
    }
    std::error_code ec;
    const fs::path abs = fs::absolute(dir, ec).lexically_normal();
    if (ec) {
        return fail("use " + dir.string() + " as a root", ec.message());
    }
    if (abs == "/") {
        return fail(ErrorKind::bad_input, "use / as a root",
                    "it is the host's own root directory, not a foreign-arch Debian root",
                    "create one in a directory of its own with emurun root create");
    }
    return abs;
}

/// The root's arch: the expected one (if any), and foreign to this host.
Result<const Arch*> checked_arch(const RootSpec& spec, const fs::path& dir) {
    const Arch* arch = EMURUN_TRY(root_arch(dir));
    if (spec.arch != nullptr && arch != spec.arch) {
        return fail(ErrorKind::bad_input,
                    "use " + dir.string() + " as " + with_article(spec.arch->name) + " root",
                    "it is " + with_article(arch->name) +
                        " root (var/lib/dpkg/arch: " + arch->debian + ")",
                    "create " + with_article(spec.arch->name) + " root, or expect " + arch->name +
                        " instead",
                    "arch");
    }
    if (runs_natively(*arch)) {
        return std::unexpected(native_root_error("use " + dir.string() + " as a root", *arch));
    }
    return arch;
}

} // namespace

Result<RootPlan> plan_root(const RootSpec& spec) {
    EMURUN_TRY(check_acceleration(spec.accelerate));
    RootPlan plan;
    plan.dir = EMURUN_TRY(root_dir(spec.dir));
    plan.arch = EMURUN_TRY(checked_arch(spec, plan.dir));
    EMURUN_TRY(check_mount_points(plan.dir));
    for (const auto& b : spec.binds) {
        if (auto r = check_bind(plan.dir, b); !r) {
            return std::unexpected(r.error());
        }
    }
    auto entry = private_binfmt_entry(*plan.arch, spec.emulators);
    if (!entry) {
        return std::unexpected(entry.error());
    }
    plan.entry = *entry;
    plan.binds = spec.binds;
    plan.cwd = spec.cwd.value_or("/");
    plan.env = root_environment(spec.env);
    if (auto r = plan_tools(spec, plan); !r) {
        return std::unexpected(r.error());
    }
    return plan;
}

} // namespace emurun
