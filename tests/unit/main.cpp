// Unit-test main: every run gets a fresh testdir/<pid>, removed on success and kept on failure
// (renamed <pid>-failed); a <pid> whose process is gone was an interrupted run's, removed.
// Exit 125 when every case that ran skipped (skip.hpp), so ctest reports it as skipped.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include "skip.hpp"
#include "testdir.hpp"

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <string>
#include <system_error>
#include <unistd.h>

namespace fs = std::filesystem;

namespace {

/// The testdirs of runs that were interrupted (ctest's timeout, Ctrl-C): named by a pid that no
/// longer runs. A failed run's dir is renamed <pid>-failed and kept.
void remove_interrupted(const fs::path& root) {
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(root, ec)) {
        const std::string name = e.path().filename().string();
        if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos ||
            name.size() > 9) {
            continue;
        }
        if (::kill(static_cast<pid_t>(std::stol(name)), 0) != 0 && errno == ESRCH) {
            fs::remove_all(e.path(), ec);
        }
    }
}

} // namespace

int main(int argc, char** argv) {
    // The emurun whose helpers (emurun-supervisor, emurun-shim) the library finds: this build's.
    // The dogfood build has none of its own and takes $EMURUN_EXE from tools/dogfood.
    if (const char* exe = emurun::test::build_emurun()) {
        ::setenv("EMURUN_EXE", exe, 1);
    }
    const char* root_env = std::getenv("EMURUN_TESTDIR_ROOT");
    fs::path root = root_env ? fs::path(root_env) : fs::temp_directory_path() / "emurun-testdir";
    fs::path dir = root / std::to_string(::getpid());
    fs::create_directories(dir);
    remove_interrupted(root);
    emurun::test::set_testdir(dir);
    doctest::Context context;
    context.applyCommandLine(argc, argv);
    int rc = emurun::test::finish_skips(context.run());
    if (rc == 0 || rc == 125) {
        std::error_code ec;
        fs::remove_all(dir, ec);
    } else {
        fs::path kept = dir;
        kept += "-failed";
        std::error_code ec;
        fs::remove_all(kept, ec);
        fs::rename(dir, kept, ec);
        std::cerr << "test files left in " << (ec ? dir : kept) << '\n';
    }
    return rc;
}
