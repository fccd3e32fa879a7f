// Report renderings: JUnit XML, Markdown, GitHub annotations, the plain-text table.
#include "report/report_arches.hpp"
#include "report/report_emulator.hpp"
#include "report/report_tests.hpp"
#include "report/report_text.hpp"

#include <emurun/report.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace emurun {
namespace {

using detail::md_cell;
using detail::number;
using detail::printable;
using detail::xml_escape;

std::string rss_text(std::int64_t kib) {
    if (kib <= 0) {
        return "-";
    }
    return kib >= 1024 * 1024 ? number(static_cast<double>(kib) / (1024 * 1024), "%.1f GiB")
                              : number(static_cast<double>(kib) / 1024, "%.1f MiB");
}

// "exit 1", "signal 9", "timed out", ... : why a step did not pass.
std::string outcome(const StepResult& s) {
    std::string text;
    if (s.status == StepStatus::timed_out) {
        text = "timed out";
    } else if (s.status == StepStatus::resource_limit) {
        text = "resource limit";
    } else if (s.status == StepStatus::emulator_crash) {
        text = "emulator crash: " + s.evidence.value_or("(no evidence recorded)");
    } else if (s.signal) {
        text = "killed by signal " + std::to_string(*s.signal);
    } else if (s.exit_code) {
        text = "exit code " + std::to_string(*s.exit_code);
    } else {
        text = std::string(to_string(s.status));
    }
    return s.message.empty() ? text : text + ": " + s.message;
}

// "attempt 1 of 3: emulator_crash, killed by signal 11: qemu: uncaught target signal 11 ...".
std::string attempt_text(const StepResult& s, std::size_t i) {
    const Attempt& a = s.attempts[i];
    std::string text = "attempt " + std::to_string(i + 1) + " of " +
                       std::to_string(s.attempts.size()) + ": " + std::string(to_string(a.status));
    if (a.signal) {
        text += ", killed by signal " + std::to_string(*a.signal);
    } else if (a.exit_code && *a.exit_code != 0) {
        text += ", exit code " + std::to_string(*a.exit_code);
    }
    if (a.evidence) {
        text += ": " + *a.evidence;
    } else if (!a.message.empty()) {
        text += ": " + a.message;
    }
    return text + " (" + format_seconds(a.wall) + ", log: " + a.log.string() + ")";
}

std::string flags_text(const StepResult& s) {
    std::string out;
    for (const auto& f : s.flags) {
        out += (out.empty() ? "" : ", ") + f.rule;
    }
    return out;
}

std::string factor_text(const StepResult& s, FactorBasis basis) {
    auto f = s.factor(basis);
    return f ? number(*f, "%.1fx") : "-";
}

std::vector<std::string> row_of(const StepResult& s, FactorBasis basis) {
    return {printable(s.name),
            std::string(to_string(s.status)),
            format_seconds(s.wall),
            format_seconds(s.cpu()),
            rss_text(s.max_rss_kib),
            factor_text(s, basis),
            flags_text(s)};
}

// The header row: the factor column says what it divides ("x baseline (wall)").
std::vector<std::string> columns(FactorBasis basis) {
    return {"step", "status", "wall", "CPU", "max RSS", "x baseline " + detail::basis_label(basis),
            "flags"};
}

// Width on the terminal: colour codes (ESC [ ... m) take none, a UTF-8 character one column
// (wide East Asian characters take two on most terminals: not counted as such).
std::size_t visible_size(std::string_view text) {
    std::size_t n = 0;
    for (std::size_t i = 0; i < text.size(); ++i) {
        if (text[i] == '\033') {
            i = text.find('m', i);
            if (i == std::string_view::npos) {
                break;
            }
        } else if ((static_cast<unsigned char>(text[i]) & 0xC0) != 0x80) {
            ++n; // one per character: UTF-8 continuation bytes take no column of their own
        }
    }
    return n;
}

std::string padded_table(const std::vector<std::vector<std::string>>& rows) {
    std::vector<std::size_t> width(rows.front().size(), 0);
    for (const auto& r : rows) {
        for (std::size_t i = 0; i < r.size(); ++i) {
            width[i] = std::max(width[i], visible_size(r[i]));
        }
    }
    std::string out;
    for (const auto& r : rows) {
        std::string line;
        for (std::size_t i = 0; i < r.size(); ++i) {
            line += r[i] + std::string(width[i] - visible_size(r[i]) + 2, ' ');
        }
        line.erase(line.find_last_not_of(' ') + 1);
        out += line + "\n";
    }
    return out;
}

// GitHub workflow-command escaping (data; properties also escape ':' and ',').
std::string gh_escape(std::string_view text, bool property) {
    std::string out;
    for (char c : text) {
        if (c == '%') {
            out += "%25";
        } else if (c == '\r') {
            out += "%0D";
        } else if (c == '\n') {
            out += "%0A";
        } else if (property && c == ':') {
            out += "%3A";
        } else if (property && c == ',') {
            out += "%2C";
        } else if ((c >= 0 && c < 0x20) || c == 0x7f) {
            out += printable(std::string_view(&c, 1)); // ESC, NUL, ...: shown, not obeyed
        } else {
            out += c;
        }
    }
    return out;
}

std::size_t count_status(const Report& r, std::initializer_list<StepStatus> statuses) {
    return static_cast<std::size_t>(std::ranges::count_if(r.steps, [&](const StepResult& s) {
        return std::ranges::find(statuses, s.status) != statuses.end();
    }));
}

// The earlier attempts of a retried step, as Maven Surefire writes reruns (Jenkins and others
// read them): <flakyFailure> when the step passed in the end, else <rerunFailure>.
std::string junit_reruns(const StepResult& s) {
    std::string out;
    const char* element = s.status == StepStatus::passed ? "flakyFailure" : "rerunFailure";
    for (std::size_t i = 0; i + 1 < s.attempts.size(); ++i) {
        if (s.attempts[i].status == StepStatus::passed) {
            continue;
        }
        out += "      <" + std::string(element) + " type=\"" +
               std::string(to_string(s.attempts[i].status)) + "\" message=\"" +
               xml_escape(attempt_text(s, i)) + "\"/>\n";
    }
    return out;
}

// "log: PATH" after `prefix`, or nothing for a step without a log (one that never started
// because emurun was interrupted).
std::string log_line(const StepResult& s, std::string_view prefix) {
    return s.log.empty() ? std::string() : std::string(prefix) + "log: " + s.log.string();
}

// <failure> with the reason in its body (GitLab and Jenkins show the body), or <skipped>.
std::string junit_outcome(const StepResult& s) {
    if (counts_as_failure(s.status)) {
        std::string body = "step " + s.name + ": " + outcome(s) + log_line(s, "\n");
        for (const auto& f : s.flags) {
            body += "\nflag " + f.rule + ": " + f.message;
        }
        return "      <failure type=\"" + std::string(to_string(s.status)) + "\" message=\"" +
               xml_escape(outcome(s)) + "\">" + xml_escape(body) + "</failure>\n";
    }
    if (s.status == StepStatus::skipped || s.status == StepStatus::not_run) {
        return "      <skipped message=\"" + xml_escape(outcome(s)) + "\"/>\n";
    }
    return {};
}

// The outcome, then the earlier attempts.
std::string junit_result(const StepResult& s) {
    return junit_outcome(s) + junit_reruns(s);
}

// The step's facts as properties: the image its root was made from.
std::string junit_properties(const StepResult& s) {
    if (!s.image) {
        return {};
    }
    std::string out = "      <properties>\n";
    for (const auto& [name, value] : {std::pair{"emurun.image", &s.image->reference},
                                      std::pair{"emurun.image.platform", &s.image->platform},
                                      std::pair{"emurun.image.digest", &s.image->digest}}) {
        out += "        <property name=\"" + std::string(name) + "\" value=\"" +
               xml_escape(*value) + "\"/>\n";
    }
    return out + "      </properties>\n";
}

// "app.tar#arm64 (linux/arm64, sha256:HEX)": the image a step's root was made from.
std::string image_text(const ImageRecord& i) {
    return i.reference + " (" + i.platform + (i.digest.empty() ? "" : ", " + i.digest) + ")";
}

// The log path, flags, attempts, then the end of the log itself (GitLab shows system-out on its
// page).
std::string junit_system_out(const StepResult& s, const detail::LogTails& logs) {
    std::vector<std::string> lines;
    if (!s.log.empty()) {
        lines.push_back("log: " + s.log.string());
    }
    for (const auto& f : s.flags) {
        lines.push_back("flag " + f.rule + ": " + f.message);
    }
    for (std::size_t i = 0; i < s.attempts.size(); ++i) {
        lines.push_back(attempt_text(s, i));
    }
    if (std::string tail = logs.tail(s.log); !tail.empty()) {
        lines.push_back(tail);
    }
    std::string text;
    for (const auto& line : lines) {
        text += (text.empty() ? "" : "\n") + line;
    }
    return text;
}

std::string status_cell(const StepResult& s, const StatusStyle& style) {
    std::string text(to_string(s.status));
    return style ? style(s.status, text) : text;
}

} // namespace

