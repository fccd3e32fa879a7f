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

// The build's paths are this file's own definitions (set on this file alone, see
// tests/CMakeLists.txt): every other test file compiles to the same command line in any checkout,
// so a clone at another path hits ccache for all of them.
std::filesystem::path helper(const std::string& name) {
    return std::filesystem::path(EMURUN_HELPER_DIR) / name;
}

std::filesystem::path source_dir() {
    return EMURUN_SOURCE_DIR;
}

const char* build_emurun() {
#ifdef EMURUN_TEST_EMURUN
    return EMURUN_TEST_EMURUN;
#else
    return nullptr;
#endif
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
