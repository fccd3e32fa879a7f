// The architecture table as the build generated it from binfmt/arches.json
// (cmake/ArchTable.cmake): each arch's fields copied from the JSON, magic and mask decoded by the
// compiler, so that nothing is parsed when emurun starts (issue 15, start-up); arch.cpp turns the
// rows into Arch values.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

namespace emurun::detail {

/// binfmt magic or mask bytes: at most 128, the kernel's limit.
struct BinfmtBytes {
    std::array<char, 128> bytes{};
    std::size_t size = 0;
    [[nodiscard]] constexpr std::string_view view() const { return {bytes.data(), size}; }
};

/// The value of hex digit `c`; not a hex digit: not a constant expression (a build error).
consteval int hex_digit(char c) {
    if (c >= '0' && c <= '9') {
        return c - '0';
    }
    if (c >= 'a' && c <= 'f') {
        return c - 'a' + 10;
    }
    if (c >= 'A' && c <= 'F') {
        return c - 'A' + 10;
    }
    throw "binfmt/arches.json: bad hex digit in a magic or mask";
}

/// qemu-binfmt-conf.sh's spelling of bytes (literal characters and \xHH escapes) decoded when
/// the table is compiled: a backslash not followed by xHH, or more than 128 bytes, is not a
/// constant expression, so a malformed table does not build.
consteval BinfmtBytes binfmt_bytes(std::string_view s) {
    BinfmtBytes out;
    for (std::size_t i = 0; i < s.size(); ++i) {
        if (out.size == out.bytes.size()) {
            throw "binfmt/arches.json: a magic or mask is over 128 bytes";
        }
        if (s[i] == '\\' && i + 3 < s.size() && s[i + 1] == 'x') {
            out.bytes[out.size++] =
                static_cast<char>(hex_digit(s[i + 2]) * 16 + hex_digit(s[i + 3]));
            i += 3;
        } else if (s[i] == '\\') {
            throw "binfmt/arches.json: a backslash in a magic or mask is not followed by xHH";
        } else {
            out.bytes[out.size++] = s[i];
        }
    }
    return out;
}

/// One entry of "arches", as spelled in the JSON (absent optional fields: their defaults).
struct ArchRow {
    std::string_view name;
    std::span<const std::string_view> aliases;
    int elf_class;             ///< 32 or 64
    std::string_view elf_data; ///< "little" or "big"
    std::uint16_t e_machine;
    std::uint32_t e_flags_mask;
    std::uint32_t e_flags_value;
    BinfmtBytes magic; ///< the bytes (the JSON spells them as qemu-binfmt-conf.sh does)
    BinfmtBytes mask;  ///< the bytes
    std::string_view qemu;
    std::string_view triplet;
    std::string_view debian;
    std::string_view family; ///< the name when the JSON has none
    std::string_view known_issue;
};

/// Every row's magic and mask are of one length (the generated table static_asserts it).
consteval bool magic_and_mask_agree(std::span<const ArchRow> rows) {
    for (const auto& r : rows) {
        if (r.magic.size != r.mask.size) {
            return false;
        }
    }
    return true;
}

/// The rows of binfmt/arches.json's "arches", in its order.
extern const std::span<const ArchRow> k_arch_table;
/// binfmt/arches.json's bytes.
extern const std::string_view k_arch_table_json;

} // namespace emurun::detail
