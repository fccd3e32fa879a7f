// Fuzz target for the pipeline loader: no input may crash it, and every error names the file.
#include <emurun/pipeline.hpp>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    std::string_view text(reinterpret_cast<const char*>(data), size);
    auto p = emurun::Pipeline::parse(text, "fuzz.json", "/base");
    if (!p) {
        if (!p.error().what.starts_with("fuzz.json") || p.error().why.empty()) {
            std::fprintf(stderr, "fuzz_pipeline: error without place or reason\n");
            std::abort();
        }
        return 0;
    }
    // A loaded pipeline is a DAG of unique names: sharding must cover each test step once.
    auto plan = emurun::plan_shards(*p, 3, {});
    std::size_t tests = 0, planned = 0;
    for (const auto& s : p->steps) {
        tests += s.kind == emurun::StepKind::test ? 1 : 0;
    }
    for (const auto& shard : plan.tests) {
        planned += shard.size();
    }
    if (tests != planned) {
        std::fprintf(stderr, "fuzz_pipeline: shards do not cover the test steps\n");
        std::abort();
    }
    return 0;
}

std::vector<std::vector<unsigned char>> emurun_fuzz_seeds() {
    std::string seed = R"({"name": "p", "defaults": {"arch": "arm64", "timeout": "1h30m",
      "env": {"A": "1"}}, "steps": [
      {"name": "b", "kind": "build", "argv": ["make"], "emulation": "native"},
      {"name": "t", "kind": "test", "argv": "ctest", "shell": true, "needs": ["b"],
       "budget": "90s", "tags": ["x"]}]})";
    return {std::vector<unsigned char>(seed.begin(), seed.end())};
}
