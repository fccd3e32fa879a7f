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

} // namespace emurun::test
