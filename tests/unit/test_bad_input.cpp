// Regression tests for hostile input (issue 14): every case here crashed, lost data or was
// silently accepted before. docs/reference/bad-input.md names these row by row.
#include <emurun/arch.hpp>
#include <emurun/binfmt.hpp>
#include <emurun/calibrate.hpp>
#include <emurun/json.hpp>
#include <emurun/pipeline.hpp>
#include <emurun/report.hpp>
#include <emurun/runner.hpp>
#include <emurun/sandbox.hpp>

#include "runner/runner_internal.hpp"
#include "skip.hpp"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include "testdir.hpp"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

using emurun::Pipeline;
using emurun::Report;
using emurun::StepResult;
using emurun::StepStatus;

namespace {

std::string pipeline_error(const std::string& text) {
    auto p = Pipeline::parse(text, "pipeline.json", "/base");
    return p ? std::string() : p.error().message();
}

std::string one_step(const std::string& step_extra, const std::string& name = "\"a\"") {
    return R"({"name": "p", "steps": [{"name": )" + name + R"(, "argv": ["true"])" + step_extra +
           "}]}";
}

// A valid one-step report as JSON, for mutating.
nlohmann::json report_json() {
    return nlohmann::json::parse(R"({"schema_version": 1, "pipeline": "p",
        "started": "2026-01-01T00:00:00Z", "wall": 1.5, "host_arch": "x86_64",
        "shard": {"index": 1, "count": 1}, "job_limit": null, "interrupted_by": null,
        "flags": [], "steps": [{"name": "a", "kind": "test", "arch": "", "emulation": "native",
        "status": "passed", "wall": 1.0, "user": 0.5, "sys": 0.1, "max_rss_kib": 100,
        "log": "logs/a.log", "message": "", "flags": [], "exit_code": 0, "signal": null,
        "budget": null, "baseline_wall": null}]})");
}

std::string report_error(const std::string& text) {
    auto r = Report::parse(text, "r.json");
    return r ? std::string() : r.error().message();
}

Report shard(int index, int count, StepStatus status = StepStatus::passed) {
    Report r;
    r.pipeline = "p";
    r.shard_index = index;
    r.shard_count = count;
    StepResult s;
    s.name = "t" + std::to_string(index);
    s.status = status;
    r.steps.push_back(s);
    return r;
}

std::string merge_error(std::vector<Report> reports) {
    auto m = emurun::merge_reports(reports);
    return m ? std::string() : m.error().message();
}

bool contains(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

} // namespace

TEST_CASE("bad input: a number too large for a double is an error naming the place") {
    // Item 1: nlohmann threw out_of_range (exit 134) from every reader.
    std::string e = pipeline_error(one_step(R"(, "timeout": 1e400)"));
    INFO(e);
    CHECK(contains(e, "pipeline.json:1:"));
    CHECK(contains(e, "1e400"));
    CHECK(contains(e, "too large"));
    auto j = report_json().dump();
    j.replace(j.find("\"wall\":1.5"), 10, "\"wall\":1e400");
    std::string r = report_error(j);
    INFO(r);
    CHECK(contains(r, "r.json:1:"));
    CHECK(contains(r, "too large"));
}

TEST_CASE("bad input: JSON writers never throw on bytes that are not UTF-8") {
    // Item 2: dump() threw type_error 316 (exit 134) after a whole run.
    nlohmann::json j{{"log", std::string("logs\xff/a.log")}, {"ok", "caf\xc3\xa9"}};
    std::string text = emurun::json_text(j);
    CHECK(contains(text, "logs\xef\xbf\xbd/a.log")); // U+FFFD
    CHECK(contains(text, "caf\xc3\xa9"));
    CHECK(nlohmann::json::parse(text)["log"] == "logs\xef\xbf\xbd/a.log");
    CHECK(emurun::is_utf8("caf\xc3\xa9"));
    CHECK_FALSE(emurun::is_utf8("logs\xff"));
    CHECK_FALSE(emurun::is_utf8("\xc0\xaf")); // overlong '/'
    StepResult s;
    s.name = "a";
    s.log = "logs\xff/a.log";
    s.message = "cwd /x\xfe missing";
    Report r;
    r.steps.push_back(s);
    auto file = emurun::test::testdir("utf8") / "r.json";
    REQUIRE(r.save(file).has_value());
    auto back = Report::load(file);
    REQUIRE(back.has_value());
    CHECK(back->steps.at(0).message == "cwd /x\xef\xbf\xbd missing");
}

