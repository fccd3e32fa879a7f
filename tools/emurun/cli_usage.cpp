// Usage errors: CLI11's parse errors said the emurun way, "emurun: error: [<command>: ]<what>"
// ("emurun: error: run: unknown option '--jbos': did you mean '--jobs'? ('emurun run --help'
// lists its usage)"), with the closest subcommand or option when a word is misspelt and where
// the usage is listed.
#include "cli.hpp"

#include <algorithm>
#include <cctype>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace emurun::cli {
namespace {

/// Edit distance (insert, delete, substitute, swap two neighbours) between two short words.
std::size_t usage_distance(std::string_view a, std::string_view b) {
    std::vector<std::vector<std::size_t>> d(a.size() + 1, std::vector<std::size_t>(b.size() + 1));
    for (std::size_t i = 0; i <= a.size(); ++i) {
        d[i][0] = i;
    }
    for (std::size_t j = 0; j <= b.size(); ++j) {
        d[0][j] = j;
    }
    for (std::size_t i = 1; i <= a.size(); ++i) {
        for (std::size_t j = 1; j <= b.size(); ++j) {
            const std::size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
            d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
                d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
            }
        }
    }
    return d[a.size()][b.size()];
}

/// The candidate closest to `word`, when close enough to be what was meant: a third of its
/// letters wrong at most, or `word` the start of exactly one candidate.
std::string closest(std::string_view word, const std::vector<std::string>& candidates) {
    std::string best;
    std::size_t best_d = std::max<std::size_t>(1, word.size() / 3) + 1;
    std::vector<std::string> starting;
    for (const auto& c : candidates) {
        if (word.size() >= 3 && c.starts_with(word)) {
            starting.push_back(c);
        }
        const std::size_t dist = usage_distance(word, c);
        if (dist < best_d) {
            best_d = dist;
            best = c;
        }
    }
    return !best.empty() || starting.size() != 1 ? best : starting.front();
}

const CLI::App* chosen_command(const CLI::App& app) {
    const auto subs = app.get_subcommands();
    return subs.empty() ? &app : chosen_command(*subs.front());
}

std::string command_path(const CLI::App* app) {
    std::string path;
    for (; app != nullptr; app = app->get_parent()) {
        path = app->get_name() + (path.empty() ? "" : " " + path);
    }
    return path;
}

/// The option spellings `command` accepts: its own and, as it falls through, its parents'.
std::vector<std::string> option_names(const CLI::App* command) {
    std::vector<std::string> names;
    for (; command != nullptr; command = command->get_parent()) {
        for (const CLI::Option* o : command->get_options()) {
            for (const auto& l : o->get_lnames()) {
                names.push_back("--" + l);
            }
            for (const auto& s : o->get_snames()) {
                names.push_back("-" + s);
            }
        }
        names.emplace_back("--help");
    }
    return names;
}

/// The option `name` ("--jobs", "-j") of `command` or, as it falls through, of its parents.
const CLI::Option* known_option(const CLI::App* command, const std::string& name) {
    for (; command != nullptr; command = command->get_parent()) {
        if (const CLI::Option* o = command->get_option_no_throw(name); o != nullptr) {
            return o;
        }
        if (name == "--help" || name == "-h") {
            return command->get_help_ptr();
        }
    }
    return nullptr;
}

std::vector<std::string> subcommand_names(const CLI::App* command) {
    std::vector<std::string> names;
    for (const CLI::App* s : command->get_subcommands([](const CLI::App*) { return true; })) {
        names.push_back(s->get_name());
    }
    return names;
}

/// Where `word` was given in `args`: the word itself or, for an option CLI11 names without
/// its value, the `--name=value` it came in.
std::vector<std::string>::const_iterator given_at(const std::vector<std::string>& args,
                                                  const std::string& word) {
    return std::ranges::find_if(args, [&word](const std::string& a) {
        return a == word || (word.starts_with("-") && a.starts_with(word + "="));
    });
}

/// The command `at` (a word of `args`) was given to: the deepest command on the way to
/// `chosen` whose name comes before it.
const CLI::App* command_at(const CLI::App* chosen, const std::vector<std::string>& args,
                           std::vector<std::string>::const_iterator at) {
    std::vector<const CLI::App*> path; // the root first
    for (const CLI::App* c = chosen; c != nullptr; c = c->get_parent()) {
        path.insert(path.begin(), c);
    }
    const CLI::App* given_to = path.front();
    auto from = args.begin();
    for (std::size_t i = 1; i < path.size(); ++i) {
        const auto named = std::find(from, args.end(), path[i]->get_name());
        if (named == args.end() || named > at) {
            break;
        }
        given_to = path[i];
        from = named + 1;
    }
    return given_to;
}

