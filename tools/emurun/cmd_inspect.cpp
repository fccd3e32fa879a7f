#include "cli.hpp"

namespace emurun::cli {

void add_inspect(CLI::App& root, Action& action) {
    auto* sub = root.add_subcommand("inspect", "(in progress)");
    sub->callback([&action] { action = [] { return k_exit_failure; }; });
}

} // namespace emurun::cli
