// Text as each report format may hold it: XML (escaped, what XML cannot hold dropped), terminal
// and Markdown (control characters shown, not obeyed), numbers.
#include "report/report_text.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdio>

namespace emurun::detail {
namespace {

// Length of the valid UTF-8 sequence at text[i] (no overlongs, surrogates or U+FFFE/FFFF, which
// XML 1.0 cannot hold), or 0.
std::size_t utf8_length(std::string_view text, std::size_t i) {
    const auto b = [&](std::size_t k) { return static_cast<unsigned char>(text[i + k]); };
    const unsigned char c = b(0);
    const std::size_t n = c >= 0xf0 && c <= 0xf4 ? 4 : c >= 0xe0 ? 3 : c >= 0xc2 ? 2 : 0;
    if (n == 0 || c > 0xf4 || i + n > text.size()) {
        return 0;
    }
    std::uint32_t cp = c & (0x7f >> n);
    for (std::size_t k = 1; k < n; ++k) {
        if ((b(k) & 0xc0) != 0x80) {
            return 0;
        }
        cp = (cp << 6) | (b(k) & 0x3f);
    }
    const std::uint32_t min = n == 2 ? 0x80 : n == 3 ? 0x800 : 0x10000;
    const bool ok = cp >= min && cp <= 0x10ffff && !(cp >= 0xd800 && cp <= 0xdfff) &&
                    cp != 0xfffe && cp != 0xffff;
    return ok ? n : 0;
}

// End of an ANSI escape sequence starting at text[i] == ESC (CSI "ESC [ ... final" or ESC X).
std::size_t ansi_end(std::string_view text, std::size_t i) {
    if (i + 1 < text.size() && text[i + 1] == '[') {
        std::size_t j = i + 2;
        while (j < text.size() && !(text[j] >= 0x40 && text[j] <= 0x7e)) {
            ++j;
        }
        return std::min(j + 1, text.size());
    }
    return std::min(i + 2, text.size());
}

const char* xml_entity(char c) {
    switch (c) {
    case '&':
        return "&amp;";
    case '<':
        return "&lt;";
    case '>':
        return "&gt;";
    case '"':
        return "&quot;";
    case '\'':
        return "&apos;";
    default:
        return nullptr;
    }
}

} // namespace

// Escaped for XML text and attributes; what XML 1.0 cannot hold (control characters other than
// tab and newlines, ANSI colour codes from logs, invalid UTF-8) is dropped.
std::string xml_escape(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    for (std::size_t i = 0; i < text.size();) {
        const auto u = static_cast<unsigned char>(text[i]);
        if (u == 0x1b) {
            i = ansi_end(text, i);
        } else if (u >= 0x80) {
            const std::size_t n = utf8_length(text, i);
            out.append(text.substr(i, n));
            i += n == 0 ? 1 : n;
        } else if (const char* entity = xml_entity(text[i])) {
            out += entity;
            ++i;
        } else {
            if (u >= 0x20 || u == '\t' || u == '\n' || u == '\r') {
                out += text[i];
            }
            ++i;
        }
    }
    return out;
}

std::string number(double v, const char* format) {
    char buf[64];
    std::snprintf(buf, sizeof buf, format, v);
    return buf;
}

// A Markdown table cell: no raw HTML (a report could otherwise inject tags into a step
// summary), no '|' that splits the cell, nothing unprintable.
std::string md_cell(std::string_view text) {
    std::string out;
    for (char c : printable(text)) {
        switch (c) {
        case '|':
            out += "\\|";
            break;
        case '<':
            out += "&lt;";
            break;
        case '>':
            out += "&gt;";
            break;
        case '&':
            out += "&amp;";
            break;
        case '`':
            out += "\\`";
            break;
        default:
            out += c;
        }
    }
    return out;
}

} // namespace emurun::detail
