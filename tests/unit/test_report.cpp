#include <emurun/json.hpp>
#include <emurun/report.hpp>

#include <nlohmann/json.hpp>

#include <doctest/doctest.h>

#include "testdir.hpp"

#include <boost/property_tree/ptree.hpp>
#include <boost/property_tree/xml_parser.hpp>

#include <filesystem>
#include <map>
#include <sstream>

using emurun::Report;
using emurun::StepResult;
using emurun::StepStatus;

namespace {

StepResult step(const std::string& name, double wall, StepStatus status = StepStatus::passed) {
    StepResult s;
    s.name = name;
    s.wall = wall;
    s.user = wall / 2;
    s.sys = wall / 10;
    s.status = status;
    s.max_rss_kib = 2048;
    s.exit_code = status == StepStatus::passed ? 0 : 1;
    s.log = "/logs/" + name + ".log";
    return s;
}

Report report_of(std::vector<StepResult> steps) {
    Report r;
    r.pipeline = "demo";
    r.started = "2026-01-01T00:00:00Z";
    r.host_arch = "x86_64";
    for (const auto& s : steps) {
        r.wall += s.wall;
    }
    r.steps = std::move(steps);
    return r;
}

std::vector<std::string> rules_of(const StepResult& s) {
    std::vector<std::string> out;
    for (const auto& f : s.flags) {
        out.push_back(f.rule);
    }
    return out;
}

} // namespace

TEST_CASE("report: a step both over budget and over 10x its native baseline gets both flags") {
    Report baseline = report_of({step("unit", 2.0), step("fast", 1.0)});
    StepResult unit = step("unit", 25.0);
    unit.budget = 20.0;
    unit.emulation = emurun::Emulation::sandbox;
    emurun::flag_step(unit, {}, &baseline, nullptr);
    CHECK(rules_of(unit) == std::vector<std::string>{"budget", "baseline"});
    CHECK(unit.baseline_wall == 2.0);
    CHECK(unit.baseline_factor().value() == doctest::Approx(12.5));
    CHECK(unit.flags[1].message.find("12.5x") != std::string::npos);

    StepResult fast = step("fast", 9.0); // 9x: under the default threshold
    fast.budget = 10.0;
    fast.emulation = emurun::Emulation::exec;
    emurun::flag_step(fast, {}, &baseline, nullptr);
    CHECK(fast.flags.empty());
    emurun::flag_step(fast, {.baseline_factor = 8}, &baseline, nullptr);
    CHECK(rules_of(fast) == std::vector<std::string>{"baseline"});
    emurun::flag_step(fast, {.baseline_factor = 8}, &baseline, nullptr);
    CHECK(fast.flags.size() == 1); // re-applying does not duplicate
}

TEST_CASE("report: the factor on CPU time, no factor for a native step, no flag for a failure") {
    Report baseline = report_of({step("unit", 2.0), step("tool", 1.0), step("broken", 1.0)});
    // Wall 12x the baseline (a machine busy with other jobs), CPU only 3x.
    StepResult unit = step("unit", 24.0);
    unit.emulation = emurun::Emulation::exec;
    unit.user = 3.0;
    unit.sys = 0.6; // baseline CPU 1.2 s
    const emurun::FlagRules cpu{.basis = emurun::FactorBasis::cpu};
    emurun::flag_step(unit, cpu, &baseline, nullptr);
    CHECK(unit.baseline_cpu.value() == doctest::Approx(1.2));
    CHECK(unit.factor(emurun::FactorBasis::cpu).value() == doctest::Approx(3.0));
    CHECK(unit.factor(emurun::FactorBasis::wall).value() == doctest::Approx(12.0));
    CHECK(unit.flags.empty()); // 3x CPU: under 10x
    emurun::flag_step(unit, {}, &baseline, nullptr);
    REQUIRE(rules_of(unit) == std::vector<std::string>{"baseline"}); // 12x wall
    CHECK(unit.flags[0].message.find("wall time") != std::string::npos);

    StepResult tool = step("tool", 30.0); // a native step: 30x, but native against native
    emurun::flag_step(tool, {}, &baseline, nullptr);
    CHECK_FALSE(tool.baseline_wall);
    CHECK_FALSE(tool.baseline_factor());
    CHECK(tool.flags.empty());

    StepResult broken = step("broken", 30.0, StepStatus::failed);
    broken.emulation = emurun::Emulation::sandbox;
    emurun::flag_step(broken, {}, &baseline, nullptr);
    CHECK(broken.baseline_factor().value() == doctest::Approx(30.0)); // shown...
    CHECK(broken.flags.empty());                                      // ...not flagged

    unit.flags.clear();
    Report run = report_of({unit, tool});
    emurun::apply_flags(run, cpu, &baseline, nullptr);
    CHECK(run.factor_basis == emurun::FactorBasis::cpu);
    const auto table = emurun::to_table(run);
    CHECK(table.find("x baseline CPU") != std::string::npos);
    CHECK(table.find("3.0x") != std::string::npos);
    CHECK(table.find("12.0x") == std::string::npos);
    CHECK(emurun::to_markdown(run).find("| x baseline CPU |") != std::string::npos);
    auto back = Report::parse(emurun::json_text(run.to_json()), "r.json");
    REQUIRE(back);
    CHECK(back->factor_basis == emurun::FactorBasis::cpu);
    CHECK(back->steps[0].baseline_cpu == run.steps[0].baseline_cpu);
    auto bad = run.to_json();
    bad["factor_basis"] = "speed";
    auto refused = Report::parse(emurun::json_text(bad), "r.json");
    REQUIRE_FALSE(refused);
    CHECK(refused.error().message().find("factor_basis: expected \"wall\" or \"cpu\"") !=
          std::string::npos);
}

