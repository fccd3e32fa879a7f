// Fuzz target for the reader of a shim's sidecar (SHIMDIR/.emurun-shims/NAME.json): the
// library's from_sidecar, behind `shim list`, read_shim and a stale shim's planning again (the
// launcher reads the shim's launch record, fuzz_launch_record). No input may crash it, and
// every refusal gives a reason.
#include "shim/shim_config.hpp"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string text(reinterpret_cast<const char*>(data), size);
    auto lib = emurun::shim_detail::from_sidecar(text, "/shims/tool", "sidecar.json");
    if (!lib && lib.error().why.empty()) {
        std::fprintf(stderr, "fuzz_shim: broken promise: an error without a reason\n");
        std::abort();
    }
    return 0;
}

std::vector<std::vector<unsigned char>> emurun_fuzz_seeds() {
    const std::string seeds[] = {
        R"({"format": 1, "name": "protoc", "target": "/opt/arm64/protoc", "arch": "aarch64",
  "native": false, "emulator": "/usr/bin/qemu-aarch64", "env": {"A": "1", "\u00e9": "\ud83d\ude00"},
  "ld_prefix": "sysroot", "cpu": "max", "sysroots": ["sysroot", "/usr/aarch64-linux-gnu"]})",
        R"({"format": 1, "name": "x", "target": "bin/x", "arch": "x86_64", "native": true,
  "emulator": "", "env": {}, "extra": [1, {"a": null}, -2.5e3, "s"]})",
    };
    std::vector<std::vector<unsigned char>> out;
    for (const auto& s : seeds) {
        out.emplace_back(s.begin(), s.end());
    }
    return out;
}