// Found by fuzz_report (10-minute run): "signal": 0 loaded from text (a non-negative number
// parses as unsigned, whose lower bound was not checked) but the same report built in memory
// was refused, so a loaded report did not round-trip.
TEST_CASE("bad input: integers below their range are refused when read from JSON text") {
    auto report = [](auto change) {
        auto j = report_json();
        change(j);
        return emurun::Report::parse(j.dump(), "r.json"); // from text: 0 parses as unsigned
    };
    const auto failed_with = [](int signal) {
        return [signal](nlohmann::json& j) {
            j["steps"][0].update(
                {{"status", "failed"}, {"exit_code", nullptr}, {"signal", signal}});
        };
    };
    auto sig = report(failed_with(0));
    REQUIRE_FALSE(sig);
    CHECK(sig.error().what == "r.json: steps[0].signal");
    CHECK(sig.error().why == "expected an integer from 1 to 64, got 0");
    CHECK(report(failed_with(9)));
    auto shard = report([](nlohmann::json& j) { j["shard"] = {{"index", 0}, {"count", 1}}; });
    REQUIRE_FALSE(shard);
    CHECK(shard.error().what.starts_with("r.json: shard"));
}

TEST_CASE("bad input: a report lacking a key its schema requires, or with an unknown flag rule") {
    auto with = [](auto change) {
        auto j = report_json();
        change(j);
        return report_error(j.dump());
    };
    CHECK(with([](auto& j) { j.erase("host_arch"); }) ==
          "r.json: host_arch: missing (use the report as emurun wrote it)");
    CHECK(with([](auto& j) { j["steps"][0].erase("budget"); }) ==
          "r.json: steps[0].budget: missing (use the report as emurun wrote it)");
    CHECK(with([](auto& j) { j["steps"][0]["budget"] = nullptr; }).empty()); // null is allowed
    CHECK(
        with([](auto& j) {
            j["steps"][0]["flags"] = {{{"rule", "fast"}, {"message", "m"}}};
        })
            .starts_with("r.json: steps[0].flags[0].rule: unknown rule \"fast\" (expected budget, "
                         "baseline, regression,"));
    CHECK(with([](auto& j) { j["flags"] = {{{"rule", "slow"}, {"message", "m"}}}; }).empty());
}

TEST_CASE("bad input: duplicate JSON keys are refused, naming the key") {
    std::string e = pipeline_error(one_step(R"(, "timeout": "5s", "timeout": "1h")"));
    CHECK(e == "pipeline.json: steps[0].timeout: duplicate key (each key may appear once)");
    std::string r = report_error(R"({"schema_version": 1, "schema_version": 1})");
    CHECK(r == "r.json: schema_version: duplicate key (each key may appear once)");
}

TEST_CASE("bad input: JSON nested 100,000 deep is refused, not a stack overflow") {
    // Found by the adversarial pass: copying such a report's "steps" recursed once per level.
    std::string deep = R"({"schema_version": 1, "pipeline": "p", "steps": )" +
                       std::string(100000, '[') + std::string(100000, ']') + "}";
    CHECK(report_error(deep) ==
          "r.json: invalid JSON: nested deeper than 64 levels (emurun's documents nest a few "
          "levels; this is not one of them)");
    CHECK(contains(pipeline_error(std::string(100000, '[') + std::string(100000, ']')),
                   "nested deeper than 64 levels"));
}

TEST_CASE("bad input: NUL characters in pipeline strings are refused") {
    // Item 12: an argv element with \u0000 was cut at the NUL; an env key with one accepted.
    CHECK(pipeline_error(
              R"({"name": "p", "steps": [{"name": "a", "argv": ["echo", "a\u0000b"]}]})") ==
          "pipeline.json: steps[0].argv[1]: contains a NUL character (\\u0000), which no "
          "command line or file name can hold");
    CHECK(contains(pipeline_error(one_step(R"(, "env": {"A\u0000B": "x"})")),
                   "steps[0].env: invalid variable name"));
    CHECK(contains(pipeline_error(one_step(R"(, "env": {"A": "x\u0000"})")),
                   "steps[0].env.A: contains a NUL character"));
}

