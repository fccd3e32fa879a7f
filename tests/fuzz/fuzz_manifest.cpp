// Fuzz target for the artifact manifest reader (read from an archive a test job was given): no
// input may crash it; what loads must round-trip with the same id (which hashes the whole
// manifest), its paths must be plain relative ones and its logs plain file names (a test job
// writes them into its log directory).
#include <emurun/artifacts.hpp>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    std::string_view text(reinterpret_cast<const char*>(data), size);
    auto m = emurun::parse_manifest(text, "fuzz.tar");
    if (!m) {
        return 0;
    }
    for (const auto& p : m->paths) {
        bool unsafe = p.empty() || p.front() == '/';
        for (const auto& part : std::filesystem::path(p)) {
            unsafe = unsafe || part == ".." || part == ".";
        }
        if (unsafe) {
            std::fprintf(stderr, "fuzz_manifest: an unsafe path was accepted\n");
            std::abort();
        }
    }
    for (const auto& log : m->logs) {
        if (log.empty() || log == "." || log == ".." || log.find('/') != std::string::npos) {
            std::fprintf(stderr, "fuzz_manifest: an unsafe log name was accepted\n");
            std::abort();
        }
    }
    auto again = emurun::parse_manifest(emurun::manifest_json(*m), "again.tar");
    if (!again || again->paths != m->paths || again->logs != m->logs || again->id != m->id ||
        !(again->report == m->report)) {
        std::fprintf(stderr, "fuzz_manifest: a loaded manifest does not round-trip\n");
        std::abort();
    }
    // The id covers the whole manifest a test job takes: it must not change in a round trip,
    // or an archive as packed would be refused as edited.
    if (emurun::artifact_id(*again) != emurun::artifact_id(*m) ||
        emurun::artifact_id(*m).size() != 16) {
        std::fprintf(stderr, "fuzz_manifest: the id of a loaded manifest is not stable\n");
        std::abort();
    }
    return 0;
}

std::vector<std::vector<unsigned char>> emurun_fuzz_seeds() {
    std::string seed = R"({"format": 1, "pipeline": "p", "digest": "0123456789abcdef",
      "id": "fedcba9876543210", "paths": ["build/bin/tool", "build/lib"], "logs": ["build.log"],
      "report": {"schema_version": 1, "pipeline": "p", "wall": 3.5, "flags": [],
                 "native_baseline": false,
                 "steps": [{"name": "build", "status": "passed", "wall": 1.5, "user": 1,
                            "sys": 0.1, "exit_code": 0, "signal": null, "max_rss_kib": 2048,
                            "log": "build.log", "flags": []}]}})";
    return {std::vector<unsigned char>(seed.begin(), seed.end())};
}
