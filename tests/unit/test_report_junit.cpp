// A step's own test results: the JUnit reader (ctest, meson, pytest, doctest shapes, malformed
// files), per-test flags against a baseline, and the tests in every report format.
#include <emurun/report.hpp>
#include <emurun/runner.hpp>

#include <nlohmann/json.hpp>

#include <doctest/doctest.h>

#include "testdir.hpp"

#include <boost/property_tree/ptree.hpp>
#include <boost/property_tree/xml_parser.hpp>

#include <sstream>
#include <string>
#include <vector>

using namespace emurun;

namespace {

// As CMake 3.25's ctest --output-junit writes it (tabs, status attributes, system-out).
const char* const k_ctest = R"(<?xml version="1.0" encoding="UTF-8"?>
<testsuite name="Linux-c++"
	tests="3" failures="1" disabled="0" skipped="0" hostname="" time="1" timestamp="2026-01-01T00:00:00">
	<testcase name="fast" classname="fast" time="0.00123" status="run">
		<system-out>ok</system-out>
	</testcase>
	<testcase name="fails" classname="fails" time="0.25" status="fail">
		<failure message="Failed"/>
		<system-out>boom &lt;x&gt; &#x1F600;</system-out>
	</testcase>
	<testcase name="off" classname="off" time="0" status="notrun">
		<skipped message="Disabled"/>
		<system-out/>
	</testcase>
</testsuite>
)";

// meson test's meson-logs/testlog.junit.xml.
const char* const k_meson = R"(<?xml version='1.0' encoding='utf-8'?>
<testsuites tests="2" errors="0" failures="1" skipped="0" time="0.5">
  <testsuite name="demo" package="demo" tests="2" errors="0" failures="1" skipped="0" time="0.5">
    <testcase name="one" classname="demo" time="0.1"/>
    <testcase name="two" time="0.4"><failure/><system-out>out</system-out></testcase>
  </testsuite>
</testsuites>
)";

// pytest --junitxml: one line, failure text, error and skipped with messages.
const char* const k_pytest =
    R"(<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="pytest" errors="1" )"
    R"(failures="1" skipped="1" tests="4" time="0.05"><testcase classname="test_x" )"
    R"(name="test_ok" time="0.001" /><testcase classname="test_x" name="test_bad" time="0.002">)"
    R"(<failure message="assert 1 == 2">def test_bad():
&gt;       assert 1 == 2</failure></testcase><testcase classname="test_x" name="test_skip" )"
    R"(time="0.000"><skipped type="pytest.skip" message="no reason">x.py:3: no reason</skipped>)"
    R"(</testcase><testcase classname="test_x" name="test_err" time="0.001"><error )"
    R"(message="failed on setup with &quot;fixture 'nope' not found&quot;">...</error>)"
    R"(</testcase></testsuite></testsuites>)";

// doctest -r=junit: a failure whose text, not an attribute, says why; CDATA and a comment.
const char* const k_doctest = R"(<?xml version="1.0" encoding="UTF-8"?>
<!-- doctest -->
<testsuites>
  <testsuite name="unit" errors="0" failures="1" tests="2">
    <testcase classname="tests/a.cpp" name="a &amp; b" time="0.01" status="run"/>
    <testcase classname="tests/a.cpp" name="c" time="0.02" status="run">
      <failure type="CHECK"><![CDATA[
tests/a.cpp(5):
CHECK( 1 < 2 ) is NOT correct!
]]></failure>
    </testcase>
  </testsuite>
</testsuites>
)";

std::vector<TestResult> parsed(const char* xml) {
    auto tests = parse_junit(xml, "t.xml");
    REQUIRE_MESSAGE(tests.has_value(), (tests ? "" : tests.error().message()));
    return *tests;
}

std::string error_of(std::string_view xml) {
    auto tests = parse_junit(xml, "t.xml");
    REQUIRE_FALSE(tests.has_value());
    return tests.error().message();
}

TestResult a_test(std::string name, double time, TestStatus status = TestStatus::passed) {
    TestResult t;
    t.name = std::move(name);
    t.classname = "suite";
    t.time = time;
    t.status = status;
    return t;
}

StepResult step_with(std::vector<TestResult> tests) {
    StepResult s;
    s.name = "unit";
    s.kind = StepKind::test;
    s.status = StepStatus::failed;
    s.exit_code = 8;
    s.wall = 3;
    s.tests = std::move(tests);
    return s;
}

