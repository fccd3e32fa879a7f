// Private: how binfmt shows raw bytes in fields, messages and JSON.
#pragma once

#include <string>
#include <string_view>

namespace emurun::detail {

/// "\xHH" for one byte, lower-case hex (the form the kernel parses and shows).
std::string hex_escape(unsigned char byte);

/// Escape raw bytes for a magic/mask field: every byte that is not [A-Za-z0-9] or one of
/// "._-+=@%^," (and is not `delimiter`) becomes \xHH.
std::string escape_binfmt_bytes(std::string_view raw, char delimiter);

/// Raw bytes made safe for a message: escape_binfmt_bytes without a delimiter.
inline std::string show(std::string_view raw) {
    return escape_binfmt_bytes(raw, '\0');
}

} // namespace emurun::detail
