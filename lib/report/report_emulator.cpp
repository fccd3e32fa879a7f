// Which QEMU ran each emulated step and which image each root step's root was made from: their
// records in the report's JSON, and what changed between two reports (report compare).
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

util::Json image_json(const std::optional<ImageRecord>& image) {
    if (!image) {
        return nullptr;
    }
    return {
        {"reference", image->reference}, {"platform", image->platform}, {"digest", image->digest}};
}

Result<std::optional<ImageRecord>> image_from(const util::Json& step, const util::Place& step_at) {
    if (!step.contains("image") || step["image"].is_null()) {
        return std::optional<ImageRecord>{};
    }
    const util::Json& j = step["image"];
    const util::Place at = step_at.key("image");
    EMURUN_TRY(util::check_object(j, at, {"reference", "platform", "digest"}));
    ImageRecord image;
    for (auto [key, into] :
         {std::pair{"reference", &image.reference}, std::pair{"platform", &image.platform},
          std::pair{"digest", &image.digest}}) {
        if (!j.contains(key)) {
            return at.key(key).fail("missing", "use the report as emurun wrote it");
        }
        auto v = EMURUN_TRY(util::get_string(j[key], at.key(key)));
        *into = v;
    }
    if (image.reference.empty()) {
        return at.key("reference").fail("is empty", "use the report as emurun wrote it");
    }
    return std::optional<ImageRecord>(std::move(image));
}

} // namespace detail

namespace {

// The steps of `after` that ran in both reports (one that did not run in one of them, skipped
// or not_run, has no record to compare) whose record `field` differs: {step, before, after}.
template <class Change, class Record, class Differ = std::not_equal_to<>>
std::vector<Change> record_changes(const Report& before, const Report& after,
                                   std::optional<Record> StepResult::*field, Differ differ = {}) {
    const auto ran = [](const StepResult& s) {
        return s.status != StepStatus::skipped && s.status != StepStatus::not_run;
    };
    std::vector<Change> out;
    for (const auto& s : after.steps) {
        const StepResult* b = before.find(s.name);
        if (b != nullptr && ran(*b) && ran(s) && differ((*b).*field, s.*field)) {
            out.push_back({s.name, (*b).*field, s.*field});
        }
    }
    return out;
}

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
    return record_changes<EmulatorChange>(before, after, &StepResult::emulator);
}

std::string detail::describe_image(const std::optional<ImageRecord>& i) {
    if (!i) {
        return "(no image)";
    }
    const std::string digest = i->digest.empty() ? "digest unknown" : i->digest.substr(0, 19);
    return i->reference + " (" + (i->platform.empty() ? "?" : i->platform) + ", " + digest + ")";
}

std::string ImageChange::describe() const {
    return step + ": " + detail::describe_image(before) + " -> " + detail::describe_image(after);
}

std::vector<ImageChange> image_changes(const Report& before, const Report& after) {
    // The same image is the same platform and digest, wherever the checkout put its file (CI
    // jobs' workspaces differ: /builds/ID/...); without both digests the reference decides.
    const auto differ = [](const std::optional<ImageRecord>& a,
                           const std::optional<ImageRecord>& b) {
        if (!a || !b || a->digest.empty() || b->digest.empty()) {
            return a != b;
        }
        return a->platform != b->platform || a->digest != b->digest;
    };
    return record_changes<ImageChange>(before, after, &StepResult::image, differ);
}

} // namespace emurun
