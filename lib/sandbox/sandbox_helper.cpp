// The sandbox launch mode: sandbox_argv() re-enters an emurun executable with the spec as JSON
// (util/helper_call.hpp, the protocol root steps use too); run_if_sandbox_helper() in that
// fresh, single-threaded process enters the sandbox. No CLI syntax travels.
#include "sandbox/sandbox_internal.hpp"
#include "sandbox/sandbox_versions.hpp"
#include "util/helper_call.hpp"

#include <nlohmann/json.hpp>

namespace emurun {
namespace {

using Json = nlohmann::json;

constexpr util::HelperCall k_call{k_sandbox_helper_marker, "sandbox", "sandbox_argv()"};

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
    return util::helper_spec_text(k_call, spec_json(spec));
}

Result<SandboxSpec> detail::sandbox_spec_from_json(std::string_view text) {
    try {
        return spec_from(Json::parse(text));
    } catch (const Json::exception& e) {
        return std::unexpected(util::helper_spec_error(k_call, e.what()));
    }
}

Result<std::vector<std::string>> sandbox_argv(const SandboxSpec& given,
                                              const std::vector<std::string>& inner) {
    std::optional<SandboxSpec> upgraded;
    const SandboxSpec* ours = EMURUN_TRY(util::caller_form(given, upgraded));
    const SandboxSpec& spec = *ours;
    if (spec.arches.empty() || inner.empty()) { // before looking for emurun: the caller's fault
        return fail("build the sandbox command", spec.arches.empty() ? "no arch" : "no command");
    }
    return util::helper_argv(k_call, EMURUN_TRY(find_emurun_exe(spec)), spec_json(spec), inner);
}

std::optional<SandboxFailure> run_if_sandbox_helper(int argc, char** argv,
                                                    const DiagnosticSink& diagnostics) {
    auto call = util::read_helper_call(k_call, argc, argv);
    if (!call) {
        return std::nullopt;
    }
    if (!*call) {
        return SandboxFailure{call->error()};
    }
    auto spec = detail::sandbox_spec_from_json((*call)->spec);
    if (!spec) {
        return SandboxFailure{spec.error()};
    }
    spec->diagnostics = diagnostics;
    return exec_in_sandbox(*spec, (*call)->command);
}

} // namespace emurun
