// --matrix auto: the fewest shards under the job limit's share, from a fake history.
#include <emurun/runner.hpp>

#include <doctest/doctest.h>

#include <string>

using namespace emurun;

namespace {

Pipeline four_tests() {
    auto p = Pipeline::parse(R"({"name": "p", "steps": [
        {"name": "build", "kind": "build", "argv": ["b"]},
        {"name": "t1", "kind": "test", "argv": ["t"], "needs": ["build"]},
        {"name": "t2", "kind": "test", "argv": ["t"], "needs": ["build"]},
        {"name": "t3", "kind": "test", "argv": ["t"], "needs": ["build"]},
        {"name": "t4", "kind": "test", "argv": ["t", "aarch64"], "needs": ["build"],
         "arch": "aarch64", "emulation": "exec"}]})",
                             "pipeline.json", "/base");
    REQUIRE(p.has_value());
    return *p;
}

const History k_history{{"build", 1000}, {"t1", 4000}, {"t2", 3000}, {"t3", 2000}, {"t4", 1000}};

} // namespace

TEST_CASE("matrix auto: the fewest shards whose projection fits the share of the limit") {
    // Limit 10000 s at 80 %: 8000 s a shard. One shard: 1000 + 10000 > 8000. Two: LPT gives
    // {t1, t4} = 5000 and {t2, t3} = 5000, plus the build in each: 6000 <= 8000.
    auto c = choose_matrix(four_tests(), k_history, {10000, 0.8, 1, false});
    REQUIRE_MESSAGE(c.has_value(), (c ? "" : c.error().message()));
    CHECK(c->count == 2);
    CHECK(c->common == doctest::Approx(1000));
    REQUIRE(c->projected.size() == 2);
    CHECK(c->projected[0] == doctest::Approx(6000));
    CHECK(c->projected[1] == doctest::Approx(6000));
    // Share 50 %: 5000 s. Two shards project 6000; three: {t1}, {t2}, {t3, t4} + 1000 = 5000.
    c = choose_matrix(four_tests(), k_history, {10000, 0.5, 1, false});
    REQUIRE(c.has_value());
    CHECK(c->count == 3);
    // Build once: the shards run tests only, two of 5000 fit 5000.
    c = choose_matrix(four_tests(), k_history, {10000, 0.5, 1, true});
    REQUIRE(c.has_value());
    CHECK(c->count == 2);
    // -j 2 halves each shard's projection: one shard of (1000 + 10000) / 2 = 5500 <= 8000.
    c = choose_matrix(four_tests(), k_history, {10000, 0.8, 2, false});
    REQUIRE(c.has_value());
    CHECK(c->count == 1);
}

TEST_CASE("matrix auto: refusals say why") {
    auto message = [](const Result<MatrixChoice>& r) {
        return r ? std::string() : r.error().message();
    };
    CHECK(message(choose_matrix(four_tests(), {}, {10000, 0.8, 1, false}))
              .find("no history for any step") != std::string::npos);
    // t1 alone (4000) is over 0.3 x 10000 whatever the count.
    CHECK(message(choose_matrix(four_tests(), k_history, {10000, 0.3, 1, true}))
              .find("even 4 shards leave one projected at 1h06m") != std::string::npos);
    CHECK(message(choose_matrix(four_tests(), k_history, {1000, 0.8, 1, true}))
              .find("the build job alone") != std::string::npos);
}

TEST_CASE("matrix auto: history from the previous run, else the baseline times the slowdown") {
    Pipeline p = four_tests();
    Report previous, baseline;
    StepResult s;
    s.status = StepStatus::passed;
    s.name = "t1";
    s.wall = 50;
    previous.steps.push_back(s);
    s.wall = 5;
    baseline.steps.push_back(s); // previous wins
    s.name = "t4";
    baseline.steps.push_back(s); // emulated (exec, aarch64): times 8
    s.name = "t2";
    baseline.steps.push_back(s); // native: as is
    TimeoutMultiplier m;
    m.per_arch["aarch64"] = 8;
    History h = projected_history(p, &previous, &baseline, m);
    CHECK(h.at("t1") == doctest::Approx(50));
    CHECK(h.at("t4") == doctest::Approx(40));
    CHECK(h.at("t2") == doctest::Approx(5));
    CHECK_FALSE(h.contains("t3"));
}