/// The words CLI11 did not take: those its message lists after "not expected: ", else (an
/// option or a subcommand required: CLI11 says so first) the options before `--` that the
/// command they were given to does not know, and the first word of `args` that is no option,
/// no option's value and no command (`root creat --arch A`: creat, then --arch).
std::vector<std::string> unexpected_words(const CLI::ParseError& e, const CLI::App* chosen,
                                          const std::vector<std::string>& args) {
    std::vector<std::string> words;
    const std::string what = e.what();
    if (const auto at = what.find("not expected: "); at != std::string::npos) {
        const std::string rest = what.substr(at + 14);
        for (std::size_t pos = 0; pos < rest.size();) {
            const std::size_t sp = std::min(rest.find(' ', pos), rest.size());
            if (sp > pos) {
                words.push_back(rest.substr(pos, sp - pos));
            }
            pos = sp + 1;
        }
        // In the order they were given (CLI11 lists them as it met them, last first).
        std::ranges::stable_sort(words, [&args](const auto& x, const auto& y) {
            return given_at(args, x) < given_at(args, y);
        });
        return words;
    }
    const std::string path = command_path(chosen) + " ";
    bool stray_seen = false;
    for (auto at = args.begin(); at != args.end() && *at != "--"; ++at) {
        const CLI::App* given_to = command_at(chosen, args, at);
        if (at->starts_with("-") && at->size() > 1) {
            const CLI::Option* known = known_option(given_to, at->substr(0, at->find('=')));
            if (known == nullptr) {
                words.push_back(*at);
            } else if (known->get_expected_max() > 0 && at->find('=') == std::string::npos &&
                       at + 1 != args.end()) {
                ++at; // its value
            }
        } else if (const auto subs = subcommand_names(given_to);
                   !stray_seen && std::ranges::find(subs, *at) == subs.end() &&
                   path.find(" " + *at + " ") == std::string::npos) {
            words.push_back(*at);
            stray_seen = true;
        }
    }
    return words;
}

/// What is wrong with the unknown option `word` of `command`: a misspelling ("did you mean
/// '--jobs'?"; not for one letter, where every other letter is as close), or nothing known.
std::string unknown_option(const CLI::App* command, const std::string& word) {
    const std::string name = word.substr(0, word.find('='));
    const bool one_letter = !name.starts_with("--") && name.size() <= 2;
    if (auto c = one_letter ? "" : closest(name, option_names(command)); !c.empty() && c != name) {
        return "unknown option '" + name + "': did you mean '" + c + "'?";
    }
    return "unknown option '" + name + "'";
}

/// "did you mean '--jobs'?" for the first unexpected word that resembles something, else "".
std::string suggestion(const CLI::App* command, const std::vector<std::string>& words) {
    for (const auto& w : words) {
        if (w.starts_with("-")) {
            return unknown_option(command, w);
        }
        if (auto subs = subcommand_names(command); !subs.empty()) {
            if (auto c = closest(w, subs); !c.empty()) {
                return "unknown command '" + w + "': did you mean '" + command_path(command) + " " +
                       c + "'?";
            }
            return "unknown command '" + w + "'";
        }
    }
    return "";
}

/// The command a usage error belongs to. CLI11 reports against the deepest subcommand it
/// chose, so `emurun foo run`, `emurun --colour=never doctor` and `emurun --color x run`
/// blamed `run` or `doctor`: a word CLI11 did not take, option or not, belongs to the deepest
/// command named before it in `args` (an option after a command is looked up in that command
/// and, as it falls through, in its parents), and a bad option value (`--color: x not in …`)
/// to the command that owns the option.
const CLI::App* blamed_command(const CLI::App* chosen, const std::string& what,
                               const std::vector<std::string>& words,
                               const std::vector<std::string>& args) {
    if (what.starts_with("-") && what.find(':') != std::string::npos) {
        const std::string name = what.substr(0, what.find(':'));
        for (const CLI::App* c = chosen; c != nullptr; c = c->get_parent()) {
            if (c->get_option_no_throw(name) != nullptr) {
                return c;
            }
        }
    }
    const auto word_at = words.empty() ? args.end() : given_at(args, words.front());
    return word_at == args.end() ? chosen : command_at(chosen, args, word_at);
}

/// An option given before the command it belongs to (`emurun --json doctor`, `emurun --jobs 2
/// run P`, `emurun root --arch A create DIR`): CLI11 then says the option is unknown, or that
/// the command misses it. As a usage error of the command it was given to, saying where it goes.
std::optional<Error> misplaced_option(const CLI::App* chosen,
                                      const std::vector<std::string>& args) {
    for (auto at = args.begin(); at != args.end() && *at != "--"; ++at) {
        if (!at->starts_with("-") || at->size() < 2) {
            continue;
        }
        const std::string name = at->substr(0, at->find('='));
        const CLI::App* given_to = command_at(chosen, args, at);
        if (known_option(given_to, name) != nullptr) {
            continue;
        }
        for (const CLI::App* c = chosen; c != nullptr && c != given_to; c = c->get_parent()) {
            if (c->get_option_no_throw(name) != nullptr) {
                return Error{command_path(given_to),
                             "the option '" + name + "' belongs to '" + command_path(c) +
                                 "' and goes after '" + c->get_name() + "'",
                             "'" + command_path(c) + " --help' lists its usage"};
            }
        }
    }
    return std::nullopt;
}

