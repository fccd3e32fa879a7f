// Private: the one "re-enter emurun with a spec" protocol. A library request that must run in a
// fresh emurun process (the sandbox: a single-threaded one that may unshare; a root step: one
// that enters the root's namespaces) travels as the argument vector
//   {emurun, MARKER, SPEC, command...}
// MARKER says which request it is, SPEC is the request as JSON text, written and read by the
// module that owns the request (sandbox_argv / run_if_sandbox_helper, root_argv /
// run_if_root_helper); no CLI syntax crosses. main() asks each module in turn.
#pragma once

#include "util/json.hpp"

#include <emurun/error.hpp>

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace emurun::util {

/// One kind of helper call.
struct HelperCall {
    std::string_view marker;  ///< argv[1]: k_sandbox_helper_marker, k_root_helper_marker
    std::string_view name;    ///< for messages: "sandbox", "root"
    std::string_view builder; ///< the function that writes the call: "sandbox_argv()"
};

/// {emurun, call.marker, spec, command...}. Errors: no command.
[[nodiscard]] Result<std::vector<std::string>> helper_argv(const HelperCall& call,
                                                           const std::filesystem::path& emurun,
                                                           const Json& spec,
                                                           const std::vector<std::string>& command);

/// What a helper process was called with.
struct HelperRequest {
    std::string_view spec; ///< argv[2]: the owner's reader parses it
    std::vector<std::string> command;
};

/// nullopt when `argv` is no call of `call` (argv[1] is not its marker); else its spec and
/// command, or an error: no spec or no command.
[[nodiscard]] std::optional<Result<HelperRequest>> read_helper_call(const HelperCall& call,
                                                                    int argc, char** argv);

/// The spec as JSON text. Error: a string in it is not UTF-8 (JSON cannot carry it).
[[nodiscard]] Result<std::string> helper_spec_text(const HelperCall& call, const Json& spec);

/// The error for a spec its owner could not read (not JSON, a field missing or of another
/// type: `why`).
[[nodiscard]] Error helper_spec_error(const HelperCall& call, const std::string& why);

} // namespace emurun::util
