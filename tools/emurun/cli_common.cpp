#include "cli_common.hpp"

#include "cli.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <sstream>
#include <string_view>
#include <utility>

namespace emurun::cli {

std::string flag_spelling(std::string_view field) {
    static constexpr std::pair<std::string_view, std::string_view> k_flags[] = {
        {"baseline_factor", "--threshold, e.g. 10"},
        {"job_limit_share", "--job-limit-share, in percent, e.g. 80"},
        {"sysroots", "--sysroot"},
        {"binds", "--bind"},
        {"arches", "--arch"},
        {"argv", "CMD ARGS after --"},
        {"cache=false", "--no-cache"},
    };
    for (const auto& [name, flag] : k_flags) {
        if (field == name) {
            return std::string(flag);
        }
    }
    // Every other field is the flag of the same name: "lock_file" -> "--lock-file",
    // "accelerate=none" -> "--accelerate=none".
    std::string flag = "--" + std::string(field.substr(0, field.find('=')));
    std::ranges::replace(flag, '_', '-');
    const auto eq = field.find('=');
    return eq == std::string_view::npos ? flag : flag + std::string(field.substr(eq));
}

std::string error_text(const Error& e) {
    // "emurun: error: " says emurun's name already: a `what` naming a command ("emurun root
    // run") or emurun itself says it once ("root run: no command given"), not twice.
    if (e.what == "emurun" || e.what.starts_with("emurun ")) {
        Error said = e;
        said.what.erase(0, std::min<std::size_t>(said.what.size(), 7));
        return said.message(flag_spelling);
    }
    return e.message(flag_spelling);
}

std::map<std::string, std::string> parse_env_assignments(const std::vector<std::string>& items) {
    std::map<std::string, std::string> out;
    for (const auto& item : items) {
        auto eq = item.find('=');
        if (eq == std::string::npos || eq == 0) {
            throw Failure(Error{"--env " + item, "expected NAME=VALUE", "e.g. --env LANG=C"},
                          k_exit_usage);
        }
        out[item.substr(0, eq)] = item.substr(eq + 1);
    }
    return out;
}

std::vector<std::filesystem::path> to_paths(const std::vector<std::string>& items) {
    return {items.begin(), items.end()};
}

void warn_baseline_misses(const std::vector<std::string>& steps, const std::string& baseline) {
    if (steps.empty()) {
        return;
    }
    std::string names;
    for (std::size_t i = 0; i < steps.size() && i < 5; ++i) {
        names += (i == 0 ? "" : ", ") + steps[i];
    }
    if (steps.size() > 5) {
        names += " and " + std::to_string(steps.size() - 5) + " more";
    }
    spdlog::warn(
        "baseline {}: no native step of the same template or name for {} emulated step{} ({}): "
        "no factor and no baseline flag for {} (give the native run of the same "
        "pipeline: emurun run PIPELINE --native)",
        baseline, steps.size(), steps.size() == 1 ? "" : "s", names,
        steps.size() == 1 ? "it" : "them");
}

std::vector<std::string> split_list(const std::vector<std::string>& items) {
    std::vector<std::string> out;
    for (const auto& item : items) {
        std::stringstream ss(item);
        std::string part;
        while (std::getline(ss, part, ',')) {
            if (!part.empty()) {
                out.push_back(part);
            }
        }
    }
    return out;
}

} // namespace emurun::cli