TEST_CASE(
    "report: no baseline flag over timer noise or an emulated baseline; merge keeps one basis") {
    Report baseline = report_of({step("tiny", 0.002), step("unit", 1.0)});
    StepResult tiny = step("tiny", 0.07); // 35x a 2 ms native run: noise
    tiny.emulation = emurun::Emulation::exec;
    emurun::flag_step(tiny, {}, &baseline, nullptr);
    CHECK(tiny.baseline_factor().value() == doctest::Approx(35.0)); // shown...
    CHECK(tiny.flags.empty());                                      // ...not flagged

    Report emulated = baseline;
    for (auto& s : emulated.steps) {
        s.emulation = emurun::Emulation::sandbox;
    }
    StepResult unit = step("unit", 30.0);
    unit.emulation = emurun::Emulation::exec;
    emurun::flag_step(unit, {}, &emulated, nullptr);
    CHECK_FALSE(unit.baseline_wall); // emulated against emulated is no emulation factor
    auto refused = emurun::check_baseline(emulated, "arm.json");
    REQUIRE_FALSE(refused);
    CHECK(refused.error().message().find("baseline arm.json: none of its steps ran natively") !=
          std::string::npos);
    CHECK(emurun::check_baseline(baseline, "native.json"));

    Report wall = report_of({step("a", 1.0)});
    Report cpu = wall;
    cpu.factor_basis = emurun::FactorBasis::cpu;
    wall.shard_count = cpu.shard_count = 2;
    cpu.shard_index = 2;
    std::vector<Report> mixed{wall, cpu};
    auto merged = emurun::merge_reports(mixed);
    REQUIRE_FALSE(merged);
    CHECK(merged.error().message().find("different times (wall and cpu)") != std::string::npos);
}

TEST_CASE("report: regression needs both the relative and the absolute margin") {
    Report previous = report_of({step("a", 100), step("b", 10), step("c", 10)});
    StepResult a = step("a", 110); // +10 s but only +10 %
    StepResult b = step("b", 14);  // +40 % but only +4 s
    StepResult c = step("c", 16);  // +60 % and +6 s
    for (auto* s : {&a, &b, &c}) {
        emurun::flag_step(*s, {}, nullptr, &previous);
    }
    CHECK(a.flags.empty());
    CHECK(b.flags.empty());
    CHECK(rules_of(c) == std::vector<std::string>{"regression"});
    StepResult skipped = step("c", 0, StepStatus::skipped);
    emurun::flag_step(skipped, {}, nullptr, &previous);
    CHECK(skipped.flags.empty());
}

TEST_CASE("report: job-limit projection") {
    CHECK(emurun::projected_total(100, 400, 2) == doctest::Approx(300));
    CHECK(emurun::projected_total(100, -5, 0) == doctest::Approx(100));
    emurun::FlagRules rules;
    CHECK_FALSE(emurun::job_limit_flag(4.7 * 3600, 6 * 3600, rules).has_value());
    auto f = emurun::job_limit_flag(5 * 3600, 6 * 3600, rules);
    REQUIRE(f.has_value());
    CHECK(f->rule == "job_limit");
    CHECK(f->message.find("83%") != std::string::npos);
    Report r = report_of({step("a", 50)});
    r.job_limit = 60;
    emurun::apply_flags(r, rules, nullptr, nullptr);
    REQUIRE(r.flags.size() == 1);
    emurun::apply_flags(r, rules, nullptr, nullptr);
    CHECK(r.flags.size() == 1);
    CHECK(r.flagged());
}

TEST_CASE("report: JSON round trip, file round trip and errors") {
    StepResult killed = step("x<&>\"y", 1.5, StepStatus::failed);
    killed.exit_code.reset();
    killed.signal = 9;
    killed.flags.push_back({"budget", "over"});
    killed.budget = 1.0;
    StepResult rooted = step("in-root", 3);
    rooted.emulation = emurun::Emulation::root;
    rooted.accelerated = true;
    rooted.acceleration = "toolchain,shell";
    rooted.accelerated_tools = {"gcc-12", "dash"};
    Report r = report_of({step("a", 2), killed, step("s", 0, StepStatus::skipped), rooted});
    r.job_limit = 3600;
    r.interrupted_by = 2;
    r.shard_index = 2;
    r.shard_count = 3;
    auto back = Report::from_json(r.to_json(), "r.json");
    REQUIRE_MESSAGE(back.has_value(), (back ? "" : back.error().message()));
    CHECK(*back == r);
    CHECK(r.to_json()["schema_version"] == 1);
    CHECK(r.to_json()["steps"][3]["acceleration"] == "toolchain,shell");
    CHECK(r.to_json()["steps"][0]["acceleration"].is_null());

    auto file = emurun::test::testdir() / "report.json";
    REQUIRE(r.save(file).has_value());
    CHECK(Report::load(file).value() == r);
    CHECK((std::filesystem::status(file).permissions() & std::filesystem::perms::others_read) !=
          std::filesystem::perms::none);
    for (const auto& e : std::filesystem::directory_iterator(file.parent_path())) {
        CHECK(e.path().filename().string().find(".report.json.") == std::string::npos);
    }

    auto j = r.to_json();
    j["steps"][1]["wall"] = "slow";
    CHECK(Report::from_json(j, "r.json").error().message() ==
          "r.json: steps[1].wall: expected a number, got \"slow\"");
    j = r.to_json();
    j["schema_version"] = 99;
    CHECK(Report::from_json(j, "r.json").error().what == "r.json: schema_version");
    CHECK_FALSE(Report::parse("{", "r.json").has_value());
}