std::string to_junit(const Report& r, const JunitLogs& logs) {
    const detail::LogTails tails(logs.log_dir);
    auto failures =
        count_status(r, {StepStatus::failed, StepStatus::emulator_crash, StepStatus::timed_out,
                         StepStatus::interrupted, StepStatus::resource_limit});
    auto skipped = count_status(r, {StepStatus::skipped, StepStatus::not_run});
    auto counts_of = [&](std::size_t tests, std::size_t fails, std::size_t errors,
                         std::size_t skips) {
        return " tests=\"" + std::to_string(tests) + "\" failures=\"" + std::to_string(fails) +
               "\" errors=\"" + std::to_string(errors) + "\" skipped=\"" + std::to_string(skips) +
               "\" time=\"" + number(r.wall) + "\"";
    };
    std::string counts = counts_of(r.steps.size(), failures, 0, skipped);
    const auto t = detail::test_totals(r); // the steps' own tests are counted at the top too
    std::string out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
    out +=
        "<testsuites name=\"emurun\"" +
        counts_of(r.steps.size() + t.tests, failures + t.failures, t.errors, skipped + t.skipped) +
        ">\n";
    out += "  <testsuite name=\"" + xml_escape(r.pipeline) + "\"" + counts + " timestamp=\"" +
           xml_escape(r.started) + "\">\n";
    for (const auto& s : r.steps) {
        out += "    <testcase name=\"" + xml_escape(s.name) + "\" classname=\"" +
               xml_escape(r.pipeline + "." + std::string(to_string(s.kind))) + "\" time=\"" +
               number(s.wall) + "\">\n";
        out += junit_properties(s);
        out += junit_result(s);
        out += "      <system-out>" + xml_escape(junit_system_out(s, tails)) + "</system-out>\n";
        out += "    </testcase>\n";
    }
    out += "  </testsuite>\n" + detail::tests_junit(r) + "</testsuites>\n";
    return out;
}

