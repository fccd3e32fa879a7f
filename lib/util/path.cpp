#include "util/path.hpp"

#include <algorithm>
#include <cstdlib>
#include <sys/stat.h>
#include <unistd.h>

namespace emurun::util {
namespace fs = std::filesystem;

std::string path_variable() {
    const char* path = std::getenv("PATH");
    return path != nullptr ? std::string(path) : std::string(k_default_path);
}

std::vector<fs::path> path_entries(std::string_view list) {
    std::vector<fs::path> dirs;
    std::size_t start = 0;
    while (true) {
        const std::size_t end = list.find(':', start);
        const std::string_view dir = list.substr(start, end - start);
        dirs.emplace_back(dir.empty() ? std::string_view(".") : dir);
        if (end == std::string_view::npos) {
            return dirs;
        }
        start = end + 1;
    }
}

bool is_executable_file(const fs::path& file) {
    struct stat st {};
    return ::stat(file.c_str(), &st) == 0 && S_ISREG(st.st_mode) &&
           ::access(file.c_str(), X_OK) == 0;
}

std::vector<fs::path> executable_candidates(std::string_view name, std::string_view list) {
    std::vector<fs::path> out;
    for (const auto& dir : path_entries(list)) {
        out.push_back(dir / name);
    }
    return out;
}

std::optional<fs::path> find_executable(std::string_view name, std::string_view list) {
    if (name.find('/') != std::string_view::npos) {
        return fs::path(name);
    }
    if (name.empty()) {
        return std::nullopt;
    }
    for (auto& candidate : executable_candidates(name, list)) {
        if (is_executable_file(candidate)) {
            return candidate;
        }
    }
    return std::nullopt;
}

std::vector<fs::path> search_inputs(const std::vector<fs::path>& candidates,
                                    const fs::path& found) {
    std::error_code ec;
    const fs::path want = fs::absolute(found, ec).lexically_normal();
    std::vector<fs::path> out;
    for (const auto& c : candidates) {
        if (fs::absolute(c, ec).lexically_normal() == want) {
            break;
        }
        if (fs::path q = fs::absolute(c, ec).lexically_normal();
            std::ranges::find(out, q) == out.end()) {
            out.push_back(std::move(q));
        }
    }
    return out;
}

std::optional<fs::path> find_executable(std::string_view name) {
    return find_executable(name, path_variable());
}

bool is_plain_relative(std::string_view path) {
    if (path.empty() || path.front() == '/' || path.back() == '/') {
        return false;
    }
    if (std::ranges::any_of(path, [](unsigned char c) { return c < 0x20 || c == 0x7f; })) {
        return false;
    }
    for (const auto& part : std::filesystem::path(path)) {
        if (part == "." || part == ".." || part.empty()) {
            return false;
        }
    }
    return std::filesystem::path(path).lexically_normal().string() == path;
}

} // namespace emurun::util
