// Which QEMU ran each emulated step: the report's emulator record, and report compare naming a
// change of emulator path, version or CPU model between two runs.
#include <emurun/report.hpp>

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <string>

using namespace emurun;

namespace {

EmulatorRecord qemu(std::string version, std::string cpu = "max", bool cpu_default = true) {
    return {"/usr/bin/qemu-aarch64-static", std::move(version), std::move(cpu), cpu_default};
}

Report report_of(std::optional<EmulatorRecord> unit, std::optional<EmulatorRecord> other) {
    Report r;
    r.pipeline = "p";
    for (auto [name, e] : {std::pair{"unit", unit}, std::pair{"other", other}}) {
        StepResult s;
        s.name = name;
        s.status = StepStatus::passed;
        s.exit_code = 0;
        s.wall = 2;
        s.emulator = e;
        r.steps.push_back(s);
    }
    return r;
}

} // namespace

TEST_CASE("report: an emulated step's emulator in JSON, null for a native step") {
    const Report r = report_of(qemu("7.2.22"), std::nullopt);
    auto j = r.to_json();
    CHECK(j["steps"][0]["emulator"] == nlohmann::json{{"path", "/usr/bin/qemu-aarch64-static"},
                                                      {"version", "7.2.22"},
                                                      {"cpu", "max"},
                                                      {"cpu_default", true}});
    CHECK(j["steps"][1]["emulator"].is_null());
    auto back = Report::from_json(j, "r.json");
    REQUIRE_MESSAGE(back.has_value(), back.error().message());
    CHECK(*back == r);
    j["steps"][1].erase("emulator"); // reports written before the field: none
    CHECK(Report::from_json(j, "r.json").has_value());
    j["steps"][0]["emulator"] = "qemu";
    auto bad = Report::from_json(j, "r.json");
    REQUIRE_FALSE(bad.has_value());
    CHECK(bad.error().message().find("steps[0].emulator") != std::string::npos);
    j["steps"][0]["emulator"] = {{"path", 3}};
    CHECK_FALSE(Report::from_json(j, "r.json").has_value());
}

TEST_CASE("report: compare names each step whose emulator version or CPU model changed") {
    const Report before = report_of(qemu("7.2.21"), qemu("7.2.21"));
    Report after = report_of(qemu("7.2.22"), qemu("7.2.21", "cortex-a72", false));
    auto changes = emulator_changes(before, after);
    REQUIRE(changes.size() == 2);
    CHECK(changes[0].describe() ==
          "unit: /usr/bin/qemu-aarch64-static 7.2.21 (cpu max, the default) -> "
          "/usr/bin/qemu-aarch64-static 7.2.22 (cpu max, the default)");
    CHECK(changes[1].describe().ends_with("7.2.21 (cpu cortex-a72)"));
    const std::string table = compare_table(before, after);
    CHECK(table.find("emulator changed: unit: ") != std::string::npos);
    CHECK(table.find("emulator changed: other: ") != std::string::npos);
    auto j = compare_json(before, after);
    REQUIRE(j["emulator_changes"].size() == 2);
    CHECK(j["emulator_changes"][0]["name"] == "unit");
    CHECK(j["emulator_changes"][0]["before"]["version"] == "7.2.21");
    CHECK(j["emulator_changes"][0]["after"]["version"] == "7.2.22");
    // The same emulator, or a step that did not run in one of them: nothing to say.
    CHECK(emulator_changes(before, before).empty());
    CHECK(compare_table(before, before).find("emulator changed") == std::string::npos);
    after.steps[0].status = StepStatus::skipped;
    after.steps[0].emulator.reset();
    after.steps[1].emulator.reset(); // ran natively this time
    changes = emulator_changes(before, after);
    REQUIRE(changes.size() == 1);
    CHECK(changes[0].describe().ends_with("-> (not emulated)"));
}
