#include <emurun/error.hpp>

#include <cstring>

namespace emurun {

std::string Error::message() const {
    std::string out = what;
    if (!why.empty()) {
        out += out.empty() ? why : ": " + why;
    }
    if (!hint.empty()) {
        out += " (" + hint + ")";
    }
    return out;
}

Error system_error(std::string what, int err, std::string hint) {
    return Error{std::move(what) + " failed", std::strerror(err), std::move(hint)};
}

} // namespace emurun
