// emurun's own options before `--` (issue 26): `root run DIR --accelerate -- CMD` ran
// `--accelerate` as the command. In `root run`, an option of its own between DIR and `--` is
// moved before DIR; in `exec` and `sandbox` (whose command starts at the first word that is no
// option) and in `root run` after its command has begun, such an option before a later `--`
// is refused, saying where it belongs. Without a `--` nothing changes: the words after the
// command are the command's.
#include "cli.hpp"

#include <algorithm>
#include <cctype>
#include <string_view>

namespace emurun::cli {
namespace {

/// The subcommand `args` names (exec, sandbox, root run), where its words start, and how many
/// positionals come before its command (root run: DIR).
struct Target {
    CLI::App* sub = nullptr;
    std::size_t start = 0;
    std::size_t fixed = 0;
    std::string name;
};

/// The subcommand `name` of `app` (nullptr when not set up: `emurun exec` sets up exec only).
CLI::App* sub_named(CLI::App* app, const std::string& name) {
    if (app == nullptr) {
        return nullptr;
    }
    auto subs = app->get_subcommands([&](CLI::App* s) { return s->get_name() == name; });
    return subs.empty() ? nullptr : subs.front();
}

Target find_target(CLI::App& app, const std::vector<std::string>& args) {
    for (std::size_t i = 0; i < args.size(); ++i) {
        const std::string& a = args[i];
        if (a == "exec" || a == "sandbox") {
            return Target{sub_named(&app, a), i + 1, 0, a};
        }
        if (a == "root" && i + 1 < args.size() && args[i + 1] == "run") {
            return Target{sub_named(sub_named(&app, "root"), "run"), i + 2, 1, "root run"};
        }
        if (a == "--" || !a.starts_with("-")) {
            break; // another subcommand, or a global option's value: nothing to do
        }
    }
    return {};
}

/// The option `word` names ("--cpu", "--cpu=max", "-v") of the subcommand or, as CLI11 falls
/// through to them, of its parents (--color, -v); `own` says which.
const CLI::Option* find_option(CLI::App& sub, const std::string& word, bool& own) {
    if (!word.starts_with("-") || word == "-" || word == "--") {
        return nullptr;
    }
    const std::string name = word.substr(0, word.find('='));
    own = true;
    for (CLI::App* app = &sub; app != nullptr; app = app->get_parent(), own = false) {
        const CLI::Option* opt = app->get_option_no_throw(name);
        if (opt != nullptr) {
            return opt;
        }
    }
    return nullptr;
}

/// `word` as a shell reads it back: quoted when it holds anything but plain characters.
std::string shell_word(const std::string& word) {
    const bool plain = !word.empty() && std::ranges::all_of(word, [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) != 0 ||
               std::string_view("_./=:,+@%-").find(c) != std::string_view::npos;
    });
    if (plain) {
        return word;
    }
    std::string out = "'";
    for (const char c : word) {
        out += c == '\'' ? std::string("'\\''") : std::string(1, c);
    }
    return out + "'";
}

std::string command_line(const std::vector<std::string>& words) {
    std::string out = "emurun";
    for (const auto& w : words) {
        out += " " + shell_word(w);
    }
    return out;
}

/// The option args[at, at + count) found after the command, which starts at args[command]:
/// refused, naming it whole (with its value) and giving the two command lines it may have
/// meant, the option moved before the command or the command's own after a '--'. An option
/// whose value would be the '--' (`--cpu -- x`) is moved with a VALUE to fill in.
[[noreturn]] void misplaced(const Target& t, const std::vector<std::string>& args, std::size_t at,
                            std::size_t count, std::size_t command, bool lacks_value) {
    const auto first = args.begin() + static_cast<long>(at);
    std::vector<std::string> option(first, first + static_cast<long>(count));
    std::vector<std::string> moved(args.begin(), args.begin() + static_cast<long>(command));
    moved.insert(moved.end(), option.begin(), option.end());
    if (lacks_value) {
        moved.emplace_back("VALUE");
    }
    for (std::size_t i = command; i < args.size(); ++i) {
        if (i < at || i >= at + count) {
            moved.push_back(args[i]);
        }
    }
    std::vector<std::string> own(args.begin(), args.begin() + static_cast<long>(command));
    own.emplace_back("--");
    own.insert(own.end(), args.begin() + static_cast<long>(command), args.end());
    const std::string named = command_line(option).substr(7); // without "emurun "
    throw Failure(
        Error{
            "emurun " + t.name,
            "the option " + named + " comes after the command (" + shell_word(args[command]) +
                ") and before '--'" + (lacks_value ? ", without its value" : "") +
                ": emurun reads its own options only before the command",
            "put it before the command" + std::string(lacks_value ? ", with its value: " : ": ") +
                command_line(moved) +
                "; if it is the command's own, start the command after '--': " + command_line(own)},
        k_exit_usage);
}

} // namespace

