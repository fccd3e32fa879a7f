// The root launch mode: root_argv() re-enters an emurun executable with the RootSpec as JSON
// (util/helper_call.hpp, the protocol sandbox steps use too); run_if_root_helper() in that
// fresh process enters the root. No CLI syntax travels.
#include "root/root_internal.hpp"
#include "util/helper_call.hpp"

#include <nlohmann/json.hpp>

namespace emurun {
namespace {

using Json = nlohmann::json;

constexpr util::HelperCall k_call{k_root_helper_marker, "root", "root_argv()"};

Json accel_json(const Acceleration& acc) {
    const char* mode = acc.mode == Acceleration::Mode::none       ? "none"
                       : acc.mode == Acceleration::Mode::defaults ? "defaults"
                                                                  : "listed";
    return Json{{"mode", mode},
                {"tools", acc.tools},
                {"allow_revision_mismatch", acc.allow_revision_mismatch},
                {"probe", acc.probe}};
}

Json spec_json(const RootSpec& spec) {
    Json j{{"dir", spec.dir.string()},
           {"arch", spec.arch ? Json(spec.arch->name) : Json(nullptr)},
           {"binds", Json::array()},
           {"cwd", spec.cwd ? Json(spec.cwd->string()) : Json(nullptr)},
           {"env", spec.env},
           {"accelerate", accel_json(spec.accelerate)},
           {"network_config", spec.network_config},
           {"emulators",
            {{"dirs", Json::array()},
             {"system", spec.emulators.system},
             {"prefer_static", spec.emulators.prefer_static}}}};
    for (const auto& b : spec.binds) {
        j["binds"].push_back(
            {{"source", b.source.string()}, {"target", b.target.string()}, {"ro", b.read_only}});
    }
    for (const auto& d : spec.emulators.dirs) {
        j["emulators"]["dirs"].push_back(d.string());
    }
    return j;
}

Acceleration accel_from(const Json& j) {
    Acceleration acc;
    const auto mode = j.at("mode").get<std::string>();
    acc.mode = mode == "defaults" ? Acceleration::Mode::defaults
               : mode == "listed" ? Acceleration::Mode::listed
                                  : Acceleration::Mode::none;
    acc.tools = j.at("tools").get<std::vector<std::string>>();
    acc.allow_revision_mismatch = j.at("allow_revision_mismatch").get<bool>();
    acc.probe = j.at("probe").get<bool>();
    return acc;
}

// Throws nlohmann's exceptions on a malformed document; the caller turns them into an Error.
Result<RootSpec> spec_from(const Json& j) {
    RootSpec spec;
    spec.dir = j.at("dir").get<std::string>();
    if (!j.at("arch").is_null()) {
        spec.arch = EMURUN_TRY(find_arch(j.at("arch").get<std::string>()));
    }
    for (const auto& b : j.at("binds")) {
        spec.binds.push_back(RootBind{b.at("source").get<std::string>(),
                                      b.at("target").get<std::string>(), b.at("ro").get<bool>()});
    }
    if (!j.at("cwd").is_null()) {
        spec.cwd = j.at("cwd").get<std::string>();
    }
    spec.env = j.at("env").get<std::vector<std::pair<std::string, std::string>>>();
    spec.accelerate = accel_from(j.at("accelerate"));
    spec.network_config = j.at("network_config").get<bool>();
    const Json& emu = j.at("emulators");
    for (const auto& d : emu.at("dirs")) {
        spec.emulators.dirs.emplace_back(d.get<std::string>());
    }
    spec.emulators.system = emu.at("system").get<bool>();
    spec.emulators.prefer_static = emu.at("prefer_static").get<bool>();
    return spec;
}

} // namespace

Result<std::string> root_detail::root_spec_to_json(const RootSpec& spec) {
    return util::helper_spec_text(k_call, spec_json(spec));
}

Result<RootSpec> root_detail::root_spec_from_json(std::string_view text) {
    try {
        return spec_from(Json::parse(text));
    } catch (const Json::exception& e) {
        return std::unexpected(util::helper_spec_error(k_call, e.what()));
    }
}

Result<std::vector<std::string>> root_argv(const std::filesystem::path& emurun_exe,
                                           const RootSpec& spec,
                                           const std::vector<std::string>& inner) {
    return util::helper_argv(k_call, emurun_exe, spec_json(spec), inner);
}

std::optional<Result<ExitStatus>> run_if_root_helper(int argc, char** argv,
                                                     const DiagnosticSink& diagnostics) {
    auto call = util::read_helper_call(k_call, argc, argv);
    if (!call) {
        return std::nullopt;
    }
    if (!*call) {
        return std::unexpected(call->error());
    }
    auto spec = root_detail::root_spec_from_json((*call)->spec);
    if (!spec) {
        return std::unexpected(spec.error());
    }
    spec->diagnostics = diagnostics;
    return exec_in_root(*spec, (*call)->command);
}

} // namespace emurun
