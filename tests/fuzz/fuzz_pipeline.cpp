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
    // The native baseline's variant of each step ("arches", "native") is a reader too.
    auto native = emurun::Pipeline::parse(text, "fuzz.json", "/base",
                                          emurun::ArchSelection{{}, true, "x86_64"});
    if (!native && !native.error().what.starts_with("fuzz.json")) {
        std::fprintf(stderr, "fuzz_pipeline: native error without place\n");
        std::abort();
    }
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
    std::string arches = R"({"name": "p", "arches": ["arm64", "s390x"], "steps": [
      {"name": "b", "kind": "build", "argv": ["${triplet}-gcc", "$${HOME}"],
       "env": {"D": "${debian_arch}"}, "native": {"argv": ["cc"], "env": {"D": "x"}}},
      {"name": "t-${arch}", "kind": "test", "argv": ["t"], "needs": ["b"]},
      {"name": "l", "argv": ["true"], "per_arch": true, "native": false},
      {"name": "s", "argv": ["true"], "needs": ["t-${arch}", "l"]}]})";
    return {std::vector<unsigned char>(seed.begin(), seed.end()),
            std::vector<unsigned char>(arches.begin(), arches.end())};
}
