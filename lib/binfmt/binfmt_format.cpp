// Validating and formatting binfmt_misc entries, and parsing the entry files the kernel shows.
#include "binfmt/binfmt_text.hpp"

#include <emurun/binfmt.hpp>

namespace emurun {
namespace {

constexpr std::string_view k_delimiter_candidates = ":,;|#%@!~";

bool safe_byte(unsigned char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           std::string_view("._-+=@%^,").find(static_cast<char>(c)) != std::string_view::npos;
}

using detail::show;

std::unexpected<Error> invalid(const BinfmtEntry& e, std::string why, std::string hint = {}) {
    return fail("binfmt_misc entry '" + show(e.name) + "'", std::move(why), std::move(hint));
}

bool has_any(std::string_view s, std::string_view chars) {
    return s.find_first_of(chars) != std::string_view::npos;
}

Result<void> validate_magic(const BinfmtEntry& e) {
    if (e.type == BinfmtType::extension) {
        if (e.magic.empty() || has_any(e.magic, std::string_view("/\n\0", 3))) {
            return invalid(e, "the extension is empty or contains '/', a newline or a NUL byte");
        }
        if (e.offset != 0 || !e.mask.empty()) {
            return invalid(e, "an extension entry has no offset and no mask",
                           "leave offset 0 and mask empty");
        }
        return {};
    }
    if (e.magic.empty()) {
        return invalid(e, "the magic is empty");
    }
    if (!e.mask.empty() && e.mask.size() != e.magic.size()) {
        return invalid(e, "the mask is " + std::to_string(e.mask.size()) +
                              " bytes but the magic is " + std::to_string(e.magic.size()) +
                              " bytes");
    }
    if (e.offset < 0 || e.magic.size() > k_binfmt_buf_size ||
        static_cast<std::size_t>(e.offset) > k_binfmt_buf_size - e.magic.size()) {
        return invalid(e, "offset " + std::to_string(e.offset) + " + magic size " +
                              std::to_string(e.magic.size()) + " must be at most " +
                              std::to_string(k_binfmt_buf_size) + " and offset not negative");
    }
    return {};
}

bool usable_delimiter(const BinfmtEntry& e, char d) {
    bool plain_ok =
        e.name.find(d) == std::string::npos && e.interpreter.find(d) == std::string::npos;
    bool ext_ok = e.type == BinfmtType::magic || e.magic.find(d) == std::string::npos;
    return plain_ok && ext_ok;
}

Result<char> pick_delimiter(const BinfmtEntry& e, std::optional<char> wanted) {
    if (wanted) {
        char d = *wanted;
        if (k_delimiter_candidates.find(d) == std::string_view::npos) {
            return invalid(e, "'" + show({&d, 1}) + "' cannot be the delimiter",
                           "use one of " + std::string(k_delimiter_candidates));
        }
        if (!usable_delimiter(e, d)) {
            return invalid(e,
                           std::string("the name, interpreter or extension contains the "
                                       "delimiter '") +
                               d + "', which the kernel would misread",
                           "choose another delimiter");
        }
        return d;
    }
    for (char d : k_delimiter_candidates) {
        if (usable_delimiter(e, d)) {
            return d;
        }
    }
    return invalid(e,
                   "the name and interpreter contain every usable delimiter (" +
                       std::string(k_delimiter_candidates) + ")",
                   "rename the entry or move the interpreter");
}

Result<std::string> hex_decode(std::string_view hex, std::string_view what) {
    std::string out;
    auto digit = [](char c) -> int {
        if (c >= '0' && c <= '9') {
            return c - '0';
        }
        if (c >= 'a' && c <= 'f') {
            return c - 'a' + 10;
        }
        return -1;
    };
    for (std::size_t i = 0; i + 1 < hex.size(); i += 2) {
        int hi = digit(hex[i]);
        int lo = digit(hex[i + 1]);
        if (hi < 0 || lo < 0) {
            return fail("parse binfmt_misc entry file: " + std::string(what),
                        "'" + show(hex) + "' is not lower-case hex");
        }
        out.push_back(static_cast<char>(hi * 16 + lo));
    }
    if (hex.size() % 2 != 0 || hex.empty()) {
        return fail("parse binfmt_misc entry file: " + std::string(what),
                    "'" + show(hex) + "' is not an even number of hex digits");
    }
    return out;
}

// One "key value" line of an entry file into `e`; false when the key is unknown.
Result<bool> entry_file_line(std::string_view line, BinfmtEntry& e) {
    auto after = [&](std::string_view key) { return line.substr(key.size()); };
    if (line == "enabled" || line == "disabled") {
        e.enabled = line == "enabled";
    } else if (line.starts_with("interpreter ")) {
        e.interpreter = after("interpreter ");
    } else if (line.starts_with("flags: ") || line == "flags:") {
        auto f = EMURUN_TRY(BinfmtFlags::parse(line.substr(std::min<std::size_t>(7, line.size()))));
        e.flags = f;
    } else if (line.starts_with("offset ")) {
        std::string v(after("offset "));
        char* end = nullptr;
        long n = std::strtol(v.c_str(), &end, 10);
        if (v.empty() || *end != '\0' || n < 0 || n > static_cast<long>(k_binfmt_buf_size)) {
            return fail("parse binfmt_misc entry file", "bad offset '" + show(v) + "'");
        }
        e.offset = static_cast<int>(n);
    } else if (line.starts_with("magic ") || line.starts_with("mask ")) {
        bool is_magic = line.starts_with("magic ");
        auto bytes =
            EMURUN_TRY(hex_decode(line.substr(is_magic ? 6 : 5), is_magic ? "magic" : "mask"));
        (is_magic ? e.magic : e.mask) = bytes;
    } else if (line.starts_with("extension .")) {
        e.type = BinfmtType::extension;
        e.magic = after("extension .");
    } else {
        return false;
    }
    return true;
}

// The registration line's fields joined by the delimiter: d name d type d offset d ... flags.
std::string join_fields(char d, std::initializer_list<std::string_view> fields) {
    std::string line;
    for (auto f : fields) {
        line += d;
        line += f;
    }
    return line;
}

} // namespace

std::string detail::hex_escape(unsigned char byte) {
    static constexpr std::string_view k_hex = "0123456789abcdef";
    return {'\\', 'x', k_hex[byte >> 4], k_hex[byte & 0xf]};
}

std::string detail::escape_binfmt_bytes(std::string_view raw, char delimiter) {
    std::string out;
    for (unsigned char c : raw) {
        if (safe_byte(c) && c != static_cast<unsigned char>(delimiter)) {
            out.push_back(static_cast<char>(c));
        } else {
            out += hex_escape(c);
        }
    }
    return out;
}

std::string_view to_string(BinfmtType type) {
    return type == BinfmtType::magic ? "magic" : "extension";
}

Result<void> validate_binfmt_entry(const BinfmtEntry& e) {
    const std::string_view bad("\n\0", 2);
    if (e.name.empty() || e.name == "." || e.name == ".." || has_any(e.name, "/") ||
        has_any(e.name, bad)) {
        return invalid(e, "the name is empty, '.', '..', or contains '/', a newline or a NUL byte",
                       "use a plain file name such as qemu-aarch64");
    }
    if (e.name == "register" || e.name == "status") {
        return invalid(e, "the name is that of binfmt_misc's own control file",
                       "use another name, such as qemu-aarch64");
    }
    if (e.interpreter.empty() || has_any(e.interpreter, bad)) {
        return invalid(e, "the interpreter is empty or contains a newline or a NUL byte");
    }
    return validate_magic(e);
}

Result<std::string> format_binfmt_line(const BinfmtEntry& e, std::optional<char> delimiter) {
    EMURUN_TRY(validate_binfmt_entry(e));
    auto d = EMURUN_TRY(pick_delimiter(e, delimiter));
    std::string line;
    const std::string flags = e.flags.to_string();
    if (e.type == BinfmtType::magic) {
        line = join_fields(d, {e.name, "M", e.offset ? std::to_string(e.offset) : "",
                               detail::escape_binfmt_bytes(e.magic, d),
                               detail::escape_binfmt_bytes(e.mask, d), e.interpreter, flags});
    } else {
        line = join_fields(d, {e.name, "E", "", e.magic, "", e.interpreter, flags});
    }
    if (line.size() > k_binfmt_max_line) {
        return invalid(e,
                       "the registration line is " + std::to_string(line.size()) +
                           " bytes; the kernel accepts at most " +
                           std::to_string(k_binfmt_max_line),
                       "shorten the interpreter path");
    }
    return line;
}

Result<BinfmtEntry> parse_binfmt_entry_file(std::string_view name, std::string_view text) {
    BinfmtEntry e;
    e.name = name;
    e.enabled = false;
    bool seen_status = false;
    while (!text.empty()) {
        auto nl = text.find('\n');
        auto line = text.substr(0, nl);
        text = nl == std::string_view::npos ? std::string_view{} : text.substr(nl + 1);
        if (line.empty()) {
            continue;
        }
        auto known = entry_file_line(line, e);
        if (!known) {
            return fail("parse binfmt_misc entry '" + show(name) + "'", known.error().why,
                        known.error().hint);
        }
        if (!*known) {
            return fail("parse binfmt_misc entry '" + show(name) + "'",
                        "unknown line '" + show(line) + "'", "is this a binfmt_misc entry file?");
        }
        seen_status = seen_status || line == "enabled" || line == "disabled";
    }
    if (!seen_status || e.interpreter.empty() || e.magic.empty()) {
        return fail("parse binfmt_misc entry '" + show(name) + "'",
                    "the status, interpreter or magic/extension line is missing",
                    "is this a binfmt_misc entry file?");
    }
    return e;
}

} // namespace emurun
