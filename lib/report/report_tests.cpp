// A step's own test cases in the table, Markdown and JUnit: counts, then only the tests worth a
// look (failing, flagged, the slowest few), so that a suite of thousands does not flood a page.
#include "report/report_tests.hpp"
#include "report/report_text.hpp"

#include <algorithm>
#include <vector>

namespace emurun::detail {
namespace {

constexpr std::size_t k_listed_failures = 10; // failing tests listed per step
constexpr std::size_t k_listed_flagged = 10;  // flagged (passing) tests listed per step
constexpr std::size_t k_listed_slowest = 3;   // the slowest tests listed per step

// "suite.test"; a classname that only repeats the name (ctest) is left out.
std::string label(const TestResult& t) {
    return t.classname.empty() || t.classname == t.name ? t.name : t.classname + "." + t.name;
}

std::string flag_rules(const TestResult& t) {
    std::string out;
    for (const auto& f : t.flags) {
        out += (out.empty() ? "" : ", ") + f.rule;
    }
    return out;
}

std::string factor(const TestResult& t) {
    auto f = t.baseline_factor();
    return f ? number(*f, "%.1fx") : "-";
}

// The tests worth listing, in this order, each once: failing ones, flagged ones, the slowest.
// `more` counts the failing and flagged ones left out by the caps.
std::vector<const TestResult*> listed(const StepResult& s, std::size_t& more) {
    std::vector<const TestResult*> out, failing, flagged, by_time;
    for (const auto& t : s.tests) {
        (t.failing() ? failing : !t.flags.empty() ? flagged : by_time).push_back(&t);
    }
    more = failing.size() - std::min(failing.size(), k_listed_failures) + flagged.size() -
           std::min(flagged.size(), k_listed_flagged);
    out.insert(out.end(), failing.begin(),
               failing.begin() +
                   static_cast<std::ptrdiff_t>(std::min(failing.size(), k_listed_failures)));
    out.insert(out.end(), flagged.begin(),
               flagged.begin() +
                   static_cast<std::ptrdiff_t>(std::min(flagged.size(), k_listed_flagged)));
    std::ranges::stable_sort(by_time, std::ranges::greater{}, &TestResult::time);
    by_time.resize(std::min(by_time.size(), k_listed_slowest));
    std::erase_if(by_time, [](const TestResult* t) { return t->status == TestStatus::skipped; });
    out.insert(out.end(), by_time.begin(), by_time.end());
    return out;
}

std::string junit_flags(const TestResult& t) {
    if (t.flags.empty()) {
        return {};
    }
    std::string out = "      <properties>\n";
    for (const auto& f : t.flags) {
        out += "        <property name=\"emurun.flag." + xml_escape(f.rule) + "\" value=\"" +
               xml_escape(f.message) + "\"/>\n";
    }
    return out + "      </properties>\n";
}

std::string junit_case(const Report& r, const StepResult& s, const TestResult& t) {
    std::string out = "    <testcase name=\"" + xml_escape(t.name) + "\" classname=\"" +
                      xml_escape(t.classname.empty() ? r.pipeline + "." + s.name : t.classname) +
                      "\" time=\"" + number(t.time) + "\">\n";
    out += junit_flags(t);
    std::string flags_text;
    for (const auto& f : t.flags) {
        flags_text += "\nflag " + f.rule + ": " + f.message;
    }
    if (t.failing()) {
        const char* element = t.status == TestStatus::error ? "error" : "failure";
        out +=
            "      <" + std::string(element) + " message=\"" + xml_escape(t.message) + "\">" +
            xml_escape("step " + s.name + ": " + label(t) + " " + std::string(to_string(t.status)) +
                       (t.message.empty() ? "" : ": " + t.message) + flags_text) +
            "</" + element + ">\n";
    } else if (t.status == TestStatus::skipped) {
        out += "      <skipped message=\"" + xml_escape(t.message) + "\"/>\n";
    }
    if (!flags_text.empty()) {
        out += "      <system-out>" + xml_escape(flags_text.substr(1)) + "</system-out>\n";
    }
    return out + "    </testcase>\n";
}

std::size_t count(const StepResult& s, TestStatus status) {
    return static_cast<std::size_t>(std::ranges::count(s.tests, status, &TestResult::status));
}

double total_time(const StepResult& s) {
    double sum = 0;
    for (const auto& t : s.tests) {
        sum += t.time;
    }
    return sum;
}

// The test of `step` in `report` with t's classname and name, or null.
const TestResult* find_test(const Report& report, const std::string& step, const TestResult& t) {
    const StepResult* s = report.find(step);
    if (!s) {
        return nullptr;
    }
    auto it = std::ranges::find_if(s->tests, [&](const TestResult& b) {
        return b.classname == t.classname && b.name == t.name;
    });
    return it == s->tests.end() ? nullptr : &*it;
}

} // namespace

nlohmann::json compare_tests_json(const Report& before, const Report& after) {
    using Json = nlohmann::json;
    Json out = Json::array();
    for (const auto& s : after.steps) {
        for (const auto& t : s.tests) {
            const TestResult* b = find_test(before, s.name, t);
            out.push_back(
                {{"step", s.name},
                 {"classname", t.classname},
                 {"name", t.name},
                 {"before", b ? Json(b->time) : Json(nullptr)},
                 {"after", t.time},
                 {"change", b && b->time > 0 ? Json((t.time - b->time) / b->time) : Json(nullptr)},
                 {"before_status", b ? Json(to_string(b->status)) : Json(nullptr)},
                 {"after_status", to_string(t.status)}});
        }
    }
    return out;
}

std::string compare_tests_text(const Report& before, const Report& after) {
    constexpr std::size_t k_max_lines = 20;
    std::string out;
    std::size_t changed = 0;
    for (const auto& s : after.steps) {
        for (const auto& t : s.tests) {
            const TestResult* b = find_test(before, s.name, t);
            if (!b || b->status == t.status) {
                continue;
            }
            if (++changed <= k_max_lines) {
                out += "test " + printable(s.name) + ": " + printable(label(t)) + ": " +
                       std::string(to_string(b->status)) + " -> " +
                       std::string(to_string(t.status)) + " (" + format_seconds(b->time) + " -> " +
                       format_seconds(t.time) + ")\n";
            }
        }
    }
    if (changed > k_max_lines) {
        out += "... " + std::to_string(changed - k_max_lines) + " more tests changed status\n";
    }
    return out;
}

std::string test_counts(const StepResult& s) {
    std::string out;
    for (auto st :
         {TestStatus::passed, TestStatus::failed, TestStatus::error, TestStatus::skipped}) {
        if (std::size_t n = count(s, st); n > 0) {
            out += (out.empty() ? "" : ", ") + std::to_string(n) + " " + std::string(to_string(st));
        }
    }
    return out;
}

TestTotals test_totals(const Report& r) {
    TestTotals t;
    for (const auto& s : r.steps) {
        t.tests += s.tests.size();
        t.failures += count(s, TestStatus::failed);
        t.errors += count(s, TestStatus::error);
        t.skipped += count(s, TestStatus::skipped);
    }
    return t;
}

std::string tests_table(const Report& r) {
    std::string out;
    for (const auto& s : r.steps) {
        if (s.tests.empty()) {
            continue;
        }
        out += "tests: " + printable(s.name) + ": " + test_counts(s) + "\n";
        std::size_t more = 0;
        for (const TestResult* t : listed(s, more)) {
            out += "  " + std::string(to_string(t->status)) + "  " + printable(label(*t)) + "  " +
                   format_seconds(t->time) +
                   (t->baseline_time
                        ? "  " + factor(*t) + " baseline " + format_seconds(*t->baseline_time)
                        : std::string()) +
                   (t->message.empty() ? "" : "  " + printable(t->message)) + "\n";
            for (const auto& f : t->flags) {
                out += "    flag " + printable(f.rule) + ": " + printable(f.message) + "\n";
            }
        }
        if (more > 0) {
            out +=
                "  ... " + std::to_string(more) + " more failing or flagged tests in the report\n";
        }
    }
    return out;
}

std::string tests_markdown(const Report& r) {
    std::string out;
    for (const auto& s : r.steps) {
        if (s.tests.empty()) {
            continue;
        }
        out += "\n#### Tests of " + md_cell(s.name) + ": " + test_counts(s) + " in " +
               format_seconds(total_time(s)) +
               "\n\n| test | status | time | x baseline | flags |\n"
               "|---|---|---|---|---|\n";
        std::size_t more = 0;
        for (const TestResult* t : listed(s, more)) {
            out += "| " + md_cell(label(*t)) + " | " + std::string(to_string(t->status)) + " | " +
                   format_seconds(t->time) + " | " + factor(*t) + " | " + md_cell(flag_rules(*t)) +
                   " |\n";
        }
        if (more > 0) {
            out +=
                "\n" + std::to_string(more) + " more failing or flagged tests are in the report.\n";
        }
        for (const TestResult* t : listed(s, more)) {
            if (t->failing() && !t->message.empty()) {
                out += "\n- " + md_cell(label(*t)) + ": " + md_cell(t->message);
            }
            for (const auto& f : t->flags) {
                out +=
                    "\n- " + md_cell(label(*t)) + " " + md_cell(f.rule) + ": " + md_cell(f.message);
            }
        }
        out += "\n";
    }
    return out;
}

std::string tests_junit(const Report& r) {
    std::string out;
    for (const auto& s : r.steps) {
        if (s.tests.empty()) {
            continue;
        }
        out += "  <testsuite name=\"" + xml_escape(r.pipeline + "/" + s.name) + "\" tests=\"" +
               std::to_string(s.tests.size()) + "\" failures=\"" +
               std::to_string(count(s, TestStatus::failed)) + "\" errors=\"" +
               std::to_string(count(s, TestStatus::error)) + "\" skipped=\"" +
               std::to_string(count(s, TestStatus::skipped)) + "\" time=\"" +
               number(total_time(s)) + "\" timestamp=\"" + xml_escape(r.started) + "\">\n";
        for (const auto& t : s.tests) {
            out += junit_case(r, s, t);
        }
        out += "  </testsuite>\n";
    }
    return out;
}

} // namespace emurun::detail
