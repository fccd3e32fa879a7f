// Usage: consumer FOREIGN_TOOL SHIM_DIR [ARGS...]
// Creates shim "tool" for FOREIGN_TOOL in SHIM_DIR and runs `tool ARGS...` by name, with the
// shim dir first in PATH — what a build tool does to let a build call a target-arch generator.
#include <emurun/launch.hpp>
#include <emurun/process.hpp>
#include <emurun/shim.hpp>

#include <iostream>

// The library guide's LaunchRequest (designated initializers, fields left out).
[[maybe_unused]] static emurun::LaunchRequest readme_request() {
    return {.program = "out/protoc", .args = {"--version"}, .sysroots = {"/opt/sr/arm64"}};
}

int main(int argc, char** argv) {
    if (argc < 3) {
        std::cerr << "usage: consumer FOREIGN_TOOL SHIM_DIR [ARGS...]\n";
        return 2;
    }
    auto shim = emurun::add_shim(argv[2], {.name = "tool", .target = argv[1]}, EMURUN_EXECUTABLE);
    if (!shim) {
        std::cerr << "consumer: " << shim.error().message() << '\n';
        return 125;
    }
    emurun::Command cmd{.argv = {"tool"},
                        .env = emurun::shim_environment(argv[2], emurun::current_environment())};
    cmd.argv.insert(cmd.argv.end(), argv + 3, argv + argc);
    auto status = emurun::run_foreground(cmd);
    if (!status) {
        std::cerr << "consumer: " << status.error().message() << '\n';
        return 125;
    }
    return status->code().value_or(128 + status->signal().value_or(0));
}
