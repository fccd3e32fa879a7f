// The ELF header and program headers; the dynamic section is in elf_dynamic.cpp.
#include "arch/elf_image.hpp"
#include "util/file.hpp"

#include <emurun/elf.hpp>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace emurun {
namespace elf_detail {

namespace {
constexpr const char* k_corrupt_hint = "the file is truncated or corrupt; rebuild or re-copy it";
constexpr std::uint32_t k_pt_load = 1;
constexpr std::uint32_t k_pt_dynamic = 2;
constexpr std::uint32_t k_pt_interp = 3;
constexpr std::uint64_t k_pn_xnum = 0xffff;
} // namespace

std::uint64_t Image::uint(std::uint64_t off, unsigned width) const {
    std::uint64_t v = 0;
    for (unsigned i = 0; i < width; ++i) {
        const unsigned char b = bytes[off + (big ? i : width - 1 - i)];
        v = v << 8 | b;
    }
    return v;
}

std::string hex(std::uint64_t v) {
    char buf[24];
    std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
    return buf;
}

std::unexpected<Error> malformed(std::string why) {
    return fail(ErrorKind::not_elf, "ELF image", std::move(why), k_corrupt_hint);
}

std::string beyond_end(const Image& img, const char* off_name, std::uint64_t off,
                       const char* len_name, std::uint64_t len) {
    return std::string(off_name) + " " + hex(off) + " + " + len_name + " " + hex(len) +
           " beyond end of file (" + std::to_string(img.size()) + " bytes)";
}

} // namespace elf_detail

