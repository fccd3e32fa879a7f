// Usage: errors WORK_DIR [FOREIGN_ELF]
// What a build tool does with emurun's errors: it switches on Error::kind, not on the text.
// Each case below gives the library bad input (a missing pipeline, one that is no JSON, a run
// asked for 0 jobs, a program that is no ELF, a foreign program without an emulator) and
// checks the kind it gets back; the exit code counts the cases whose kind was not the expected
// one. Built against the INSTALLED package (tests/integration/test_consumer.sh).
#include <emurun/error.hpp>
#include <emurun/launch.hpp>
#include <emurun/pipeline.hpp>
#include <emurun/runner.hpp>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>

namespace {

// What a build tool would do about each kind: the point of a kind is that this is a switch
// (with a default: error.hpp may add kinds).
std::string action_for(const emurun::Error& error) {
    switch (error.kind) {
    case emurun::ErrorKind::not_found:
        return "ask for the right path";
    case emurun::ErrorKind::bad_input:
        return "report the input as invalid";
    case emurun::ErrorKind::not_elf:
        return "run it with its interpreter instead";
    case emurun::ErrorKind::no_emulator:
        return "install qemu-user-static";
    case emurun::ErrorKind::missing_library:
        return "fetch a sysroot";
    case emurun::ErrorKind::kernel_unsupported:
    case emurun::ErrorKind::permission:
        return "fall back to another mode";
    default:
        return "give up";
    }
}

int failures = 0;

// One case: `result` must be an error of kind `want`.
template <class T>
void expect(const char* name, const emurun::Result<T>& result, emurun::ErrorKind want) {
    if (result) {
        std::cout << "FAIL " << name << ": succeeded, expected " << emurun::to_string(want) << '\n';
        ++failures;
        return;
    }
    const emurun::Error& e = result.error();
    const bool ok = e.kind == want;
    failures += ok ? 0 : 1;
    std::cout << (ok ? "ok   " : "FAIL ") << name << ": " << emurun::to_string(e.kind) << " -> "
              << action_for(e) << " (" << e.message() << ")\n";
}

void write(const std::filesystem::path& file, const std::string& text) {
    std::ofstream(file) << text;
}

} // namespace

int main(int argc, char** argv) {
    if (argc < 2) {
        std::cerr << "usage: errors WORK_DIR [FOREIGN_ELF]\n";
        return 2;
    }
    const std::filesystem::path dir = argv[1];
    using K = emurun::ErrorKind;

    expect("missing pipeline", emurun::Pipeline::load(dir / "no-such-pipeline.json"), K::not_found);
    write(dir / "broken.json", "{\"name\": \"broken\", \"steps\": [");
    expect("pipeline that is no JSON", emurun::Pipeline::load(dir / "broken.json"), K::bad_input);

    auto pipeline = emurun::Pipeline::parse(
        R"({"name": "p", "steps": [{"name": "a", "argv": ["true"]}]})", "p.json", dir);
    if (!pipeline) {
        std::cout << "FAIL a valid pipeline: " << pipeline.error().message() << '\n';
        return 1;
    }
    emurun::RunnerOptions options;
    options.jobs = 0;
    options.log_dir = dir / "logs";
    options.handle_signals = false;
    expect("a run with 0 jobs", emurun::Runner(*pipeline, options).run(), K::bad_input);

    write(dir / "notes.txt", "not a program\n");
    std::filesystem::permissions(dir / "notes.txt", std::filesystem::perms::owner_all);
    expect("a program that is no ELF", emurun::plan_launch({.program = dir / "notes.txt"}),
           K::not_elf);

    if (argc > 2) { // no emulator anywhere it may look: none in PATH, no dirs given
        emurun::LaunchRequest request{.program = argv[2]};
        request.emulators = {.dirs = {}, .system = false};
        expect("a foreign program without an emulator", emurun::plan_launch(request),
               K::no_emulator);
    }
    std::cout << failures << " unexpected\n";
    return failures == 0 ? 0 : 1;
}