/// `root run DIR --accelerate make` without a `--`: the options right after DIR, up to the
/// first word that is no option, are emurun's (moved before DIR); an unknown one is refused.
/// A command never starts with an option, so `--accelerate` would otherwise have run as one.
/// An unknown option where the command would start (`root run DIR --acelerate -- make`): a
/// command never starts with an option, so it is a usage error, not a program to run.
[[noreturn]] void unknown_before_command(const Target& t, const std::string& word,
                                         const std::string& where) {
    throw Failure(Error{"emurun " + t.name,
                        unknown_option_text(*t.sub, word) + " (it stands " + where +
                            ", where the command would start, and a command never starts "
                            "with an option)",
                        "'emurun " + t.name +
                            " --help' lists its usage; a command that starts with '-' "
                            "goes after '--'"},
                  k_exit_usage);
}

std::vector<std::string> root_run_options(const Target& t, std::vector<std::string> args) {
    std::size_t dir = t.start;
    while (dir < args.size() && args[dir].starts_with("-")) {
        bool own = false;
        const CLI::Option* opt = find_option(*t.sub, args[dir], own);
        const bool valued = opt != nullptr && opt->get_expected_max() > 0 &&
                            args[dir].find('=') == std::string::npos;
        dir += valued ? 2 : 1; // options before DIR: CLI11 reads them as they are
    }
    std::vector<std::string> moved;
    std::size_t i = dir + 1;
    while (i < args.size() && args[i].starts_with("-") && args[i] != "-") {
        bool own = false;
        const CLI::Option* opt = find_option(*t.sub, args[i], own);
        if (opt == nullptr) {
            unknown_before_command(t, args[i], "after the root's directory");
        }
        const bool valued = opt->get_expected_max() > 0 && args[i].find('=') == std::string::npos &&
                            i + 1 < args.size();
        moved.insert(moved.end(), args.begin() + static_cast<long>(i),
                     args.begin() + static_cast<long>(i + (valued ? 2 : 1)));
        i += valued ? 2 : 1;
    }
    if (moved.empty() || dir >= args.size()) {
        return args;
    }
    std::vector<std::string> out(args.begin(), args.begin() + static_cast<long>(dir));
    out.insert(out.end(), moved.begin(), moved.end());
    out.push_back(args[dir]);
    out.insert(out.end(), args.begin() + static_cast<long>(i), args.end());
    return out;
}

std::vector<std::string> options_before_dashdash(CLI::App& app, std::vector<std::string> args) {
    const auto dd = std::ranges::find(args, "--");
    if (dd == args.end()) {
        const Target t = find_target(app, args);
        return t.sub != nullptr && t.name == "root run" ? root_run_options(t, std::move(args))
                                                        : args;
    }
    const Target t = find_target(app, args);
    const auto end = static_cast<std::size_t>(dd - args.begin());
    if (t.sub == nullptr || t.start > end) {
        return args;
    }
    std::vector<std::string> options;
    std::vector<std::string> positionals;
    std::size_t command = 0; // where the command starts in args
    for (std::size_t i = t.start; i < end; ++i) {
        bool own = false;
        const CLI::Option* opt = find_option(*t.sub, args[i], own);
        const bool after_command = positionals.size() > t.fixed;
        if (opt == nullptr && positionals.size() == t.fixed && args[i].starts_with("-") &&
            args[i] != "-") {
            unknown_before_command(t, args[i], "before '--'");
        }
        if (opt == nullptr || (after_command && (!own || opt == t.sub->get_help_ptr()))) {
            command = positionals.size() == t.fixed ? i : command;
            positionals.push_back(args[i]); // after the command only its own are emurun's
            continue;
        }
        const bool wants_value =
            opt->get_expected_max() > 0 && args[i].find('=') == std::string::npos;
        const bool valued = wants_value && i + 1 < end;
        if (after_command) {
            misplaced(t, args, i, valued ? 2 : 1, command, wants_value && !valued);
        }
        if (wants_value && !valued) { // `sandbox --arch -- CMD`: CLI11 would take the '--'
            throw Failure(Error{"emurun " + t.name,
                                "the option " + args[i] +
                                    " has no value: the '--' after it "
                                    "starts the command",
                                "give it a value before '--': " + args[i] + " VALUE; 'emurun " +
                                    t.name + " --help' lists its usage"},
                          k_exit_usage);
        }
        options.push_back(args[i]);
        if (valued) {
            options.push_back(args[++i]);
        }
    }
    std::vector<std::string> out(args.begin(), args.begin() + static_cast<long>(t.start));
    out.insert(out.end(), options.begin(), options.end());
    out.insert(out.end(), positionals.begin(), positionals.end());
    out.insert(out.end(), dd, args.end());
    return out;
}

} // namespace emurun::cli
