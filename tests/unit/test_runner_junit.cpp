// The runner reads the JUnit files a step names after it ends: test cases into the report, and
// a note for a pattern that matched nothing, a leftover file or a broken one; such a pattern
// flags the step junit_missing, or fails it with "junit_missing": "fail".
#include "fake_command_runner.hpp"
#include "testdir.hpp"

#include <emurun/pipeline.hpp>
#include <emurun/report.hpp>
#include <emurun/runner.hpp>

#include <doctest/doctest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

using namespace emurun;
using test::FakeCommandRunner;
using test::pipeline_of;
using test::runner_options;

namespace {

const char* const k_two_tests = R"(<testsuite name="s">
  <testcase name="a" classname="s" time="0.5"/>
  <testcase name="b" classname="s" time="1.5"><failure message="no"/></testcase>
</testsuite>)";

// Runs one step "unit" (cwd: `dir`, relative to testdir) whose "junit" is `junit_json`, with
// `more` keys of the step (", \"junit_missing\": \"fail\"").
Report run_unit(const std::string& dir, const std::string& junit_json,
                const std::string& more = "") {
    FakeCommandRunner fake;
    auto p = pipeline_of(R"([{"name": "unit", "argv": ["unit"], "cwd": ")" + dir +
                         R"(", "junit": )" + junit_json + more + "}]");
    auto r = Runner(p, runner_options("junit-" + dir)).run(fake);
    REQUIRE_MESSAGE(r.has_value(), (r ? "" : r.error().message()));
    return *r;
}

std::string log_of(const Report& r) {
    std::ifstream in(r.steps[0].log);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
}

} // namespace

