#include "util/env.hpp"

#include "util/path.hpp"

#include <cstdlib>

extern char** environ;

namespace emurun::util {

EnvMap current_environment() {
    EnvMap env;
    for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
        const std::string_view entry(*e);
        if (const auto eq = entry.find('='); eq != std::string_view::npos) {
            env.emplace(entry.substr(0, eq), entry.substr(eq + 1));
        }
    }
    return env;
}

std::optional<std::string> get_env(const char* name) {
    const char* value = std::getenv(name);
    if (value == nullptr || *value == '\0') {
        return std::nullopt;
    }
    return std::string(value);
}

std::optional<std::string> get_env(const EnvMap& env, std::string_view name) {
    const auto it = env.find(std::string(name));
    return it != env.end() ? std::optional<std::string>(it->second) : std::nullopt;
}

EnvMap with_overrides(EnvMap env, const EnvMap& overrides) {
    for (const auto& [key, value] : overrides) {
        env[key] = value;
    }
    return env;
}

EnvMap with_path_prefix(EnvMap env, const std::vector<std::string>& dirs) {
    auto [it, added] = env.try_emplace("PATH", k_default_path);
    std::string prefix;
    for (const auto& dir : dirs) {
        prefix += dir + ":";
    }
    if (it->second.empty() && !prefix.empty()) {
        prefix.pop_back(); // "dir:" would add the current directory
    }
    it->second = prefix + it->second;
    return env;
}

std::vector<std::string> to_envp(const EnvMap& env) {
    std::vector<std::string> out;
    out.reserve(env.size());
    for (const auto& [key, value] : env) {
        out.push_back(key + "=" + value);
    }
    return out;
}

std::vector<char*> c_pointers(std::vector<std::string>& strings) {
    std::vector<char*> out;
    out.reserve(strings.size() + 1);
    for (auto& s : strings) {
        out.push_back(s.data());
    }
    out.push_back(nullptr);
    return out;
}

} // namespace emurun::util