Report report_of(StepResult s) {
    Report r;
    r.pipeline = "demo";
    r.started = "2026-01-01T00:00:00Z";
    r.host_arch = "x86_64";
    r.wall = s.wall;
    r.steps.push_back(std::move(s));
    return r;
}

// The emulated run of the integration test, in small: slow got 20x slower, flaky_emu failed
// only here, fixed passed only here, tiny got 100x slower from a baseline too short to judge.
Report flagged_run() {
    Report base =
        report_of(step_with({a_test("slow", 0.5), a_test("flaky_emu", 0.1),
                             a_test("fixed", 0.1, TestStatus::failed), a_test("tiny", 0.001)}));
    StepResult s = step_with({a_test("slow", 10), a_test("flaky_emu", 0.1, TestStatus::failed),
                              a_test("fixed", 0.1), a_test("tiny", 0.1)});
    s.tests[1].message = "expected 1, got 2";
    flag_step(s, {}, &base, nullptr);
    return report_of(std::move(s));
}

std::vector<std::string> rules(const TestResult& t) {
    std::vector<std::string> out;
    for (const auto& f : t.flags) {
        out.push_back(f.rule);
    }
    return out;
}

} // namespace

TEST_CASE("junit: ctest's file: names, times, statuses, messages") {
    auto t = parsed(k_ctest);
    REQUIRE(t.size() == 3);
    CHECK(t[0].name == "fast");
    CHECK(t[0].classname == "fast");
    CHECK(t[0].time == doctest::Approx(0.00123));
    CHECK(t[0].status == TestStatus::passed);
    CHECK(t[1].status == TestStatus::failed);
    CHECK(t[1].message == "Failed");
    CHECK(t[2].status == TestStatus::skipped);
    CHECK(t[2].message == "Disabled");
}

TEST_CASE("junit: meson's file: a test without classname takes its suite's name") {
    auto t = parsed(k_meson);
    REQUIRE(t.size() == 2);
    CHECK(t[1].classname == "demo");
    CHECK(t[1].status == TestStatus::failed);
    CHECK(t[1].message == "out"); // an empty <failure/>: the first lines of <system-out>
    CHECK(t[1].time == doctest::Approx(0.4));
}

TEST_CASE("junit: pytest's and doctest's files: error, skipped, entities, CDATA text") {
    auto p = parsed(k_pytest);
    REQUIRE(p.size() == 4);
    CHECK(p[1].message == "assert 1 == 2");
    CHECK(p[2].status == TestStatus::skipped);
    CHECK(p[3].status == TestStatus::error);
    CHECK(p[3].message == "failed on setup with \"fixture 'nope' not found\"");
    auto d = parsed(k_doctest);
    REQUIRE(d.size() == 2);
    CHECK(d[0].name == "a & b");
    CHECK(d[1].status == TestStatus::failed);
    CHECK(d[1].message == "tests/a.cpp(5):"); // the first line with text
}

TEST_CASE("junit: a long message is cut at a character boundary") {
    std::string xml = "<testsuite><testcase name=\"x\"><failure message=\"" +
                      std::string(k_test_message_max - 1, 'a') + "\xc3\xa9tc\"/></testcase>" +
                      "</testsuite>";
    auto t = parsed(xml.c_str());
    CHECK(t[0].message == std::string(k_test_message_max - 1, 'a') + "…");
}

TEST_CASE("junit: names and classnames are cut too, with an ellipsis") {
    // 400 KB names made a 4 MB $GITHUB_STEP_SUMMARY, over GitHub's 1 MiB.
    const std::string huge(400 * 1024, 'n');
    const std::string xml = "<testsuite name=\"" + huge + "\"><testcase name=\"" + huge +
                            "\"/><testcase name=\"b\" classname=\"" + huge + "\"/></testsuite>";
    auto t = parsed(xml.c_str());
    REQUIRE(t.size() == 2);
    CHECK(t[0].name == std::string(k_test_name_max, 'n') + "…");
    CHECK(t[0].classname == std::string(k_test_name_max, 'n') + "…"); // the suite's name
    CHECK(t[1].classname == std::string(k_test_name_max, 'n') + "…");
}

TEST_CASE("junit: ctest's empty failure message: the first lines of system-out instead") {
    // ctest writes <failure message=""/> and the test's output in <system-out>.
    auto t = parsed(R"(<testsuite><testcase name="x" status="fail"><failure message=""/>)"
                    "<system-out>\n  first line\n\nsecond\nthird\nfourth</system-out>"
                    R"(</testcase><testcase name="y"><system-out>passed: kept quiet</system-out>)"
                    "</testcase></testsuite>");
    REQUIRE(t.size() == 2);
    CHECK(t[0].status == TestStatus::failed);
    CHECK(t[0].message == "first line | second | third");
    CHECK(t[1].message.empty());
}