TEST_CASE("report: JUnit XML is well-formed with special characters escaped") {
    StepResult odd = step("a<b>&\"c'", 1, StepStatus::failed);
    odd.message = "bad \x01 byte </system-out>";
    StepResult skipped = step("later", 0, StepStatus::skipped);
    Report r = report_of({step("ok", 2), odd, skipped});
    r.pipeline = "p&q";
    std::string xml = emurun::to_junit(r);
    std::istringstream in(xml);
    boost::property_tree::ptree tree;
    REQUIRE_NOTHROW(boost::property_tree::read_xml(in, tree));
    const auto& suite = tree.get_child("testsuites.testsuite");
    CHECK(suite.get<std::string>("<xmlattr>.name") == "p&q");
    CHECK(suite.get<int>("<xmlattr>.tests") == 3);
    CHECK(suite.get<int>("<xmlattr>.failures") == 1);
    CHECK(suite.get<int>("<xmlattr>.skipped") == 1);
    std::vector<std::string> names;
    int failures = 0, skips = 0;
    for (const auto& [tag, tc] : suite) {
        if (tag != "testcase") {
            continue;
        }
        names.push_back(tc.get<std::string>("<xmlattr>.name"));
        failures += static_cast<int>(tc.count("failure"));
        skips += static_cast<int>(tc.count("skipped"));
        CHECK(tc.get<std::string>("system-out").starts_with("log: /logs/"));
    }
    CHECK(names == std::vector<std::string>{"ok", "a<b>&\"c'", "later"});
    CHECK(failures == 1);
    CHECK(skips == 1);
}

TEST_CASE("report: markdown, annotations and the terminal table") {
    StepResult slow = step("slow|step", 30);
    slow.flags.push_back({"budget", "wall 30.0s is over the budget 10.0s"});
    slow.baseline_wall = 2;
    Report r = report_of({slow, step("bad", 1, StepStatus::failed)});
    std::string md = emurun::to_markdown(r);
    CHECK(md.find("FAILED") != std::string::npos);
    CHECK(md.find("slow\\|step") != std::string::npos);
    CHECK(md.find("15.0x") != std::string::npos);
    auto notes = emurun::annotations(r);
    REQUIRE(notes.size() == 2);
    CHECK(notes[0].starts_with("::error title=emurun%3A bad::step bad exit code 1"));
    CHECK(notes[1].starts_with("::warning title=emurun%3A slow|step::"));
    std::string table = emurun::to_table(r);
    CHECK(table.starts_with("step"));
    CHECK(table.find("x baseline") != std::string::npos);
    CHECK(table.find("2.0 MiB") != std::string::npos);
    Report before = report_of({step("slow|step", 10), step("gone", 1)});
    std::string cmp = emurun::compare_table(before, r);
    CHECK(cmp.find("+200%") != std::string::npos);
    CHECK(cmp.find("removed") != std::string::npos);
}

TEST_CASE("report: the table's columns line up under step names with non-ASCII letters") {
    Report r = report_of({step("\xc3\xbc name", 1), step("plain", 1), step("\xe6\x97\xa5x", 1)});
    std::istringstream lines(emurun::to_table(r));
    std::vector<std::size_t> status_column; // in characters, not bytes
    for (std::string line; std::getline(lines, line);) {
        const auto at = line.find(line.starts_with("step") ? "status" : "passed");
        REQUIRE(at != std::string::npos);
        std::size_t chars = 0;
        for (std::size_t i = 0; i < at; ++i) {
            chars += (static_cast<unsigned char>(line[i]) & 0xC0) != 0x80 ? 1 : 0;
        }
        status_column.push_back(chars);
    }
    REQUIRE(status_column.size() == 4);
    for (std::size_t c : status_column) {
        CHECK(c == status_column.front());
    }
}

TEST_CASE("report: merging shards keeps each step once, worst result wins") {
    Report s1 = report_of({step("build", 10), step("t1", 5)});
    s1.shard_count = 2;
    Report s2 = report_of({step("build", 12, StepStatus::failed), step("t2", 7)});
    s2.shard_index = 2;
    s2.shard_count = 2;
    s2.flags.push_back({"job_limit", "x"});
    std::vector<Report> both{s1, s2};
    auto m = emurun::merge_reports(both);
    REQUIRE(m.has_value());
    REQUIRE(m->steps.size() == 3);
    CHECK(m->find("build")->status == StepStatus::failed);
    CHECK(m->find("t1") != nullptr);
    CHECK(m->find("t2") != nullptr);
    CHECK(m->wall == doctest::Approx(19));
    CHECK(m->shard_count == 1);
    CHECK(m->flags.size() == 1);
    s2.pipeline = "other";
    std::vector<Report> mixed{s1, s2};
    CHECK_FALSE(emurun::merge_reports(mixed).has_value());
    CHECK_FALSE(emurun::merge_reports({}).has_value());
}

