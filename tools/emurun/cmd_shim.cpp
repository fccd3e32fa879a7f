#include "cli.hpp"

namespace emurun::cli {

// Placeholder until the subcommand lands; it is hidden from --help and fails loudly.
void add_shim(CLI::App& root, Action& action) {
    auto* sub = root.add_subcommand("shim", "")->group("");
    sub->allow_extras();
    sub->callback([&action] {
        action = [] { throw Failure(Error{"emurun shim", "not implemented yet", ""}); return 0; };
    });
}

} // namespace emurun::cli