TEST_CASE("bad input: a raw NUL byte in a JSON file is refused, naming line and column") {
    // nlohmann took '\0' for the end of the input: `{...}\0garbage` ran as `{...}`.
    using namespace std::string_literals;
    const std::string doc = R"({"name": "p", "steps": [{"name": "a", "argv": ["true"]}]})";
    CHECK(pipeline_error(doc + "\0garbage"s) ==
          "pipeline.json:1:" + std::to_string(doc.size() + 1) +
              ": invalid JSON: a NUL byte (a JSON document is text: write a NUL inside a string "
              "as \\u0000)");
    CHECK(contains(pipeline_error("{\"name\": \"p\",\n \"steps\"\0: []}"s), "pipeline.json:2:9: "));
    CHECK(contains(report_error(R"({"schema_version": 1, "pipeline": "p", "steps": []})" + "\0x"s),
                   "r.json:1:52: invalid JSON: a NUL byte"));
}

TEST_CASE("bad input: report and pipeline files over their size limit are refused unread") {
    // A 4 GiB sparse report took 4.2 GB of memory and 21 s to say "unexpected end of input".
    const auto dir = emurun::test::testdir("huge-json");
    const auto file = dir / "x.json";
    std::ofstream{file}.close();
    std::filesystem::resize_file(file, emurun::k_report_max_bytes + 1); // sparse: no disk used
    auto r = Report::load(file);
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().message() == "read " + file.string() +
                                     ": file is 268435457 bytes, more than "
                                     "the limit of 268435456");
    std::filesystem::resize_file(file, emurun::k_pipeline_max_bytes + 1);
    auto p = Pipeline::load(file);
    REQUIRE_FALSE(p.has_value());
    CHECK(p.error().message() == "read " + file.string() +
                                     ": file is 67108865 bytes, more than "
                                     "the limit of 67108864");
}

TEST_CASE("bad input: durations that repeat a unit, overflow or are out of order") {
    // Item 12: "1h1h" was 2h; 1e26 seconds said "must be longer than 0".
    for (const char* bad : {"1h1h", "30m1h", "5s5s", "1e3s", "nan", "inf"}) {
        INFO(bad);
        CHECK_FALSE(emurun::parse_duration(bad).has_value());
    }
    CHECK(emurun::parse_duration("1h1h").error().hint ==
          "units: ms, s, m, h, d, largest first, each at most once, as in \"1h30m\"");
    CHECK(emurun::parse_duration("1d2h3m4s5ms").has_value());
    std::string e = pipeline_error(one_step(R"(, "timeout": 1e26)"));
    CHECK(e == "pipeline.json: steps[0].timeout: too long: 1e+26 seconds (at most 1e12 seconds)");
    CHECK(contains(pipeline_error(one_step(R"(, "timeout": -1)")), "must be longer than 0"));
}

TEST_CASE("bad input: step names with control characters, bidi overrides or too long") {
    // Item 12: newlines and U+202E reached logs and tables; 300 characters failed at run time.
    CHECK(pipeline_error(one_step("", R"("a\nb")")) ==
          "pipeline.json: steps[0].name: contains a control character (U+000A) (step names "
          "appear in logs, tables and file names: use letters, digits, spaces and punctuation)");
    CHECK(contains(pipeline_error(one_step("", "\"a\xe2\x80\xae"
                                               "b\"")),
                   "(U+202E)"));
    CHECK(contains(pipeline_error(one_step("", "\"" + std::string(201, 'x') + "\"")),
                   "steps[0].name: too long: 201 bytes (at most 200)"));
    CHECK(pipeline_error(one_step("", "\"" + std::string(200, 'x') + "\"")).empty());
    CHECK(pipeline_error(one_step("", R"("a/b c:d")")).empty());
}

TEST_CASE("bad input: an empty pipeline name, a need listed twice") {
    // Found by the adversarial pass: both were accepted.
    CHECK(pipeline_error(R"({"name": "", "steps": [{"name": "a", "argv": ["true"]}]})") ==
          "pipeline.json: name: must not be empty");
    CHECK(pipeline_error(R"({"name": "p", "steps": [{"name": "a", "argv": ["true"]},
        {"name": "b", "argv": ["true"], "needs": ["a", "a"]}]})") ==
          "pipeline.json: steps[1].needs[1]: \"a\" is listed twice (list each need once)");
}