TEST_CASE("junit: malformed files are refused with the line and the problem") {
    CHECK(error_of("<testsuite><testcase name=\"a\">\n\n")
              .find("t.xml: line 3: <testcase> is not closed") != std::string::npos);
    CHECK(error_of("<a></b>").find("</b> does not close <a>") != std::string::npos);
    CHECK(error_of("").find("no XML element") != std::string::npos);
    CHECK(error_of("<a>&bogus;</a>").find("undefined entity &bogus;") != std::string::npos);
    CHECK(error_of("<a>&#1;</a>").find("not a character XML allows") != std::string::npos);
    CHECK(error_of("<a>x & y</a>").find("'&'") != std::string::npos);
    CHECK(error_of("<a x=\"1\" x=\"2\"/>").find("twice") != std::string::npos);
    CHECK(error_of("<a/><b/>").find("second root") != std::string::npos);
    CHECK(error_of("<testcase time=\"1\"/>").find("without a name") != std::string::npos);
    CHECK(error_of("<testcase name=\"a\" time=\"soon\"/>").find("not a number") !=
          std::string::npos);
    CHECK(error_of("<a>\xff</a>").find("not UTF-8") != std::string::npos);
    CHECK(error_of(std::string_view("<a>\0</a>", 8)).find("NUL") != std::string::npos);
    // A DTD's entities could expand a few bytes into gigabytes: not read at all.
    CHECK(error_of("<!DOCTYPE a [<!ENTITY x \"xx\">]><a>&x;</a>").find("DTD") != std::string::npos);
    std::string deep;
    for (int i = 0; i < 100; ++i) {
        deep += "<a>";
    }
    CHECK(error_of(deep).find("nested deeper") != std::string::npos);
}

TEST_CASE("junit: a file over the size bound is refused, a large one is read") {
    std::string big = "<testsuite>";
    for (int i = 0; i < 30000; ++i) {
        big += "<testcase name=\"t" + std::to_string(i) + "\" time=\"0.001\"/>";
    }
    big += "</testsuite>";
    auto file = test::write_file("big.xml", big);
    auto tests = read_junit(file);
    REQUIRE(tests.has_value());
    CHECK(tests->size() == 30000);
    std::filesystem::resize_file(file, k_junit_max_bytes + 1);
    auto huge = read_junit(file);
    REQUIRE_FALSE(huge.has_value());
    CHECK(huge.error().message().find("big.xml") != std::string::npos);
}

TEST_CASE("junit: tests flagged against the baseline's same test") {
    Report r = flagged_run();
    const auto& t = r.steps[0].tests;
    CHECK(rules(t[0]) == std::vector<std::string>{"slow"});
    CHECK(t[0].baseline_time == 0.5);
    CHECK(t[0].baseline_factor().value() == doctest::Approx(20));
    CHECK(t[0].flags[0].message.find("20.0x") != std::string::npos);
    CHECK(rules(t[1]) == std::vector<std::string>{"emulation_only_failure"});
    CHECK(rules(t[2]) == std::vector<std::string>{"native_only_failure"});
    CHECK(t[3].flags.empty()); // 100x, but over a baseline of 1 ms
    CHECK(r.flagged());
    r.steps[0].status = StepStatus::passed; // only its tests are flagged: --fail-on-flag sees it
    r.steps[0].exit_code = 0;
    CHECK(Runner::exit_code(r, true) == 3);
    CHECK(Runner::exit_code(r, false) == 0);
}

TEST_CASE("junit: a test matches only the same step, classname and name") {
    Report base = report_of(step_with({a_test("slow", 0.5)}));
    base.steps[0].tests[0].classname = "other";
    StepResult s = step_with({a_test("slow", 10)});
    flag_step(s, {}, &base, nullptr);
    CHECK_FALSE(s.tests[0].baseline_time.has_value());
    CHECK(s.tests[0].flags.empty());
}

TEST_CASE("junit: tests round-trip through the report's JSON; bad ones are refused") {
    Report r = flagged_run();
    auto back = Report::parse(r.to_json().dump(), "r.json");
    REQUIRE(back.has_value());
    CHECK(*back == r);
    auto j = r.to_json();
    j["steps"][0]["tests"][1]["status"] = "exploded";
    auto bad = Report::from_json(j, "r.json");
    REQUIRE_FALSE(bad.has_value());
    CHECK(bad.error().message().find("r.json: steps[0].tests[1].status") != std::string::npos);
    j = r.to_json();
    j["steps"][0]["tests"][0]["time"] = -1;
    CHECK_FALSE(Report::from_json(j, "r.json").has_value());
    j = r.to_json();
    j["steps"][0]["tests"][0]["name"] = "";
    CHECK_FALSE(Report::from_json(j, "r.json").has_value());
}

