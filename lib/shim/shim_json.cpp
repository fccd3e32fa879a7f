// The JSON of a shim directory's listing (`emurun shim list --json`).
#include <emurun/json.hpp>
#include <emurun/shim.hpp>

#include <nlohmann/json.hpp>

namespace emurun {

std::string shim_list_json(const std::vector<ShimInfo>& shims, int indent) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& s : shims) {
        nlohmann::json j{
            {"name", s.name}, {"path", s.path.string()}, {"target", s.target.string()},
            {"arch", s.arch}, {"native", s.native},      {"emulator", s.emulator.string()},
            {"env", s.env}};
        j["ld_prefix"] = s.ld_prefix ? nlohmann::json(s.ld_prefix->string()) : nlohmann::json();
        out.push_back(std::move(j));
    }
    return json_text(out, indent);
}

} // namespace emurun
