// CI conventions of reports: annotation caps, folded sections, JUnit bodies and log tails.
#include <emurun/report.hpp>
#include <emurun_ci.hpp>
#include <emurun_term.hpp>

#include <nlohmann/json.hpp>

#include <doctest/doctest.h>

#include "scoped_env.hpp"
#include "testdir.hpp"

#include <boost/property_tree/ptree.hpp>
#include <boost/property_tree/xml_parser.hpp>

#include <fstream>
#include <iterator>
#include <sstream>

using emurun::Report;
using emurun::StepResult;
using emurun::StepStatus;

namespace {

StepResult failed_step(const std::string& name, bool flagged) {
    StepResult s;
    s.name = name;
    s.status = StepStatus::failed;
    s.exit_code = 2;
    s.log = "/logs/" + name + ".log";
    if (flagged) {
        s.flags.push_back({"budget", "wall 3.0s is over the budget 1.0s"});
    }
    return s;
}

std::size_t count_prefix(const std::vector<std::string>& lines, std::string_view prefix) {
    return static_cast<std::size_t>(
        std::ranges::count_if(lines, [&](const std::string& l) { return l.starts_with(prefix); }));
}

} // namespace

TEST_CASE("report_ci: annotations stay within GitHub's 10 errors and 10 warnings per step") {
    Report r;
    r.pipeline = "p";
    for (int i = 0; i < 14; ++i) {
        r.steps.push_back(failed_step("s" + std::to_string(i), i < 12));
    }
    auto notes = emurun::annotations(r);
    CHECK(count_prefix(notes, "::error ") == 10);
    CHECK(count_prefix(notes, "::warning ") == 10);
    REQUIRE(count_prefix(notes, "::notice ") == 1);
    CHECK(notes.back().find("4 more failed steps and 2 more flags") != std::string::npos);
    CHECK(notes.front().starts_with("::error title=emurun%3A s0::"));

    r.steps.resize(3);
    notes = emurun::annotations(r);
    CHECK(notes.size() == 6);
    CHECK(count_prefix(notes, "::notice ") == 0);
}

TEST_CASE("report_ci: annotations on GitHub only; GITHUB_STEP_SUMMARY gets the Markdown") {
    using emurun::CiLog;
    Report r;
    r.pipeline = "p";
    r.steps.push_back(failed_step("s", false));
    CHECK(emurun::ci_annotations(r, CiLog::github) == emurun::annotations(r));
    CHECK_FALSE(emurun::ci_annotations(r, CiLog::github).empty());
    CHECK(emurun::ci_annotations(r, CiLog::gitlab).empty());
    CHECK(emurun::ci_annotations(r, CiLog::plain).empty());
    {
        emurun::test::ScopedEnv gha("GITHUB_ACTIONS", "true");
        emurun::test::ScopedEnv gitlab("GITLAB_CI", "true");
        CHECK(emurun::ci_log_from_env() == CiLog::github);
    }
    {
        emurun::test::ScopedEnv gha("GITHUB_ACTIONS", "1"); // GitHub sets exactly "true"
        emurun::test::ScopedEnv gitlab("GITLAB_CI", std::nullopt);
        CHECK(emurun::ci_log_from_env() == CiLog::plain);
    }
    const auto summary = emurun::test::testdir("report-ci-summary") / "summary.md";
    {
        emurun::test::ScopedEnv unset("GITHUB_STEP_SUMMARY", std::nullopt);
        CHECK(emurun::append_step_summary(r).has_value());
        CHECK_FALSE(std::filesystem::exists(summary));
    }
    emurun::test::ScopedEnv set("GITHUB_STEP_SUMMARY", summary.string());
    REQUIRE(emurun::append_step_summary(r).has_value());
    REQUIRE(emurun::append_step_summary(r).has_value()); // appended, not replaced
    std::ifstream in(summary);
    const std::string text{std::istreambuf_iterator<char>(in), {}};
    CHECK(text == emurun::to_markdown(r) + emurun::to_markdown(r));
}

