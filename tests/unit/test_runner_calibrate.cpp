// Calibration (include/emurun/calibrate.hpp): the --json document and the stored file.
#include "testdir.hpp"

#include <emurun/calibrate.hpp>

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

using namespace emurun;

TEST_CASE("calibration_json: file and every measurement, in order, with its slowdown") {
    const auto j =
        calibration_json("/c/calibration.json", {{"aarch64", 0.5, 4.0}, {"s390x", 0.25, 0.0}});
    CHECK(j["file"] == "/c/calibration.json");
    REQUIRE(j["calibrations"].size() == 2);
    CHECK(j["calibrations"][0] == nlohmann::json{{"arch", "aarch64"},
                                                 {"native_seconds", 0.5},
                                                 {"emulated_seconds", 4.0},
                                                 {"slowdown", 8.0}});
    CHECK(j["calibrations"][1]["arch"] == "s390x");
    CHECK(j["calibrations"][1]["slowdown"] == 0.0);
    CHECK(calibration_json("f", {})["calibrations"] == nlohmann::json::array());
}

TEST_CASE("calibration: a stored measurement is what load_calibration and auto read back") {
    const auto file = test::testdir("calibrate") / "sub" / "calibration.json";
    REQUIRE(store_calibration(file, {"aarch64", 0.5, 4.0}));
    REQUIRE(store_calibration(file, {"s390x", 1.0, 3.0}));
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
