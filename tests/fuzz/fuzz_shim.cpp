// Fuzz target for both readers of a shim's sidecar (SHIMDIR/.emurun-shims/NAME.json): the
// library's (from_sidecar, behind `shim list` and read_shim) and the launcher's own C reader
// (tools/emurun-shim/sidecar.c, which parses in place without a heap). No input may crash
// either; when both accept a sidecar they must agree on what the shim runs.
#include "shim/shim_config.hpp"

extern "C" {
#include "sidecar.h"
}

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

namespace {

[[noreturn]] void broken(const char* promise) {
    std::fprintf(stderr, "fuzz_shim: broken promise: %s\n", promise);
    std::abort();
}

// The launcher reads at most k_sidecar_max bytes into a NUL-terminated buffer: the copy is
// exactly that long, so a read past the text's end is an ASan report.
const char* launcher_parse(const std::string& text, Sidecar& out, std::unique_ptr<char[]>& buf) {
    buf = std::make_unique<char[]>(text.size() + 1);
    std::memcpy(buf.get(), text.data(), text.size());
    buf[text.size()] = '\0';
    return sidecar_parse(buf.get(), &out);
}

void check_agree(const emurun::ShimInfo& lib, const Sidecar& c) {
    // The C reader stops at an embedded NUL (a C string): compare only what it can hold.
    auto same = [](const std::string& a, const char* b) { return b != nullptr && a == b; };
    if (lib.target.string().find('\0') != std::string::npos) {
        return;
    }
    const std::string target = c.target != nullptr && c.target[0] == '/'
                                   ? std::string(c.target)
                                   : "/shims/" + std::string(c.target != nullptr ? c.target : "");
    if (!same(lib.target.string(), target.c_str())) {
        broken("the library and the launcher read different targets");
    }
    if (lib.native != (c.native != 0)) {
        broken("the library and the launcher disagree on native");
    }
    if (!lib.native && !same(lib.emulator.string(), c.emulator)) {
        broken("the library and the launcher read different emulators");
    }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size > k_sidecar_max) {
        return 0; // the launcher refuses larger files before parsing
    }
    const std::string text(reinterpret_cast<const char*>(data), size);
    auto lib = emurun::shim_detail::from_sidecar(text, "/shims/tool", "sidecar.json");
    if (!lib && lib.error().why.empty()) {
        broken("an error without a reason");
    }
    Sidecar c{};
    std::unique_ptr<char[]> buf;
    const char* error = launcher_parse(text, c, buf);
    if (error != nullptr && error[0] == '\0') {
        broken("the launcher failed without a reason");
    }
    if (error == nullptr && c.target == nullptr) {
        broken("the launcher accepted a sidecar without a target");
    }
    if (lib && error == nullptr && text.find('\0') == std::string::npos) {
        check_agree(*lib, c);
    }
    return 0;
}

std::vector<std::vector<unsigned char>> emurun_fuzz_seeds() {
    const std::string seeds[] = {
        R"({"format": 1, "name": "protoc", "target": "/opt/arm64/protoc", "arch": "aarch64",
  "native": false, "emulator": "/usr/bin/qemu-aarch64", "env": {"A": "1", "\u00e9": "\ud83d\ude00"},
  "ld_prefix": "sysroot", "cpu": "max"})",
        R"({"format": 1, "name": "x", "target": "bin/x", "arch": "x86_64", "native": true,
  "emulator": "", "env": {}, "extra": [1, {"a": null}, -2.5e3, "s"]})",
    };
    std::vector<std::vector<unsigned char>> out;
    for (const auto& s : seeds) {
        out.emplace_back(s.begin(), s.end());
    }
    return out;
}
