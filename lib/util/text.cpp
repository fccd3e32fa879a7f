#include "util/text.hpp"

#include <cstdio>

namespace emurun::util {

namespace {

/// The bidi override or isolate encoded at text[i] (0xe2 0x80 0xaa..0xae, 0xe2 0x81 0xa6..0xa9).
bool bidi_at(std::string_view text, std::size_t i) {
    if (static_cast<unsigned char>(text[i]) != 0xe2 || i + 2 >= text.size()) {
        return false;
    }
    const auto b1 = static_cast<unsigned char>(text[i + 1]);
    const auto b2 = static_cast<unsigned char>(text[i + 2]);
    return (b1 == 0x80 && b2 >= 0xaa && b2 <= 0xae) || (b1 == 0x81 && b2 >= 0xa6 && b2 <= 0xa9);
}

} // namespace

std::string printable(std::string_view text, bool keep_lines) {
    std::string out;
    out.reserve(text.size());
    char buf[16];
    for (std::size_t i = 0; i < text.size(); ++i) {
        const auto c = static_cast<unsigned char>(text[i]);
        if ((c < 0x20 || c == 0x7f) && !(keep_lines && (c == '\n' || c == '\t'))) {
            std::snprintf(buf, sizeof buf, "\\x%02x", c);
            out += buf;
        } else if (bidi_at(text, i)) {
            const unsigned cp = 0x2000U | (static_cast<unsigned>(text[i + 1] & 0x0f) << 6) |
                                static_cast<unsigned>(text[i + 2] & 0x3f);
            std::snprintf(buf, sizeof buf, "\\u%04x", cp);
            out += buf;
            i += 2;
        } else {
            out += static_cast<char>(c);
        }
    }
    return out;
}

} // namespace emurun::util
