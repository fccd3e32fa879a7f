// The architecture table (binfmt/arches.json, embedded at build time).
// Layer: core. Its ABI is kept within a SOVERSION (abi/libemurun.abi; docs/api/mainpage.md).
#pragma once

#include <emurun/error.hpp>
#include <emurun/export.hpp>

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace emurun {

/// One architecture QEMU user-mode can emulate, and how the kernel recognises its ELF files.
struct Arch {
    std::string name;                 ///< canonical name, as QEMU spells it: "aarch64", "ppc64le"
    std::vector<std::string> aliases; ///< other names users type: "arm64", "ppc64el", ...
    int elf_class = 0;                ///< 1 = ELFCLASS32, 2 = ELFCLASS64
    int elf_data = 0;                 ///< 1 = ELFDATA2LSB (little), 2 = ELFDATA2MSB (big)
    std::uint16_t e_machine = 0;      ///< EM_* value
    std::uint32_t e_flags_mask = 0;   ///< bits of e_flags that tell variants apart (0: none)
    std::uint32_t e_flags_value = 0;  ///< required value of (e_flags & e_flags_mask)
    std::string magic;                ///< binfmt magic bytes (raw, not escaped), offset 0
    std::string mask;                 ///< binfmt mask bytes (raw), same length as magic
    std::string qemu;                 ///< emulator binary suffix: `qemu-<qemu>`, e.g. "aarch64"
    std::string triplet;              ///< GNU triplet, e.g. "aarch64-linux-gnu"
    std::string debian;               ///< Debian architecture, e.g. "arm64" (empty if none)
    std::string family;               ///< qemu's *_family: arches qemu treats as one host family
    std::string known_issue;          ///< a defect of upstream's magic/mask, kept verbatim (or "")

    /// True when `header` (the first bytes of a file) matches magic under mask, as the kernel
    /// tests it: ((header[i] ^ magic[i]) & mask[i]) == 0 for every i.
    [[nodiscard]] EMURUN_EXPORT bool matches(std::span<const unsigned char> header) const;
    /// "big" or "little".
    [[nodiscard]] EMURUN_EXPORT std::string_view endianness() const;
    /// True when an ELF file with these header fields is of this arch: class, data and machine
    /// equal, and (flags & e_flags_mask) == e_flags_value.
    [[nodiscard]] EMURUN_EXPORT bool has_elf_fields(int cls, int data, std::uint16_t machine,
                                                    std::uint32_t flags) const;
};

/// Every architecture in the embedded table, in table order.
[[nodiscard]] EMURUN_EXPORT const std::vector<Arch>& all_arches();

/// Look an arch up by canonical name or alias, case-insensitively.
/// Error: unknown name, with the list of known names as the hint.
[[nodiscard]] EMURUN_EXPORT Result<const Arch*> find_arch(std::string_view name);

/// The arch whose binfmt magic/mask matches `header` (the kernel's rule), or nullptr.
/// When several entries match (upstream's tables have had o32/n32 MIPS overlap), the tie is
/// broken by the header's own class, data, e_machine and e_flags (see Arch::has_elf_fields);
/// if that still leaves several, the first in table order wins, as the kernel takes the first
/// registered entry.
[[nodiscard]] EMURUN_EXPORT const Arch* arch_for_header(std::span<const unsigned char> header);

/// The arch an ELF header's fields name, regardless of magic/mask (e.g. for ET_REL objects or
/// a defective upstream pattern), or nullptr if no table entry has these fields.
[[nodiscard]] EMURUN_EXPORT const Arch*
arch_for_elf_fields(int elf_class, int elf_data, std::uint16_t machine, std::uint32_t flags);

/// The arch of the machine emurun runs on (from uname), or nullptr if not in the table.
[[nodiscard]] EMURUN_EXPORT const Arch* host_arch();

/// True when a binary of `arch` runs natively on this host without emulation
/// (same arch, or i386 on x86_64).
[[nodiscard]] EMURUN_EXPORT bool runs_natively(const Arch& arch);

/// runs_natively() for a given host arch (testable without the real host).
[[nodiscard]] EMURUN_EXPORT bool runs_natively_on(const Arch& host, const Arch& arch);

/// How a program runs: the one vocabulary of launch plans (plan_launch gives native or exec),
/// pipeline steps and reports.
enum class Emulation {
    native,  ///< the host runs it: argv as given, no emulation
    exec,    ///< the emulator is exec'd with the program as its argument (no binfmt needed)
    sandbox, ///< inside a private binfmt_misc namespace with handlers for the arch
    host,    ///< argv as given, relying on the host's registered binfmt handlers

    /// "auto", the default for a foreign arch in a pipeline: sandbox where the kernel allows
    /// it, else host when the host's handlers are sane (the runner decides before the run).
    automatic,
    root, ///< inside a foreign Debian root (emurun root run), compilers maybe accelerated
};

/// "native", "exec", "sandbox", "host", "auto" or "root".
[[nodiscard]] EMURUN_EXPORT std::string_view to_string(Emulation mode);
/// The Emulation named `text`, or nullopt.
[[nodiscard]] EMURUN_EXPORT std::optional<Emulation> emulation_from(std::string_view text);

/// The whole table as JSON text, exactly as embedded (installed as share/emurun/arches.json).
[[nodiscard]] EMURUN_EXPORT std::string_view arch_table_json();

} // namespace emurun
