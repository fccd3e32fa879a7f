// Calibration (include/emurun/calibrate.hpp): the --json document and the stored file.
#include "testdir.hpp"

#include <emurun/calibrate.hpp>

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <iterator>

using namespace emurun;

TEST_CASE("calibration_json: file and every measurement, in order, with its slowdown") {
    const auto j = calibration_json("/c/calibration.json",
                                    {{"aarch64", 0.5, 4.0, {}}, {"s390x", 0.25, 0.0, {}}});
    CHECK(j["file"] == "/c/calibration.json");
    REQUIRE(j["calibrations"].size() == 2);
    CHECK(j["calibrations"][0] == nlohmann::json{{"arch", "aarch64"},
                                                 {"native_seconds", 0.5},
                                                 {"emulated_seconds", 4.0},
                                                 {"slowdown", 8.0},
                                                 {"phases", nlohmann::json::array()}});
    CHECK(j["calibrations"][1]["arch"] == "s390x");
    CHECK(j["calibrations"][1]["slowdown"] == 0.0);
    CHECK(calibration_json("f", {})["calibrations"] == nlohmann::json::array());
}

TEST_CASE("calibration: a stored measurement is what load_calibration and auto read back") {
    const auto file = test::testdir("calibrate") / "sub" / "calibration.json";
    REQUIRE(store_calibration(file, {"aarch64", 0.5, 4.0, {}}));
    REQUIRE(store_calibration(file, {"s390x", 1.0, 3.0, {}}));
    auto loaded = load_calibration(file);
    REQUIRE(loaded);
    CHECK(loaded->at("aarch64") == doctest::Approx(8.0));
    CHECK(loaded->at("s390x") == doctest::Approx(3.0));
    auto m = parse_timeout_multiplier("auto", file);
    REQUIRE(m);
    CHECK(m->for_arch("aarch64") == doctest::Approx(8.0));
    auto missing = load_calibration(file.parent_path() / "none.json");
    REQUIRE_FALSE(missing);
    CHECK(missing.error().hint.find("emurun calibrate") != std::string::npos);
}

TEST_CASE("calibration: the slowdown is the mean of the phases' slowdowns, each one stored") {
    Calibration c;
    c.arch = "aarch64";
    c.phases = {{"compute", 0.1, 0.15}, {"startup", 0.01, 0.2}};
    c.native_seconds = 0.11;
    c.emulated_seconds = 0.35;
    // (1.5 + 20) / 2, not 0.35 / 0.11: a phase long natively does not drown a short one.
    CHECK(c.slowdown() == doctest::Approx(10.75));
    const auto j = calibration_json("f", {c})["calibrations"][0];
    CHECK(j["slowdown"] == doctest::Approx(10.75));
    REQUIRE(j["phases"].size() == 2);
    CHECK(j["phases"][1]["name"] == "startup");
    CHECK(j["phases"][1]["slowdown"] == doctest::Approx(20.0));
    const auto file = test::testdir("calibrate-phases") / "calibration.json";
    REQUIRE(store_calibration(file, c));
    auto loaded = load_calibration(file);
    REQUIRE(loaded);
    CHECK(loaded->at("aarch64") == doctest::Approx(10.75));
}

TEST_CASE("bad input: a calibration file that is not one, or too big, is refused, never replaced") {
    const auto dir = test::testdir("calibrate-bad");
    CHECK(check_calibration_file(dir / "new.json")); // a new file is fine
    const auto pipeline = dir / "pipeline.json";
    std::ofstream(pipeline) << R"({"name": "p", "steps": []})";
    auto refused = store_calibration(pipeline, {"aarch64", 0.5, 4.0, {}});
    REQUIRE_FALSE(refused);
    CHECK(refused.error().why.find("not an emurun calibration file") != std::string::npos);
    std::ifstream in(pipeline);
    CHECK(std::string(std::istreambuf_iterator<char>(in), {}) == R"({"name": "p", "steps": []})");
    const auto big = dir / "big.json";
    std::ofstream(big) << std::string(k_calibration_max_bytes + 1, ' ');
    auto too_big = load_calibration(big);
    REQUIRE_FALSE(too_big);
    CHECK(too_big.error().why.find("more than the limit") != std::string::npos);
    CHECK_FALSE(check_calibration_file(big));
    CHECK_FALSE(check_calibration_file(dir)); // a directory
}