/// True when `word` is among the values a positional of `command` or its parents took (a word
/// of the program `exec` runs, not one of emurun's).
bool taken_by_positional(const CLI::App* command, const std::string& word) {
    for (; command != nullptr; command = command->get_parent()) {
        for (const CLI::Option* o : command->get_options()) {
            if (!o->nonpositional() &&
                std::ranges::find(o->results(), word) != o->results().end()) {
                return true;
            }
        }
    }
    return false;
}

/// An option that needs a value given as `--name=`: CLI11 reads nothing after '=' as no value
/// and takes the next word instead (`run --jobs= P` read P as the jobs, `inspect --sysroot= A B`
/// inspected B alone in the sysroot A).
std::optional<Error> empty_assignment(const CLI::App* chosen,
                                      const std::vector<std::string>& args) {
    for (auto at = args.begin(); at != args.end() && *at != "--"; ++at) {
        if (!at->starts_with("--") || at->find('=') != at->size() - 1) {
            continue;
        }
        const std::string name = at->substr(0, at->size() - 1);
        const CLI::App* given_to = command_at(chosen, args, at);
        const CLI::Option* opt = known_option(given_to, name);
        if (opt != nullptr && opt->get_items_expected_min() > 0 &&
            !taken_by_positional(chosen, *at)) {
            return Error{command_path(given_to), "the option " + name + " has an empty value",
                         "give it one: " + name + "=VALUE; '" + command_path(given_to) +
                             " --help' lists its usage"};
        }
    }
    return std::nullopt;
}

/// CLI11's own sentences in emurun's words: "pipeline is required" -> "missing the argument
/// PIPELINE", "--arch is required" -> "missing the option --arch", "--sysroot: 1 required TEXT
/// missing" -> "the option --sysroot needs a value".
std::string plain_words(const std::string& what) {
    const std::string required = " is required";
    if (what.ends_with(required) && what.find(' ') == what.size() - required.size()) {
        std::string name = what.substr(0, what.size() - required.size());
        if (name.starts_with("-")) {
            return "missing the option " + name;
        }
        std::ranges::transform(name, name.begin(), [](unsigned char c) { return std::toupper(c); });
        return "missing the argument " + name;
    }
    if (const auto colon = what.find(": "); what.starts_with("-") && colon != std::string::npos &&
                                            what.ends_with(" missing") &&
                                            what.find(" required ") != std::string::npos) {
        return "the option " + what.substr(0, colon) + " needs a value";
    }
    if (what.starts_with("Could not convert: ")) { // "Could not convert: --threshold = 5x"
        const std::string rest = what.substr(19);
        const auto eq = rest.find(" = ");
        if (eq != std::string::npos) {
            return rest.substr(0, eq) + ": '" + rest.substr(eq + 3) + "' is not a number";
        }
    }
    for (const std::string lead : {"The following argument was not expected: ",
                                   "The following arguments were not expected: "}) {
        if (what.starts_with(lead)) {
            return "unexpected argument" +
                   std::string(lead.find("arguments") != std::string::npos ? "s" : "") + ": " +
                   what.substr(lead.size());
        }
    }
    if (const auto at = what.find("At Most 1 required but received "); at != std::string::npos) {
        return what.substr(0, at) + "given " + what.substr(at + 32) + " times (once at most)";
    }
    return what;
}

} // namespace

std::string unknown_option_text(const CLI::App& command, const std::string& word) {
    return unknown_option(&command, word);
}

std::optional<std::string> empty_value_error(const CLI::App& app,
                                             const std::vector<std::string>& args) {
    auto empty = empty_assignment(chosen_command(app), args);
    return empty ? std::optional<std::string>(error_text(*empty)) : std::nullopt;
}

std::string usage_error(const CLI::App& app, const CLI::ParseError& e,
                        const std::vector<std::string>& args) {
    const CLI::App* chosen = chosen_command(app);
    if (auto misplaced = misplaced_option(chosen, args)) {
        return error_text(*misplaced);
    }
    if (auto empty = empty_assignment(chosen, args)) {
        return error_text(*empty);
    }
    std::string what = e.what();
    if (const auto nl = what.find('\n'); nl != std::string::npos) {
        what.resize(nl);
    }
    const auto words = unexpected_words(e, chosen, args);
    const CLI::App* command = blamed_command(chosen, what, words, args);
    const std::string path = command_path(command);
    // A value CLI11 refused (`--color: x not in {...}`) is said as CLI11 says it.
    const bool bad_value = e.get_name() == "ValidationError" || e.get_name() == "ConversionError";
    std::string said = bad_value ? "" : suggestion(command, words);
    if (said.empty() && what == "A subcommand is required") {
        std::string list;
        for (const auto& n : subcommand_names(command)) {
            list += (list.empty() ? "" : ", ") + n;
        }
        said = "which command? one of " + list;
    }
    return error_text(Error{path, said.empty() ? plain_words(what) : said,
                            "'" + path + " --help' lists its usage"});
}

} // namespace emurun::cli
