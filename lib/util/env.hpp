// Private: the process environment as a map, and back to an envp for execve.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace emurun::util {

using EnvMap = std::map<std::string, std::string>;

/// This process's environment (environ); entries without '=' are skipped.
[[nodiscard]] EnvMap current_environment();

/// The value of `name` in this process's environment; nullopt when unset or empty.
[[nodiscard]] std::optional<std::string> get_env(const char* name);

/// The value of `name` in `env`; nullopt when absent.
[[nodiscard]] std::optional<std::string> get_env(const EnvMap& env, std::string_view name);

/// `env` with every variable of `overrides` set on top.
[[nodiscard]] EnvMap with_overrides(EnvMap env, const EnvMap& overrides);

/// `env` with `dirs` put first in PATH, in the order given (PATH = k_default_path when absent).
[[nodiscard]] EnvMap with_path_prefix(EnvMap env, const std::vector<std::string>& dirs);

/// "KEY=VALUE" strings for execve.
[[nodiscard]] std::vector<std::string> to_envp(const EnvMap& env);

/// Null-terminated pointers into `strings` for execve's argv/envp (valid while `strings`
/// lives and is not changed).
[[nodiscard]] std::vector<char*> c_pointers(std::vector<std::string>& strings);

} // namespace emurun::util