TEST_CASE("report_ci: GitLab's CI_NODE_INDEX/CI_NODE_TOTAL give the shard") {
    using emurun::test::ScopedEnv;
    {
        ScopedEnv index("CI_NODE_INDEX", "2");
        ScopedEnv total("CI_NODE_TOTAL", "3");
        auto shard = emurun::ci_shard_from_env();
        REQUIRE(shard.has_value());
        REQUIRE(shard->has_value());
        CHECK((*shard)->index == 2);
        CHECK((*shard)->count == 3);
    }
    for (auto [index, total] : {std::pair{"", "3"}, std::pair{"2", ""}, std::pair{"", ""}}) {
        ScopedEnv i("CI_NODE_INDEX", std::string(index));
        ScopedEnv t("CI_NODE_TOTAL", std::string(total));
        auto shard = emurun::ci_shard_from_env();
        REQUIRE(shard.has_value());
        CHECK_FALSE(shard->has_value()); // unset or empty: no shard
    }
    {
        ScopedEnv index("CI_NODE_INDEX", std::nullopt);
        ScopedEnv total("CI_NODE_TOTAL", "3");
        CHECK_FALSE(emurun::ci_shard_from_env()->has_value());
    }
    ScopedEnv index("CI_NODE_INDEX", "3");
    ScopedEnv total("CI_NODE_TOTAL", "2");
    auto bad = emurun::ci_shard_from_env();
    REQUIRE_FALSE(bad.has_value());
    CHECK(bad.error().what == "CI_NODE_INDEX=3, CI_NODE_TOTAL=2");
    CHECK(bad.error().field == "shard");
}

TEST_CASE("report_ci: folded sections for GitHub and GitLab, nothing elsewhere") {
    using emurun::CiLog;
    CHECK(emurun::fold_start(CiLog::github, "unit", "emurun: step unit", 5) ==
          "::group::emurun: step unit\n");
    CHECK(emurun::fold_end(CiLog::github, "unit", 9) == "::endgroup::\n");
    CHECK(emurun::fold_start(CiLog::gitlab, "unit-aarch64 (x)", "step\nunit", 1700000000) ==
          "\033[0Ksection_start:1700000000:emurun_unit-aarch64__x_[collapsed=true]\r\033[0Kstep "
          "unit\n");
    CHECK(emurun::fold_end(CiLog::gitlab, "unit-aarch64 (x)", 1700000009) ==
          "\033[0Ksection_end:1700000009:emurun_unit-aarch64__x_\r\033[0K\n");
    CHECK(emurun::fold_start(CiLog::plain, "unit", "t", 1).empty());
    CHECK(emurun::fold_end(CiLog::plain, "unit", 1).empty());
}

TEST_CASE("report_ci: log_tail keeps the last lines and bytes and says what it left out") {
    std::string text;
    for (int i = 1; i <= 300; ++i) {
        text += "line " + std::to_string(i) + "\n";
    }
    auto log = emurun::test::write_file("tail.log", text);
    std::string tail = emurun::log_tail(log, 100, 64 * 1024);
    CHECK(tail.starts_with("[" + std::to_string(text.find("line 201\n")) + " earlier bytes"));
    CHECK(tail.find("earlier bytes omitted; full log: " + log.string() + "]\nline 201\n") !=
          std::string::npos);
    CHECK(tail.ends_with("line 300\n"));
    CHECK(tail.find("line 200\n") == std::string::npos);
    std::string small = emurun::log_tail(log, 1000, 20); // the byte cap: whole lines only
    CHECK(small.ends_with("\nline 299\nline 300\n"));
    CHECK(small.find("line 298") == std::string::npos);
    CHECK(emurun::log_tail(log, 1000, 1 << 20) == text);
    CHECK(emurun::log_tail(emurun::test::testdir() / "missing.log").empty());
}

