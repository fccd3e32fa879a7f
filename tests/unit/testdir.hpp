// Per-run scratch directory for unit tests (see main.cpp).
#pragma once

#include <filesystem>
#include <string>

namespace emurun::test {

void set_testdir(const std::filesystem::path& dir);
/// The run's scratch dir; `sub` names a fresh subdirectory created inside it.
std::filesystem::path testdir(const std::string& sub = {});
/// Write `content` to testdir()/name and return the path.
std::filesystem::path write_file(const std::string& name, const std::string& content);
/// Directory of helper programs built by CMake, and of cross-compiled fixtures.
std::filesystem::path helper(const std::string& name);
std::filesystem::path fixture(const std::string& name);
/// The checkout the tests were built from (abi/, lib/ are read from it).
std::filesystem::path source_dir();
/// This build's emurun, or null where the build has none (the dogfood cross builds).
const char* build_emurun();
/// Whether CMake built the fixtures of `arch` (its cross compiler was found: arches.txt in the
/// fixture directory). A built arch's fixtures must exist; an arch not built is a skip.
bool fixture_arch_built(const std::string& arch);

} // namespace emurun::test
