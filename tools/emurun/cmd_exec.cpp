#include "cli.hpp"

namespace emurun::cli {

void add_exec(CLI::App& root, Action& action) {
    auto* sub = root.add_subcommand("exec", "(in progress)");
    sub->callback([&action] { action = [] { return k_exit_failure; }; });
}

} // namespace emurun::cli
