#include "testdir.hpp"

#include <fstream>

namespace emurun::test {
namespace {
std::filesystem::path g_dir;
}

void set_testdir(const std::filesystem::path& dir) {
    g_dir = dir;
}

std::filesystem::path testdir(const std::string& sub) {
    if (sub.empty()) {
        return g_dir;
    }
    auto p = g_dir / sub;
    std::filesystem::create_directories(p);
    return p;
}

std::filesystem::path write_file(const std::string& name, const std::string& content) {
    auto p = g_dir / name;
    std::filesystem::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary) << content;
    return p;
}

std::filesystem::path helper(const std::string& name) {
    return std::filesystem::path(EMURUN_HELPER_DIR) / name;
}

std::filesystem::path fixture(const std::string& name) {
    return std::filesystem::path(EMURUN_FIXTURE_DIR) / name;
}

bool fixture_arch_built(const std::string& arch) {
    std::ifstream in(fixture("arches.txt"));
    std::string name;
    while (std::getline(in, name, ';')) {
        while (!name.empty() && (name.back() == '\n' || name.back() == ' ')) {
            name.pop_back();
        }
        if (name == arch) {
            return true;
        }
    }
    return false;
}

} // namespace emurun::test