namespace {

// The per-arch table (arch_rows) under its own heading; empty without per-arch steps.
std::string arches_markdown(const Report& r) {
    auto rows = detail::arch_rows(r);
    if (rows.empty()) {
        return {};
    }
    std::string out =
        "\n#### Per arch (wall, x baseline " + detail::basis_label(r.factor_basis) + ")\n\n";
    for (std::size_t i = 0; i < rows.size(); ++i) {
        out += "|";
        for (const auto& cell : rows[i]) {
            out += " " + md_cell(cell) + " |";
        }
        out += "\n";
        for (std::size_t c = 0; i == 0 && c < rows[0].size(); ++c) {
            out += c == 0 ? "|---|" : "---|";
        }
        out += i == 0 ? "\n" : "";
    }
    return out;
}

} // namespace

std::string to_markdown(const Report& r) {
    std::string out = "### emurun: " + md_cell(r.pipeline) + " " +
                      (r.succeeded() ? "passed" : "FAILED") + " in " + format_seconds(r.wall);
    if (r.shard_count > 1) {
        out +=
            " (shard " + std::to_string(r.shard_index) + "/" + std::to_string(r.shard_count) + ")";
    }
    out += "\n\n|";
    const auto header = columns(r.factor_basis);
    for (const auto& c : header) {
        out += " " + c + " |";
    }
    out += "\n|";
    for (std::size_t i = 0; i < header.size(); ++i) {
        out += "---|";
    }
    out += "\n";
    for (const auto& s : r.steps) {
        out += "|";
        for (const auto& cell : row_of(s, r.factor_basis)) {
            out += " " + md_cell(cell) + " |";
        }
        out += "\n";
    }
    for (const auto& f : r.flags) {
        out += "\n**" + md_cell(f.rule) + "**: " + md_cell(f.message) + "\n";
    }
    for (const auto& s : r.steps) {
        if (s.image) {
            out += "\n- `" + md_cell(s.name) + "` image: " + md_cell(image_text(*s.image));
        }
        if (s.evidence) {
            out += "\n- `" + md_cell(s.name) + "` emulator crash: " + md_cell(*s.evidence);
        }
        for (const auto& m : s.toolchain_mismatches) {
            out += "\n- `" + md_cell(s.name) + "` toolchain: " + md_cell(m.message);
        }
        for (const auto& f : s.flags) {
            out += "\n- " + md_cell(s.name) + " " + md_cell(f.rule) + ": " + md_cell(f.message);
        }
    }
    return out + "\n" + arches_markdown(r) + detail::tests_markdown(r);
}

