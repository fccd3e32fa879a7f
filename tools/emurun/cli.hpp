// The CLI layer: argument parsing and printing only; all logic lives in the library.
#pragma once

#include <emurun/error.hpp>

#include <CLI/CLI.hpp>

#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace emurun::cli {

/// Exit codes shared by every subcommand (docs/reference/emurun.adoc, EXIT STATUS).
inline constexpr int k_exit_usage = 2;
inline constexpr int k_exit_timeout = 124;
inline constexpr int k_exit_failure = 125;

/// The flag that sets the request field `field` of a library Error (Error::field):
/// "job_limit_share" -> "--job-limit-share, in percent, e.g. 80", "accelerate=none" ->
/// "--accelerate=none". The library holds no CLI syntax, so the one table of flags that differ
/// from their field lives here; any other field is the flag of the same name, '_' as '-'.
std::string flag_spelling(std::string_view field);

/// A library Error as the CLI prints it (after "emurun: error: "): its message() with the field
/// spelled as a flag, and without emurun's name at the start of its `what` ("emurun root run"
/// is said "root run", "emurun" nothing): the prefix says it once.
std::string error_text(const Error& e);

/// The one exception type: thrown only in the CLI, printed as "emurun: error: <message>", exit 125.
class Failure : public std::runtime_error {
  public:
    explicit Failure(const Error& e, int code = k_exit_failure)
        : std::runtime_error(error_text(e)), m_code(code) {}
    [[nodiscard]] int code() const { return m_code; }

  private:
    int m_code;
};

/// Unwrap a library result or throw Failure.
template <class T> T unwrap(Result<T> r) {
    if (!r) {
        throw Failure(r.error());
    }
    return std::move(*r);
}
inline void unwrap(Result<void> r) {
    if (!r) {
        throw Failure(r.error());
    }
}

/// The words of the command line (argv without argv[0]) with emurun's own options read
/// anywhere before `--`: in `root run`, an option of its own between DIR and `--` is moved
/// before DIR; in `exec`, `sandbox` (and `root run` once its command has begun), an option of
/// the subcommand's own between the command and a later `--` throws Failure (exit 2) saying
/// where it belongs. Without `--`, `args` unchanged.
std::vector<std::string> options_before_dashdash(CLI::App& app, std::vector<std::string> args);

/// A CLI11 parse error of `args` (the words parsed by `app`) as emurun says a usage error
/// (printed after "emurun: error: ", exit k_exit_usage): the command it concerns (none for
/// emurun's own: "unknown command 'exe': …"), the closest subcommand or option to a misspelt
/// word, an option given before the command it belongs to, and the --help that lists the usage.
std::string usage_error(const CLI::App& app, const CLI::ParseError& e,
                        const std::vector<std::string>& args);

/// After a parse of `args` that succeeded: an option that needs a value given as `--name=`,
/// whose value CLI11 took from the next word, as a usage error (printed after "emurun: error: ",
/// exit k_exit_usage); nullopt when there is none.
std::optional<std::string> empty_value_error(const CLI::App& app,
                                             const std::vector<std::string>& args);

/// A subcommand's action; returns emurun's exit code.
using Action = std::function<int()>;

/// Each subcommand file defines one of these: adds its CLI::App to `root` and sets `action`
/// to run when that subcommand is chosen.
/// Each option's value as --help names it ("--env K=V", "--sysroot DIR"), for `app` and its
/// subcommands; `command` is the path to `app` ("" for emurun itself, "root run").
void value_names(CLI::App& app, const std::string& command);

/// "unknown option '--acelerate': did you mean '--accelerate'?" of `command`.
std::string unknown_option_text(const CLI::App& command, const std::string& word);

void add_inspect(CLI::App& root, Action& action);
void add_exec(CLI::App& root, Action& action, int argc, char** argv);
void add_binfmt(CLI::App& root, Action& action);
void add_sandbox(CLI::App& root, Action& action);
void add_doctor(CLI::App& root, Action& action);
void add_shim(CLI::App& root, Action& action);
void add_sysroot(CLI::App& root, Action& action);
void add_run(CLI::App& root, Action& action);
void add_report(CLI::App& root, Action& action);
void add_calibrate(CLI::App& root, Action& action);
void add_root(CLI::App& root, Action& action);
void add_qemu(CLI::App& root, Action& action);

/// Entry point called by main().
int main(int argc, char** argv);

} // namespace emurun::cli
