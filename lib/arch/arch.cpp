#include <emurun/arch.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <exception>
#include <stdexcept>
#include <sys/utsname.h>

namespace emurun {
namespace detail {
extern const std::string_view k_arch_table_json;
}

namespace {

std::string lower(std::string_view s) {
    std::string out(s);
    std::ranges::transform(out, out.begin(), [](unsigned char c) { return std::tolower(c); });
    return out;
}

int hex_value(char c) {
    const auto u = static_cast<unsigned char>(std::tolower(static_cast<unsigned char>(c)));
    if (u >= '0' && u <= '9') {
        return u - '0';
    }
    if (u >= 'a' && u <= 'f') {
        return u - 'a' + 10;
    }
    throw std::invalid_argument(std::string("bad hex digit '") + c + "'");
}

// The table spells bytes as qemu-binfmt-conf.sh does: literal characters and \xHH escapes.
std::string unescape(std::string_view s) {
    std::string out;
    for (std::size_t i = 0; i < s.size(); ++i) {
        if (s[i] == '\\' && i + 3 < s.size() && s[i + 1] == 'x') {
            out.push_back(static_cast<char>(hex_value(s[i + 2]) * 16 + hex_value(s[i + 3])));
            i += 3;
        } else if (s[i] == '\\') {
            throw std::invalid_argument("backslash not followed by xHH");
        } else {
            out.push_back(s[i]);
        }
    }
    return out;
}

Arch arch_from_json(const nlohmann::json& j) {
    Arch a;
    a.name = j.at("name").get<std::string>();
    a.aliases = j.value("aliases", std::vector<std::string>{});
    a.elf_class = j.at("elf_class").get<int>() == 64 ? 2 : 1;
    a.elf_data = j.at("elf_data").get<std::string>() == "big" ? 2 : 1;
    a.e_machine = j.at("e_machine").get<std::uint16_t>();
    a.e_flags_mask = j.value("e_flags_mask", 0U);
    a.e_flags_value = j.value("e_flags_value", 0U);
    a.magic = unescape(j.at("magic").get<std::string>());
    a.mask = unescape(j.at("mask").get<std::string>());
    a.qemu = j.at("qemu").get<std::string>();
    a.triplet = j.value("triplet", "");
    a.debian = j.value("debian", "");
    a.family = j.value("family", a.name);
    a.known_issue = j.value("known_issue", "");
    if (a.magic.size() != a.mask.size()) {
        throw std::invalid_argument(a.name + ": magic and mask differ in length");
    }
    return a;
}

std::vector<Arch> load_table() {
    auto doc = nlohmann::json::parse(detail::k_arch_table_json);
    std::vector<Arch> out;
    for (const auto& j : doc.at("arches")) {
        out.push_back(arch_from_json(j));
    }
    return out;
}

// The table is embedded at build time and validated by the unit tests, so a malformed one is a
// build defect: report it and stop rather than let an exception escape the library.
std::vector<Arch> load_table_or_die() noexcept {
    try {
        return load_table();
    } catch (const std::exception& e) {
        std::fprintf(stderr, "emurun: internal error: embedded binfmt/arches.json: %s\n", e.what());
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
    for (const auto& a : all_arches()) {
        known += (known.empty() ? "" : ", ") + a.name;
    }
    return fail("architecture '" + std::string(name) + "'", "not known to emurun",
                "known: " + known);
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