TEST_CASE("report: merge refuses shards of two versions of a pipeline and a test in two shards") {
    auto shard = [](int k, std::vector<StepResult> steps, const std::string& digest) {
        Report r = report_of(std::move(steps));
        r.shard_index = k;
        r.shard_count = 2;
        r.pipeline_digest = digest;
        return r;
    };
    auto test_step = [](const std::string& name) {
        StepResult s = step(name, 5);
        s.kind = emurun::StepKind::test;
        return s;
    };
    auto message = [](std::vector<Report> reports) {
        auto m = emurun::merge_reports(reports);
        return m ? std::string("merged") : m.error().message();
    };
    const std::string v1 = "0123456789abcdef", v2 = "fedcba9876543210";
    // p.json edited between the shards: its tests were dealt out again, t2 went missing.
    CHECK(message({shard(1, {test_step("t1")}, v1), shard(2, {test_step("t3")}, v2)})
              .find("two versions of pipeline \"demo\" (digest " + v1 + " and " + v2 + ")") !=
          std::string::npos);
    CHECK(message({shard(1, {test_step("t1")}, v1), shard(2, {test_step("t1")}, v1)})
              .find("test step \"t1\" is in two shards") != std::string::npos);
    CHECK(message({shard(1, {test_step("t1")}, v1), shard(2, {test_step("t2")}, v1)}) == "merged");
    // Reports of an older emurun carry no digest: merged as before.
    CHECK(message({shard(1, {test_step("t1")}, ""), shard(2, {test_step("t2")}, v2)}) == "merged");
    // The digest goes through JSON, and a malformed one is refused.
    Report r = shard(1, {test_step("t1")}, v1);
    auto back = Report::from_json(r.to_json(), "r.json");
    REQUIRE_MESSAGE(back.has_value(), (back ? "" : back.error().message()));
    CHECK(back->pipeline_digest == v1);
    auto j = r.to_json();
    j["pipeline_digest"] = "xyz";
    auto bad = Report::from_json(j, "r.json");
    REQUIRE_FALSE(bad.has_value());
    CHECK(bad.error().message().find("r.json: pipeline_digest: expected 16 hex digits") !=
          std::string::npos);
    j.erase("pipeline_digest");
    CHECK(Report::from_json(j, "r.json").has_value());
}

TEST_CASE("report: merging a build job's report with shards that reused its archive") {
    Report build = report_of({step("configure", 3), step("build", 20)});
    build.artifacts = emurun::ArtifactLink{"0123456789abcdef", true};
    auto shard = [&](int k, const std::string& test, double wall) {
        StepResult reused = step("build", 20, StepStatus::reused);
        Report r = report_of({reused, step(test, wall)});
        r.wall = wall;
        r.shard_index = k;
        r.shard_count = 2;
        r.artifacts = emurun::ArtifactLink{"0123456789abcdef", false};
        return r;
    };
    std::vector<Report> all{build, shard(1, "t1", 5), shard(2, "t2", 7)};
    auto m = emurun::merge_reports(all);
    REQUIRE_MESSAGE(m.has_value(), (m ? "" : m.error().message()));
    REQUIRE(m->steps.size() == 4);
    CHECK(m->steps[0].name == "configure");
    CHECK(m->find("build")->status == StepStatus::passed); // the build's, once
    CHECK(m->wall == doctest::Approx(23 + 7));             // build, then the longest shard
    CHECK_FALSE(m->artifacts.has_value());
    CHECK(m->succeeded());

    auto refused = [](std::vector<Report> reports, const std::string& why) {
        auto r = emurun::merge_reports(reports);
        REQUIRE_FALSE(r.has_value());
        CHECK_MESSAGE(r.error().message().find(why) != std::string::npos, r.error().message());
    };
    refused({build, shard(1, "t1", 5)}, "shard 2 of 2 is missing");
    refused({shard(1, "t1", 5), shard(2, "t2", 7)}, "no report of the build job");
    refused({build, build, shard(1, "t1", 5), shard(2, "t2", 7)}, "two reports packed");
    refused({build}, "only the build job's report");
    Report other = shard(2, "t2", 7);
    other.artifacts->id = "fedcba9876543210";
    refused({build, shard(1, "t1", 5), other}, "but the build report packed 0123456789abcdef");
}

TEST_CASE("report: reused steps and the artifact link survive JSON") {
    Report r = report_of({step("build", 20, StepStatus::reused), step("t", 1)});
    r.artifacts = emurun::ArtifactLink{"0123456789abcdef", false};
    auto back = Report::parse(emurun::json_text(r.to_json()), "r.json");
    REQUIRE_MESSAGE(back.has_value(), (back ? "" : back.error().message()));
    CHECK(*back == r);
    CHECK(back->succeeded());
    auto j = r.to_json();
    j["artifacts"]["id"] = "../../etc";
    auto bad = Report::from_json(j, "r.json");
    REQUIRE_FALSE(bad.has_value());
    CHECK(bad.error().message().find("expected 16 hex digits") != std::string::npos);
}

