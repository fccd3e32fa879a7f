// find_launcher(): the shim launcher that belongs to the emurun binary, beside it (a build tree)
// or in ../libexec/emurun (an install), and a precise error when neither has it.
#include "scoped_env.hpp"
#include "testdir.hpp"

#include <emurun/shim.hpp>

#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>

namespace fs = std::filesystem;
using emurun::find_launcher;
using emurun::test::testdir;

namespace {

/// PATH set to `value` for the lifetime of the object.
class PathOverride {
  public:
    explicit PathOverride(const std::string& value) {
        if (const char* old = std::getenv("PATH")) {
            m_old = old;
        }
        ::setenv("PATH", value.c_str(), 1);
    }
    ~PathOverride() {
        if (m_old) {
            ::setenv("PATH", m_old->c_str(), 1);
        } else {
            ::unsetenv("PATH");
        }
    }
    PathOverride(const PathOverride&) = delete;
    PathOverride& operator=(const PathOverride&) = delete;

  private:
    std::optional<std::string> m_old;
};

fs::path executable(const fs::path& p) {
    fs::create_directories(p.parent_path());
    emurun::test::write_file("exe-template", "#!/bin/sh\n");
    fs::copy_file(testdir() / "exe-template", p, fs::copy_options::overwrite_existing);
    fs::permissions(p, fs::perms::owner_all);
    return p;
}

} // namespace

TEST_CASE("shim: find_launcher finds emurun-shim from the emurun binary") {
    const fs::path root = testdir("find-launcher");
    // The emurun found in PATH below, not the build's that main() names in $EMURUN_EXE.
    const emurun::test::ScopedEnv no_exe("EMURUN_EXE", std::nullopt);
    SUBCASE("installed: ../libexec/emurun/emurun-shim") {
        executable(root / "prefix/bin/emurun");
        const auto l = executable(root / "prefix/libexec/emurun/emurun-shim");
        PathOverride path((root / "prefix/bin").string());
        auto found = find_launcher();
        REQUIRE(found.has_value());
        CHECK(*found == l);
    }
    SUBCASE("build tree: beside emurun, preferred over libexec") {
        executable(root / "build/bin/emurun");
        const auto l = executable(root / "build/bin/emurun-shim");
        executable(root / "build/libexec/emurun/emurun-shim");
        PathOverride path((root / "build/bin").string());
        auto found = find_launcher();
        REQUIRE(found.has_value());
        CHECK(*found == l);
    }
    SUBCASE("neither: the error names both places") {
        executable(root / "bare/bin/emurun");
        PathOverride path((root / "bare/bin").string());
        auto found = find_launcher();
        REQUIRE_FALSE(found.has_value());
        const std::string msg = found.error().message();
        CHECK(msg.find("emurun-shim is neither beside " + (root / "bare/bin/emurun").string()) !=
              std::string::npos);
        CHECK(msg.find((root / "bare/libexec/emurun/emurun-shim").string()) != std::string::npos);
    }
    SUBCASE("an explicit launcher is used as given, and must be executable") {
        const auto l = executable(root / "mine/launcher");
        CHECK(find_launcher(l) == l);
        CHECK_FALSE(find_launcher(root / "mine/none").has_value());
    }
}