namespace {

using namespace elf_detail;

std::string first_bytes(std::span<const unsigned char> image) {
    std::string out;
    for (std::size_t i = 0; i < image.size() && i < 4; ++i) {
        char buf[4];
        std::snprintf(buf, sizeof buf, "%02x", image[i]);
        out += (i ? " " : "") + std::string(buf);
    }
    return out;
}

// A file that does not start with \x7fELF: say what it starts with, and spot scripts.
std::unexpected<Error> not_elf(std::span<const unsigned char> image) {
    if (image.empty()) {
        return fail(ErrorKind::not_elf, "ELF image", "empty file (0 bytes), not an ELF file",
                    "check that the build or copy that produced it finished");
    }
    std::string why = "not an ELF file (starts with " + first_bytes(image) + ")";
    if (image.size() >= 2 && image[0] == '#' && image[1] == '!') {
        std::string line;
        for (std::size_t i = 2; i < image.size() && i < 130 && image[i] != '\n'; ++i) {
            line += static_cast<char>(image[i]);
        }
        return fail(ErrorKind::not_elf, "ELF image", why + ": a script for '" + line + "'",
                    "run its interpreter, or emulate the interpreter's binary instead");
    }
    return fail(ErrorKind::not_elf, "ELF image", why,
                "give the path of a compiled program or shared library");
}

// e_ident: magic, class, data. Fills img.big / img.is64.
Result<void> check_ident(Image& img, ElfInfo& info) {
    const auto& b = img.bytes;
    if (b.size() < 4 || b[0] != 0x7f || b[1] != 'E' || b[2] != 'L' || b[3] != 'F') {
        return not_elf(b);
    }
    if (b.size() < 16) {
        return malformed("truncated e_ident: " + std::to_string(b.size()) + " of 16 bytes");
    }
    if (b[4] != 1 && b[4] != 2) {
        return malformed("bad EI_CLASS " + hex(b[4]) + " (expected 1 = 32-bit or 2 = 64-bit)");
    }
    if (b[5] != 1 && b[5] != 2) {
        return malformed("bad EI_DATA " + hex(b[5]) +
                         " (expected 1 = little-endian or 2 = big-endian)");
    }
    info.elf_class = b[4];
    info.elf_data = b[5];
    info.osabi = b[7];
    img.is64 = b[4] == 2;
    img.big = b[5] == 2;
    const std::uint64_t ehsize = img.is64 ? 64 : 52;
    if (b.size() < ehsize) {
        return malformed("truncated ELF header: " + std::to_string(b.size()) + " of " +
                         std::to_string(ehsize) + " bytes");
    }
    return {};
}

// The program header table's place: e_phoff, e_phnum (or its PN_XNUM extension), e_phentsize.
struct HeaderTable {
    std::uint64_t offset = 0;
    std::uint64_t count = 0;
    std::uint64_t entsize = 0;
};

// With e_phnum == PN_XNUM the real count is section header 0's sh_info.
Result<std::uint64_t> extended_phnum(const Image& img, const SectionTable& sh) {
    const std::uint64_t info_at = img.is64 ? 44 : 28;
    if (sh.offset == 0 || !img.fits(sh.offset, info_at + 4)) {
        return malformed("e_phnum is PN_XNUM (0xffff) but section header 0, which holds the "
                         "real count, is not in the file (e_shoff " +
                         hex(sh.offset) + ")");
    }
    return img.uint(sh.offset + info_at, 4);
}

Result<HeaderTable> program_header_table(const Image& img, const SectionTable& sh) {
    const bool w = img.is64;
    HeaderTable t{img.word(w ? 32 : 28), img.uint(w ? 56 : 44, 2), img.uint(w ? 54 : 42, 2)};
    if (t.count == k_pn_xnum) {
        auto n = EMURUN_TRY(extended_phnum(img, sh));
        t.count = n;
    }
    if (t.count == 0) {
        return t;
    }
    const std::uint64_t want = w ? 56 : 32;
    if (t.entsize != want) {
        return malformed("e_phentsize " + std::to_string(t.entsize) + ", expected " +
                         std::to_string(want) + " for ELF" + (w ? "64" : "32"));
    }
    // count < 2^32 and entsize < 2^16: the product cannot overflow 64 bits.
    if (!img.fits(t.offset, t.count * t.entsize)) {
        return malformed("program header table: " + beyond_end(img, "e_phoff", t.offset,
                                                               "e_phnum * e_phentsize",
                                                               t.count * t.entsize));
    }
    return t;
}

Segment read_segment(const Image& img, const HeaderTable& t, std::size_t i) {
    const std::uint64_t at = t.offset + i * t.entsize;
    Segment s;
    s.index = i;
    s.type = static_cast<std::uint32_t>(img.uint(at, 4));
    if (img.is64) {
        s.offset = img.uint(at + 8, 8);
        s.vaddr = img.uint(at + 16, 8);
        s.filesz = img.uint(at + 32, 8);
        s.memsz = img.uint(at + 40, 8);
    } else {
        s.offset = img.uint(at + 4, 4);
        s.vaddr = img.uint(at + 8, 4);
        s.filesz = img.uint(at + 16, 4);
        s.memsz = img.uint(at + 20, 4);
    }
    return s;
}

Result<std::string> read_interp(const Image& img, const Segment& s) {
    const std::string where = "PT_INTERP (program header " + std::to_string(s.index) + ")";
    if (s.filesz == 0) {
        return malformed(where + ": empty");
    }
    const auto* begin = img.bytes.data() + s.offset;
    const auto* end = begin + s.filesz;
    const auto* nul = std::find(begin, end, 0);
    if (nul == end) {
        return malformed(where + ": not NUL-terminated within its " + std::to_string(s.filesz) +
                         " bytes");
    }
    if (nul == begin) {
        return malformed(where + ": empty path");
    }
    return std::string(begin, nul);
}

// Walk the program headers: PT_LOAD, PT_INTERP and PT_DYNAMIC must lie inside the file.
Result<void> read_segments(const Image& img, const HeaderTable& t, const SectionTable& sh,
                           ElfInfo& info) {
    std::vector<Segment> loads;
    std::optional<Segment> dynamic;
    for (std::size_t i = 0; i < t.count; ++i) {
        Segment s = read_segment(img, t, i);
        if (s.type != k_pt_load && s.type != k_pt_interp && s.type != k_pt_dynamic) {
            continue;
        }
        if (!img.fits(s.offset, s.filesz)) {
            return malformed("program header " + std::to_string(i) + ": " +
                             beyond_end(img, "p_offset", s.offset, "p_filesz", s.filesz));
        }
        if (s.type == k_pt_load) {
            loads.push_back(s);
        } else if (s.type == k_pt_interp && !info.interpreter) {
            auto interp = EMURUN_TRY(read_interp(img, s));
            info.interpreter = std::move(interp);
        } else if (s.type == k_pt_dynamic && !dynamic) {
            dynamic = s;
        }
    }
    info.has_dynamic = dynamic.has_value();
    return dynamic ? read_dynamic(img, *dynamic, loads, sh, info) : Result<void>{};
}

void read_header_fields(const Image& img, ElfInfo& info) {
    info.type = static_cast<std::uint16_t>(img.uint(16, 2));
    info.machine = static_cast<std::uint16_t>(img.uint(18, 2));
    info.flags = static_cast<std::uint32_t>(img.uint(img.is64 ? 48 : 36, 4));
}

SectionTable section_table(const Image& img) {
    const bool w = img.is64;
    return SectionTable{img.word(w ? 40 : 32), img.uint(w ? 60 : 48, 2), img.uint(w ? 58 : 46, 2)};
}

// The kernel's rule picks the arch; a contradicting e_machine (or flags) voids it.
void decide_arch(std::span<const unsigned char> image, ElfInfo& info) {
    info.machine_arch =
        arch_for_elf_fields(info.elf_class, info.elf_data, info.machine, info.flags);
    const Arch* a = arch_for_header(image);
    if (a != nullptr &&
        a->has_elf_fields(info.elf_class, info.elf_data, info.machine, info.flags)) {
        info.arch = a;
    }
}

} // namespace

