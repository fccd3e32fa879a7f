#include "cli.hpp"
#include "cli_output.hpp"

#include <emurun/root.hpp>
#include <emurun/sandbox.hpp>
#include <emurun/shim.hpp>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>

namespace emurun::cli {
namespace {

struct GlobalOptions {
    int verbosity = 0;
    bool quiet = false;
    std::string color = "auto";
};

void add_global_options(CLI::App& app, GlobalOptions& g) {
    app.set_version_flag("--version", std::string("emurun ") + EMURUN_VERSION);
    app.add_flag("-v,--verbose", g.verbosity,
                 "More diagnostics on stderr (repeat for trace; default from EMURUN_VERBOSE)");
    app.add_flag("-q,--quiet", g.quiet, "Only errors on stderr, no warnings");
    app.add_option("--color", g.color,
                   "Colour in tables and diagnostics: auto (default), always, never; a non-empty "
                   "NO_COLOR turns auto off")
        ->check(CLI::IsMember({"auto", "always", "never"}));
}

/// `emurun exec` starts once for every foreign program a build runs (CMAKE_CROSSCOMPILING_EMULATOR,
/// Meson's exe_wrapper), so when it is the first argument only exec is set up: building the other
/// ten subcommands' options cost more than exec's own work (issue 15, start-up). Its parse is the
/// same: exec's command takes every word after its options, and what exec does not know falls
/// through to the global options, which are there either way.
void add_subcommands(CLI::App& app, Action& action, int argc, char** argv) {
    if (argc > 1 && std::string_view(argv[1]) == "exec") {
        add_exec(app, action, argc, argv);
        return;
    }
    add_inspect(app, action);
    add_exec(app, action, argc, argv);
    add_binfmt(app, action);
    add_sandbox(app, action);
    add_shim(app, action);
    add_sysroot(app, action);
    add_run(app, action);
    add_report(app, action);
    add_calibrate(app, action);
    add_root(app, action);
    add_qemu(app, action);
    add_doctor(app, action);
}

/// Every repeatable option takes one value per occurrence (`--sysroot A --sysroot B`). CLI11
/// lets an option of vector type go on eating the words after it, so `exec --sysroot D PROG
/// ARG` took PROG as a sysroot and ran ARG, and `sysroot check --sysroot D FILE` checked D.
void one_value_per_option(CLI::App& app) {
    for (CLI::Option* option : app.get_options()) {
        if (option->nonpositional() && option->get_items_expected_max() > 1) {
            option->allow_extra_args(false);
        }
    }
    for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) {
        one_value_per_option(*sub);
    }
}

/// `code`, unless what the command wrote to stdout did not all get there (a full disk: a
/// report or a matrix lost while the command says it succeeded): then that error, and 125.
/// Checked once here, for every command, after its last write.
int checked_stdout(int code) {
    errno = 0;
    std::cout.flush();
    const bool flushed = std::fflush(stdout) == 0;
    if (flushed && !std::ferror(stdout) && !std::cout.bad()) {
        return code;
    }
    // The errno of this last flush. When only an earlier write failed (glibc drops what it
    // could not write, so this flush succeeds and that errno is gone), one more byte asks the
    // stream again: the output is cut already, and the real cause (ENOSPC, EPIPE) is what
    // the user needs; EIO when even that byte gets through.
    if (flushed) {
        std::clearerr(stdout);
        errno = 0;
        const bool probed = std::fputc('\n', stdout) != EOF && std::fflush(stdout) == 0;
        errno = probed || errno == 0 ? EIO : errno;
    }
    const int err = errno != 0 ? errno : EIO;
    std::cerr << "emurun: error: writing standard output: " << std::strerror(err) << '\n';
    return k_exit_failure;
}

int run_action(const Action& action) {
    try {
        return checked_stdout(action ? action() : k_exit_usage);
    } catch (const Failure& e) {
        std::fflush(stdout);
        std::cerr << "emurun: error: " << e.what() << '\n';
        return e.code();
    }
}

} // namespace

int main(int argc, char** argv) {
    // Diagnostics go to stderr from the first line on (spdlog's default logger writes to stdout).
    setup_output(verbosity_from_env(), ColorMode::automatic);
    // Handed a shim whose launch record is stale by the shim launcher: plan it again, run it.
    if (auto shim_error = run_if_shim_replan(argc, argv)) {
        std::cerr << "emurun: error: " << cli_spelling(shim_error->message()) << '\n';
        return k_exit_failure;
    }
    // Started by sandbox_argv() (the runner's sandbox mode): become the sandbox at once.
    if (auto failure = run_if_sandbox_helper(argc, argv)) {
        std::cerr << "emurun: error: " << cli_spelling(failure->error.message()) << '\n';
        return failure->exit_code;
    }
    // Started by root_argv() (the runner's root mode): enter the root at once.
    if (auto outcome = run_if_root_helper(argc, argv)) {
        if (!*outcome) {
            std::cerr << "emurun: error: " << outcome->error().message() << '\n';
            return k_exit_failure;
        }
        return (*outcome)->shell_code();
    }
    // A copy or link of emurun under another name whose shim config is gone: say so, rather than
    // CLI11's "A subcommand is required" for what was meant to be `gcc --version`.
    const std::string name = std::filesystem::path(argc > 0 ? argv[0] : "emurun").filename();
    if (name.find("emurun") == std::string::npos) {
        std::cerr << "emurun: error: started as '" << name << "': not a shim (no readable "
                  << ".emurun-shims/" << name << ".json beside it) and not named emurun "
                  << "(recreate the shim with 'emurun shim add', or run emurun by its name)\n";
        return k_exit_failure;
    }
    CLI::App app{"emurun: run foreign-architecture Linux programs under QEMU user-mode emulation",
                 "emurun"};
    app.require_subcommand(1);
    app.fallthrough();
    GlobalOptions g;
    add_global_options(app, g);
    Action action;
    add_subcommands(app, action, argc, argv);
    one_value_per_option(app);
    const std::vector<std::string> given(argv + std::min(argc, 1), argv + argc);
    std::vector<std::string> words = given;
    try {
        // emurun's own options anywhere before `--` (root run, exec, sandbox)
        words = options_before_dashdash(app, std::move(words));
        std::reverse(words.begin(), words.end()); // CLI11 takes the words last first
        app.parse(words);
    } catch (const Failure& e) {
        std::cerr << "emurun: error: " << e.what() << '\n';
        return e.code();
    } catch (const CLI::Success& e) {
        return checked_stdout(app.exit(e)); // --help, --version: their text must arrive too
    } catch (const CLI::ParseError& e) {
        std::cerr << "emurun: error: " << usage_error(app, e, given) << '\n';
        return k_exit_usage;
    }
    const int verbosity = g.quiet ? -1 : g.verbosity > 0 ? g.verbosity : verbosity_from_env();
    setup_output(verbosity, parse_color_mode(g.color));
    return run_action(action);
}

} // namespace emurun::cli
