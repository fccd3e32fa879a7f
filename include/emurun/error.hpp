// emurun's error model: library functions return Result<T>; only the CLI throws (CliError).
#pragma once

#include <emurun/export.hpp>

#include <expected>
#include <stdexcept>
#include <string>

namespace emurun {

/// What failed, why, and what to do about it. Rendered as "what: why (hint)".
struct Error {
    std::string what; ///< the operation or object, e.g. "open /bin/foo"
    std::string why;  ///< the cause, e.g. "No such file or directory"
    std::string hint; ///< what the user can do next; may be empty

    /// "what: why (hint)" — the text printed after "emurun: error: ".
    [[nodiscard]] EMURUN_EXPORT std::string message() const;
};

/// An Error built from errno after a failed system call: why = strerror(err).
[[nodiscard]] EMURUN_EXPORT Error system_error(std::string what, int err, std::string hint = {});

/// The result type of every fallible library function.
template <class T> using Result = std::expected<T, Error>;

/// Shorthand for returning a failure: `return fail("parse x", "bad byte");`.
inline std::unexpected<Error> fail(std::string what, std::string why, std::string hint = {}) {
    return std::unexpected<Error>(Error{std::move(what), std::move(why), std::move(hint)});
}

} // namespace emurun