TEST_CASE("report: a root step's toolchain mismatches in JSON, table and Markdown") {
    StepResult rooted = step("build", 3);
    rooted.emulation = emurun::Emulation::root;
    rooted.accelerated = true;
    rooted.acceleration = "toolchain";
    rooted.accelerated_tools = {"as", "ld.bfd"};
    rooted.toolchain_mismatches.push_back({"gcc", "gcc-12", "gcc-12 12.2.0-14+deb12u1",
                                           "gcc-12-aarch64-linux-gnu", "gcc-12 12.2.0-14", false,
                                           "gcc kept emulated: the root's gcc-12 ...",
                                           "stack.c.dpkg-buildflags: sections .text differ"});
    Report r = report_of({rooted});
    const auto j = r.to_json();
    CHECK(j["steps"][0]["toolchain_mismatches"][0]["tool"] == "gcc");
    CHECK(j["steps"][0]["toolchain_mismatches"][0]["root_source"] == "gcc-12 12.2.0-14+deb12u1");
    CHECK(j["steps"][0]["toolchain_mismatches"][0]["host_source"] == "gcc-12 12.2.0-14");
    CHECK(j["steps"][0]["toolchain_mismatches"][0]["accelerated"] == false);
    CHECK(j["steps"][0]["toolchain_mismatches"][0]["probe"] ==
          "stack.c.dpkg-buildflags: sections .text differ");
    auto back = Report::from_json(j, "r.json");
    REQUIRE_MESSAGE(back.has_value(), (back ? "" : back.error().message()));
    CHECK(*back == r);
    CHECK(emurun::to_table(r).find("toolchain: build: gcc kept emulated") != std::string::npos);
    CHECK(emurun::to_markdown(r).find("`build` toolchain: gcc kept emulated") != std::string::npos);
    auto bad = j;
    bad["steps"][0]["toolchain_mismatches"] = "gcc";
    CHECK_FALSE(Report::from_json(bad, "r.json").has_value());
    // As strict as the schema: no other key, none missing, a known tool; an acceleration is
    // named; accelerated means some tool ran in the root's place.
    const auto refused = [](const nlohmann::json& report) {
        auto parsed = Report::from_json(report, "r.json");
        return parsed ? std::string("accepted") : parsed.error().message();
    };
    auto extra = j;
    extra["steps"][0]["toolchain_mismatches"][0]["colour"] = "red";
    CHECK(refused(extra).find("r.json: steps[0].toolchain_mismatches[0].colour: unknown key") == 0);
    auto missing = j;
    missing["steps"][0]["toolchain_mismatches"][0].erase("host_source");
    CHECK(refused(missing).find("toolchain_mismatches[0].host_source: missing") !=
          std::string::npos);
    auto tool = j;
    tool["steps"][0]["toolchain_mismatches"][0]["tool"] = "../gcc";
    CHECK(refused(tool).find("tool: expected a program's name (gcc, g++, cpp, binutils or a "
                             "native tool such as xz), got \"../gcc\"") != std::string::npos);
    tool["steps"][0]["toolchain_mismatches"][0]["tool"] = "..";
    CHECK(refused(tool).find("got \"..\"") != std::string::npos);
    tool["steps"][0]["toolchain_mismatches"][0]["tool"] = "xz"; // a native tool kept emulated
    CHECK(refused(tool) == "accepted");
    auto unnamed = j;
    unnamed["steps"][0]["acceleration"] = "";
    CHECK(refused(unnamed).find("steps[0].acceleration: is empty") != std::string::npos);
    auto claimed = j;
    claimed["steps"][0]["accelerated_tools"] = nlohmann::json::array();
    CHECK(refused(claimed).find("steps[0].accelerated: is true but accelerated_tools is empty") !=
          std::string::npos);
    claimed["steps"][0].erase("accelerated_tools");
    CHECK(refused(claimed).find("steps[0].accelerated: is true but accelerated_tools is empty or "
                                "missing") != std::string::npos);
    auto denied = j;
    denied["steps"][0]["accelerated"] = false;
    CHECK(refused(denied).find("is false but accelerated_tools names tools") != std::string::npos);
    auto magic = j;
    magic["steps"][0]["emulation"] = "magic";
    CHECK(refused(magic).find("steps[0].emulation: expected native, exec, sandbox, host, auto or "
                              "root, got \"magic\"") != std::string::npos);
    auto old = j; // a report written before emurun recorded them
    old["steps"][0].erase("toolchain_mismatches");
    CHECK(Report::from_json(old, "r.json").value().steps[0].toolchain_mismatches.empty());
    // A tool the probe did not run for (g++ beside gcc): null, not "".
    r.steps[0].toolchain_mismatches[0].probe.reset();
    CHECK(r.to_json()["steps"][0]["toolchain_mismatches"][0]["probe"].is_null());
    CHECK(Report::from_json(r.to_json(), "r.json").value() == r);
    auto older = r.to_json();
    older["steps"][0]["toolchain_mismatches"][0]["probe"] = "";
    CHECK_FALSE(Report::from_json(older, "r.json").value().steps[0].toolchain_mismatches[0].probe);
}

