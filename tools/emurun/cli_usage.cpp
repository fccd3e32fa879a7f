// Usage errors: CLI11's parse errors said the emurun way, "emurun: error: <command>: <what>",
// with the closest subcommand or option when a word is misspelt and where the usage is listed.
#include "cli.hpp"

#include <algorithm>
#include <cstddef>
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

std::vector<std::string> subcommand_names(const CLI::App* command) {
    std::vector<std::string> names;
    for (const CLI::App* s : command->get_subcommands([](const CLI::App*) { return true; })) {
        names.push_back(s->get_name());
    }
    return names;
}

/// The words CLI11 did not take: those its message lists after "not expected: ", else (an
/// option or a subcommand required: CLI11 says so first) the options before `--` that
/// `command` does not know, else the first word of `args` that is no option and no subcommand.
std::vector<std::string> unexpected_words(const CLI::ParseError& e, const CLI::App* command,
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
        return words;
    }
    const auto known = option_names(command);
    for (const auto& a : args) {
        if (a == "--") {
            break;
        }
        if (a.starts_with("-") && a.size() > 1 &&
            std::find(known.begin(), known.end(), a.substr(0, a.find('='))) == known.end()) {
            words.push_back(a);
        }
    }
    if (!words.empty()) {
        return words;
    }
    const auto subs = subcommand_names(command);
    const std::string path = command_path(command) + " ";
    for (const auto& a : args) {
        if (!a.starts_with("-") && std::find(subs.begin(), subs.end(), a) == subs.end() &&
            path.find(" " + a + " ") == std::string::npos) {
            words.push_back(a);
            break;
        }
    }
    return words;
}

/// "did you mean '--jobs'?" for the first unexpected word that resembles something, else "".
std::string suggestion(const CLI::App* command, const std::vector<std::string>& words) {
    for (const auto& w : words) {
        if (w.starts_with("-")) {
            const std::string name = w.substr(0, w.find('='));
            if (auto c = closest(name, option_names(command)); !c.empty()) {
                return "unknown option '" + name + "': did you mean '" + c + "'?";
            }
            return "unknown option '" + name + "'";
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

} // namespace

std::string usage_error(const CLI::App& app, const CLI::ParseError& e,
                        const std::vector<std::string>& args) {
    const CLI::App* command = chosen_command(app);
    const std::string path = command_path(command);
    std::string what = e.what();
    if (const auto nl = what.find('\n'); nl != std::string::npos) {
        what.resize(nl);
    }
    std::string said = suggestion(command, unexpected_words(e, command, args));
    if (said.empty() && what == "A subcommand is required") {
        std::string list;
        for (const auto& n : subcommand_names(command)) {
            list += (list.empty() ? "" : ", ") + n;
        }
        said = "which command? one of " + list;
    }
    return path + ": " + (said.empty() ? what : said) + " ('" + path + " --help' lists its usage)";
}

} // namespace emurun::cli