TEST_CASE("runner: a step's JUnit files, by glob, become its tests") {
    auto dir = test::testdir("jglob");
    test::write_file("jglob/Testing/one.xml", k_two_tests);
    test::write_file("jglob/Testing/two.xml", R"(<testcase name="c" time="0.25"/>)");
    Report r = run_unit("jglob", R"(["Testing/*.xml"])");
    REQUIRE(r.steps[0].tests.size() == 3);
    CHECK(r.steps[0].tests[1].name == "b");
    CHECK(r.steps[0].tests[1].status == TestStatus::failed);
    CHECK(r.steps[0].tests[2].name == "c");         // two.xml after one.xml
    CHECK(r.steps[0].status == StepStatus::passed); // the step's own exit decides its status
    CHECK(r.steps[0].message.empty());
    CHECK(r.steps[0].flags.empty());
}

TEST_CASE("runner: no matching file, a leftover file and a broken file are notes and a flag") {
    test::testdir("jnotes");
    auto old = test::write_file("jnotes/old.xml", k_two_tests);
    std::filesystem::last_write_time(old, std::filesystem::file_time_type::clock::now() -
                                              std::chrono::hours(1));
    test::write_file("jnotes/broken.xml", "<testsuite><testcase name=\"a\">");
    Report r = run_unit("jnotes", R"(["missing/*.xml", "old.xml", "broken.xml"])");
    const auto& s = r.steps[0];
    CHECK(s.status == StepStatus::passed);
    CHECK(s.tests.empty());
    CHECK(s.message.find("junit: no file matched missing/*.xml") != std::string::npos);
    CHECK(s.message.find("old.xml is older than the step") != std::string::npos);
    CHECK(s.message.find("broken.xml: line 1: <testcase> is not closed") != std::string::npos);
    std::string log = log_of(r);
    CHECK(log.find("emurun: junit: no file matched missing/*.xml") != std::string::npos);
    REQUIRE(s.flags.size() == 1);
    CHECK(s.flags[0].rule == "junit_missing");
    CHECK(s.flags[0].message ==
          "no test results from missing/*.xml, old.xml, broken.xml (the junit notes say why)");
    CHECK(r.flagged());
    CHECK(Runner::exit_code(r, false) == 0);
    CHECK(Runner::exit_code(r, true) == 3);
}

TEST_CASE("runner: junit_missing fail fails a step that passed, ignore only notes") {
    test::testdir("jmode");
    test::write_file("jmode/t.xml", k_two_tests);
    Report failing = run_unit("jmode", R"(["t.xml", "none.xml"])", R"(, "junit_missing": "fail")");
    const auto& s = failing.steps[0];
    CHECK(s.status == StepStatus::failed);
    CHECK(s.exit_code == 0);
    CHECK(s.tests.size() == 2); // t.xml's tests are kept
    CHECK(s.message.find("exited 0, but gave no test results from none.xml "
                         "(\"junit_missing\": \"fail\")") != std::string::npos);
    REQUIRE(s.flags.size() == 1);
    CHECK(s.flags[0].rule == "junit_missing");
    CHECK(Runner::exit_code(failing, false) == 1);

    Report whole = run_unit("jmode", R"(["t.xml"])", R"(, "junit_missing": "fail")");
    CHECK(whole.steps[0].status == StepStatus::passed);
    CHECK(whole.steps[0].flags.empty());

    Report ignored = run_unit("jmode", R"(["none.xml"])", R"(, "junit_missing": "ignore")");
    CHECK(ignored.steps[0].status == StepStatus::passed);
    CHECK(ignored.steps[0].flags.empty());
    CHECK(ignored.steps[0].message.find("no file matched none.xml") != std::string::npos);
}

TEST_CASE("runner: junit_missing in defaults, and a bad value named") {
    test::testdir("jdefaults");
    auto p = Pipeline::parse(R"({"name": "d", "defaults": {"junit_missing": "fail"},
        "steps": [{"name": "a", "argv": ["a"], "junit": ["x.xml"]},
                  {"name": "b", "argv": ["b"], "junit": ["x.xml"], "junit_missing": "flag"}]})",
                             "d.json", test::testdir("jdefaults"));
    REQUIRE_MESSAGE(p.has_value(), (p ? "" : p.error().message()));
    CHECK(p->steps[0].junit_missing == JunitMissing::fail);
    CHECK(p->steps[1].junit_missing == JunitMissing::flag);
    auto bad = Pipeline::parse(R"({"name": "d", "steps": [{"name": "a", "argv": ["a"],
        "junit_missing": "error"}]})",
                               "d.json", test::testdir("jdefaults"));
    REQUIRE(!bad.has_value());
    CHECK(bad.error().message().starts_with(
        "d.json: steps[0].junit_missing: expected flag, fail or ignore, got \"error\""));
}

TEST_CASE("runner: a JUnit file dated in the future was not written by the step") {
    test::testdir("jfuture");
    auto later = test::write_file("jfuture/later.xml", k_two_tests);
    std::filesystem::last_write_time(later, std::filesystem::file_time_type::clock::now() +
                                                std::chrono::hours(24));
    test::write_file("jfuture/now.xml", k_two_tests);
    Report r = run_unit("jfuture", R"(["later.xml", "now.xml"])");
    const auto& s = r.steps[0];
    CHECK(s.tests.size() == 2); // now.xml's only
    CHECK(s.message.find("later.xml is dated in the future, so not written by this step") !=
          std::string::npos);
}

TEST_CASE("runner: a step's message lists 10 JUnit notes and counts the rest") {
    test::testdir("jmany");
    std::string patterns = "[";
    for (int i = 0; i < 25; ++i) {
        patterns +=
            (i == 0 ? "\"" : ", \"") + std::string("missing") + std::to_string(i) + ".xml\"";
    }
    Report r = run_unit("jmany", patterns + "]");
    const auto& s = r.steps[0];
    CHECK(s.message.find("no file matched missing9.xml") != std::string::npos);
    CHECK(s.message.find("no file matched missing10.xml") == std::string::npos);
    CHECK(s.message.ends_with("; … 15 more junit notes (in the step's log)"));
    CHECK(log_of(r).find("no file matched missing24.xml") != std::string::npos);
}

TEST_CASE("runner: a cwd with glob characters in its name is matched as it is") {
    test::testdir("j[1]*");
    test::write_file("j[1]*/t.xml", k_two_tests);
    Report r = run_unit("j[1]*", R"(["t.xml"])");
    CHECK(r.steps[0].tests.size() == 2);
}
