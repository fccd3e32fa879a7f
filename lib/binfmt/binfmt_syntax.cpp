// The kernel's registration syntax (fs/binfmt_misc.c create_entry), reproduced byte for byte:
// parse, validate, format.
#include "binfmt/binfmt_text.hpp"

#include <emurun/binfmt.hpp>

#include <algorithm>
#include <charconv>
#include <climits>

namespace emurun {
namespace {

constexpr std::string_view k_hint_syntax =
    "the syntax is :name:type:offset:magic:mask:interpreter:flags, see "
    "https://docs.kernel.org/admin-guide/binfmt-misc.html";

bool is_hex(char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

int hex_digit(char c) {
    if (c >= '0' && c <= '9') {
        return c - '0';
    }
    return (c | 0x20) - 'a' + 10;
}

std::string printable(std::string_view s) {
    std::string out;
    for (unsigned char c : s) {
        if (c < 0x20 || c >= 0x7f || c == '\\') {
            out += detail::hex_escape(c);
        } else {
            out.push_back(static_cast<char>(c));
        }
    }
    return out;
}

// The kernel's scanarg(): the field ends at the next delimiter; "\x" must be followed by two
// hex digits; a NUL ends the string early (error). Returns the end index, or npos.
std::size_t scan_escaped(std::string_view buf, std::size_t p, char del) {
    while (p < buf.size()) {
        char c = buf[p++];
        if (c == del) {
            return p - 1;
        }
        if (c == '\\' && p < buf.size() && buf[p] == 'x') {
            ++p;
            if (p + 1 >= buf.size() || !is_hex(buf[p]) || !is_hex(buf[p + 1])) {
                return std::string_view::npos;
            }
            p += 2;
        }
        if (c == '\0') {
            return std::string_view::npos;
        }
    }
    return std::string_view::npos;
}

// The kernel's string_unescape(UNESCAPE_HEX): "\x" + one or two hex digits is a byte; a
// backslash before anything else is kept together with the character after it.
std::string unescape_hex(std::string_view s) {
    std::string out;
    std::size_t i = 0;
    while (i < s.size()) {
        if (s[i] == '\\' && i + 1 < s.size()) {
            ++i;
            if (s[i] == 'x' && i + 1 < s.size() && is_hex(s[i + 1])) {
                int v = hex_digit(s[i + 1]);
                i += 2;
                if (i < s.size() && is_hex(s[i])) {
                    v = v * 16 + hex_digit(s[i++]);
                }
                out.push_back(static_cast<char>(v));
                continue;
            }
            out.push_back('\\');
        }
        out.push_back(s[i++]);
    }
    return out;
}

// kstrtoint(s, 10): optional sign, decimal digits, optional trailing newline, fits in int.
std::optional<int> kernel_strtoint(std::string_view s) {
    if (!s.empty() && s.back() == '\n') {
        s.remove_suffix(1);
    }
    bool neg = false;
    if (!s.empty() && (s.front() == '+' || s.front() == '-')) {
        neg = s.front() == '-';
        s.remove_prefix(1);
    }
    long long v = 0;
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (s.empty() || ec != std::errc{} || end != s.data() + s.size() || v > INT_MAX) {
        return std::nullopt;
    }
    return static_cast<int>(neg ? -v : v);
}

std::unexpected<Error> bad_line(std::string_view line, std::string why) {
    return fail("parse binfmt_misc line '" + printable(line) + "'", std::move(why),
                std::string(k_hint_syntax));
}

// A cursor over the kernel's padded buffer: the line followed by 8 delimiters and a NUL.
struct Cursor {
    std::string buf;
    std::size_t count = 0;
    std::size_t p = 1;
    char del = 0;
    // strchr(p, del): the index of the next delimiter, npos if a NUL comes first.
    std::size_t find_del() const {
        for (std::size_t i = p; i < buf.size(); ++i) {
            if (buf[i] == del) {
                return i;
            }
            if (buf[i] == '\0') {
                break;
            }
        }
        return std::string_view::npos;
    }
    // Take the field up to the next delimiter (strchr semantics); nullopt when none.
    std::optional<std::string> plain_field() {
        auto e = find_del();
        if (e == std::string_view::npos) {
            return std::nullopt;
        }
        std::string f = buf.substr(p, e - p);
        p = e + 1;
        return f;
    }
    std::optional<std::string> escaped_field() {
        auto e = scan_escaped(buf, p, del);
        if (e == std::string_view::npos) {
            return std::nullopt;
        }
        std::string f = buf.substr(p, e - p);
        p = e + 1;
        return f;
    }
};

Result<void> parse_magic_fields(Cursor& c, BinfmtEntry& e, std::string_view line) {
    auto off = c.plain_field();
    if (!off) {
        return bad_line(line, "the offset field is not terminated");
    }
    if (!off->empty()) {
        auto v = kernel_strtoint(*off);
        if (!v || *v < 0) {
            return bad_line(line, "offset '" + printable(*off) +
                                      "' is not a non-negative decimal number");
        }
        e.offset = *v;
    }
    auto magic = c.escaped_field();
    if (!magic) {
        return bad_line(line, "the magic field is not terminated, or has a \\x not followed by "
                              "two hex digits, or a NUL byte");
    }
    if (magic->empty()) {
        return bad_line(line, "the magic is empty");
    }
    auto mask = c.escaped_field();
    if (!mask) {
        return bad_line(line, "the mask field is not terminated, or has a \\x not followed by two "
                              "hex digits, or a NUL byte");
    }
    e.magic = unescape_hex(*magic);
    e.mask = unescape_hex(*mask);
    if (!mask->empty() && e.mask.size() != e.magic.size()) {
        return bad_line(line, "the mask is " + std::to_string(e.mask.size()) +
                                  " bytes but the magic is " + std::to_string(e.magic.size()) +
                                  " bytes");
    }
    if (e.magic.size() > k_binfmt_buf_size ||
        k_binfmt_buf_size - e.magic.size() < static_cast<std::size_t>(e.offset)) {
        return bad_line(line, "offset " + std::to_string(e.offset) + " + magic size " +
                                  std::to_string(e.magic.size()) + " exceeds the " +
                                  std::to_string(k_binfmt_buf_size) + " bytes the kernel reads");
    }
    return {};
}

Result<void> parse_extension_fields(Cursor& c, BinfmtEntry& e, std::string_view line) {
    // The kernel skips the offset and mask fields of an E entry without looking at them.
    auto off = c.plain_field();
    auto ext = off ? c.plain_field() : std::nullopt;
    auto mask = ext ? c.plain_field() : std::nullopt;
    if (!mask) {
        return bad_line(line, "the offset, extension or mask field is not terminated");
    }
    if (ext->empty() || ext->find('/') != std::string::npos) {
        return bad_line(line, "the extension is empty or contains '/'");
    }
    e.magic = *ext;
    return {};
}

Result<void> parse_name_and_type(Cursor& c, BinfmtEntry& e, std::string_view line) {
    auto name = c.plain_field();
    if (!name) {
        return bad_line(line, "the name field is not terminated (a NUL byte?)");
    }
    if (name->empty() || *name == "." || *name == ".." || name->find('/') != std::string::npos) {
        return bad_line(line,
                        "name '" + printable(*name) + "' is empty, '.', '..' or contains '/'");
    }
    e.name = *name;
    char type = c.buf[c.p++];
    if (type != 'M' && type != 'E') {
        return bad_line(line, "type '" + printable(std::string(1, type)) +
                                  "' is neither M (magic) nor E (extension)");
    }
    e.type = type == 'M' ? BinfmtType::magic : BinfmtType::extension;
    if (c.buf[c.p++] != c.del) {
        return bad_line(line, "the type field is longer than one character");
    }
    return {};
}

Result<void> parse_interpreter_and_flags(Cursor& c, BinfmtEntry& e, std::string_view line) {
    auto interp = c.plain_field();
    if (!interp) {
        return bad_line(line, "the interpreter field is not terminated");
    }
    if (interp->empty()) {
        return bad_line(line, "the interpreter is empty");
    }
    e.interpreter = *interp;
    std::size_t start = c.p;
    while (std::string_view("POCF").find(c.buf[c.p]) != std::string_view::npos && c.buf[c.p]) {
        ++c.p;
    }
    e.flags = *BinfmtFlags::parse(std::string_view(c.buf).substr(start, c.p - start));
    if (c.buf[c.p] == '\n') {
        ++c.p;
    }
    if (c.p != c.count) {
        if (c.p > c.count) {
            return bad_line(line, "the flags field runs past the end of the line (the line needs 7 "
                                  "delimiters, the last one before the flags even when there are "
                                  "none, and the delimiter must not be a flag letter)");
        }
        return bad_line(line, "unexpected '" + printable(std::string_view(c.buf).substr(c.p, 1)) +
                                  "' in the flags field (flags are P, O, C, F)");
    }
    return {};
}

} // namespace

std::string BinfmtFlags::to_string() const {
    std::string s;
    if (preserve_argv0) {
        s += 'P';
    }
    if (opens_binary()) {
        s += 'O';
    }
    if (credentials) {
        s += 'C';
    }
    if (fix_binary) {
        s += 'F';
    }
    return s;
}

Result<BinfmtFlags> BinfmtFlags::parse(std::string_view letters) {
    BinfmtFlags f;
    for (char c : letters) {
        switch (c) {
        case 'P':
            f.preserve_argv0 = true;
            break;
        case 'O':
            f.open_binary = true;
            break;
        case 'C':
            f.credentials = f.open_binary = true;
            break;
        case 'F':
            f.fix_binary = true;
            break;
        default:
            return fail("parse binfmt flags '" + printable(letters) + "'",
                        "'" + printable(std::string(1, c)) + "' is not a flag",
                        "flags are P (preserve argv[0]), O (open binary), C (credentials), F (fix "
                        "binary)");
        }
    }
    return f;
}

bool BinfmtEntry::same_registration(const BinfmtEntry& o) const {
    return name == o.name && type == o.type && offset == o.offset && magic == o.magic &&
           mask == o.mask && interpreter == o.interpreter && flags == o.flags;
}

Result<BinfmtEntry> parse_binfmt_line(std::string_view line) {
    if (line.size() < 11 || line.size() > k_binfmt_max_line) {
        return bad_line(line.substr(0, 80), "the line is " + std::to_string(line.size()) +
                                                " bytes; the kernel accepts 11 to " +
                                                std::to_string(k_binfmt_max_line));
    }
    Cursor c;
    c.del = line[0];
    c.count = line.size();
    c.buf = std::string(line) + std::string(8, c.del) + '\0';
    BinfmtEntry e;
    auto r = parse_name_and_type(c, e, line);
    if (r) {
        r = e.type == BinfmtType::magic ? parse_magic_fields(c, e, line)
                                        : parse_extension_fields(c, e, line);
    }
    if (r) {
        r = parse_interpreter_and_flags(c, e, line);
    }
    if (!r) {
        return std::unexpected(r.error());
    }
    return e;
}

} // namespace emurun