TEST_CASE("bad input: report merge refuses missing, duplicate and mismatched shards") {
    // Item 3: shard 2 of 3 missing merged into {index 1, count 1}, exit 0.
    CHECK(merge_error({shard(1, 3), shard(3, 3)}) ==
          "merge reports: shard 2 of 3 is missing (merge every shard of the run: 1/3 to 3/3)");
    CHECK(merge_error({shard(1, 2), shard(1, 2)}) ==
          "merge reports: shard 1 of 2 is given twice (pass each shard's report once)");
    CHECK(merge_error({shard(1, 2), shard(2, 3)}) ==
          "merge reports: shards of different runs: 1/2 and 2/3 (merge only the shards of one "
          "run)");
    CHECK(emurun::merge_reports(std::vector<Report>{shard(2, 2), shard(1, 2)}).has_value());
    CHECK(emurun::merge_reports(std::vector<Report>{shard(1, 1)}).has_value());
}

TEST_CASE("bad input: reports with impossible values are refused") {
    // Item 12: exit_code and signal together, negative wall, started "yesterday" were accepted.
    auto with = [](auto change) {
        auto j = report_json();
        change(j);
        return report_error(j.dump());
    };
    CHECK(with([](auto&) {}).empty());
    CHECK(with([](auto& j) { j["steps"][0]["signal"] = 9; }) ==
          "r.json: steps[0]: has both exit_code and signal (a process either exits or is killed)");
    CHECK(with([](auto& j) { j["steps"][0]["wall"] = -1; }) ==
          "r.json: steps[0].wall: expected a number >= 0, got -1");
    CHECK(with([](auto& j) { j["wall"] = -0.5; }) ==
          "r.json: wall: expected a number >= 0, got -0.5");
    CHECK(with([](auto& j) { j["started"] = "yesterday"; }) ==
          "r.json: started: expected a UTC time like \"2026-01-31T12:00:00Z\", got \"yesterday\"");
    CHECK(with([](auto& j) { j["steps"][0]["exit_code"] = 256; }) ==
          "r.json: steps[0].exit_code: expected an integer from 0 to 255, got 256");
    CHECK(with([](auto& j) { j["steps"][0]["exit_code"] = 4294967296LL; }) ==
          "r.json: steps[0].exit_code: expected an integer from 0 to 255, got 4294967296");
    CHECK(with([](auto& j) {
              j["steps"][0]["max_rss_kib"] = 1e300;
          }).starts_with("r.json: steps[0].max_rss_kib: expected an integer from 0 to"));
}

TEST_CASE("trust 12: impossible timestamps, huge names and signed times in reports and JUnit") {
    auto with = [](auto change) {
        auto j = report_json();
        change(j);
        return report_error(j.dump());
    };
    for (const char* bad : {"2026-02-30T12:00:00Z", "2026-01-01T25:61:61Z", "2026-13-01T00:00:00Z",
                            "2026-00-10T00:00:00Z", "2026-01-00T00:00:00Z", "2025-02-29T00:00:00Z",
                            "2026-01-01T23:60:00Z"}) {
        CHECK(with([&](auto& j) { j["started"] = bad; }) ==
              "r.json: started: expected a UTC time like \"2026-01-31T12:00:00Z\", got \"" +
                  std::string(bad) + "\"");
    }
    for (const char* good :
         {"2024-02-29T23:59:59Z", "2000-02-29T00:00:00Z", "2026-12-31T23:59:60Z"}) {
        CHECK(with([&](auto& j) { j["started"] = good; }).empty());
    }
    const std::string huge(10 << 20, 'x'); // 10 MB
    CHECK(with([&](auto& j) { j["steps"][0]["name"] = huge; }) ==
          "r.json: steps[0].name: too long: 10485760 bytes (at most 1024) (use the report as "
          "emurun wrote it: its names are a pipeline's)");
    CHECK(with([&](auto& j) { j["pipeline"] = huge; }).starts_with("r.json: pipeline: too long"));
    CHECK(with([&](auto& j) {
              j["steps"][0]["template"] = huge;
          }).starts_with("r.json: steps[0].template: too long"));
    CHECK(with([&](auto& j) { j["steps"][0]["name"] = std::string(1024, 'x'); }).empty());
    CHECK(with([](auto& j) { j["steps"][0]["wall"] = -0.0; }) ==
          "r.json: steps[0].wall: expected a number >= 0, got -0.0");
    auto junit =
        emurun::parse_junit(R"(<testsuite><testcase name="t" time="-0"/></testsuite>)", "t.xml");
    REQUIRE_FALSE(junit.has_value());
    CHECK(junit.error().message().find("time \"-0\" is not a number of seconds") !=
          std::string::npos);
    CHECK(emurun::parse_junit(R"(<testsuite><testcase name="t" time="0"/></testsuite>)", "t.xml")
              .has_value());
}

