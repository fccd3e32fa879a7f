// Private: this executable, and the one rule that finds the emurun binary.
//
// The emurun binary is, in this order:
//   1. the path the caller gives explicitly (SandboxSpec::emurun_exe, `shim add --launcher`),
//   2. this executable (/proc/self/exe) when it is emurun: its file name is "emurun" or
//      "emurun-cli" (the C++ CLI the launcher bin/emurun hands over to; "emurun-shim",
//      "emurun_unit_tests" are not emurun), whatever $EMURUN_EXE says,
//   3. $EMURUN_EXE when set and not empty (a renamed copy, a program linking the library),
//   4. emurun in the install's bindir (EMURUN_INSTALL_BINDIR, e.g. /usr/bin) when there,
//   5. "emurun" found in PATH (see path.hpp).
// emurun's helper programs (the shim launcher emurun-shim, the step supervisor
// emurun-supervisor) belong to that binary and are found from it by one rule (find_helper):
// beside it (a build tree), else at ../libexec/emurun/NAME from its directory (an install); a
// symlinked emurun is followed to its real place.
// The path returned is a real file name, so it can be hard-linked, logged and re-executed;
// only when this executable has been deleted since it started is it "/proc/self/exe".
#pragma once

#include <emurun/error.hpp>

#include <filesystem>
#include <optional>
#include <string_view>

namespace emurun::util {

/// The file this process was executed from (/proc/self/exe; for a hard link, the link's own
/// path). A " (deleted)" suffix is kept off. nullopt when /proc is not mounted.
[[nodiscard]] std::optional<std::filesystem::path> self_exe();

/// How many threads this process has ("Threads:" of /proc/self/status); 1 when unreadable.
/// unshare(CLONE_NEWUSER) is refused to a multithreaded process.
[[nodiscard]] int thread_count();

/// True when `file`'s name says it is emurun (rule 3 above).
[[nodiscard]] bool is_emurun_name(const std::filesystem::path& file);

/// The emurun binary by the rule above. The path is not checked beyond the rule: a caller
/// that links or runs it reports its own error. Error when no rule finds one.
[[nodiscard]] Result<std::filesystem::path>
find_emurun(const std::optional<std::filesystem::path>& explicit_path);

/// The helper program `name` of the emurun binary `emurun` (default: find_emurun's) by the
/// rule above. Error naming both places when neither holds an executable `name`.
[[nodiscard]] Result<std::filesystem::path>
find_helper(std::string_view name, const std::optional<std::filesystem::path>& emurun = {});

} // namespace emurun::util