namespace {

StepResult ran(std::string name, std::string arch, Emulation how, double wall,
               StepStatus status = StepStatus::passed) {
    StepResult s;
    s.name = std::move(name);
    s.arch = std::move(arch);
    s.emulation = how;
    s.wall = wall;
    s.status = status;
    return s;
}

} // namespace

TEST_CASE("timeout multiplier auto: learned from the history, the slowest steady step per arch") {
    Report baseline;
    baseline.steps = {ran("unit", "", Emulation::native, 10), ran("slow", "", Emulation::native, 2),
                      ran("tiny", "", Emulation::native, 0.01),
                      ran("broken", "", Emulation::native, 5)};
    Report previous;
    previous.steps = {
        ran("unit", "aarch64", Emulation::sandbox, 60), // 6x
        ran("slow", "aarch64", Emulation::sandbox, 30), // 15x: the largest steady factor
        ran("tiny", "aarch64", Emulation::sandbox, 2),  // 200x, but 10 ms natively: noise
        ran("broken", "aarch64", Emulation::sandbox, 500, StepStatus::failed), // not a pass
        ran("tiny", "s390x", Emulation::exec, 0.5),     // s390x has only a short step: 50x
        ran("unit", "ppc64le", Emulation::native, 10)}; // ran natively: says nothing
    auto learned = learn_slowdowns(previous, &baseline);
    REQUIRE(learned.contains("aarch64"));
    CHECK(learned["aarch64"].factor == doctest::Approx(15));
    CHECK(learned["aarch64"].steps == 2);
    CHECK(learned["s390x"].factor == doctest::Approx(50));
    CHECK_FALSE(learned.contains("ppc64le"));

    // Without --baseline, the previous run's own baseline_wall serves.
    Report own = previous;
    own.steps[0].baseline_wall = 5; // 12x
    CHECK(learn_slowdowns(own, nullptr)["aarch64"].factor == doctest::Approx(12));
}

TEST_CASE("timeout multiplier auto: history first, calibration for the other arches, else why") {
    Report baseline;
    baseline.steps = {ran("unit", "", Emulation::native, 10)};
    Report previous;
    previous.steps = {ran("unit", "aarch64", Emulation::sandbox, 80)};
    const auto file = test::testdir("calibrate-auto") / "calibration.json";
    REQUIRE(store_calibration(file, {"s390x", 1.0, 7.0, {}}));
    std::vector<std::string> notes;
    auto m = auto_timeout_multiplier({"aarch64", "s390x", "aarch64"}, {&previous, &baseline, file},
                                     &notes);
    REQUIRE(m);
    CHECK(m->for_arch("aarch64") == doctest::Approx(8));
    CHECK(m->for_arch("s390x") == doctest::Approx(7));
    REQUIRE(notes.size() == 2);
    CHECK(notes[0] == "aarch64 8 (the slowest of 1 step(s) in the history)");
    CHECK(notes[1] == "s390x 7 (emurun calibrate)");

    auto none = auto_timeout_multiplier({"ppc64le"}, {&previous, &baseline, file});
    REQUIRE_FALSE(none);
    CHECK(none.error().why.find("no slowdown known for ppc64le") != std::string::npos);
    CHECK(none.error().hint.find("calibrate ppc64le (emurun calibrate)") != std::string::npos);
    CHECK(none.error().kind == ErrorKind::not_found);
    CHECK(none.error().field == "timeout_multiplier");
    // No history and no calibration file: the file's error is part of the reason.
    auto nothing =
        auto_timeout_multiplier({"aarch64"}, {nullptr, nullptr, file.parent_path() / "x"});
    REQUIRE_FALSE(nothing);
    CHECK(nothing.error().why.find("read calibration") != std::string::npos);
    // A pipeline without emulated steps needs no factor at all.
    CHECK(auto_timeout_multiplier({}, {nullptr, nullptr, file.parent_path() / "x"}));
}