TEST_CASE(
    "report: the image a step's root was made from in JSON, JUnit, Markdown, merge, compare") {
    const std::string digest =
        "sha256:1a2b3c4d5e6f00112233445566778899aabbccddeeff00112233445566778899";
    StepResult imaged = step("test[aarch64]", 3);
    imaged.emulation = emurun::Emulation::root;
    imaged.image = emurun::ImageRecord{"/src/app.tar#arm64", "linux/arm64", digest};
    Report r = report_of({step("native", 1), imaged});
    const auto j = r.to_json();
    CHECK(j["steps"][0]["image"].is_null());
    CHECK(j["steps"][1]["image"]["reference"] == "/src/app.tar#arm64");
    CHECK(j["steps"][1]["image"]["platform"] == "linux/arm64");
    CHECK(j["steps"][1]["image"]["digest"] == digest);
    auto back = Report::from_json(j, "r.json");
    REQUIRE_MESSAGE(back.has_value(), (back ? "" : back.error().message()));
    CHECK(*back == r);

    // JUnit: the step's testcase carries it as properties; the other step has none.
    std::istringstream in(emurun::to_junit(r));
    boost::property_tree::ptree tree;
    REQUIRE_NOTHROW(boost::property_tree::read_xml(in, tree));
    std::map<std::string, std::string> props;
    int with_properties = 0;
    for (const auto& [tag, tc] : tree.get_child("testsuites.testsuite")) {
        if (tag != "testcase" || !tc.get_child_optional("properties")) {
            continue;
        }
        ++with_properties;
        CHECK(tc.get<std::string>("<xmlattr>.name") == "test[aarch64]");
        for (const auto& [ptag, p] : tc.get_child("properties")) {
            props[p.get<std::string>("<xmlattr>.name")] = p.get<std::string>("<xmlattr>.value");
        }
    }
    CHECK(with_properties == 1);
    CHECK(props["emurun.image"] == "/src/app.tar#arm64");
    CHECK(props["emurun.image.platform"] == "linux/arm64");
    CHECK(props["emurun.image.digest"] == digest);

    const std::string line = "test[aarch64]: /src/app.tar#arm64 (linux/arm64, " + digest + ")";
    CHECK(emurun::to_markdown(r).find("`test[aarch64]` image: /src/app.tar#arm64 (linux/arm64, " +
                                      digest + ")") != std::string::npos);
    CHECK(emurun::to_table(r).find("image: " + line) != std::string::npos);
    CHECK(emurun::to_table(report_of({step("native", 1)})).find("image:") == std::string::npos);

    // As strict as the schema; null, absent (older reports) and a missing key.
    const auto refused = [](const nlohmann::json& report) {
        auto parsed = Report::from_json(report, "r.json");
        return parsed ? std::string("accepted") : parsed.error().message();
    };
    auto extra = j;
    extra["steps"][1]["image"]["tag"] = "latest";
    CHECK(refused(extra).find("r.json: steps[1].image.tag: unknown key") == 0);
    auto missing = j;
    missing["steps"][1]["image"].erase("digest");
    CHECK(refused(missing).find("steps[1].image.digest: missing") != std::string::npos);
    auto unnamed = j;
    unnamed["steps"][1]["image"]["reference"] = "";
    CHECK(refused(unnamed).find("steps[1].image.reference: is empty") != std::string::npos);
    auto wrong = j;
    wrong["steps"][1]["image"] = "app.tar";
    CHECK(refused(wrong).find("steps[1].image") != std::string::npos);
    auto old = j;
    old["steps"][1].erase("image");
    CHECK_FALSE(Report::from_json(old, "r.json").value().steps[1].image);

    // A merge keeps it: the shards' steps as they were.
    Report shard2 = report_of({step("native", 1), step("other", 2)});
    shard2.shard_index = 2;
    shard2.shard_count = 2;
    r.shard_count = 2;
    std::vector<Report> shards{r, shard2};
    auto merged = emurun::merge_reports(shards);
    REQUIRE_MESSAGE(merged.has_value(), (merged ? "" : merged.error().message()));
    REQUIRE(merged->find("test[aarch64]") != nullptr);
    CHECK(merged->find("test[aarch64]")->image == imaged.image);
    // Shards that ran in two images (a tag moved between two jobs) are refused, naming both:
    // the same step, or the same reference, with another digest. Another checkout's path for
    // the same image is not a difference.
    Report other_image = r;
    other_image.shard_index = 2;
    other_image.steps[1].image->digest = "sha256:9f8e7d6c5b4a" + digest.substr(19);
    std::vector<Report> two_images{r, other_image};
    const std::vector<std::string> names{"shard1.json", "shard2.json"};
    auto mixed = emurun::merge_reports(two_images, names);
    REQUIRE_FALSE(mixed.has_value());
    CHECK_MESSAGE(mixed.error().message().find(
                      "they ran in two different images: step \"test[aarch64]\" of shard1.json "
                      "in /src/app.tar#arm64 (linux/arm64, sha256:1a2b3c4d5e6f), step "
                      "\"test[aarch64]\" of shard2.json in /src/app.tar#arm64 (linux/arm64, "
                      "sha256:9f8e7d6c5b4a)") != std::string::npos,
                  mixed.error().message());
    other_image.steps[1].name = "test2[aarch64]";
    two_images = {r, other_image};
    CHECK_FALSE(emurun::merge_reports(two_images).has_value());
    other_image.steps[1].image->reference = "/builds/2/app.tar#arm64";
    other_image.steps[1].image->digest = r.steps[1].image->digest;
    two_images = {r, other_image};
    auto same = emurun::merge_reports(two_images);
    CHECK_MESSAGE(same.has_value(), (same ? "" : same.error().message()));
    r.shard_count = 1;

    // Compare: a rebuilt image (another digest) is said, the same one is not.
    Report after = r;
    after.steps[1].image->digest = "sha256:9f8e7d6c5b4a" + digest.substr(19);
    CHECK(emurun::image_changes(r, r).empty());
    const auto changes = emurun::image_changes(r, after);
    REQUIRE(changes.size() == 1);
    CHECK(changes[0].describe() == "test[aarch64]: /src/app.tar#arm64 (linux/arm64, "
                                   "sha256:1a2b3c4d5e6f) -> /src/app.tar#arm64 (linux/arm64, "
                                   "sha256:9f8e7d6c5b4a)");
    CHECK(emurun::compare_table(r, after).find("image changed: test[aarch64]: ") !=
          std::string::npos);
    const auto cj = emurun::compare_json(r, after);
    REQUIRE(cj["image_changes"].size() == 1);
    CHECK(cj["image_changes"][0]["name"] == "test[aarch64]");
    CHECK(cj["image_changes"][0]["after"]["digest"] == after.steps[1].image->digest);
    after.steps[1].status = StepStatus::skipped; // did not run: nothing to compare
    CHECK(emurun::image_changes(r, after).empty());
    // The same image from another checkout's path (a CI job's own workspace) is no change.
    Report moved = r;
    moved.steps[1].image->reference = "/builds/42/app.tar#arm64";
    CHECK(emurun::image_changes(r, moved).empty());
    moved.steps[1].image->platform = "linux/arm64/v8"; // another platform taken is one
    CHECK(emurun::image_changes(r, moved).size() == 1);
}

