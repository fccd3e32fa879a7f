// Loading stays linear and bounded for huge pipelines (issue 14, Scale): a 100,000-step chain
// loads (the cycle check does not recurse), and a cycle through all of it is named by its ends.
#include <emurun/pipeline.hpp>

#include <doctest/doctest.h>

#include <string>

using namespace emurun;

namespace {

// JSON of `n` steps s0..s(n-1), each needing the one before; s0 needs the last one when `cycle`.
std::string chain_json(std::size_t n, bool cycle) {
    std::string text = R"({"name": "chain", "steps": [)";
    for (std::size_t i = 0; i < n; ++i) {
        std::string need = i > 0   ? "s" + std::to_string(i - 1)
                           : cycle ? "s" + std::to_string(n - 1)
                                   : "";
        text += (i > 0 ? "," : "") + std::string(R"({"name": "s)") + std::to_string(i) +
                R"(", "argv": ["true"], "needs": [)" + (need.empty() ? "" : "\"" + need + "\"") +
                "]}";
    }
    return text + "]}";
}

} // namespace

TEST_CASE("pipeline: a 100,000-step chain loads; a cycle through it is named by its ends") {
    auto chain = Pipeline::parse(chain_json(100'000, false), "chain.json", ".");
    REQUIRE(chain.has_value());
    CHECK(chain->steps.size() == 100'000);
    auto cycle = Pipeline::parse(chain_json(100'000, true), "cycle.json", ".");
    REQUIRE_FALSE(cycle.has_value());
    const std::string message = cycle.error().message();
    CHECK(message.find("cycle in needs: s0 -> s99999 -> s99998") != std::string::npos);
    CHECK(message.find("(99991 more)") != std::string::npos);
    CHECK(message.size() < 300);
}
