// Retried steps: which outcomes run a step again, each attempt kept with its own log, and the
// `flaky` flag for a step that passed after a failed attempt.
#include "runner/runner_internal.hpp"

#include <system_error>

namespace emurun::detail {

bool wants_retry(const Step& step, const StepResult& r, std::size_t attempts_done) {
    const Retries& retries = step.retries;
    if (attempts_done > static_cast<std::size_t>(retries.count)) {
        return false;
    }
    switch (r.status) {
    case StepStatus::emulator_crash:
        return retries.on_emulator_crash;
    case StepStatus::timed_out:
        return retries.on_timed_out;
    case StepStatus::failed:
        // A step that could not start (no emulator, bad arch) fails the same way every time.
        return retries.on_failed && (r.exit_code || r.signal);
    default:
        return false;
    }
}

Attempt set_aside_attempt(const StepResult& r, std::size_t number) {
    Attempt a{r.status, r.exit_code, r.signal, r.wall, r.evidence, r.message, r.log};
    auto aside = r.log;
    aside.replace_filename(attempt_log_file_name(r.name, number));
    std::error_code ec;
    std::filesystem::rename(r.log, aside, ec);
    if (!ec) {
        a.log = aside;
    }
    return a;
}

void close_attempts(std::vector<Attempt> earlier, StepResult& r) {
    if (earlier.empty()) {
        return;
    }
    std::string first_failure;
    for (const auto& a : earlier) {
        if (a.status != StepStatus::passed && first_failure.empty()) {
            first_failure = std::string(to_string(a.status));
            if (a.evidence) {
                first_failure += " (" + *a.evidence + ")";
            }
        }
    }
    const std::size_t total = earlier.size() + 1;
    earlier.push_back(
        Attempt{r.status, r.exit_code, r.signal, r.wall, r.evidence, r.message, r.log});
    r.attempts = std::move(earlier);
    if (r.status == StepStatus::passed && !first_failure.empty()) {
        r.flags.push_back({"flaky", "passed on attempt " + std::to_string(total) + " of " +
                                        std::to_string(total) + " after " + first_failure});
    }
}

} // namespace emurun::detail
