// The sandbox launch mode: sandbox_argv() re-enters an emurun executable with a marker and the
// spec as JSON; run_if_sandbox_helper() in that fresh, single-threaded process enters the
// sandbox. No CLI syntax travels: the spec is data the library writes and reads.
#include "sandbox/sandbox_internal.hpp"

#include <nlohmann/json.hpp>

namespace emurun {
namespace {

using Json = nlohmann::json;

Json optional_path(const std::optional<std::filesystem::path>& p) {
    return p ? Json(p->string()) : Json(nullptr);
}

std::optional<std::filesystem::path> path_or_null(const Json& j) {
    if (j.is_null()) {
        return std::nullopt;
    }
    return std::filesystem::path(j.get<std::string>());
}

Json spec_json(const SandboxSpec& spec) {
    Json j{{"arches", Json::array()},
           {"sysroots", Json::array()},
           {"env", spec.env},
           {"cpu", spec.cpu ? Json(*spec.cpu) : Json(nullptr)},
           {"emulators",
            {{"dirs", Json::array()},
             {"system", spec.emulators.system},
             {"prefer_static", spec.emulators.prefer_static}}},
           {"emurun_exe", optional_path(spec.emurun_exe)},
           {"cache_dir", optional_path(spec.cache_dir)}};
    for (const Arch* a : spec.arches) {
        j["arches"].push_back(a->name);
    }
    for (const auto& s : spec.sysroots) {
        j["sysroots"].push_back(
            {{"arch", s.arch ? Json(s.arch->name) : Json(nullptr)}, {"dir", s.dir.string()}});
    }
    for (const auto& d : spec.emulators.dirs) {
        j["emulators"]["dirs"].push_back(d.string());
    }
    return j;
}

// Throws nlohmann's exceptions on a malformed document; the caller turns them into an Error.
Result<SandboxSpec> spec_from(const Json& j) {
    SandboxSpec spec;
    for (const auto& name : j.at("arches")) {
        spec.arches.push_back(EMURUN_TRY(find_arch(name.get<std::string>())));
    }
    for (const auto& s : j.at("sysroots")) {
        const Arch* arch = nullptr;
        if (!s.at("arch").is_null()) {
            arch = EMURUN_TRY(find_arch(s.at("arch").get<std::string>()));
        }
        spec.sysroots.push_back(SandboxSysroot{arch, s.at("dir").get<std::string>()});
    }
    spec.env = j.at("env").get<std::vector<std::pair<std::string, std::string>>>();
    if (!j.at("cpu").is_null()) {
        spec.cpu = j.at("cpu").get<std::string>();
    }
    const Json& emu = j.at("emulators");
    for (const auto& d : emu.at("dirs")) {
        spec.emulators.dirs.emplace_back(d.get<std::string>());
    }
    spec.emulators.system = emu.at("system").get<bool>();
    spec.emulators.prefer_static = emu.at("prefer_static").get<bool>();
    spec.emurun_exe = path_or_null(j.at("emurun_exe"));
    spec.cache_dir = path_or_null(j.at("cache_dir"));
    return spec;
}

} // namespace

Result<std::string> detail::sandbox_spec_to_json(const SandboxSpec& spec) {
    try {
        return spec_json(spec).dump();
    } catch (const Json::exception& e) { // type_error 316: a string that is not UTF-8
        return fail("pass the sandbox spec to a fresh emurun", e.what(),
                    "use UTF-8 paths and variables for sandbox steps");
    }
}

Result<SandboxSpec> detail::sandbox_spec_from_json(std::string_view text) {
    try {
        return spec_from(Json::parse(text));
    } catch (const Json::exception& e) {
        return fail("read the sandbox spec", e.what(),
                    "the sandbox helper takes only what sandbox_argv() writes");
    }
}

Result<std::vector<std::string>> sandbox_argv(const SandboxSpec& spec,
                                              const std::vector<std::string>& inner) {
    if (spec.arches.empty() || inner.empty()) {
        return fail("build the sandbox command", spec.arches.empty() ? "no arch" : "no command");
    }
    const auto exe = EMURUN_TRY(find_emurun_exe(spec));
    auto json = EMURUN_TRY(detail::sandbox_spec_to_json(spec));
    std::vector<std::string> argv{exe.string(), std::string(k_sandbox_helper_marker),
                                  std::move(json)};
    argv.insert(argv.end(), inner.begin(), inner.end());
    return argv;
}

std::optional<SandboxFailure> run_if_sandbox_helper(int argc, char** argv,
                                                    const DiagnosticSink& diagnostics) {
    if (argc < 2 || argv[1] != k_sandbox_helper_marker) {
        return std::nullopt;
    }
    if (argc < 4) {
        return SandboxFailure{Error{"emurun sandbox helper", "no spec or no command",
                                    "it runs only what sandbox_argv() builds"}};
    }
    auto spec = detail::sandbox_spec_from_json(argv[2]);
    if (!spec) {
        return SandboxFailure{spec.error()};
    }
    spec->diagnostics = diagnostics;
    return exec_in_sandbox(*spec, std::vector<std::string>(argv + 3, argv + argc));
}

} // namespace emurun