std::string_view ElfInfo::linkage() const {
    if (type == 1 || type == 4) {
        return type == 1 ? "object file" : "core dump";
    }
    if (is_shared_library()) {
        return "shared library";
    }
    return is_static() ? "static" : "dynamic";
}

std::string ElfInfo::type_name() const {
    switch (type) {
    case 1:
        return "REL";
    case 2:
        return "EXEC";
    case 3:
        return "DYN";
    case 4:
        return "CORE";
    default:
        return "type " + std::to_string(type);
    }
}

Result<ElfInfo> parse_elf(std::span<const unsigned char> image) {
    ElfInfo info;
    Image img{image};
    EMURUN_TRY(check_ident(img, info));
    read_header_fields(img, info);
    const SectionTable sh = section_table(img);
    auto table = EMURUN_TRY(program_header_table(img, sh));
    EMURUN_TRY(read_segments(img, table, sh, info));
    decide_arch(image, info);
    return info;
}

namespace {

/// Files over 64 KiB (programs, emulators, libstdc++) are mapped, not read: parsing touches only
/// the pages holding headers and the dynamic section, which keeps `emurun exec` start-up cheap.
constexpr std::size_t k_map_threshold = std::size_t{64} << 10;

struct Mapping {
    void* addr = MAP_FAILED;
    std::size_t size = 0;
    ~Mapping() {
        if (addr != MAP_FAILED) {
            ::munmap(addr, size);
        }
    }
};

Result<ElfInfo> with_name(Result<ElfInfo> info, const std::string& name) {
    if (!info) {
        Error e = info.error();
        e.what = name;
        return std::unexpected(std::move(e));
    }
    return info;
}

} // namespace

Result<ElfInfo> read_elf(const std::filesystem::path& path, std::size_t max_bytes) {
    const std::string name = path.string();
    const auto fd = EMURUN_TRY(util::open_read(path));
    struct stat st {};
    if (::fstat(fd.get(), &st) == 0 && S_ISREG(st.st_mode) &&
        static_cast<std::uint64_t>(st.st_size) > k_map_threshold &&
        static_cast<std::uint64_t>(st.st_size) <= max_bytes) {
        Mapping m{::mmap(nullptr, static_cast<std::size_t>(st.st_size), PROT_READ, MAP_PRIVATE,
                         fd.get(), 0),
                  static_cast<std::size_t>(st.st_size)};
        if (m.addr != MAP_FAILED) {
            std::span<const unsigned char> image(static_cast<const unsigned char*>(m.addr), m.size);
            return with_name(parse_elf(image), name);
        }
    }
    auto bytes = util::read_fd(fd.get(), name, max_bytes);
    if (!bytes) {
        Error e = std::move(bytes.error());
        if (e.hint.empty()) {
            e.hint = "pass a larger max_bytes";
        }
        return std::unexpected(std::move(e));
    }
    // A file that shrinks while read is parsed as the truncated file it is.
    return with_name(
        parse_elf({reinterpret_cast<const unsigned char*>(bytes->data()), bytes->size()}), name);
}

bool looks_like_elf(const std::filesystem::path& path) {
    return util::read_head(path, 4) == "\x7f"
                                       "ELF";
}

} // namespace emurun
