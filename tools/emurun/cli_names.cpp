// What --help shows for each option's value: "--env K=V", "--sysroot DIR", not CLI11's TEXT.
#include "cli.hpp"

#include <CLI/CLI.hpp>

#include <map>
#include <string>

namespace emurun::cli {
namespace {

/// By option (long name, or a positional's name); "COMMAND --option" where one command's value
/// means something else.
const std::map<std::string, std::string, std::less<>>& value_names() {
    static const std::map<std::string, std::string, std::less<>> names{
        {"--arch", "ARCH"},
        {"arches", "ARCH"},
        {"--sysroot", "DIR"},
        {"sandbox --sysroot", "[ARCH=]DIR"},
        {"--env", "K=V"},
        {"--bind", "SRC[:DST]"},
        {"--ro-bind", "SRC[:DST]"},
        {"--cwd", "DIR"},
        {"--qemu-dir", "DIR"},
        {"--cpu", "MODEL"},
        {"--argv0", "NAME"},
        {"--dir", "DIR"},
        {"--cache", "DIR"},
        {"--log-dir", "DIR"},
        {"--history", "DIR"},
        {"--mount", "DIR"},
        {"--suite", "SUITE"},
        {"--mirror", "URL"},
        {"--include", "PKG[,PKG]"},
        {"--profiles", "LIST"},
        {"packages", "PKG"},
        {"sysroot build-dep packages", "SRCPKG|DIR"},
        {"--platform", "OS/ARCH[/VARIANT]"},
        {"pipeline", "FILE"},
        {"dir", "DIR"},
        {"command", "CMD"},
        {"files", "FILE"},
        {"file", "FILE"},
        {"reports", "REPORT"},
        {"image", "IMAGE"},
        {"names", "NAME"},
        {"name", "NAME"},
        {"before", "REPORT"},
        {"after", "REPORT"},
        {"source", "IMAGE"},
        {"out", "IMAGE"},
        {"roots", "ROOT"},
        {"--tag", "NAME[:TAG]"},
        {"topic", "COMMAND"},
        {"--target", "FILE"},
        {"--launcher", "FILE"},
        {"--interpreter", "FILE"},
        {"--lock-file", "FILE"},
        {"--native-program", "FILE"},
        {"--emulated-program", "FILE"},
        {"--output", "FILE"},
        {"--report", "FILE"},
        {"--junit", "FILE"},
        {"--markdown", "FILE"},
        {"--calibration", "FILE"},
        {"--pack", "ARCHIVE"},
        {"--unpack", "ARCHIVE"},
        {"--baseline", "REPORT"},
        {"--previous", "REPORT"},
        {"--shard", "K/N"},
        {"--matrix", "N|auto"},
        {"--factor-basis", "BASIS"},
        {"--format", "FORMAT"},
        {"--color", "WHEN"},
        {"--job-limit", "DURATION"},
        {"--grace", "DURATION"},
        {"--heartbeat", "DURATION"},
        {"--timeout-multiplier", "N|ARCH=N,...|auto"},
        {"--flags", "FLAGS"},
        {"--probe-dir", "DIR"},
        {"--binfmt-d", "DIR"},
        {"--update-binfmts", "DIR"},
    };
    return names;
}

/// The option's key in value_names: its first long name, else its (positional) name.
std::string option_key(const CLI::Option& option) {
    const auto& longs = option.get_lnames();
    return longs.empty() ? option.get_name() : "--" + longs.front();
}

} // namespace

void value_names(CLI::App& app, const std::string& command) {
    for (CLI::Option* option : app.get_options()) {
        if (!option->get_type_name().starts_with("TEXT")) {
            continue; // numbers keep INT and FLOAT; flags have none
        }
        const std::string key = option_key(*option);
        const auto& names = value_names();
        auto it = names.find(command + " " + key);
        if (it == names.end()) {
            it = names.find(key);
        }
        if (it != names.end()) {
            option->type_name(it->second);
        }
    }
    for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) {
        value_names(*sub, command.empty() ? sub->get_name() : command + " " + sub->get_name());
    }
}

} // namespace emurun::cli
