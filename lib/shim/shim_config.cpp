#include "shim/shim_config.hpp"
#include "launch/launch_record.h"

#include <nlohmann/json.hpp>

#include <sys/stat.h>
#include <unistd.h>

namespace emurun::shim_detail {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

/// `p` relative to `base` when it lies inside it, so a moved shim dir keeps its sysroots.
std::string portable(const fs::path& p, const fs::path& base) {
    auto rel = p.lexically_normal().lexically_relative(base.lexically_normal());
    if (!rel.empty() && *rel.begin() != ".." && rel != ".") {
        return rel.string();
    }
    return p.string();
}

fs::path resolved(const std::string& p, const fs::path& base) {
    fs::path path(p);
    return path.is_absolute() || p.empty() ? path : base / path;
}

} // namespace

fs::path sidecar_path(const fs::path& shim_path) {
    return shim_path.parent_path() / k_shim_config_dir / (shim_path.filename().string() + ".json");
}

fs::path record_path(const fs::path& shim_path) {
    return shim_path.parent_path() / k_shim_config_dir / (shim_path.filename().string() + ".rec");
}

fs::path emurun_link_path(const fs::path& shim_path) {
    return shim_path.parent_path() / k_shim_config_dir /
           (shim_path.filename().string() + ELR_SHIM_EMURUN);
}

bool shim_files_ours(const fs::path& shim_path) {
    struct stat st {};
    const fs::path dir = shim_path.parent_path() / k_shim_config_dir;
    return ::lstat(dir.c_str(), &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == ::geteuid();
}

Result<std::string> to_sidecar(const ShimInfo& info) {
    const fs::path base = info.path.parent_path();
    json j{{"format", k_format}, {"name", info.name},     {"target", portable(info.target, base)},
           {"arch", info.arch},  {"native", info.native}, {"emulator", info.emulator.string()},
           {"env", info.env}};
    if (info.ld_prefix) {
        j["ld_prefix"] = portable(*info.ld_prefix, base);
    }
    if (info.cpu) {
        j["cpu"] = *info.cpu;
    }
    // Always written: an empty list is "the arch's default sysroots" when planned again.
    auto& roots = j["sysroots"] = json::array();
    for (const auto& r : info.sysroots) {
        roots.push_back(portable(r, base));
    }
    try {
        // Strict: a path with bytes that are not UTF-8 cannot go through JSON unchanged, and a
        // shim must run the very file it was given.
        return j.dump(2) + "\n";
    } catch (const json::exception&) {
        return fail("shim " + info.name, "a path or variable is not valid UTF-8",
                    "JSON cannot hold it unchanged: rename the file or directory");
    }
}

Result<ShimInfo> from_sidecar(const std::string& text, const fs::path& shim_path,
                              const fs::path& file) {
    const json j = json::parse(text, nullptr, false);
    const std::string what = "shim config " + file.string();
    const std::string hint = "recreate it with 'emurun shim add'";
    if (j.is_discarded() || !j.is_object()) {
        return fail(what, "not valid JSON", hint);
    }
    if (!j.contains("format") || !j["format"].is_number_integer() || j["format"] != k_format) {
        return fail(what, "unsupported format (want " + std::to_string(k_format) + ")", hint);
    }
    try {
        const fs::path base = shim_path.parent_path();
        ShimInfo info;
        info.name = j.at("name").get<std::string>();
        info.path = shim_path;
        info.target = resolved(j.at("target").get<std::string>(), base);
        info.arch = j.at("arch").get<std::string>();
        info.native = j.at("native").get<bool>();
        info.emulator = j.at("emulator").get<std::string>();
        info.env = j.at("env").get<std::map<std::string, std::string>>();
        if (j.contains("ld_prefix")) {
            info.ld_prefix = resolved(j.at("ld_prefix").get<std::string>(), base);
        }
        if (j.contains("cpu")) {
            info.cpu = j.at("cpu").get<std::string>();
        }
        if (j.contains("sysroots")) {
            for (const auto& r : j.at("sysroots").get<std::vector<std::string>>()) {
                info.sysroots.push_back(resolved(r, base));
            }
        } else if (info.ld_prefix) {
            info.sysroots.push_back(*info.ld_prefix); // written before "sysroots" was
        }
        return info;
    } catch (const json::exception& e) {
        return fail(what, e.what(), hint);
    }
}

} // namespace emurun::shim_detail
