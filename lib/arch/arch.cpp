#include "arch/arch_table.hpp"
#include "util/json.hpp"

#include <emurun/arch.hpp>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <exception>
#include <sys/utsname.h>

namespace emurun {
namespace {

std::string lower(std::string_view s) {
    std::string out(s);
    std::ranges::transform(out, out.begin(), [](unsigned char c) { return std::tolower(c); });
    return out;
}

Arch arch_from_row(const detail::ArchRow& r) {
    Arch a;
    a.name = r.name;
    a.aliases.assign(r.aliases.begin(), r.aliases.end());
    a.elf_class = r.elf_class == 64 ? 2 : 1;
    a.elf_data = r.elf_data == "big" ? 2 : 1;
    a.e_machine = r.e_machine;
    a.e_flags_mask = r.e_flags_mask;
    a.e_flags_value = r.e_flags_value;
    a.magic = r.magic.view();
    a.mask = r.mask.view();
    a.qemu = r.qemu;
    a.triplet = r.triplet;
    a.debian = r.debian;
    a.family = r.family;
    a.known_issue = r.known_issue;
    return a;
}

std::vector<Arch> load_table() {
    std::vector<Arch> out;
    out.reserve(detail::k_arch_table.size());
    for (const auto& row : detail::k_arch_table) {
        out.push_back(arch_from_row(row));
    }
    return out;
}

// The table is checked when it compiles (arch_table.hpp); what is left to fail is memory: report
// it and stop rather than let an exception escape the library.
std::vector<Arch> load_table_or_die() noexcept {
    try {
        return load_table();
    } catch (const std::exception& e) {
        std::fprintf(stderr, "emurun: internal error: building the arch table: %s\n", e.what());
        std::terminate();
    }
}

// e_machine and e_flags of an ELF header (class and data from e_ident); false if too short.
bool header_fields(std::span<const unsigned char> h, std::uint16_t& machine, std::uint32_t& flags) {
    const std::size_t flags_at = h.size() > 4 && h[4] == 2 ? 0x30 : 0x24;
    if (h.size() < flags_at + 4 || h.size() < 20) {
        return false;
    }
    const bool big = h[5] == 2;
    machine = big ? static_cast<std::uint16_t>(h[18] << 8 | h[19])
                  : static_cast<std::uint16_t>(h[19] << 8 | h[18]);
    flags = 0;
    for (std::size_t i = 0; i < 4; ++i) {
        const std::size_t at = flags_at + (big ? i : 3 - i);
        flags = flags << 8 | h[at];
    }
    return true;
}

} // namespace

bool Arch::matches(std::span<const unsigned char> header) const {
    if (header.size() < magic.size()) {
        return false;
    }
    for (std::size_t i = 0; i < magic.size(); ++i) {
        auto m = static_cast<unsigned char>(mask[i]);
        if (((header[i] ^ static_cast<unsigned char>(magic[i])) & m) != 0) {
            return false;
        }
    }
    return true;
}

std::string_view Arch::endianness() const {
    return elf_data == 2 ? "big" : "little";
}

bool Arch::has_elf_fields(int cls, int data, std::uint16_t machine, std::uint32_t flags) const {
    return cls == elf_class && data == elf_data && machine == e_machine &&
           (flags & e_flags_mask) == e_flags_value;
}

const std::vector<Arch>& all_arches() {
    static const std::vector<Arch> table = load_table_or_die();
    return table;
}

Result<const Arch*> find_arch(std::string_view name) {
    const std::string want = lower(name);
    for (const auto& a : all_arches()) {
        if (a.name == want || std::ranges::find(a.aliases, want) != a.aliases.end()) {
            return &a;
        }
    }
    std::string known;
    std::vector<std::string> names; // with the aliases (Debian's, GNU's) a user may mean
    for (const auto& a : all_arches()) {
        known += (known.empty() ? "" : ", ") + a.name;
        names.push_back(a.name);
        names.insert(names.end(), a.aliases.begin(), a.aliases.end());
    }
    const auto near = util::closest_match(want, names);
    return fail(ErrorKind::bad_input, "architecture '" + std::string(name) + "'",
                "not known to emurun",
                (near ? "did you mean '" + *near + "'? " : std::string()) + "known: " + known +
                    " (and their Debian and GNU names, e.g. arm64, ppc64el)");
}

const Arch* arch_for_header(std::span<const unsigned char> header) {
    std::vector<const Arch*> hits;
    for (const auto& a : all_arches()) {
        if (a.matches(header)) {
            hits.push_back(&a);
        }
    }
    if (hits.size() <= 1) {
        return hits.empty() ? nullptr : hits.front();
    }
    std::uint16_t machine = 0;
    std::uint32_t flags = 0;
    if (header_fields(header, machine, flags)) {
        for (const Arch* a : hits) {
            if (a->has_elf_fields(header[4], header[5], machine, flags)) {
                return a;
            }
        }
    }
    return hits.front();
}

const Arch* arch_for_elf_fields(int elf_class, int elf_data, std::uint16_t machine,
                                std::uint32_t flags) {
    for (const auto& a : all_arches()) {
        if (a.has_elf_fields(elf_class, elf_data, machine, flags)) {
            return &a;
        }
    }
    return nullptr;
}

const Arch* host_arch() {
    static const Arch* host = [] {
        utsname u{};
        if (::uname(&u) != 0) {
            return static_cast<const Arch*>(nullptr);
        }
        auto a = find_arch(u.machine);
        return a ? *a : nullptr;
    }();
    return host;
}

bool runs_natively_on(const Arch& host, const Arch& arch) {
    return host.name == arch.name || (host.name == "x86_64" && arch.name == "i386");
}

bool runs_natively(const Arch& arch) {
    const Arch* host = host_arch();
    return host != nullptr && runs_natively_on(*host, arch);
}

std::string_view arch_table_json() {
    return detail::k_arch_table_json;
}

std::string_view to_string(Emulation mode) {
    switch (mode) {
    case Emulation::exec:
        return "exec";
    case Emulation::sandbox:
        return "sandbox";
    case Emulation::host:
        return "host";
    case Emulation::automatic:
        return "auto";
    case Emulation::root:
        return "root";
    case Emulation::native:
        break;
    }
    return "native";
}

std::optional<Emulation> emulation_from(std::string_view text) {
    for (auto m : {Emulation::native, Emulation::exec, Emulation::sandbox, Emulation::host,
                   Emulation::automatic, Emulation::root}) {
        if (to_string(m) == text) {
            return m;
        }
    }
    return std::nullopt;
}

} // namespace emurun
