// Which QEMU ran each emulated step: its record in the report's JSON, and what changed between
// two reports (report compare).
#include "report/report_emulator.hpp"

namespace emurun {

namespace detail {

util::Json emulator_json(const std::optional<EmulatorRecord>& emulator) {
    if (!emulator) {
        return nullptr;
    }
    return {{"path", emulator->path},
            {"version", emulator->version},
            {"cpu", emulator->cpu},
            {"cpu_default", emulator->cpu_default}};
}

Result<std::optional<EmulatorRecord>> emulator_from(const util::Json& step,
                                                    const util::Place& step_at) {
    if (!step.contains("emulator") || step["emulator"].is_null()) {
        return std::optional<EmulatorRecord>{};
    }
    const util::Json& j = step["emulator"];
    const util::Place at = step_at.key("emulator");
    if (!j.is_object()) {
        return at.fail("expected an object or null, got " + util::describe(j));
    }
    EmulatorRecord e;
    for (auto [key, into] :
         {std::pair{"path", &e.path}, std::pair{"version", &e.version}, std::pair{"cpu", &e.cpu}}) {
        auto v = EMURUN_TRY(util::get_string(j.value(key, util::Json("")), at.key(key)));
        *into = v;
    }
    auto cpu_default = EMURUN_TRY(
        util::get_bool(j.value("cpu_default", util::Json(false)), at.key("cpu_default")));
    e.cpu_default = cpu_default;
    return std::optional<EmulatorRecord>(std::move(e));
}

} // namespace detail

namespace {

std::string describe_record(const std::optional<EmulatorRecord>& e) {
    if (!e) {
        return "(not emulated)";
    }
    std::string text = e->path.empty() ? "(unknown emulator)" : e->path;
    text += " " + (e->version.empty() ? std::string("(version unknown)") : e->version);
    if (!e->cpu.empty()) {
        text += " (cpu " + e->cpu + (e->cpu_default ? ", the default)" : ")");
    }
    return text;
}

} // namespace

std::string EmulatorChange::describe() const {
    return step + ": " + describe_record(before) + " -> " + describe_record(after);
}

std::vector<EmulatorChange> emulator_changes(const Report& before, const Report& after) {
    std::vector<EmulatorChange> out;
    for (const auto& s : after.steps) {
        const StepResult* b = before.find(s.name);
        // A step that did not run in one of them (skipped, not_run) has no record to compare.
        bool ran_both = b && s.status != StepStatus::skipped && s.status != StepStatus::not_run &&
                        b->status != StepStatus::skipped && b->status != StepStatus::not_run;
        if (ran_both && b->emulator != s.emulator) {
            out.push_back({s.name, b->emulator, s.emulator});
        }
    }
    return out;
}

} // namespace emurun
