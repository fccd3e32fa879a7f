// Hand-made ELF images for tests and fuzz seeds: a minimal but valid executable of any class and
// byte order, whose every field can then be broken on purpose. Header-only, no binary files.
#pragma once

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <string>
#include <utility>
#include <vector>

namespace emurun::test {

/// The error text of a failed result, "" for a success: safe to evaluate either way (doctest
/// evaluates messages of passing assertions too when run with -s).
template <class R> std::string why(const R& r) {
    return r.has_value() ? std::string{} : r.error().message();
}

struct ElfSpec {
    int elf_class = 2; // 1 = 32-bit, 2 = 64-bit
    int elf_data = 1;  // 1 = little, 2 = big
    std::uint16_t type = 3;
    std::uint16_t machine = 62;
    std::uint32_t flags = 0;
    std::string interp = "/lib/ld-test.so.1"; // empty: no PT_INTERP
    bool dynamic = true;                      // PT_DYNAMIC with the entries below
    std::vector<std::string> needed = {"libfoo.so.1", "libc.so.6"};
    std::string soname;
    std::string runpath;
    std::string rpath;
    std::uint64_t flags_1 = 0; // DT_FLAGS_1 when not 0
    bool sections = false;     // add a section header table: [0] null, [1] .dynstr
};

/// The image and where its parts are, so that tests can corrupt them.
struct BuiltElf {
    std::vector<unsigned char> bytes;
    bool big = false;
    bool is64 = true;
    std::size_t phoff = 0, phentsize = 0, phnum = 0;
    std::size_t interp_ph = 0, dynamic_ph = 0; // program header indices (0 = PT_LOAD)
    std::size_t interp_off = 0, dynstr_off = 0, dynstr_size = 0, dyn_off = 0, dyn_count = 0;
    std::size_t shoff = 0;
    std::uint64_t base = 0x10000; // vaddr of file offset 0