TEST_CASE("report_ci: JUnit failure body, log tail in system-out, unsafe bytes dropped") {
    auto log = emurun::test::write_file(
        "bad.log", "compiling\n\033[31merror:\033[0m boom \x01\xff\xc3\xa9 </system-out>\n");
    StepResult s = failed_step("bad", true);
    s.log = log;
    s.message = "exit \x02 code";
    Report r;
    r.pipeline = "p";
    r.steps = {s};
    std::string xml = emurun::to_junit(r, {emurun::test::testdir()}); // the log's own dir
    std::istringstream in(xml);
    boost::property_tree::ptree tree;
    REQUIRE_NOTHROW(boost::property_tree::read_xml(in, tree));
    const auto& tc = tree.get_child("testsuites.testsuite.testcase");
    std::string failure = tc.get<std::string>("failure");
    CHECK(failure.find("step bad: exit code 2: exit  code") != std::string::npos);
    CHECK(failure.find("flag budget: wall 3.0s") != std::string::npos);
    CHECK(failure.find("log: " + log.string()) != std::string::npos);
    std::string out = tc.get<std::string>("system-out");
    CHECK(out.starts_with("log: " + log.string()));
    CHECK(out.find("error: boom \xc3\xa9 </system-out>") != std::string::npos);
    CHECK(xml.find('\x1b') == std::string::npos);
    CHECK(xml.find('\xff') == std::string::npos);
}

TEST_CASE("trust review 6: a report's log missing from the log dir gets the note") {
    // The old JUnit showed the path alone, as if the log were empty.
    namespace fs = std::filesystem;
    const fs::path logs = emurun::test::testdir("tr6") / "logs";
    fs::create_directories(logs);
    Report r;
    r.pipeline = "p";
    StepResult s = failed_step("s", false);
    s.log = logs / "missing.log";
    r.steps.push_back(s);
    const std::string xml = emurun::to_junit(r, {logs});
    CHECK_MESSAGE(xml.find("[log not included: no such file in the run&apos;s log dir " +
                           logs.lexically_normal().string() + "]") != std::string::npos,
                  xml);
}

TEST_CASE("trust 2: a report's log outside the log dir is not read") {
    namespace fs = std::filesystem;
    emurun::test::ScopedEnv secret("EMURUN_TRUST_SECRET", "s3cr3t-token");
    const fs::path base = emurun::test::testdir("trust2");
    const fs::path logs = base / "logs";
    fs::create_directories(logs / "sub");
    std::ofstream(base / "secret.txt") << "s3cr3t-token in a file beside the logs\n";
    std::ofstream(logs / "sub/ok.log") << "the step own output\n";
    fs::remove(logs / "lnk.log");
    fs::create_symlink(base / "secret.txt", logs / "lnk.log");
    fs::remove(logs / "proc.log");
    fs::create_symlink("/proc/self/environ", logs / "proc.log");
    Report r;
    r.pipeline = "p";
    for (const fs::path& log :
         {logs / "sub/ok.log", fs::path("/proc/self/environ"), base / "secret.txt",
          logs / "../secret.txt", logs / "lnk.log", logs / "proc.log"}) {
        StepResult s = failed_step("s" + std::to_string(r.steps.size()), false);
        s.log = log;
        r.steps.push_back(s);
    }
    const std::string xml = emurun::to_junit(r, {logs});
    CHECK(xml.find("s3cr3t-token") == std::string::npos);
    CHECK(xml.find("the step own output") != std::string::npos);
    auto count = [&](const std::string& needle) { // (XML escapes the apostrophe)
        std::size_t n = 0;
        for (auto at = xml.find(needle); at != std::string::npos; at = xml.find(needle, at + 1)) {
            ++n;
        }
        return n;
    };
    CHECK(count("[log not included: outside the run&apos;s log dir " + logs.string() + "]") == 3);
    CHECK(count("[log not included: it leads outside the run&apos;s log dir " + logs.string() +
                " (a symlink)]") == 2);
    // Without a log dir (a report read from a file) no log is read at all.
    const std::string unread = emurun::to_junit(r);
    CHECK(unread.find("s3cr3t-token") == std::string::npos);
    CHECK(unread.find("the step own output") == std::string::npos);
    CHECK(unread.find("log not included: this report was read from a file") != std::string::npos);
}

