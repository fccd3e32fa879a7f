// Fuzz target for the ELF reader and the kernel's magic/mask rule: no input may crash, hang or
// break the reader's promises.
#include "elf_builder.hpp"

#include <emurun/arch.hpp>
#include <emurun/elf.hpp>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <span>

namespace {

[[noreturn]] void broken(const char* promise) {
    std::fprintf(stderr, "fuzz_elf: broken promise: %s\n", promise);
    std::abort();
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::span<const unsigned char> in(data, size);
    const emurun::Arch* by_header = emurun::arch_for_header(in);
    if (by_header != nullptr && !by_header->matches(in)) {
        broken("arch_for_header returned an arch whose pattern does not match");
    }
    auto info = emurun::parse_elf(in);
    if (!info) {
        if (info.error().why.empty()) {
            broken("an error without a reason");
        }
        return 0;
    }
    if (info->arch != nullptr && info->arch != by_header) {
        broken("ElfInfo::arch differs from arch_for_header");
    }
    if (info->interpreter && info->interpreter->empty()) {
        broken("an empty interpreter");
    }
    std::size_t total = info->type_name().size();
    for (const auto& s : info->needed) {
        total += s.size();
    }
    if (total > size * 2 + 64) {
        broken("more string bytes than the input could hold");
    }
    return 0;
}

/// Hand-made images of every class and byte order, with and without a dynamic section.
std::vector<std::vector<unsigned char>> emurun_fuzz_seeds() {
    std::vector<std::vector<unsigned char>> seeds;
    for (int cls : {1, 2}) {
        for (int data : {1, 2}) {
            emurun::test::ElfSpec spec;
            spec.elf_class = cls;
            spec.elf_data = data;
            spec.runpath = "$ORIGIN/lib:/opt";
            spec.sections = true;
            seeds.push_back(emurun::test::build_elf(spec).bytes);
            spec.interp.clear();
            spec.dynamic = cls == 2;
            seeds.push_back(emurun::test::build_elf(spec).bytes);
        }
    }
    return seeds;
}
