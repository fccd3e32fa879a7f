#include <emurun/arch.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
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
    if (c >= '0' && c <= '9') {
        return c - '0';
    }
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (c >= 'a' && c <= 'f') {
        return c - 'a' + 10;
    }
    throw std::invalid_argument("bad hex digit");
}

// The table spells bytes as qemu-binfmt-conf.sh does: literal characters and \xHH escapes.
std::string unescape(std::string_view s) {
    std::string out;
    for (std::size_t i = 0; i < s.size(); ++i) {
        if (s[i] == '\\' && i + 3 < s.size() && s[i + 1] == 'x') {
            out.push_back(static_cast<char>(hex_value(s[i + 2]) * 16 + hex_value(s[i + 3])));
            i += 3;
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
    if (a.magic.size() != a.mask.size()) {
        throw std::logic_error("arches.json: " + a.name + ": magic and mask differ in length");
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

std::string_view Arch::endianness() const { return elf_data == 2 ? "big" : "little"; }

const std::vector<Arch>& all_arches() {
    // The embedded table is validated by the unit tests; a malformed one is a build defect.
    static const std::vector<Arch> table = load_table();
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
    for (const auto& a : all_arches()) {
        if (a.matches(header)) {
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

bool runs_natively(const Arch& arch) {
    const Arch* host = host_arch();
    if (host == nullptr) {
        return false;
    }
    return host == &arch || (host->name == "x86_64" && arch.name == "i386");
}

std::string_view arch_table_json() { return detail::k_arch_table_json; }

} // namespace emurun
