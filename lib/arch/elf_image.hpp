// Private to the elf module: a bounds-checked view of an ELF image and the pieces that
// lib/elf.cpp and lib/elf_dynamic.cpp share.
#pragma once

#include <emurun/elf.hpp>

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace emurun::elf_detail {

/// The image's bytes with the byte order and word size its e_ident declares. Every read is
/// preceded by fits(); read functions assume it was checked.
struct Image {
    std::span<const unsigned char> bytes;
    bool big = false;
    bool is64 = false;

    [[nodiscard]] std::uint64_t size() const { return bytes.size(); }
    /// True when [off, off + len) lies inside the image, without overflow.
    [[nodiscard]] bool fits(std::uint64_t off, std::uint64_t len) const {
        return off <= size() && len <= size() - off;
    }
    /// An unsigned integer of `width` bytes (1..8) at `off`, in the image's byte order.
    [[nodiscard]] std::uint64_t uint(std::uint64_t off, unsigned width) const;
    /// An address-sized word (4 or 8 bytes).
    [[nodiscard]] std::uint64_t word(std::uint64_t off) const { return uint(off, is64 ? 8 : 4); }
};

/// One program header, with its index for error messages.
struct Segment {
    std::size_t index = 0;
    std::uint32_t type = 0;
    std::uint64_t offset = 0;
    std::uint64_t vaddr = 0;
    std::uint64_t filesz = 0;
    std::uint64_t memsz = 0;
};

/// Where the section header table is, as e_shoff/e_shnum/e_shentsize say (unchecked).
struct SectionTable {
    std::uint64_t offset = 0;
    std::uint64_t count = 0;
    std::uint64_t entsize = 0;
};

/// "0x1a2b".
[[nodiscard]] std::string hex(std::uint64_t v);
/// A failure of a malformed image: what = "ELF image", hint = the corrupt-file hint.
[[nodiscard]] std::unexpected<Error> malformed(std::string why);
/// "p_offset 0x.. + p_filesz 0x.. beyond end of file (N bytes)" when [off, off+len) is outside.
[[nodiscard]] std::string beyond_end(const Image& img, const char* off_name, std::uint64_t off,
                                     const char* len_name, std::uint64_t len);

/// Read PT_DYNAMIC `dyn`: DT_NEEDED, DT_RUNPATH, DT_RPATH, DT_SONAME into `out`. The string
/// table is found by mapping DT_STRTAB through `loads`, else through the section headers.
[[nodiscard]] Result<void> read_dynamic(const Image& img, const Segment& dyn,
                                        const std::vector<Segment>& loads,
                                        const SectionTable& sections, ElfInfo& out);

} // namespace emurun::elf_detail
