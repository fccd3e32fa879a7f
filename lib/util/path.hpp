// Private: the one PATH search in emurun.
//
// The rule (execvp's, as POSIX describes PATH): a name containing '/' is used as it is;
// otherwise each PATH entry is tried in order and the first regular file that this process may
// execute wins. An empty entry (leading, trailing or doubled ':') means the current
// directory, as POSIX and glibc's execvp say, so emurun finds what a shell would run. When
// PATH is unset, k_default_path is searched.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace emurun::util {

/// A relative path that stays where it is put (an archive member's name, a path of an
/// artifact manifest): not empty, not absolute, no trailing '/', no "." or ".." component, no
/// control character (tar lists one name a line), lexically normal ("a//b" is not "a/b").
[[nodiscard]] bool is_plain_relative(std::string_view path);

/// The search list used when PATH is unset (and added by emurun when it sets PATH itself).
inline constexpr std::string_view k_default_path = "/usr/local/bin:/usr/bin:/bin";

/// $PATH, or k_default_path when it is unset. The only reader of PATH in the library.
[[nodiscard]] std::string path_variable();

/// The directories of a colon-separated list, in order; an empty entry is ".".
[[nodiscard]] std::vector<std::filesystem::path> path_entries(std::string_view list);

/// A regular file this process may execute (stat + access(X_OK)).
[[nodiscard]] bool is_executable_file(const std::filesystem::path& file);

/// `name` found by the rule above in `list`; a name with '/' is returned unchecked. nullopt
/// when nothing matches (and for an empty name).
[[nodiscard]] std::optional<std::filesystem::path> find_executable(std::string_view name,
                                                                   std::string_view list);

/// find_executable() in path_variable().
[[nodiscard]] std::optional<std::filesystem::path> find_executable(std::string_view name);

/// The files find_executable(name, list) tries, in order (DIR/name for each entry of list).
[[nodiscard]] std::vector<std::filesystem::path> executable_candidates(std::string_view name,
                                                                       std::string_view list);

/// What a search that took `found` from `candidates` (tried in this order) was decided by, for
/// the key of a cached decision (a launch record, which keys a path that does not exist by its
/// absence): each candidate tried before `found` (all of them when `found` is not among them),
/// absolute and lexically normal, each once. A file put in any of their places, or one of them
/// made executable, changes the identity of one of these.
[[nodiscard]] std::vector<std::filesystem::path>
search_inputs(const std::vector<std::filesystem::path>& candidates,
              const std::filesystem::path& found);

} // namespace emurun::util