TEST_CASE("trust review 4: forged steps, kinds, names, times and dates in reports") {
    // The old reader took each of these, and every output then showed them as real.
    auto with = [](auto change) {
        auto j = report_json();
        change(j);
        return report_error(j.dump());
    };
    CHECK(with([](auto& j) { j["steps"].push_back(j["steps"][0]); }) ==
          "r.json: steps[1].name: \"a\" is the name of an earlier step too (each step is there "
          "once) (use the report as emurun wrote it)");
    CHECK(with([](auto& j) { j["steps"][0]["exit_code"] = 1; }) ==
          "r.json: steps[0]: is passed with exit_code 1 (a passed step exited 0) (use the report "
          "as emurun wrote it)");
    CHECK(with([](auto& j) {
              j["steps"][0]["exit_code"] = nullptr;
              j["steps"][0]["signal"] = 9;
          }).starts_with("r.json: steps[0]: is passed with signal 9"));
    CHECK(with([](auto& j) { j["steps"][0]["kind"] = "deploy"; }) ==
          "r.json: steps[0].kind: expected configure, build, test or other, got \"deploy\"");
    CHECK(with([](auto& j) { j["steps"][0]["name"] = ""; }) ==
          "r.json: steps[0].name: must not be empty (use the report as emurun wrote it)");
    CHECK(with([](auto& j) { j["steps"][0]["name"] = "a\nb passed"; }) ==
          "r.json: steps[0].name: holds a control character (0x0a) (use the report as emurun "
          "wrote it: its names are a pipeline's)");
    CHECK(with([](auto& j) {
              j["steps"][0]["name"] = "a\x1b[2J";
          }).starts_with("r.json: steps[0].name: holds a control character (0x1b)"));
    CHECK(with([](auto& j) { j["steps"][0]["wall"] = 2e9; }) ==
          "r.json: steps[0].wall: expected a number of seconds from 0 to 1e9, got 2000000000.0 "
          "(use the report as emurun wrote it)");
    CHECK(with([](auto& j) {
              j["steps"][0]["user"] = 1e300;
          }).starts_with("r.json: steps[0].user: expected a number of seconds from 0 to 1e9"));
    CHECK(with([](auto& j) { j["wall"] = 1e10; }).starts_with("r.json: wall: expected a number"));
    auto inf = report_json(); // (a library caller's JSON; a file's 1e400 is refused when parsed)
    inf["steps"][0]["sys"] = std::numeric_limits<double>::infinity();
    auto read = Report::from_json(inf, "r.json");
    REQUIRE_FALSE(read.has_value());
    CHECK(read.error().message().starts_with("r.json: steps[0].sys: expected a number"));
    CHECK(with([](auto& j) { j["started"] = "1969-12-31T23:59:59Z"; }) ==
          "r.json: started: expected a UTC time like \"2026-01-31T12:00:00Z\", got "
          "\"1969-12-31T23:59:59Z\"");
    // What emurun writes stays readable.
    CHECK(with([](auto& j) { j["started"] = "1970-01-01T00:00:00Z"; }).empty());
    CHECK(with([](auto& j) { j["steps"][0]["wall"] = 1e9; }).empty());
    CHECK(with([](auto& j) {
              j["steps"][0]["status"] = "failed";
              j["steps"][0]["exit_code"] = 1;
          }).empty());
    CHECK(with([](auto& j) { j["steps"][0]["name"] = "t\u00e9st@arm64 [1/2]"; }).empty());
}

TEST_CASE("bad input: timeout multipliers that overflow are refused") {
    // Item 10: 1e308 and inf made every emulated step time out at once.
    for (const char* bad : {"1e308", "inf", "nan", "1001", "aarch64=inf", "-1", "0"}) {
        INFO(bad);
        auto m = emurun::parse_timeout_multiplier(bad, "/nonexistent");
        REQUIRE_FALSE(m.has_value());
        CHECK(contains(m.error().why, "expected a number from"));
    }
    CHECK(emurun::parse_timeout_multiplier("1000", "/nonexistent")->all == 1000);
    // A library user who sets an absurd factor gets the longest timeout, not an overflow.
    using std::chrono::milliseconds;
    CHECK(emurun::scaled_timeout(milliseconds(2000), std::numeric_limits<double>::infinity()) ==
          milliseconds::max());
    CHECK(emurun::scaled_timeout(milliseconds(2000), 1e308) == milliseconds::max());
    CHECK(emurun::scaled_timeout(milliseconds(2000), 2.5) == milliseconds(5000));
}