TEST_CASE("report: the run's threshold is recorded, and a baseline joined later flags with it") {
    StepResult emulated = step("test", 30);
    emulated.emulation = emurun::Emulation::exec;
    const Report baseline = report_of({step("test", 2)}); // 15x
    emurun::FlagRules rules;
    rules.baseline_factor = 20;
    Report run = report_of({emulated});
    emurun::apply_flags(run, rules, nullptr, nullptr); // a run with --threshold 20, no baseline
    CHECK(run.threshold == 20);
    auto back = Report::parse(run.to_json().dump(), "r.json");
    REQUIRE(back.has_value());
    CHECK(back->threshold == 20);
    CHECK(run.to_json()["threshold"] == 20);
    // Joined with the rules the run recorded: as if the baseline had been given at run time.
    Report at_run_time = report_of({emulated});
    emurun::apply_flags(at_run_time, rules, &baseline, nullptr);
    emurun::FlagRules recorded;
    recorded.baseline_factor = back->threshold;
    Report joined = *back;
    REQUIRE(emurun::join_baseline(joined, baseline, "native.json", recorded).has_value());
    CHECK(joined == at_run_time);
    CHECK(rules_of(joined.steps[0]).empty()); // 15x is under 20x
    // Older reports say nothing: the default. A nonsense one is refused with its place.
    auto j = run.to_json();
    j.erase("threshold");
    CHECK(Report::from_json(j, "old.json")->threshold == 10);
    j["threshold"] = -1;
    auto bad = Report::from_json(j, "bad.json");
    REQUIRE_FALSE(bad.has_value());
    CHECK(bad.error().message().find("bad.json: threshold: expected a number > 0") == 0);
    // Shards flagged over different factors do not merge into one report.
    Report other = run;
    other.threshold = 10;
    other.shard_index = 2;
    run.shard_count = other.shard_count = 2;
    const std::vector<Report> shards{run, other};
    auto merged = emurun::merge_reports(shards);
    REQUIRE_FALSE(merged.has_value());
    CHECK(merged.error().why.find("different factors (20x and 10x)") != std::string::npos);
}