    /// Write `width` bytes of `v` at `off` in the image's byte order.
    void put(std::size_t off, std::uint64_t v, unsigned width) {
        for (unsigned i = 0; i < width; ++i) {
            const unsigned shift = 8 * (big ? width - 1 - i : i);
            bytes.at(off + i) = static_cast<unsigned char>(v >> shift);
        }
    }
    /// Read back `width` bytes at `off`.
    [[nodiscard]] std::uint64_t get(std::size_t off, unsigned width) const {
        std::uint64_t v = 0;
        for (unsigned i = 0; i < width; ++i) {
            v = v << 8 | bytes.at(off + (big ? i : width - 1 - i));
        }
        return v;
    }
    [[nodiscard]] unsigned word() const { return is64 ? 8 : 4; }
    /// Offset of field `field64`/`field32` (byte offsets in Elf64_Phdr / Elf32_Phdr) of header i.
    [[nodiscard]] std::size_t ph(std::size_t i, std::size_t field64, std::size_t field32) const {
        return phoff + i * phentsize + (is64 ? field64 : field32);
    }
    void set_p_offset(std::size_t i, std::uint64_t v) { put(ph(i, 8, 4), v, word()); }
    void set_p_filesz(std::size_t i, std::uint64_t v) { put(ph(i, 32, 16), v, word()); }
    /// Offset of dynamic entry i's tag (its value follows at + word()).
    [[nodiscard]] std::size_t dyn(std::size_t i) const { return dyn_off + i * 2 * word(); }
    /// Index of the first dynamic entry with `tag`.
    [[nodiscard]] std::size_t find_dyn(std::uint64_t tag) const {
        for (std::size_t i = 0; i < dyn_count; ++i) {
            if (get(dyn(i), word()) == tag) {
                return i;
            }
        }
        return dyn_count;
    }
};

namespace elf_builder_detail {
inline void append(std::vector<unsigned char>& v, const std::string& s) {
    v.insert(v.end(), s.begin(), s.end());
    v.push_back(0);
}
inline void pad(std::vector<unsigned char>& v, std::size_t align) {
    while (v.size() % align != 0) {
        v.push_back(0);
    }
}
} // namespace elf_builder_detail

inline void write_ehdr(BuiltElf& b, const ElfSpec& s) {
    const unsigned char ident[] = {0x7f,
                                   'E',
                                   'L',
                                   'F',
                                   static_cast<unsigned char>(s.elf_class),
                                   static_cast<unsigned char>(s.elf_data),
                                   1,
                                   0};
    std::copy(std::begin(ident), std::end(ident), b.bytes.begin());
    const bool w = b.is64;
    b.put(16, s.type, 2);
    b.put(18, s.machine, 2);
    b.put(20, 1, 4);
    b.put(w ? 32 : 28, b.phoff, b.word());
    b.put(w ? 40 : 32, b.shoff, b.word());
    b.put(w ? 48 : 36, s.flags, 4);
    b.put(w ? 52 : 40, w ? 64 : 52, 2);
    b.put(w ? 54 : 42, b.phentsize, 2);
    b.put(w ? 56 : 44, b.phnum, 2);
    b.put(w ? 58 : 46, b.shoff ? (w ? 64 : 40) : 0, 2);
    b.put(w ? 60 : 48, b.shoff ? 2 : 0, 2);
}

inline void write_phdr(BuiltElf& b, std::size_t i, std::uint32_t type, std::uint64_t off,
                       std::uint64_t size) {
    b.put(b.ph(i, 0, 0), type, 4);
    b.set_p_offset(i, off);
    b.put(b.ph(i, 16, 8), b.base + off, b.word());  // p_vaddr
    b.put(b.ph(i, 24, 12), b.base + off, b.word()); // p_paddr
    b.set_p_filesz(i, size);
    b.put(b.ph(i, 40, 20), size, b.word()); // p_memsz
}

/// Lay out: ELF header, program headers, interpreter, .dynstr, .dynamic, section headers.
inline BuiltElf build_elf(const ElfSpec& s) {
    using namespace elf_builder_detail;
    BuiltElf b;
    b.big = s.elf_data == 2;
    b.is64 = s.elf_class == 2;
    b.phoff = b.is64 ? 64 : 52;
    b.phentsize = b.is64 ? 56 : 32;
    b.phnum = 1 + (s.interp.empty() ? 0 : 1) + (s.dynamic ? 1 : 0);
    std::vector<unsigned char>& v = b.bytes;
    v.assign(b.phoff + b.phnum * b.phentsize, 0);
    b.interp_off = v.size();
    if (!s.interp.empty()) {
        append(v, s.interp);
    }
    b.dynstr_off = v.size();
    v.push_back(0);
    std::vector<std::pair<std::uint64_t, std::uint64_t>> entries;
    auto add_string = [&](std::uint64_t tag, const std::string& str) {
        entries.emplace_back(tag, v.size() - b.dynstr_off);
        append(v, str);
    };
    for (const auto& n : s.needed) {
        add_string(1, n);
    }
    if (!s.soname.empty()) {
        add_string(14, s.soname);
    }
    if (!s.runpath.empty()) {
        add_string(29, s.runpath);
    }
    if (!s.rpath.empty()) {
        add_string(15, s.rpath);
    }
    b.dynstr_size = v.size() - b.dynstr_off;
    if (s.flags_1 != 0) {
        entries.emplace_back(0x6ffffffb, s.flags_1);
    }
    entries.emplace_back(5, b.base + b.dynstr_off);
    entries.emplace_back(10, b.dynstr_size);
    entries.emplace_back(0, 0);
    pad(v, 8);
    b.dyn_off = v.size();
    b.dyn_count = s.dynamic ? entries.size() : 0;
    v.resize(v.size() + b.dyn_count * 2 * b.word());
    for (std::size_t i = 0; i < b.dyn_count; ++i) {
        b.put(b.dyn(i), entries[i].first, b.word());
        b.put(b.dyn(i) + b.word(), entries[i].second, b.word());
    }
    if (s.sections) {
        pad(v, 8);
        b.shoff = v.size();
        const std::size_t sh = b.is64 ? 64 : 40;
        v.resize(v.size() + 2 * sh);
        const std::size_t at = b.shoff + sh;
        b.put(at + 4, 3, 4); // SHT_STRTAB
        b.put(at + (b.is64 ? 16 : 12), b.base + b.dynstr_off, b.word());
        b.put(at + (b.is64 ? 24 : 16), b.dynstr_off, b.word());
        b.put(at + (b.is64 ? 32 : 20), b.dynstr_size, b.word());
    }
    std::size_t i = 0;
    write_phdr(b, i++, 1, 0, v.size());
    if (!s.interp.empty()) {
        b.interp_ph = i;
        write_phdr(b, i++, 3, b.interp_off, s.interp.size() + 1);
    }
    if (s.dynamic) {
        b.dynamic_ph = i;
        write_phdr(b, i++, 2, b.dyn_off, b.dyn_count * 2 * b.word());
    }
    write_ehdr(b, s);
    return b;
}

} // namespace emurun::test