TEST_CASE("bad input: steps whose names differ only in unsafe characters get their own logs") {
    // Item 7: "a/b", "a_b" and "a b" all wrote logs/a_b.log.
    using emurun::detail::log_file_name;
    CHECK(log_file_name("a_b") == "a_b.log");
    CHECK(log_file_name("build-1.x") == "build-1.x.log");
    const std::string slash = log_file_name("a/b"), space = log_file_name("a b");
    CHECK(slash.starts_with("a_b-"));
    CHECK(space.starts_with("a_b-"));
    CHECK(slash != space);
    CHECK(slash != "a_b.log");
    CHECK(log_file_name("..").starts_with("step.."));
    CHECK(log_file_name(std::string(200, 'x')).size() < 130); // fits any file system's limit
    auto p = Pipeline::parse(R"({"name": "p", "steps": [{"name": "a/b", "argv": ["true"]},
        {"name": "a b", "argv": ["true"]}, {"name": "a_b", "argv": ["true"]}]})");
    REQUIRE(p.has_value());
    CHECK(emurun::detail::check_log_names(*p, "logs").has_value());
    CHECK(emurun::detail::check_log_names(*p, "logs\xff").error().why ==
          "its name is not valid UTF-8, and the report names every log in JSON text");
    CHECK(emurun::detail::check_log_names(*p, "logs\xff").error().field == "log_dir");
    CHECK(emurun::detail::check_log_names(*p, "logs\xff").error().kind ==
          emurun::ErrorKind::bad_input);
}

TEST_CASE("bad input: a report that would overwrite the pipeline, a log or another output") {
    // Item 7: --report equal to the pipeline file or a step's log overwrote it.
    namespace fs = std::filesystem;
    auto dir = emurun::test::testdir("outputs");
    auto file = emurun::test::write_file("outputs/p.json", one_step(""));
    auto p = Pipeline::load(file);
    REQUIRE(p.has_value());
    emurun::RunnerOptions o;
    o.log_dir = dir / "logs";
    auto check = [&](std::vector<fs::path> outputs) {
        auto r = emurun::check_run_outputs(*p, o, outputs);
        return r ? std::string() : r.error().message();
    };
    CHECK(check({dir / "r.json", dir / "r.xml"}).empty());
    CHECK(contains(check({file}), "it is the pipeline file"));
    CHECK(contains(check({dir / "." / "p.json"}), "it is the pipeline file"));
    fs::create_symlink(file, dir / "link.json");
    CHECK(contains(check({dir / "link.json"}), "it is the pipeline file"));
    CHECK(contains(check({dir / "logs" / "a.log"}), "it is the log of step \"a\""));
    CHECK(contains(check({dir / "r.json", dir / "r.json"}), "it is also the output"));
    // The log dir through a symlink, and an output that is a hard link of an existing log.
    fs::create_directories(dir / "logs");
    fs::create_directory_symlink(dir / "logs", dir / "logs-link");
    CHECK(contains(check({dir / "logs-link" / "a.log"}), "it is the log of step \"a\""));
    o.log_dir = dir / "logs-link";
    CHECK(contains(check({dir / "logs" / "a.log"}), "it is the log of step \"a\""));
    o.log_dir = dir / "logs";
    emurun::test::write_file("outputs/logs/a.log", "");
    fs::create_hard_link(dir / "logs" / "a.log", dir / "hard.json");
    CHECK(contains(check({dir / "hard.json"}), "it is the log of step \"a\""));
    fs::remove(dir / "logs" / "a.log");
    CHECK(check({dir / "hard.json"}).empty());
    // Found by the adversarial pass: --report /dev/full (as root) put a regular file in place
    // of the device. A FIFO stands in for the device here.
    REQUIRE(::mkfifo((dir / "fifo").c_str(), 0600) == 0);
    CHECK(
        contains(check({dir / "fifo"}), "it is a FIFO, and emurun replaces what it writes whole"));
    CHECK(contains(check({""}), "no file name given"));
    emurun::Report r;
    CHECK_FALSE(r.save(dir / "fifo").has_value());
    struct stat st {};
    REQUIRE(::stat((dir / "fifo").c_str(), &st) == 0);
    CHECK(S_ISFIFO(st.st_mode));
}

