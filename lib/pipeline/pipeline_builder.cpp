// PipelineBuilder: a pipeline written in C++ is written out as the pipeline JSON and loaded by
// Pipeline::parse, so the defaults and every check are the loader's, never a second copy of them.
// This file only spells typed values the way the JSON does.
#include "util/json.hpp"

#include <emurun/json.hpp>
#include <emurun/pipeline.hpp>

#include <optional>
#include <system_error>
#include <utility>

namespace emurun {
namespace {

using util::Json;

// Milliseconds, which parse_duration reads back exactly ("0ms" and "-5ms" fail there, as in a
// file).
std::string duration_text(Duration d) {
    return std::to_string(d.count()) + "ms";
}

Json path_list(const std::vector<std::filesystem::path>& paths) {
    Json out = Json::array();
    for (const auto& p : paths) {
        out.push_back(p.string());
    }
    return out;
}

Json retries_json(const Retries& r) {
    Json on = Json::array();
    for (auto [flag, name] :
         {std::pair{r.on_emulator_crash, "emulator_crash"}, std::pair{r.on_timed_out, "timed_out"},
          std::pair{r.on_failed, "failed"}}) {
        if (flag) {
            on.push_back(name);
        }
    }
    return Json{{"count", r.count}, {"on", on}};
}

Json limits_json(const StepLimits& l) {
    Json out = Json::object();
    if (l.pids) {
        out["pids"] = *l.pids;
    }
    if (l.memory_bytes) {
        out["memory"] = *l.memory_bytes;
    }
    if (l.cpus) {
        out["cpu"] = *l.cpus;
    }
    return out;
}

// "accelerate": true/false, a tool list, or the object form when allow_revision_mismatch is set.
void put_accelerate(const StepDefaults& d, Json& into) {
    if (!d.accelerate && !d.accelerate_tools && !d.allow_revision_mismatch) {
        return;
    }
    const bool on = d.accelerate.value_or(true);
    Json tools = on && d.accelerate_tools && !d.accelerate_tools->empty()
                     ? Json(*d.accelerate_tools)
                     : Json(on);
    if (!d.allow_revision_mismatch) {
        into["accelerate"] = tools;
        return;
    }
    into["accelerate"] =
        Json{{"tools", tools}, {"allow_revision_mismatch", *d.allow_revision_mismatch}};
}

// The strings and durations of the keys shared by "defaults" and steps.
void put_scalars(const StepDefaults& d, Json& into) {
    for (auto [key, value] :
         {std::pair{"arch", &d.arch}, std::pair{"cpu", &d.cpu}, std::pair{"qemu", &d.qemu}}) {
        if (*value) {
            into[key] = **value;
        }
    }
    for (auto [key, value] :
         {std::pair{"timeout", &d.timeout}, std::pair{"idle_timeout", &d.idle_timeout}}) {
        if (*value) {
            into[key] = duration_text(**value);
        }
    }
    if (d.emulation) {
        into["emulation"] = std::string(to_string(*d.emulation));
    }
    if (d.junit_missing) {
        into["junit_missing"] = std::string(to_string(*d.junit_missing));
    }
    if (d.root) {
        const std::string platform = d.root_platform.value_or("");
        into["root"] = d.root->string() + (platform.empty() ? "" : "#" + platform);
    }
    if (!d.cwd.empty()) {
        into["cwd"] = d.cwd.string();
    }
}

// The keys a step shares with "defaults"; what is unset is left out (the defaults' then).
Json settings_json(const StepDefaults& d) {
    Json out = Json::object();
    put_scalars(d, out);
    if (!d.sysroots.empty()) {
        out["sysroots"] = path_list(d.sysroots);
    }
    if (!d.shim_dirs.empty()) {
        out["shim_dirs"] = path_list(d.shim_dirs);
    }
    if (!d.env.empty()) {
        out["env"] = Json(d.env);
    }
    if (d.retries) {
        out["retries"] = retries_json(*d.retries);
    }
    if (Json limits = limits_json(d.limits); !limits.empty()) {
        out["limits"] = std::move(limits);
    }
    put_accelerate(d, out);
    return out;
}

Json step_json(const StepSpec& s) {
    Json out = settings_json(s.settings);
    out["name"] = s.name;
    out["kind"] = std::string(to_string(s.kind));
    // A shell step's argv is its script; anything else is written as given for the loader to judge.
    out["argv"] = s.shell && s.argv.size() == 1 ? Json(s.argv.front()) : Json(s.argv);
    if (s.shell) {
        out["shell"] = true;
    }
    if (s.budget) {
        out["budget"] = duration_text(*s.budget);
    }
    for (auto [key, list] : {std::pair{"needs", &s.needs}, std::pair{"tags", &s.tags},
                             std::pair{"junit", &s.junit}, std::pair{"outputs", &s.outputs}}) {
        if (!list->empty()) {
            out[key] = *list;
        }
    }
    return out;
}

// The place ("steps[1].env.A") of the first string (key or value) of `j` that is not UTF-8, which
// JSON text cannot hold (json_text would write U+FFFD: another path, another name).
std::optional<std::string> not_utf8(const Json& j, const std::string& at) {
    if (j.is_string()) {
        return is_utf8(j.get_ref<const std::string&>()) ? std::nullopt : std::optional(at);
    }
    if (j.is_array()) {
        for (std::size_t i = 0; i < j.size(); ++i) {
            if (auto bad = not_utf8(j[i], at + "[" + std::to_string(i) + "]")) {
                return bad;
            }
        }
    }
    if (j.is_object()) {
        for (const auto& [k, v] : j.items()) {
            const std::string place = at.empty() ? k : at + "." + k;
            if (!is_utf8(k)) {
                return place;
            }
            if (auto bad = not_utf8(v, place)) {
                return bad;
            }
        }
    }
    return std::nullopt;
}

Json document(const std::string& name, const StepDefaults& defaults,
              const std::vector<StepSpec>& specs) {
    Json steps = Json::array();
    for (const auto& s : specs) {
        steps.push_back(step_json(s));
    }
    Json doc{{"name", name}, {"steps", steps}};
    if (Json d = settings_json(defaults); !d.empty()) {
        doc["defaults"] = std::move(d);
    }
    return doc;
}

} // namespace

PipelineBuilder::PipelineBuilder(std::string name) : m_name(std::move(name)) {}

PipelineBuilder& PipelineBuilder::defaults(StepDefaults defaults) {
    m_defaults = std::move(defaults);
    return *this;
}

PipelineBuilder& PipelineBuilder::step(StepSpec step) {
    m_steps.push_back(std::move(step));
    return *this;
}

PipelineBuilder& PipelineBuilder::base_dir(std::filesystem::path dir) {
    m_base_dir = std::move(dir);
    return *this;
}

std::string PipelineBuilder::json() const {
    return json_text(document(m_name, m_defaults, m_steps), 2);
}

Result<Pipeline> PipelineBuilder::build() const {
    const std::string source = m_name.empty() ? std::string("pipeline") : m_name;
    const Json doc = document(m_name, m_defaults, m_steps);
    if (auto bad = not_utf8(doc, "")) {
        return fail(ErrorKind::bad_input, source + ": " + *bad, "is not UTF-8 text",
                    "a pipeline holds UTF-8 names, paths and values only, as a pipeline file");
    }
    std::error_code ec;
    const std::filesystem::path base = m_base_dir ? *m_base_dir : std::filesystem::current_path(ec);
    if (ec) {
        return std::unexpected(system_error("find the current directory", ec.value(),
                                            "set the pipeline's base_dir()"));
    }
    return Pipeline::parse(json_text(doc, 2), source, base);
}

} // namespace emurun
