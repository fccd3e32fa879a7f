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
#include <optional>

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

/// Rules for every option of every subcommand:
/// - a repeatable option takes one value per occurrence (`--sysroot A --sysroot B`). CLI11
///   lets an option of vector type go on eating the words after it, so `exec --sysroot D PROG
///   ARG` took PROG as a sysroot and ran ARG, and `sysroot check --sysroot D FILE` checked D;
/// - a value is not empty: CLI11 reads `--threshold ''` as 0, and an empty `--baseline`,
///   `--mirror` or `--include` read as "not given" (the default) or went on to download. Only
///   --accelerate's empty value means something (its default list).
void option_rules(CLI::App& app) {
    const CLI::Validator text(
        [](const std::string& v) { return v.empty() ? "an empty value" : ""; }, "");
    const CLI::Validator number(
        [](const std::string& v) { return v.empty() ? "an empty value, not a number" : ""; }, "");
    for (CLI::Option* option : app.get_options()) {
        if (option->nonpositional() && option->get_items_expected_max() > 1) {
            option->allow_extra_args(false);
        }
        const std::string type = option->get_type_name();
        const bool numeric =
            type.starts_with("FLOAT") || type.starts_with("INT") || type.starts_with("UINT");
        if (option->nonpositional() && option->get_expected_max() > 0 &&
            option->get_name() != "--accelerate" && option->get_name() != "--help") {
            option->check(numeric ? number : text);
        }
    }
    for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) {
        option_rules(*sub);
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

/// `emurun help WORD...` (`given` ends with the --help it became): a usage error when a word
/// names no command, rather than the help of the last command that matched.
std::optional<std::string> unknown_help_topic(const CLI::App& app,
                                              const std::vector<std::string>& given) {
    if (given.empty() || given.back() != "--help" || given.size() < 2 ||
        std::ranges::any_of(
            given, [](const std::string& w) { return w.starts_with("-") && w != "--help"; })) {
        return std::nullopt;
    }
    const CLI::App* at = &app;
    std::string path = "emurun";
    for (std::size_t i = 0; i + 1 < given.size(); ++i) {
        auto subs =
            at->get_subcommands([&](const CLI::App* s) { return s->get_name() == given[i]; });
        if (subs.empty()) {
            return path + ": unknown command '" + given[i] + "' ('" + path +
                   " --help' lists its usage)";
        }
        at = subs.front();
        path += " " + given[i];
    }
    return std::nullopt;
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
        std::cerr << "emurun: error: " << error_text(*shim_error) << '\n';
        return k_exit_failure;
    }
    // Started by sandbox_argv() (the runner's sandbox mode): become the sandbox at once.
    if (auto failure = run_if_sandbox_helper(argc, argv, log_sink())) {
        std::cerr << "emurun: error: " << error_text(failure->error) << '\n';
        return failure->exit_code;
    }
    // Started by root_argv() (the runner's root mode): enter the root at once.
    if (auto outcome = run_if_root_helper(argc, argv, log_sink())) {
        if (!*outcome) {
            std::cerr << "emurun: error: " << error_text(outcome->error()) << '\n';
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
    option_rules(app);
    value_names(app, "");
    std::vector<std::string> given(argv + std::min(argc, 1), argv + argc);
    if (!given.empty() && given.front() == "help") { // `emurun help [COMMAND...]`
        given.erase(given.begin());
        given.emplace_back("--help");
    }
    std::vector<std::string> words = given;
    if (auto unknown = unknown_help_topic(app, given)) {
        std::cerr << "emurun: error: " << *unknown << '\n';
        return k_exit_usage;
    }
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
