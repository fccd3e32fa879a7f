// The JSON of a binfmt_misc table (`emurun binfmt status --json`).
#include "binfmt/binfmt_text.hpp"

#include <emurun/binfmt.hpp>
#include <emurun/json.hpp>

#include <nlohmann/json.hpp>

namespace emurun {
namespace {

nlohmann::json entry_json(const BinfmtEntry& e) {
    const Arch* arch = binfmt_entry_arch(e);
    auto line = format_binfmt_line(e);
    return {{"name", e.name},
            {"enabled", e.enabled},
            {"type", to_string(e.type)},
            {"arch", arch ? nlohmann::json(arch->name) : nlohmann::json(nullptr)},
            {"interpreter", e.interpreter},
            {"flags", e.flags.to_string()},
            {"offset", e.offset},
            {"magic", detail::escape_binfmt_bytes(e.magic, ':')},
            {"mask", detail::escape_binfmt_bytes(e.mask, ':')},
            {"line", line ? nlohmann::json(*line) : nlohmann::json(nullptr)}};
}

} // namespace

std::string binfmt_apply_json(const BinfmtApplyResult& r, int indent) {
    nlohmann::json items = nlohmann::json::array();
    for (const auto& item : r.plan.items) {
        const bool removal =
            item.action == BinfmtAction::remove || item.action == BinfmtAction::absent;
        items.push_back(
            {{"action", to_string(item.action)},
             {"name", item.wanted.name},
             {"wanted", removal ? nlohmann::json(nullptr) : entry_json(item.wanted)},
             {"current", item.current ? entry_json(*item.current) : nlohmann::json(nullptr)},
             {"detail", item.detail}});
    }
    return json_text(nlohmann::json{{"applied", r.applied},
                                    {"conflict", r.plan.has_conflict()},
                                    {"warnings", r.warnings},
                                    {"plan", items}},
                     indent);
}

std::string binfmt_verify_json(const std::vector<BinfmtVerifyResult>& results, int indent) {
    nlohmann::json all = nlohmann::json::array();
    bool ok = true;
    for (const auto& v : results) {
        all.push_back({{"arch", v.arch}, {"ok", v.ok}, {"detail", v.detail}});
        ok = ok && v.ok;
    }
    return json_text(nlohmann::json{{"ok", ok}, {"arches", all}}, indent);
}

std::string binfmt_status_json(const std::filesystem::path& mount, const BinfmtTable& table,
                               int indent) {
    nlohmann::json j{{"mount", mount.string()},
                     {"enabled", table.enabled},
                     {"entries", nlohmann::json::array()}};
    for (const auto& e : table.entries) {
        j["entries"].push_back(entry_json(e));
    }
    return json_text(j, indent);
}

} // namespace emurun
