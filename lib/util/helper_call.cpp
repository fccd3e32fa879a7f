// The "re-enter emurun with a spec" protocol (helper_call.hpp).
#include "util/helper_call.hpp"

namespace emurun::util {

Result<std::string> helper_spec_text(const HelperCall& call, const Json& spec) {
    try {
        return spec.dump();
    } catch (const Json::exception& e) { // type_error 316: a string that is not UTF-8
        return fail("pass the " + std::string(call.name) + " spec to a fresh emurun", e.what(),
                    "use UTF-8 paths and variables for " + std::string(call.name) + " steps");
    }
}

Error helper_spec_error(const HelperCall& call, const std::string& why) {
    return Error{"read the " + std::string(call.name) + " spec", why,
                 "the " + std::string(call.name) + " helper takes only what " +
                     std::string(call.builder) + " writes"};
}

Result<std::vector<std::string>> helper_argv(const HelperCall& call,
                                             const std::filesystem::path& emurun, const Json& spec,
                                             const std::vector<std::string>& command) {
    if (command.empty()) {
        return fail("build the " + std::string(call.name) + " command", "no command");
    }
    // Not EMURUN_TRY inside the braces: clang then never destroys the list's earlier strings
    // (LeakSanitizer found the leak).
    std::string text = EMURUN_TRY(helper_spec_text(call, spec));
    std::vector<std::string> argv{emurun.string(), std::string(call.marker), std::move(text)};
    argv.insert(argv.end(), command.begin(), command.end());
    return argv;
}

std::optional<Result<HelperRequest>> read_helper_call(const HelperCall& call, int argc,
                                                      char** argv) {
    if (argc < 2 || argv[1] != call.marker) {
        return std::nullopt;
    }
    if (argc < 4) {
        return fail("emurun " + std::string(call.name) + " helper", "no spec or no command",
                    "it runs only what " + std::string(call.builder) + " builds");
    }
    return HelperRequest{argv[2], std::vector<std::string>(argv + 3, argv + argc)};
}

} // namespace emurun::util