TEST_CASE("bad input: outputs and a log directory emurun cannot write in are refused up front") {
    // A report in a missing directory was found out after every step had run; a log directory
    // below a file or on a read-only file system failed every step.
    namespace fs = std::filesystem;
    auto dir = emurun::test::testdir("unwritable");
    auto file = emurun::test::write_file("unwritable/p.json", one_step(""));
    auto p = Pipeline::load(file);
    REQUIRE(p.has_value());
    emurun::RunnerOptions o;
    o.log_dir = dir / "logs" / "new"; // created by the run, in a directory that takes files
    auto check = [&](std::vector<fs::path> outputs) {
        auto r = emurun::check_run_outputs(*p, o, outputs);
        return r ? std::string() : r.error().message();
    };
    CHECK(check({dir / "r.json"}).empty());
    CHECK(check({"r.json"}).empty()); // the current directory
    CHECK(contains(check({dir / "missing" / "r.json"}),
                   "its directory " + (dir / "missing").string() + " does not exist"));
    CHECK(contains(check({dir / "r.json", file / "j.xml"}), file.string() + " is not a directory"));
    o.log_dir = file / "logs";
    CHECK(contains(check({dir / "r.json"}), file.string() + " is not a directory"));
    o.log_dir = file;
    CHECK(contains(check({dir / "r.json"}),
                   "log directory " + file.string() + ": it is not a directory"));
    CHECK(emurun::detail::check_log_dir("/dev/null/x").error().message() ==
          "log directory /dev/null/x: /dev/null is not a directory (choose a log directory emurun "
          "can write to (option log_dir))");
    CHECK(emurun::detail::check_log_dir(dir / "a" / "b").has_value());
    CHECK(emurun::detail::check_log_dir("relative-logs").has_value());
}

TEST_CASE("bad input: --matrix counts that leave shards empty, flag thresholds that are NaN") {
    // Item 12: --matrix 0/-1 ran the pipeline, 100000 printed empty shards; --threshold nan/-1.
    auto p = Pipeline::parse(R"({"name": "p", "steps": [
        {"name": "t1", "kind": "test", "argv": ["true"]},
        {"name": "t2", "kind": "test", "argv": ["true"]}]})");
    REQUIRE(p.has_value());
    for (int bad : {0, -1, 3, 100000}) {
        INFO(bad);
        CHECK_FALSE(emurun::ci_matrix_json(*p, bad, {}).has_value());
    }
    CHECK(emurun::ci_matrix_json(*p, 2, {}).has_value());
    emurun::FlagRules rules;
    CHECK(emurun::check_rules(rules).has_value());
    for (double bad : {std::nan(""), -1.0, 0.0, std::numeric_limits<double>::infinity()}) {
        rules.baseline_factor = bad;
        CHECK_FALSE(emurun::check_rules(rules).has_value());
    }
    CHECK(emurun::check_rules(rules).error().field == "baseline_factor"); // no CLI flag
    CHECK(emurun::check_rules(rules).error().message().ends_with("(option baseline_factor)"));
    rules = {};
    rules.job_limit_share = 1.5;
    CHECK(emurun::check_rules(rules).error().what == "flag rule job limit share");
    CHECK(emurun::check_rules(rules).error().field == "job_limit_share");
}

TEST_CASE("bad input: raw ESC, NUL, bidi and HTML from a report reach no table or Markdown") {
    // Item 12: a report's names and messages went to the terminal and to step summaries as is.
    auto j = report_json();
    j["steps"][0]["flags"] = {{{"rule", "budget"}, {"message", "m\x1b]0;title\x07"}}};
    auto r = Report::parse(j.dump(), "r.json");
    REQUIRE(r.has_value());
    // (A step name with a control character is refused when read since trust review 4: this
    // one is a library caller's.)
    r->steps[0].name = "a\x1b[2Jb\xe2\x80\xae<img src=x>|";
    for (const auto& text :
         {emurun::to_table(*r), emurun::to_markdown(*r), emurun::compare_table(*r, *r)}) {
        INFO(text);
        CHECK(text.find('\x1b') == std::string::npos);
        CHECK(text.find('\x07') == std::string::npos);
        CHECK(text.find("\xe2\x80\xae") == std::string::npos);
    }
    CHECK(contains(emurun::to_table(*r), "a\\x1b[2Jb\\u202e<img"));
    std::string md = emurun::to_markdown(*r);
    CHECK(contains(md, "&lt;img src=x&gt;\\|"));
    CHECK_FALSE(contains(md, "<img"));
    for (const auto& line : emurun::annotations(*r)) {
        CHECK(line.find('\x1b') == std::string::npos);
    }
}

