// emurun's error model: library functions return Result<T>; only the CLI throws (CliError).
// Layer: core. Its ABI is kept within a SOVERSION (abi/libemurun.abi; docs/api/mainpage.md).
#pragma once

#include <emurun/export.hpp>

#include <cstdint>
#include <expected>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>

namespace emurun {

/// What kind of failure an Error is: what a caller can switch on without reading the text.
/// New kinds may be added (a switch needs a default); a value never changes meaning.
enum class ErrorKind {
    unspecified = 0,    ///< none of the below (yet): read the text
    bad_input,          ///< the request or a file it names is malformed or inconsistent
    not_found,          ///< a file, directory, program or name that is not there (ENOENT)
    not_elf,            ///< a file that is not an ELF program or library, or too damaged to read
    no_emulator,        ///< no usable QEMU for the arch
    missing_library,    ///< a library a dynamic program needs is in no sysroot searched
    kernel_unsupported, ///< the kernel (or its configuration) lacks a feature: user namespaces,
                        ///< binfmt_misc in one, a flag, cgroups
    permission,         ///< the operation is not allowed to this user (EACCES, EPERM)
    io,                 ///< a read, write or system call failed otherwise
    conflict,           ///< something else already holds the name or place (a binfmt entry)
    interrupted,        ///< stopped by a signal (SIGINT, SIGTERM, SIGHUP) before it finished
    command_failed,     ///< a program emurun ran for the request (tar, mmdebstrap, apt) failed
};

/// "bad_input", "not_found", ...: the enumerator's name.
[[nodiscard]] EMURUN_EXPORT std::string_view to_string(ErrorKind kind);

/// How a tool names a request field in its messages: emurun's CLI spells each as its flag
/// ("--job-limit-share, in percent, e.g. 80"); "" names nothing.
using FieldSpelling = std::string (*)(std::string_view field);

/// The library's own spelling of a field: "option job_limit_share".
[[nodiscard]] EMURUN_EXPORT std::string option_spelling(std::string_view field);

/// A hint with the field it concerns, as every message shows them: "HINT (SPELLED)", the hint
/// alone when `field` is empty or `spell` names nothing, the spelling alone without a hint.
[[nodiscard]] EMURUN_EXPORT std::string hint_text(std::string_view hint, std::string_view field,
                                                  FieldSpelling spell);

/// What failed, why, and what to do about it. Rendered as "what: why (hint)".
struct Error {
    std::string what;                        ///< the operation or object, e.g. "open /bin/foo"
    std::string why;                         ///< the cause, e.g. "No such file or directory"
    std::string hint;                        ///< what the user can do next; may be empty
    ErrorKind kind = ErrorKind::unspecified; ///< what a caller switches on

    /// The field of the request the hint concerns, by its name in the library's request
    /// struct (RunnerOptions::job_limit_share is "job_limit_share", RootCreateSpec::mirror is
    /// "mirror"), "FIELD=VALUE" when the hint is to set it to that value ("accelerate=none");
    /// empty when none. A tool maps it to its own spelling (emurun's CLI: a flag).
    std::string field = {};

    /// "what: why (hint)", and with a field "what: why (hint (option FIELD))" — the text
    /// printed after "emurun: error: " by a tool that does not map fields itself.
    [[nodiscard]] EMURUN_EXPORT std::string message() const;
    /// message() with the field spelled by `spell` (nothing added when it returns "").
    [[nodiscard]] EMURUN_EXPORT std::string message(FieldSpelling spell) const;
};

/// An Error built from errno after a failed system call: why = strerror(err); kind not_found
/// (ENOENT, ENOTDIR), permission (EACCES, EPERM, EROFS) or io.
[[nodiscard]] EMURUN_EXPORT Error system_error(std::string what, int err, std::string hint = {});

/// The result type of every fallible library function.
template <class T> using Result = std::expected<T, Error>;

/// Shorthand for returning a failure: `return fail("parse x", "bad byte");`.
inline std::unexpected<Error> fail(std::string what, std::string why, std::string hint = {}) {
    return std::unexpected<Error>(Error{std::move(what), std::move(why), std::move(hint)});
}

/// A failure of a known kind, with the request field its hint concerns:
/// `return fail(ErrorKind::bad_input, "shard 3/2", "K is above N", "give K/N", "shard");`.
inline std::unexpected<Error> fail(ErrorKind kind, std::string what, std::string why,
                                   std::string hint = {}, std::string field = {}) {
    return std::unexpected<Error>(
        Error{std::move(what), std::move(why), std::move(hint), kind, std::move(field)});
}

namespace detail {
/// EMURUN_TRY's last step: the value moved out of a successful Result (nothing for void).
template <class T> T take_value(Result<T>& r) {
    return std::move(*r);
}
inline void take_value(Result<void>& /*unused*/) {}
} // namespace detail

/// The type of a versioned option struct's first member, `struct_size` (docs/api/mainpage.md):
/// the sizeof of T as the code that made this object was compiled, which is how libemurun tells
/// the caller's version of T. A copy or a move takes the size of its own T, not the source's: a
/// T the library hands a program built against an older libemurun (CommandRunner::spawn's
/// options), copied there, is that program's shorter T and says so. Reads as, and is set from,
/// a std::uint32_t.
template <class T> struct StructSize {
    std::uint32_t value = sizeof(T); ///< the size; another only when set by hand

    /// sizeof(T), as the code that makes the object is compiled.
    constexpr StructSize() noexcept = default;
    /// A size set by hand (`.struct_size = N`): what the library then checks.
    constexpr StructSize(std::uint32_t size) noexcept : value(size) {} // NOLINT: implicit
    /// A copy's size is this T's, whatever the source's says.
    constexpr StructSize(const StructSize& /*unused*/) noexcept {}
    /// As the copy: the target keeps this T's size.
    constexpr StructSize& operator=(const StructSize& /*unused*/) noexcept {
        value = sizeof(T);
        return *this;
    }
    /// A size set by hand, as the constructor from a number.
    constexpr StructSize& operator=(std::uint32_t size) noexcept {
        value = size;
        return *this;
    }
    /// The size, as a number.
    constexpr operator std::uint32_t() const noexcept { return value; } // NOLINT: implicit
};

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
