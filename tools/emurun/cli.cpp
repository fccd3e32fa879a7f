#include "cli.hpp"

#include <emurun/shim.hpp>

#include <spdlog/spdlog.h>

#include <cstdio>
#include <iostream>

namespace emurun::cli {
namespace {

void setup_logging(int verbosity) {
    if (verbosity > 0) {
        spdlog::set_pattern("emurun[%P] %H:%M:%S.%e %^%l%$: %v");
        spdlog::set_level(verbosity > 1 ? spdlog::level::trace : spdlog::level::debug);
    } else {
        spdlog::set_pattern("emurun: %^%l%$: %v");
        spdlog::set_level(spdlog::level::warn);
    }
}

} // namespace

int main(int argc, char** argv) {
    // Started as a shim (a hard link of emurun with a sidecar config): exec the tool at once.
    if (auto shim_error = run_if_shim(argc, argv)) {
        std::cerr << "emurun: error: " << shim_error->message() << '\n';
        return k_exit_failure;
    }
    CLI::App app{"emurun: run foreign-architecture Linux programs under QEMU user-mode emulation",
                 "emurun"};
    app.set_version_flag("--version", std::string("emurun ") + EMURUN_VERSION);
    app.require_subcommand(1);
    app.fallthrough();
    int verbosity = 0;
    app.add_flag("-v,--verbose", verbosity, "More diagnostics on stderr (repeat for trace)");
    Action action;
    add_inspect(app, action);
    add_exec(app, action);
    add_binfmt(app, action);
    add_sandbox(app, action);
    add_shim(app, action);
    add_sysroot(app, action);
    add_run(app, action);
    add_report(app, action);
    add_calibrate(app, action);
    add_doctor(app, action);
    try {
        app.parse(argc, argv);
    } catch (const CLI::Success& e) {
        return app.exit(e);
    } catch (const CLI::ParseError& e) {
        app.exit(e);
        return k_exit_usage;
    }
    setup_logging(verbosity);
    try {
        return action ? action() : k_exit_usage;
    } catch (const Failure& e) {
        std::fflush(stdout);
        std::cerr << "emurun: error: " << e.what() << '\n';
        return e.code();
    }
}

} // namespace emurun::cli