std::vector<std::string> annotations(const Report& r) {
    std::vector<std::string> errors, warnings;
    for (const auto& s : r.steps) {
        std::string title = gh_escape("emurun: " + s.name, true);
        if (!counts_as_passed(s.status) && s.status != StepStatus::skipped) {
            errors.push_back("::error title=" + title + "::" +
                             gh_escape("step " + s.name + " " + outcome(s) +
                                           (s.log.empty() ? "" : " (log: " + s.log.string() + ")"),
                                       false));
        }
        for (const auto& f : s.flags) {
            warnings.push_back(
                "::warning title=" + title + "::" +
                gh_escape("step " + s.name + " flagged " + f.rule + ": " + f.message, false));
        }
        for (const auto& t : s.tests) {
            for (const auto& f : t.flags) {
                warnings.push_back("::warning title=" + title + "::" +
                                   gh_escape("test " + t.name + " of step " + s.name + " flagged " +
                                                 f.rule + ": " + f.message,
                                             false));
            }
        }
    }
    for (const auto& f : r.flags) {
        warnings.push_back("::warning title=emurun%3A " + gh_escape(r.pipeline, true) +
                           "::" + gh_escape(f.message, false));
    }
    // GitHub drops annotations past its per-step limits silently: say how many were left out.
    const std::size_t more_errors = errors.size() - std::min(errors.size(), k_github_max_errors);
    const std::size_t more_warnings =
        warnings.size() - std::min(warnings.size(), k_github_max_warnings);
    errors.resize(errors.size() - more_errors);
    warnings.resize(warnings.size() - more_warnings);
    errors.insert(errors.end(), warnings.begin(), warnings.end());
    if (more_errors + more_warnings > 0) {
        errors.push_back("::notice title=emurun%3A " + gh_escape(r.pipeline, true) +
                         "::" + std::to_string(more_errors) + " more failed steps and " +
                         std::to_string(more_warnings) +
                         " more flags are not annotated (GitHub shows 10 errors and 10 warnings "
                         "per step): see the step summary or the report");
    }
    return errors;
}

std::string to_table(const Report& r, const StatusStyle& style) {
    std::vector<std::vector<std::string>> rows{columns(r.factor_basis)};
    for (const auto& s : r.steps) {
        rows.push_back(row_of(s, r.factor_basis));
    }
    for (std::size_t i = 0; i < r.steps.size(); ++i) {
        rows[i + 1][1] = status_cell(r.steps[i], style);
    }
    std::string out = padded_table(rows);
    for (const auto& s : r.steps) {
        if (s.image) {
            out += "image: " + printable(s.name) + ": " + printable(image_text(*s.image)) + "\n";
        }
        if (s.evidence) {
            out += "emulator crash: " + s.name + ": " + *s.evidence + "\n";
        }
        for (const auto& m : s.toolchain_mismatches) {
            out += "toolchain: " + printable(s.name) + ": " + printable(m.message) + "\n";
        }
        for (const auto& f : s.flags) {
            out += "flag " + printable(f.rule) + ": " + printable(s.name) + ": " +
                   printable(f.message) + "\n";
        }
    }
    for (const auto& f : r.flags) {
        out += "flag " + printable(f.rule) + ": " + printable(f.message) + "\n";
    }
    if (auto per_arch = detail::arch_rows(r); !per_arch.empty()) {
        out += "\nper arch (wall, x baseline " + detail::basis_label(r.factor_basis) + "):\n" +
               padded_table(per_arch);
    }
    return out + detail::tests_table(r);
}