TEST_CASE("trust 2: the omitted-bytes note counts what was left out, never underflows") {
    // /proc files say size 0 and then give bytes: the old count was 0 minus what was read.
    const std::string whole = emurun::log_tail("/proc/self/environ", 100000, 1 << 20);
    CHECK_FALSE(whole.empty());
    CHECK(whole.find("earlier bytes omitted") == std::string::npos);
    std::string text;
    for (int i = 1; i <= 10; ++i) {
        text += "line " + std::to_string(i) + "\n"; // 7 bytes each, 8 for "line 10\n"
    }
    const auto log = emurun::test::write_file("trust2-count.log", text);
    // The last 12 bytes: "ne 9\nline 10\n" minus the partial first line, 5+6 skipped/cut.
    CHECK(emurun::log_tail(log, 100, 12) ==
          "[" + std::to_string(text.size() - 8) +
              " earlier bytes omitted; full log: " + log.string() + "]\nline 10\n");
    CHECK(emurun::log_tail(log, 2, 1 << 20) ==
          "[" + std::to_string(text.size() - 15) +
              " earlier bytes omitted; full log: " + log.string() + "]\nline 9\nline 10\n");
}

TEST_CASE("report_ci: a step without a log (not run: emurun was interrupted) names none") {
    StepResult s = failed_step("later", false);
    s.status = StepStatus::not_run;
    s.exit_code.reset();
    s.log.clear();
    s.message = "not started: emurun was interrupted";
    StepResult f = failed_step("quiet", false);
    f.log.clear();
    Report r;
    r.pipeline = "p";
    r.steps = {s, f};
    const std::string xml = emurun::to_junit(r);
    CHECK(xml.find("log:") == std::string::npos);
    for (const auto& line : emurun::annotations(r)) {
        CHECK(line.find("log:") == std::string::npos);
    }
    CHECK(count_prefix(emurun::annotations(r), "::error") == 2);
}

TEST_CASE("report_ci: compare_json and the coloured table") {
    Report before, after;
    StepResult a = failed_step("a", false);
    a.status = StepStatus::passed;
    a.wall = 10;
    StepResult b = a;
    b.wall = 15;
    before.steps = {a, failed_step("gone", false)};
    before.wall = 10;
    after.steps = {b, failed_step("new", false)};
    after.wall = 20;
    auto j = emurun::compare_json(before, after);
    REQUIRE(j["steps"].size() == 3);
    CHECK(j["steps"][0]["change"].get<double>() == doctest::Approx(0.5));
    CHECK(j["steps"][1]["before"].is_null());
    CHECK(j["steps"][2]["after_status"].is_null());
    CHECK(j["total"]["change"].get<double>() == doctest::Approx(1.0));
    std::string plain = emurun::to_table(after);
    std::string color = emurun::to_table(after, emurun::status_color);
    CHECK(plain.find('\033') == std::string::npos);
    CHECK(color.find("\033[32mpassed\033[0m") != std::string::npos);
    CHECK(color.find("\033[31mfailed\033[0m") != std::string::npos);
    // Same layout once the colour codes are taken out.
    std::string stripped = color;
    for (auto code : {"\033[32m", "\033[31m", "\033[0m"}) {
        for (auto p = stripped.find(code); p != std::string::npos; p = stripped.find(code)) {
            stripped.erase(p, std::string_view(code).size());
        }
    }
    CHECK(stripped == plain);
}

TEST_CASE("report_ci: GITHUB_STEP_SUMMARY stays within GitHub's 1 MiB") {
    Report r;
    r.pipeline = "p";
    for (int i = 0; i < 400; ++i) { // ~3 MB of Markdown
        StepResult s = failed_step("step" + std::to_string(i), false);
        s.flags.push_back({"budget", std::string(7000, 'm')});
        r.steps.push_back(s);
    }
    REQUIRE(emurun::to_markdown(r).size() > 2 * emurun::k_step_summary_max);
    const auto summary = emurun::test::testdir("report-ci-big") / "summary.md";
    std::ofstream(summary) << std::string(1000, 'e') << '\n'; // an earlier step's summary
    emurun::test::ScopedEnv set("GITHUB_STEP_SUMMARY", summary.string());
    REQUIRE(emurun::append_step_summary(r).has_value());
    CHECK(std::filesystem::file_size(summary) <= emurun::k_step_summary_max);
    std::ifstream in(summary);
    const std::string text{std::istreambuf_iterator<char>(in), {}};
    CHECK(text.ends_with("the whole summary is in the run's report "
                         "(emurun report show --format markdown REPORT)\n"));
    REQUIRE(emurun::append_step_summary(r).has_value()); // full: nothing more is added
    CHECK(std::filesystem::file_size(summary) <= emurun::k_step_summary_max);
}
