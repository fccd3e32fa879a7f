#include "util/text.hpp"

#include <emurun/error.hpp>

#include <cerrno>
#include <cstring>

namespace emurun {

std::string_view to_string(ErrorKind kind) {
    switch (kind) {
    case ErrorKind::unspecified:
        break;
    case ErrorKind::bad_input:
        return "bad_input";
    case ErrorKind::not_found:
        return "not_found";
    case ErrorKind::not_elf:
        return "not_elf";
    case ErrorKind::no_emulator:
        return "no_emulator";
    case ErrorKind::missing_library:
        return "missing_library";
    case ErrorKind::kernel_unsupported:
        return "kernel_unsupported";
    case ErrorKind::permission:
        return "permission";
    case ErrorKind::io:
        return "io";
    case ErrorKind::conflict:
        return "conflict";
    case ErrorKind::interrupted:
        return "interrupted";
    case ErrorKind::command_failed:
        return "command_failed";
    }
    return "unspecified";
}

std::string option_spelling(std::string_view field) {
    return "option " + std::string(field);
}

std::string hint_text(std::string_view hint, std::string_view field, FieldSpelling spell) {
    const std::string spelled = field.empty() ? std::string() : spell(field);
    if (spelled.empty()) {
        return std::string(hint);
    }
    return hint.empty() ? spelled : std::string(hint) + " (" + spelled + ")";
}

std::string Error::message() const {
    return message(option_spelling);
}

std::string Error::message(FieldSpelling spell) const {
    std::string out = what;
    if (!why.empty()) {
        out += out.empty() ? why : ": " + why;
    }
    if (const std::string full = hint_text(hint, field, spell); !full.empty()) {
        out += " (" + full + ")";
    }
    // Its parts may quote files and programs (a root's dpkg records, an image's config): no
    // escape sequence of theirs reaches the terminal.
    return util::printable(out, true);
}

Error system_error(std::string what, int err, std::string hint) {
    ErrorKind kind = ErrorKind::io;
    if (err == ENOENT || err == ENOTDIR) {
        kind = ErrorKind::not_found;
    } else if (err == EACCES || err == EPERM || err == EROFS) {
        kind = ErrorKind::permission;
    }
    return Error{std::move(what) + " failed", std::strerror(err), std::move(hint), kind};
}

} // namespace emurun
