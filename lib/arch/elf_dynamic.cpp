// The dynamic section: DT_NEEDED, DT_RUNPATH, DT_RPATH, DT_SONAME and the string table they
// point into. Every offset is checked before it is followed.
#include "arch/elf_image.hpp"

#include <algorithm>
#include <optional>

namespace emurun::elf_detail {

namespace {

constexpr std::uint64_t k_dt_null = 0;
constexpr std::uint64_t k_dt_needed = 1;
constexpr std::uint64_t k_dt_strtab = 5;
constexpr std::uint64_t k_dt_strsz = 10;
constexpr std::uint64_t k_dt_soname = 14;
constexpr std::uint64_t k_dt_rpath = 15;
constexpr std::uint64_t k_dt_runpath = 29;
constexpr std::uint64_t k_dt_flags_1 = 0x6ffffffb;
constexpr std::uint32_t k_sht_strtab = 3;

// A dynamic entry whose value is an offset into the string table.
struct StringRef {
    std::uint64_t tag = 0;
    std::size_t entry = 0;
    std::uint64_t offset = 0;
};

struct DynEntries {
    std::vector<StringRef> strings;
    std::optional<std::uint64_t> strtab;
    std::optional<std::uint64_t> strsz;
    std::uint64_t flags_1 = 0;
};

const char* tag_name(std::uint64_t tag) {
    switch (tag) {
    case k_dt_needed:
        return "DT_NEEDED";
    case k_dt_soname:
        return "DT_SONAME";
    case k_dt_rpath:
        return "DT_RPATH";
    default:
        return "DT_RUNPATH";
    }
}

Result<DynEntries> read_entries(const Image& img, const Segment& dyn) {
    const std::uint64_t entsize = img.is64 ? 16 : 8;
    const std::uint64_t count = dyn.filesz / entsize;
    DynEntries out;
    for (std::uint64_t i = 0; i < count; ++i) {
        const std::uint64_t at = dyn.offset + i * entsize;
        const std::uint64_t tag = img.word(at);
        const std::uint64_t val = img.word(at + entsize / 2);
        if (tag == k_dt_null) {
            return out;
        }
        if (tag == k_dt_needed || tag == k_dt_soname || tag == k_dt_rpath || tag == k_dt_runpath) {
            out.strings.push_back({tag, static_cast<std::size_t>(i), val});
        } else if (tag == k_dt_strtab) {
            out.strtab = val;
        } else if (tag == k_dt_strsz) {
            out.strsz = val;
        } else if (tag == k_dt_flags_1) {
            out.flags_1 = val;
        }
    }
    return malformed("dynamic section (program header " + std::to_string(dyn.index) +
                     "): no DT_NULL among its " + std::to_string(count) + " entries");
}

// DT_STRTAB through the section headers: the SHT_STRTAB section whose sh_addr it is.
std::optional<std::uint64_t> strtab_from_sections(const Image& img, const SectionTable& sh,
                                                  std::uint64_t vaddr) {
    const std::uint64_t want = img.is64 ? 64 : 40;
    if (sh.count == 0 || sh.entsize != want || !img.fits(sh.offset, sh.count * sh.entsize)) {
        return std::nullopt;
    }
    for (std::uint64_t i = 0; i < sh.count; ++i) {
        const std::uint64_t at = sh.offset + i * sh.entsize;
        const auto type = img.uint(at + 4, 4);
        const auto addr = img.word(at + (img.is64 ? 16 : 12));
        if (type == k_sht_strtab && addr == vaddr && vaddr != 0) {
            return img.word(at + (img.is64 ? 24 : 16));
        }
    }
    return std::nullopt;
}

// The file offset of the dynamic string table, which must lie wholly inside the file.
Result<std::uint64_t> strtab_offset(const Image& img, std::uint64_t vaddr, std::uint64_t strsz,
                                    const std::vector<Segment>& loads, const SectionTable& sh) {
    std::optional<std::uint64_t> off;
    for (const Segment& s : loads) {
        if (vaddr >= s.vaddr && vaddr - s.vaddr < s.filesz) {
            if (strsz > s.filesz - (vaddr - s.vaddr)) {
                return malformed("DT_STRTAB " + hex(vaddr) + " + DT_STRSZ " + hex(strsz) +
                                 " runs past the file bytes of PT_LOAD (program header " +
                                 std::to_string(s.index) + ")");
            }
            off = s.offset + (vaddr - s.vaddr);
            break;
        }
    }
    if (!off) {
        off = strtab_from_sections(img, sh, vaddr);
    }
    if (!off) {
        return malformed("DT_STRTAB " + hex(vaddr) +
                         " is in no PT_LOAD segment's file bytes and no string table section");
    }
    if (!img.fits(*off, strsz)) {
        return malformed("dynamic string table: " +
                         beyond_end(img, "offset", *off, "DT_STRSZ", strsz));
    }
    return *off;
}

Result<std::string> dyn_string(const Image& img, std::uint64_t strtab, std::uint64_t strsz,
                               const StringRef& ref) {
    const std::string where =
        std::string(tag_name(ref.tag)) + " (dynamic entry " + std::to_string(ref.entry) + ")";
    if (ref.offset >= strsz) {
        return malformed(where + ": string offset " + hex(ref.offset) + " beyond DT_STRSZ " +
                         hex(strsz));
    }
    const auto* begin = img.bytes.data() + strtab + ref.offset;
    const auto* end = img.bytes.data() + strtab + strsz;
    const auto* nul = std::find(begin, end, 0);
    if (nul == end) {
        return malformed(where + ": string at offset " + hex(ref.offset) +
                         " not NUL-terminated within DT_STRSZ " + hex(strsz));
    }
    return std::string(begin, nul);
}

std::vector<std::string> split_path_list(const std::string& s) {
    std::vector<std::string> out;
    if (s.empty()) {
        return out;
    }
    std::size_t start = 0;
    for (std::size_t colon; (colon = s.find(':', start)) != std::string::npos; start = colon + 1) {
        out.push_back(s.substr(start, colon - start));
    }
    out.push_back(s.substr(start));
    return out;
}

void store(ElfInfo& out, std::uint64_t tag, std::string value) {
    if (tag == k_dt_needed) {
        out.needed.push_back(std::move(value));
    } else if (tag == k_dt_soname) {
        out.soname = std::move(value);
    } else {
        auto& list = tag == k_dt_rpath ? out.rpath : out.runpath;
        auto parts = split_path_list(value);
        list.insert(list.end(), parts.begin(), parts.end());
    }
}

} // namespace

Result<void> read_dynamic(const Image& img, const Segment& dyn, const std::vector<Segment>& loads,
                          const SectionTable& sections, ElfInfo& out) {
    auto entries = EMURUN_TRY(read_entries(img, dyn));
    out.flags_1 = entries.flags_1;
    if (entries.strings.empty()) {
        return {};
    }
    if (!entries.strtab || !entries.strsz) {
        return malformed(std::string(tag_name(entries.strings.front().tag)) +
                         " present but the dynamic section has no " +
                         (entries.strtab ? "DT_STRSZ" : "DT_STRTAB"));
    }
    auto strtab = EMURUN_TRY(strtab_offset(img, *entries.strtab, *entries.strsz, loads, sections));
    for (const StringRef& ref : entries.strings) {
        auto s = EMURUN_TRY(dyn_string(img, strtab, *entries.strsz, ref));
        store(out, ref.tag, std::move(s));
    }
    return {};
}

} // namespace emurun::elf_detail
