// emurun's error model: library functions return Result<T>; only the CLI throws (CliError).
#pragma once

#include <emurun/export.hpp>

#include <expected>
#include <stdexcept>
#include <string>
#include <utility>

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

namespace detail {
/// EMURUN_TRY's last step: the value moved out of a successful Result (nothing for void).
template <class T> T take_value(Result<T>& r) {
    return std::move(*r);
}
inline void take_value(Result<void>& /*unused*/) {}
} // namespace detail

} // namespace emurun

/// Propagate a failure, else yield the value: `auto elf = EMURUN_TRY(read_elf(p));` returns
/// the Error from the enclosing function (whose Result may hold any type) when read_elf
/// fails; `EMURUN_TRY(check(x));` does the same for a Result<void>. A GNU statement
/// expression (GCC and Clang): use it as a whole initializer or statement, not inside a larger
/// expression that builds temporaries.
#define EMURUN_TRY(...)                                                                            \
    __extension__({                                                                                \
        auto emurun_try_result_ = (__VA_ARGS__);                                                   \
        if (!emurun_try_result_) {                                                                 \
            return std::unexpected(std::move(emurun_try_result_.error()));                         \
        }                                                                                          \
        ::emurun::detail::take_value(emurun_try_result_);                                          \
    })