TEST_CASE("junit: the table counts a step's tests and lists the failing, flagged and slowest") {
    std::string table = to_table(flagged_run());
    CHECK(table.find("tests: unit: 3 passed, 1 failed\n") != std::string::npos);
    CHECK(table.find("  failed  suite.flaky_emu  100ms  1.0x baseline 100ms  expected 1, got 2\n"
                     "    flag emulation_only_failure: failed here, passed in the baseline\n") !=
          std::string::npos);
    CHECK(table.find("  passed  suite.slow  10.0s  20.0x baseline 500ms\n    flag slow: ") !=
          std::string::npos);
    CHECK(table.find("flag native_only_failure") != std::string::npos);
}

TEST_CASE("junit: the table lists at most 10 failing tests of a step, and says how many more") {
    std::vector<TestResult> many;
    for (int i = 0; i < 25; ++i) {
        many.push_back(a_test("t" + std::to_string(i), 1, TestStatus::failed));
    }
    std::string table = to_table(report_of(step_with(many)));
    CHECK(table.find("tests: unit: 25 failed") != std::string::npos);
    CHECK(table.find("suite.t9 ") != std::string::npos);
    CHECK(table.find("suite.t10 ") == std::string::npos);
    CHECK(table.find("15 more failing or flagged tests") != std::string::npos);
}

TEST_CASE("junit: Markdown has a section per step with tests, factors and flags") {
    std::string md = to_markdown(flagged_run());
    CHECK(md.find("#### Tests of unit: 3 passed, 1 failed in 10.3s") != std::string::npos);
    CHECK(md.find("| suite.slow | passed | 10.0s | 20.0x | slow |") != std::string::npos);
    CHECK(md.find("| suite.flaky_emu | failed | 100ms | 1.0x | emulation_only_failure |") !=
          std::string::npos);
    CHECK(md.find("- suite.flaky_emu: expected 1, got 2") != std::string::npos);
}

TEST_CASE("junit: JUnit output holds each test as a testcase of a testsuite for its step") {
    std::string xml = to_junit(flagged_run());
    std::istringstream in(xml);
    boost::property_tree::ptree tree;
    REQUIRE_NOTHROW(boost::property_tree::read_xml(in, tree));
    const auto& suites = tree.get_child("testsuites");
    CHECK(suites.get<int>("<xmlattr>.tests") == 5); // the step and its 4 tests
    CHECK(suites.get<int>("<xmlattr>.failures") == 2);
    int cases = 0;
    for (const auto& [name, suite] : suites) {
        if (name != "testsuite" || suite.get<std::string>("<xmlattr>.name") != "demo/unit") {
            continue;
        }
        for (const auto& [tag, tc] : suite) {
            if (tag != "testcase") {
                continue;
            }
            ++cases;
            if (tc.get<std::string>("<xmlattr>.name") == "flaky_emu") {
                CHECK(tc.get<std::string>("failure.<xmlattr>.message") == "expected 1, got 2");
                CHECK(tc.get<std::string>("failure").find("flag emulation_only_failure") !=
                      std::string::npos);
            }
            if (tc.get<std::string>("<xmlattr>.name") == "slow") {
                CHECK(tc.get<double>("<xmlattr>.time") == doctest::Approx(10));
                CHECK(tc.get<std::string>("properties.property.<xmlattr>.name") ==
                      "emurun.flag.slow");
            }
        }
    }
    CHECK(cases == 4);
}

TEST_CASE("junit: report compare lists each test's times and the tests whose status changed") {
    Report after = flagged_run();
    Report before = report_of(step_with({a_test("slow", 0.5), a_test("flaky_emu", 0.1)}));
    auto j = compare_json(before, after);
    REQUIRE(j["tests"].size() == 4);
    CHECK(j["tests"][0]["name"] == "slow");
    CHECK(j["tests"][0]["change"].get<double>() == doctest::Approx(19));
    CHECK(j["tests"][2]["before"].is_null());
    std::string text = compare_table(before, after);
    CHECK(text.find("test unit: suite.flaky_emu: passed -> failed (100ms -> 100ms)") !=
          std::string::npos);
}
