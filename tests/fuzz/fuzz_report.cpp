// Fuzz target for the report reader: no input may crash it; what loads must round-trip.
#include <emurun/report.hpp>

#include <nlohmann/json.hpp>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    std::string_view text(reinterpret_cast<const char*>(data), size);
    auto r = emurun::Report::parse(text, "fuzz.json");
    if (!r) {
        return 0;
    }
    auto again = emurun::Report::from_json(r->to_json(), "again.json");
    if (!again || !(*again == *r)) {
        std::fprintf(stderr, "fuzz_report: a loaded report does not round-trip\n");
        std::abort();
    }
    (void)emurun::to_junit(*r);
    (void)emurun::to_markdown(*r);
    (void)emurun::to_table(*r);
    return 0;
}

std::vector<std::vector<unsigned char>> emurun_fuzz_seeds() {
    std::string seed = R"({"schema_version": 1, "pipeline": "p", "wall": 3.5,
      "shard": {"index": 1, "count": 2}, "job_limit": 60, "flags": [],
      "steps": [{"name": "a<&>", "status": "failed", "wall": 1.5, "user": 1, "sys": 0.1,
                 "exit_code": 3, "signal": null, "max_rss_kib": 2048, "log": "a.log",
                 "flags": [{"rule": "budget", "message": "over"}], "budget": 1}]})";
    return {std::vector<unsigned char>(seed.begin(), seed.end())};
}
