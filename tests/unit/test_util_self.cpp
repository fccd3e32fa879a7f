#include "scoped_env.hpp"
#include "testdir.hpp"
#include "util/file.hpp"
#include "util/self.hpp"

#include <doctest/doctest.h>

#include <thread>

namespace fs = std::filesystem;
using emurun::test::ScopedEnv;
using emurun::test::testdir;
namespace util = emurun::util;

TEST_CASE("util self: this executable is the unit-test binary") {
    auto self = util::self_exe();
    REQUIRE(self.has_value());
    CHECK(*self == fs::canonical("/proc/self/exe"));
    CHECK(self->filename() == "emurun_unit_tests");
}

TEST_CASE("util self: the thread count is this process's") {
    const int before = util::thread_count();
    CHECK(before >= 1);
    int during = 0;
    std::thread other([&] { during = util::thread_count(); });
    other.join();
    CHECK(during == before + 1);
}

TEST_CASE("util self: which file names are emurun") {
    CHECK(util::is_emurun_name("/usr/bin/emurun"));
    CHECK(util::is_emurun_name("emurun"));
    CHECK_FALSE(util::is_emurun_name("/build/emurun_unit_tests"));
    CHECK_FALSE(util::is_emurun_name("/usr/libexec/emurun/emurun-shim"));
    CHECK_FALSE(util::is_emurun_name("/usr/bin/protoc"));
    CHECK_FALSE(util::is_emurun_name("/usr/bin/emurun/"));
}

TEST_CASE("util self: the emurun binary: explicit, then $EMURUN_EXE, then the install, PATH") {
    const fs::path bin = testdir("self-bin");
    REQUIRE(util::write_file_atomic(bin / "emurun", "#!/bin/sh\n", 0755).has_value());
    ScopedEnv path("PATH", bin.string());
    {
        ScopedEnv exe("EMURUN_EXE", "/from/env/emurun");
        CHECK(util::find_emurun("/explicit/emurun").value() == "/explicit/emurun");
        CHECK(util::find_emurun(std::nullopt).value() == "/from/env/emurun");
    }
    ScopedEnv exe("EMURUN_EXE", ""); // empty counts as unset
    // This process is emurun_unit_tests, not emurun: PATH decides.
    CHECK(util::find_emurun(std::nullopt).value() == bin / "emurun");
    ScopedEnv nowhere("PATH", testdir("self-empty").string());
    auto none = util::find_emurun(std::nullopt);
    REQUIRE_FALSE(none.has_value());
    CHECK(none.error().why.ends_with("not in PATH, and $EMURUN_EXE is not set"));
    CHECK(none.error().hint.find("EMURUN_EXE") != std::string::npos);
}
