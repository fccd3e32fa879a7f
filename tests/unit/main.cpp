// Unit-test main: every run gets a fresh testdir/<pid>, removed on success and kept on failure.
// Exit 125 when every case that ran skipped (skip.hpp), so ctest reports it as skipped.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include "skip.hpp"
#include "testdir.hpp"

#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <system_error>
#include <unistd.h>

namespace fs = std::filesystem;

int main(int argc, char** argv) {
#ifdef EMURUN_TEST_EMURUN
    // The emurun whose helpers (emurun-supervisor, emurun-shim) the library finds: this build's.
    // The dogfood build has none of its own and takes $EMURUN_EXE from tools/dogfood.
    ::setenv("EMURUN_EXE", EMURUN_TEST_EMURUN, 1);
#endif
    const char* root_env = std::getenv("EMURUN_TESTDIR_ROOT");
    fs::path root = root_env ? fs::path(root_env) : fs::temp_directory_path() / "emurun-testdir";
    fs::path dir = root / std::to_string(::getpid());
    fs::create_directories(dir);
    emurun::test::set_testdir(dir);
    doctest::Context context;
    context.applyCommandLine(argc, argv);
    int rc = emurun::test::finish_skips(context.run());
    if (rc == 0 || rc == 125) {
        std::error_code ec;
        fs::remove_all(dir, ec);
    } else {
        std::cerr << "test files left in " << dir << '\n';
    }
    return rc;
}
