// Private: the pieces of the sandbox module that tests check on their own.
#pragma once

#include <emurun/error.hpp>
#include <emurun/sandbox.hpp>

#include <string>
#include <string_view>

namespace emurun::detail {

/// One line of /proc/<pid>/uid_map or gid_map: "inside outside count\n".
std::string id_map_line(unsigned long inside, unsigned long outside, unsigned long count = 1);

// A SandboxSpec as JSON text: how sandbox_argv() hands it to the fresh process that
// run_if_sandbox_helper() turns into the sandbox.

/// Every field of `spec` as one line of JSON (arches by canonical name). Error when a string
/// (a path, a variable) is not valid UTF-8.
Result<std::string> sandbox_spec_to_json(const SandboxSpec& spec);

/// The spec back from sandbox_spec_to_json's text. Error names what is malformed.
Result<SandboxSpec> sandbox_spec_from_json(std::string_view text);

} // namespace emurun::detail
