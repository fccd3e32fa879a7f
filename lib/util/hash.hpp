// FNV-1a, 64 bits: a stable hash (the same on every machine and run) for names and identities,
// not for security.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

namespace emurun::util {

[[nodiscard]] inline std::uint64_t fnv1a64(std::string_view text) {
    std::uint64_t h = 14695981039346656037ULL;
    for (char c : text) {
        h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ULL;
    }
    return h;
}

/// fnv1a64 as 16 lower-case hex digits.
[[nodiscard]] inline std::string fnv1a64_hex(std::string_view text) {
    char buf[17];
    std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(fnv1a64(text)));
    return buf;
}

} // namespace emurun::util
