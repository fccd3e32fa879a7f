// A bounds-checked reader of ELF headers, program headers and the dynamic section.
// Layer: core. Its ABI is kept within a SOVERSION (abi/libemurun.abi; docs/api/mainpage.md).
#pragma once

#include <emurun/arch.hpp>
#include <emurun/error.hpp>
#include <emurun/export.hpp>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace emurun {

/// What emurun needs to know about an ELF file. Every offset and size in the file is checked
/// against the file's length before it is used.
struct ElfInfo {
    int elf_class = 0;          ///< 1 = 32-bit, 2 = 64-bit
    int elf_data = 0;           ///< 1 = little-endian, 2 = big-endian
    std::uint16_t type = 0;     ///< e_type: 2 = EXEC, 3 = DYN, 1 = REL, 4 = CORE
    std::uint16_t machine = 0;  ///< e_machine
    std::uint32_t flags = 0;    ///< e_flags
    std::uint8_t osabi = 0;     ///< e_ident[EI_OSABI]
    const Arch* arch = nullptr; ///< decided by the kernel's magic/mask rule; nullptr if none

    /// The arch named by class, data, e_machine and e_flags alone (arch_for_elf_fields): set
    /// also for files binfmt_misc would not run (ET_REL, an odd EI_OSABI); nullptr if none.
    const Arch* machine_arch = nullptr;
    std::optional<std::string> interpreter; ///< PT_INTERP, e.g. "/lib/ld-linux-aarch64.so.1"
    bool has_dynamic = false;               ///< has a PT_DYNAMIC segment
    std::vector<std::string> needed;        ///< DT_NEEDED, in file order
    std::vector<std::string> runpath;       ///< DT_RUNPATH split at ':'
    std::vector<std::string> rpath;         ///< DT_RPATH split at ':'
    std::optional<std::string> soname;      ///< DT_SONAME

    std::uint64_t flags_1 = 0; ///< DT_FLAGS_1 (DF_1_PIE = 0x08000000)

    /// Statically linked: no PT_INTERP (static-pie has PT_DYNAMIC but no interpreter).
    [[nodiscard]] bool is_static() const { return !interpreter.has_value(); }
    /// A shared library: DYN without an interpreter that names libraries it needs or a soname,
    /// or that has a dynamic section but is no PIE (a static-pie is DYN without an interpreter
    /// too, but needs nothing, names no soname and carries DF_1_PIE; a -nostdlib shared object
    /// may need and name nothing).
    [[nodiscard]] bool is_shared_library() const {
        constexpr std::uint64_t k_df_1_pie = 0x08000000;
        return type == 3 && !interpreter &&
               (!needed.empty() || soname.has_value() ||
                (has_dynamic && (flags_1 & k_df_1_pie) == 0));
    }
    /// How the file links, as `emurun inspect` says it: "static", "dynamic" (an interpreter
    /// loads it), "shared library", "object file" (REL: not linked yet) or "core dump".
    [[nodiscard]] EMURUN_EXPORT std::string_view linkage() const;
    /// "big" or "little".
    [[nodiscard]] std::string_view endianness() const { return elf_data == 2 ? "big" : "little"; }
    /// "EXEC", "DYN", "REL", "CORE" or "type N".
    [[nodiscard]] EMURUN_EXPORT std::string type_name() const;
};

/// Parse an ELF image held in memory. Errors name the field that is out of bounds or invalid,
/// e.g. "program header 3: p_offset 0x... + p_filesz 0x... beyond end of file (1234 bytes)".
/// A file whose magic/mask matches no arch, or whose e_machine contradicts the matching arch,
/// still parses: `arch` is then nullptr.
[[nodiscard]] EMURUN_EXPORT Result<ElfInfo> parse_elf(std::span<const unsigned char> image);

/// Read `path` (at most `max_bytes`) and parse it. Errors: cannot open/read (errno), not ELF
/// ("not an ELF file (starts with 23 21 2f 62)"), truncated, malformed.
[[nodiscard]] EMURUN_EXPORT Result<ElfInfo> read_elf(const std::filesystem::path& path,
                                                     std::size_t max_bytes = std::size_t{1} << 31);

/// True when the file starts with "\x7fELF". Does not fail: unreadable files are not ELF.
[[nodiscard]] EMURUN_EXPORT bool looks_like_elf(const std::filesystem::path& path);

} // namespace emurun
