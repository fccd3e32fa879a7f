// What the CLI shows on a terminal: the status colours of the report table and doctor's text.
#include "emurun_term.hpp"

namespace emurun {

std::string status_color(StepStatus status, std::string_view text) {
    const char* sgr = counts_as_passed(status) ? "32" : counts_as_failure(status) ? "31" : "33";
    return "\033[" + std::string(sgr) + "m" + std::string(text) + "\033[0m";
}

std::string format_doctor_text(const DoctorReport& report, FieldSpelling spell) {
    std::string out;
    for (const auto& c : report.checks) {
        std::string status(to_string(c.status));
        status.resize(6, ' ');
        out += status + c.id + ": " + c.summary + "\n";
        if (c.status != CheckStatus::ok && !c.fix.empty()) {
            out += "      fix: " + c.fix_text(spell) + "\n";
        }
    }
    return out;
}

} // namespace emurun