TEST_CASE("report: a baseline of another pipeline is refused, not joined into empty factors") {
    StepResult emulated = step("test", 30);
    emulated.emulation = emurun::Emulation::exec;
    StepResult other_step = step("lint", 10);
    other_step.emulation = emurun::Emulation::exec;
    Report run = report_of({emulated, other_step, step("native-only", 1)});
    emurun::apply_flags(run, {}, nullptr, nullptr);
    run.steps[0].baseline_wall = 2; // what the run recorded against its own baseline
    Report foreign = report_of({step("unit", 2)});
    foreign.pipeline = "other";
    CHECK(emurun::baseline_misses(run, foreign) == std::vector<std::string>{"test", "lint"});
    Report joined = run;
    auto refused = emurun::join_baseline(joined, foreign, "other.json", {});
    REQUIRE_FALSE(refused.has_value());
    CHECK(refused.error().what == "baseline other.json");
    CHECK(refused.error().why.find("none of the report's emulated steps has a native step") == 0);
    CHECK(joined == run); // nothing wiped
    // Another pipeline (a native pipeline of its own, or a mistake): said, by a note.
    CHECK(emurun::other_pipeline_note(foreign, "other.json", "demo") ==
          "baseline other.json is a run of the pipeline \"other\", this one of \"demo\": its "
          "steps are matched to this run's by template, then name (make sure steps of the same "
          "name run the same tests natively, or give the native run of this pipeline)");
    CHECK_FALSE(emurun::other_pipeline_note(foreign, "other.json", "other"));
    CHECK_FALSE(emurun::other_pipeline_note(foreign, "other.json", ""));
    // Some steps matched: joined, and the others named for a warning.
    const Report partial = report_of({step("test", 2)});
    auto misses = emurun::join_baseline(joined, partial, "native.json", {});
    REQUIRE(misses.has_value());
    CHECK(*misses == std::vector<std::string>{"lint"});
    CHECK(joined.steps[0].baseline_wall == 2.0);
    CHECK(emurun::baseline_misses(run, partial) == std::vector<std::string>{"lint"});
}

TEST_CASE("report: only a baseline's native steps are baselines") {
    StepResult emulated = step("small", 24);
    emulated.emulation = emurun::Emulation::exec;
    Report run = report_of({step("build", 3), emulated});
    StepResult also_emulated = step("small", 20);
    also_emulated.emulation = emurun::Emulation::exec;
    Report emulated_run = report_of({step("build", 3), also_emulated});  // one native step
    CHECK(emurun::check_baseline(emulated_run, "emu.json").has_value()); // it has a native step
    CHECK(emurun::baseline_misses(run, emulated_run) == std::vector<std::string>{"small"});
    Report joined = run;
    auto refused = emurun::join_baseline(joined, emulated_run, "emu.json", {});
    REQUIRE_FALSE(refused.has_value()); // nothing to join: refused, the run's factors kept
    CHECK(joined == run);
    emurun::apply_flags(joined, {}, &emulated_run, nullptr); // at run time: no factor from it
    CHECK_FALSE(joined.steps[1].baseline_wall.has_value());
}

TEST_CASE("report: a native baseline joined after the run gives the run-time factors and flags") {
    StepResult emulated = step("test", 30);
    emulated.emulation = emurun::Emulation::exec;
    emulated.arch = "aarch64";
    emurun::TestResult t{"t1", "c", 2.0, emurun::TestStatus::failed, "boom", {}, {}};
    emulated.tests.push_back(t);
    Report run = report_of({emulated, step("native-only", 1)});
    StepResult native = step("test", 2);
    native.tests.push_back({"t1", "c", 0.1, emurun::TestStatus::passed, "", {}, {}});
    const Report baseline = report_of({native});

    // What the run would have recorded with --baseline at run time ...
    Report at_run_time = run;
    emurun::apply_flags(at_run_time, {}, &baseline, nullptr);
    // ... is what joining the baseline later gives.
    Report joined = run;
    REQUIRE(emurun::join_baseline(joined, baseline, "native.json", {}).has_value());
    CHECK(joined == at_run_time);
    CHECK(joined.steps[0].baseline_wall == 2.0);
    CHECK(rules_of(joined.steps[0]) == std::vector<std::string>{"baseline"});
    CHECK(joined.steps[0].tests[0].baseline_time == 0.1);
    REQUIRE(joined.steps[0].tests[0].flags.size() == 2); // slow, emulation_only_failure
    CHECK(emurun::to_table(joined).find("15.0x") != std::string::npos);

    // Another baseline replaces the first one's figures and flags; other flags stay.
    joined.steps[0].flags.push_back({"budget", "over"});
    StepResult slow_native = step("test", 20);
    slow_native.tests.push_back({"t1", "c", 2.0, emurun::TestStatus::failed, "", {}, {}});
    REQUIRE(emurun::join_baseline(joined, report_of({slow_native}), "b2.json", {}).has_value());
    CHECK(joined.steps[0].baseline_wall == 20.0);
    CHECK(rules_of(joined.steps[0]) == std::vector<std::string>{"budget"});
    CHECK(joined.steps[0].tests[0].flags.empty());

    // An emulated run is no baseline.
    Report not_native = report_of({emulated});
    auto refused = emurun::join_baseline(joined, not_native, "emu.json", {});
    REQUIRE_FALSE(refused.has_value());
    CHECK(refused.error().why.find("ran natively") != std::string::npos);

    // compare: both reports' factors against the joined baseline.
    Report before = run;
    REQUIRE(emurun::join_baseline(before, baseline, "native.json", {}).has_value());
    Report after = before;
    after.steps[0].wall = 40;
    REQUIRE(emurun::join_baseline(after, baseline, "native.json", {}).has_value());
    const std::string cmp = emurun::compare_table(before, after);
    CHECK(cmp.find("x baseline: test: 15.0x -> 20.0x") != std::string::npos);
    // Whose flag each line is (both runs are over the default 10x).
    CHECK(cmp.find("flag baseline (before): test: 15.0x the native baseline's") !=
          std::string::npos);
    CHECK(cmp.find("flag baseline (after): test: 20.0x the native baseline's") !=
          std::string::npos);
    CHECK(emurun::compare_json(before, after)["steps"][0]["after_factor"] == 20.0);
}