std::string compare_table(const Report& before, const Report& after) {
    std::vector<std::vector<std::string>> rows{{"step", "before", "after", "change", "status"}};
    for (const auto& s : after.steps) {
        const StepResult* b = before.find(s.name);
        std::string change = "-";
        if (b && b->wall > 0) {
            change = number(100 * (s.wall - b->wall) / b->wall, "%+.0f%%");
        }
        rows.push_back({printable(s.name), b ? format_seconds(b->wall) : "-",
                        format_seconds(s.wall), change,
                        (b ? std::string(to_string(b->status)) + " -> " : std::string("new, ")) +
                            std::string(to_string(s.status))});
    }
    for (const auto& b : before.steps) {
        if (!after.find(b.name)) {
            rows.push_back({printable(b.name), format_seconds(b.wall), "-", "-", "removed"});
        }
    }
    rows.push_back(
        {"total", format_seconds(before.wall), format_seconds(after.wall),
         before.wall > 0 ? number(100 * (after.wall - before.wall) / before.wall, "%+.0f%%") : "-",
         ""});
    std::string text = padded_table(rows);
    for (const auto& s : after.steps) { // factors against a native baseline, where known
        const StepResult* b = before.find(s.name);
        const auto fb = b ? b->factor(before.factor_basis) : std::nullopt;
        const auto fa = s.factor(after.factor_basis);
        if (fa || fb) {
            text += "x baseline: " + printable(s.name) + ": " + (fb ? number(*fb, "%.1fx") : "-") +
                    " -> " + (fa ? number(*fa, "%.1fx") : "-") + "\n";
        }
        // Each report's own flag against the baseline, said whose it is.
        for (const auto& [step, whose] : {std::pair{b, "before"}, std::pair{&s, "after"}}) {
            for (const auto& f : step != nullptr ? step->flags : std::vector<Flag>{}) {
                if (f.rule == "baseline") {
                    text += std::string("flag baseline (") + whose + "): " + printable(s.name) +
                            ": " + printable(f.message) + "\n";
                }
            }
        }
    }
    for (const auto& change : emulator_changes(before, after)) {
        text += "emulator changed: " + printable(change.describe()) + "\n";
    }
    for (const auto& change : image_changes(before, after)) {
        text += "image changed: " + printable(change.describe()) + "\n";
    }
    return text + detail::compare_tests_text(before, after);
}

nlohmann::json compare_json(const Report& before, const Report& after) {
    using Json = nlohmann::json;
    auto change = [](double b, double a) { return b > 0 ? Json((a - b) / b) : Json(nullptr); };
    auto factor = [](const StepResult* s, const Report& r) {
        const auto f = s ? s->factor(r.factor_basis) : std::nullopt;
        return f ? Json(*f) : Json(nullptr);
    };
    Json steps = Json::array();
    for (const auto& s : after.steps) {
        const StepResult* b = before.find(s.name);
        steps.push_back({{"name", s.name},
                         {"before", b ? Json(b->wall) : Json(nullptr)},
                         {"after", s.wall},
                         {"change", b ? change(b->wall, s.wall) : Json(nullptr)},
                         {"before_status", b ? Json(to_string(b->status)) : Json(nullptr)},
                         {"after_status", to_string(s.status)},
                         {"before_factor", factor(b, before)},
                         {"after_factor", factor(&s, after)}});
    }
    for (const auto& b : before.steps) {
        if (!after.find(b.name)) {
            steps.push_back({{"name", b.name},
                             {"before", b.wall},
                             {"after", nullptr},
                             {"change", nullptr},
                             {"before_status", to_string(b.status)},
                             {"after_status", nullptr}});
        }
    }
    Json changes = Json::array();
    for (const auto& c : emulator_changes(before, after)) {
        changes.push_back({{"name", c.step},
                           {"before", detail::emulator_json(c.before)},
                           {"after", detail::emulator_json(c.after)}});
    }
    Json images = Json::array();
    for (const auto& c : image_changes(before, after)) {
        images.push_back({{"name", c.step},
                          {"before", detail::image_json(c.before)},
                          {"after", detail::image_json(c.after)}});
    }
    return {{"steps", steps},
            {"tests", detail::compare_tests_json(before, after)},
            {"emulator_changes", changes},
            {"image_changes", images},
            {"total",
             {{"before", before.wall},
              {"after", after.wall},
              {"change", change(before.wall, after.wall)}}}};
}

} // namespace emurun