TEST_CASE("bad input: binfmt entries named after binfmt_misc's control files") {
    // Item 12: import of an entry named "status" blamed "another tool registered it meanwhile".
    emurun::BinfmtEntry e;
    e.name = "status";
    e.magic = "\x7f"
              "ELF";
    e.interpreter = "/usr/bin/qemu-aarch64-static";
    auto r = emurun::validate_binfmt_entry(e);
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().why == "the name is that of binfmt_misc's own control file");
    e.name = "register";
    CHECK_FALSE(emurun::validate_binfmt_entry(e).has_value());
}

TEST_CASE("bad input: sandbox arches named twice, or the host's own") {
    // Item 12: --arch aarch64,arm64 blamed another tool. Item 11: --arch x86_64 on x86_64 gave
    // "Too many levels of symbolic links".
    auto aarch64 = *emurun::find_arch("aarch64");
    emurun::SandboxSpec spec;
    spec.arches = {aarch64, *emurun::find_arch("arm64")};
    spec.cache_dir = emurun::test::testdir("sandbox-cache");
    auto plan = emurun::plan_sandbox(spec);
    REQUIRE_FALSE(plan.has_value());
    CHECK(plan.error().why == "the arch aarch64 is requested twice");
    const emurun::Arch* host = emurun::host_arch();
    REQUIRE(host != nullptr);
    spec.arches = {host};
    plan = emurun::plan_sandbox(spec);
    REQUIRE_MESSAGE(plan.has_value(), plan.error().message());
    CHECK(plan->entries.empty());
    REQUIRE(plan->notes.size() == 1);
    CHECK(plan->notes[0] == host->name + " runs natively here: no emulator registered for it");
}

namespace {

// The reason check_binfmt_interpreter() refuses `interp`, or "".
std::string interpreter_refusal(const std::filesystem::path& interp) {
    emurun::BinfmtWarnings w;
    auto r = emurun::check_binfmt_interpreter(interp, {}, w);
    return r ? std::string() : r.error().message();
}

} // namespace

TEST_CASE("bad input: an interpreter below a world-writable ancestor directory") {
    // Item 9: only the interpreter's own directory was checked.
    auto file = emurun::test::write_file("ww/sub/deeper/qemu-x", "#!/bin/sh\n");
    REQUIRE(::chmod(file.c_str(), 0755) == 0);
    auto ww = file.parent_path().parent_path().parent_path();
    REQUIRE(::chmod(ww.c_str(), 0777) == 0);
    std::string why = interpreter_refusal(file);
    CHECK(contains(why, "the directory " + ww.string() +
                            " is writable by others without the sticky bit"));
    REQUIRE(::chmod(ww.c_str(), 01777) == 0); // sticky: others cannot rename what is mine
    CHECK(interpreter_refusal(file).empty());
}

TEST_CASE("bad input: an interpreter owned by another unprivileged user" *
          emurun::test::may_skip()) {
    // Item 9: an interpreter (or a directory above it) its owner can rewrite was accepted.
    if (::geteuid() != 0) {
        EMURUN_SKIP("needs root to give a file to another user (chown)");
    }
    auto file = emurun::test::write_file("owned/bin/qemu-x", "#!/bin/sh\n");
    REQUIRE(::chmod(file.c_str(), 0755) == 0);
    if (::chown(file.c_str(), 4242, 4242) != 0) { // root of a user namespace without uid 4242
        EMURUN_SKIP("uid 4242 cannot own files here (a user namespace without it mapped)");
    }
    CHECK(contains(interpreter_refusal(file), "it is owned by uid 4242, who could replace it"));
    REQUIRE(::chown(file.c_str(), 0, 0) == 0);
    CHECK(interpreter_refusal(file).empty());
    REQUIRE(::chown(file.parent_path().c_str(), 4242, 4242) == 0);
    CHECK(contains(interpreter_refusal(file), "the directory " + file.parent_path().string() +
                                                  " above it is owned by uid 4242"));
}
