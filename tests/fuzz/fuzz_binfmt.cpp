// Fuzz target for the binfmt parsers: registration lines, entry files, binfmt.d and
// update-binfmts files. Any line that parses must format back to a line that parses to the
// same entry.
#include <emurun/binfmt.hpp>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

namespace {

[[noreturn]] void broken(const char* promise) {
    std::fprintf(stderr, "fuzz_binfmt: broken promise: %s\n", promise);
    std::abort();
}

void check_round_trip(const emurun::BinfmtEntry& e) {
    auto line = emurun::format_binfmt_line(e);
    if (!line) {
        return; // e.g. a relative name the kernel accepts but emurun refuses to write
    }
    auto back = emurun::parse_binfmt_line(*line);
    if (!back) {
        broken("a formatted line does not parse");
    }
    // A registration line carries no enabled/disabled state (an entry file does): compare the
    // registration (corpus: disabled-entry-file).
    if (!back->same_registration(e)) {
        broken("format -> parse is not an exact round trip");
    }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    std::string_view in(reinterpret_cast<const char*>(data), size);
    auto e = emurun::parse_binfmt_line(in);
    if (e) {
        if (e->magic.empty() || e->interpreter.empty()) {
            broken("a parsed entry without magic or interpreter");
        }
        check_round_trip(*e);
    } else if (e.error().why.empty()) {
        broken("an error without a reason");
    }
    if (auto f = emurun::parse_binfmt_entry_file("x", in)) {
        check_round_trip(*f);
    }
    if (auto d = emurun::parse_binfmt_d(in)) {
        for (const auto& x : *d) {
            check_round_trip(x);
        }
    }
    if (auto u = emurun::parse_update_binfmts("x", in)) {
        check_round_trip(*u);
    }
    return 0;
}

/// Real-world lines and files.
std::vector<std::vector<unsigned char>> emurun_fuzz_seeds() {
    const char* seeds[] = {
        ":qemu-aarch64:M::\\x7fELF\\x02\\x01\\x01\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00"
        "\\x02\\x00\\xb7\\x00:\\xff\\xff\\xff\\xff\\xff\\xff\\xff\\x00\\xff\\xff\\xff\\xff\\xff"
        "\\xff\\xff\\xff\\xfe\\xff\\xff\\xff:/usr/bin/qemu-aarch64-static:OCF\n",
        ",py,E,,py,,/usr/bin/python3,P",
        "enabled\ninterpreter /usr/bin/qemu-s390x\nflags: PF\noffset 0\nmagic 7f454c46\nmask "
        "ffffffff\n",
        "package x\ninterpreter /usr/bin/qemu-arm\nmagic \\x7fELF\noffset 0\ncredentials yes\n"
        "fix_binary no\npreserve yes\n",
    };
    std::vector<std::vector<unsigned char>> out;
    for (const char* s : seeds) {
        std::string_view v(s);
        out.emplace_back(v.begin(), v.end());
    }
    return out;
}
