// JSON text out of the library's documents (reports, inspect, doctor, ...): the one writer, which
// never throws. Owned by the util module, as error.hpp.
// Layer: runner. Still evolving: its types may change between minor versions
// (docs/api/mainpage.md).
#pragma once

#include <emurun/export.hpp>

#include <nlohmann/json_fwd.hpp>

#include <string>
#include <string_view>

namespace emurun {

/// `j` as JSON text (pretty with `indent` >= 0, compact with -1). Never throws: bytes that are
/// not UTF-8 (a file name in a message, an ELF's library name) become U+FFFD, so a run's report
/// is always written. Every JSON document emurun prints or saves goes through here.
[[nodiscard]] EMURUN_EXPORT std::string json_text(const nlohmann::json& j, int indent = 2);

/// Whether `text` is well-formed UTF-8 (no overlong forms, surrogates or code points past
/// U+10FFFF): what JSON strings can hold without loss.
[[nodiscard]] EMURUN_EXPORT bool is_utf8(std::string_view text);

} // namespace emurun
