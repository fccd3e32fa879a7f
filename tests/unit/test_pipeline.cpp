#include <emurun/arch.hpp>
#include <emurun/pipeline.hpp>

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include "testdir.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <string>

using namespace std::chrono_literals;
using emurun::Pipeline;

namespace {

// The full error message of parsing `text`, or "" when it parses.
std::string error_of(const std::string& text) {
    auto p = Pipeline::parse(text, "pipeline.json", "/base");
    return p ? std::string() : p.error().message();
}

// A pipeline with one step whose extra JSON members are `step_extra`.
std::string one_step(const std::string& step_extra) {
    return R"({"name": "p", "steps": [{"name": "a", "argv": ["true"])" + step_extra + "}]}";
}

} // namespace

TEST_CASE("pipeline: durations") {
    CHECK(emurun::parse_duration("90s").value() == 90s);
    CHECK(emurun::parse_duration("15m").value() == 15min);
    CHECK(emurun::parse_duration("2h").value() == 2h);
    CHECK(emurun::parse_duration("1h30m").value() == 90min);
    CHECK(emurun::parse_duration("250ms").value() == 250ms);
    CHECK(emurun::parse_duration("1.5s").value() == 1500ms);
    CHECK(emurun::parse_duration("1d").value() == 24h);
    for (const char* bad : {"", "abc", "90", "s", "10x", "-5s", "1..2s", "5 s", "1h30"}) {
        INFO(bad);
        auto d = emurun::parse_duration(bad);
        REQUIRE_FALSE(d.has_value());
        CHECK(d.error().why.find("expected a duration like \"90s\"") != std::string::npos);
    }
    CHECK(emurun::format_duration(250ms) == "250ms");
    CHECK(emurun::format_duration(12300ms) == "12.3s");
    CHECK(emurun::format_duration(245s) == "4m05s");
    CHECK(emurun::format_duration(3720s) == "1h02m");
}

TEST_CASE("pipeline: a full pipeline loads with defaults applied") {
    auto p = Pipeline::parse(R"({
      "name": "demo",
      "defaults": {"arch": "arm64", "emulation": "exec", "env": {"A": "1", "B": "2"},
                   "cwd": "build", "timeout": "10m", "sysroots": ["/sr"]},
      "steps": [
        {"name": "configure", "kind": "configure", "argv": ["cmake", ".."], "emulation": "native"},
        {"name": "unit", "kind": "test", "argv": "ctest -j2 | tee log", "shell": true,
         "needs": ["configure"], "env": {"B": "3"}, "timeout": "1h30m", "budget": "90s",
         "cwd": "/abs", "tags": ["slow"]}
      ]})",
                             "pipeline.json", "/base");
    REQUIRE_MESSAGE(p.has_value(), (p ? "" : p.error().message()));
    REQUIRE(p->steps.size() == 2);
    const auto& c = p->steps[0];
    CHECK(c.emulation == emurun::Emulation::native);
    CHECK(c.arch == "aarch64");
    CHECK(c.cwd == "/base/build");
    CHECK(c.timeout == 10min);
    const auto& u = p->steps[1];
    CHECK(u.kind == emurun::StepKind::test);
    CHECK(u.emulation == emurun::Emulation::exec);
    CHECK(u.argv == std::vector<std::string>{"/bin/sh", "-c", "ctest -j2 | tee log"});
    CHECK(u.env == emurun::EnvMap{{"A", "1"}, {"B", "3"}});
    CHECK(u.cwd == "/abs");
    CHECK(u.timeout == 90min);
    CHECK(u.budget == 90s);
    CHECK(u.needs == std::vector<std::string>{"configure"});
    CHECK(u.sysroots == std::vector<std::filesystem::path>{"/sr"});
    CHECK(p->find("unit") == &p->steps[1]);
    CHECK(p->find("nope") == nullptr);
}

TEST_CASE("pipeline: a foreign arch without a mode is auto (sandbox, else host handlers)") {
    // ppc64el is foreign unless this runs on ppc64le (the dogfood run under qemu-ppc64le).
    const emurun::Arch* host = emurun::host_arch();
    const bool on_ppc = host != nullptr && host->name == "ppc64le";
    auto p = Pipeline::parse(std::string(R"({"name": "p", "defaults": {"arch": ")") +
                             (on_ppc ? "s390x" : "ppc64el") +
                             R"("}, "steps": [{"name": "a", "argv": ["x"]}]})");
    REQUIRE(p.has_value());
    CHECK(p->steps[0].emulation == emurun::Emulation::automatic);
    CHECK(to_string(p->steps[0].emulation) == "auto");
    CHECK(emurun::emulation_from("auto") == emurun::Emulation::automatic);
    CHECK(p->steps[0].arch == (on_ppc ? "s390x" : "ppc64le"));
}

TEST_CASE("pipeline: malformed files give exact messages") {
    const std::map<std::string, std::string> cases = {
        {R"({"name": "p", "steps": [)",
         "pipeline.json:1:25: invalid JSON: syntax error while parsing value - unexpected "
         "end of input; expected '[', '{', or a literal"},
        {R"([1, 2])", "pipeline.json: expected an object, got an array"},
        {R"({"steps": [{"name": "a", "argv": ["x"]}]})",
         "pipeline.json: missing required key \"name\""},
        {R"({"name": "p"})", "pipeline.json: missing required key \"steps\""},
        {R"({"name": "p", "steps": []})",
         "pipeline.json: steps: expected a non-empty array of steps, got an array"},
        {R"({"name": "p", "stpes": []})",
         "pipeline.json: stpes: unknown key (did you mean \"steps\"?)"},
        {one_step(R"(, "timeout": "abc")"),
         "pipeline.json: steps[0].timeout: expected a duration like \"90s\", got \"abc\" (units: "
         "ms, s, m, h, d, largest first, each at most once, as in \"1h30m\")"},
        {one_step(R"(, "budget": true)"),
         "pipeline.json: steps[0].budget: expected a duration like \"90s\", got true"},
        {one_step(R"(, "timout": "5s")"),
         "pipeline.json: steps[0].timout: unknown key (did you mean \"timeout\"?)"},
        {one_step(R"(, "kind": "tests")"),
         "pipeline.json: steps[0].kind: expected configure, build, test or other, got \"tests\""},
        {one_step(R"(, "emulation": "qemu")"),
         "pipeline.json: steps[0].emulation: expected native, exec, sandbox, host, auto or root, "
         "got \"qemu\""},
        {one_step(R"(, "needs": ["b"])"), "pipeline.json: steps[0].needs[0]: unknown step \"b\""},
        {one_step(R"(, "env": {"X": 1})"),
         "pipeline.json: steps[0].env.X: expected a string, got 1"},
        {one_step(R"(, "tags": "slow")"),
         "pipeline.json: steps[0].tags: expected an array of strings, got \"slow\""},
        {one_step(R"(, "emulation": "exec")"),
         "pipeline.json: steps[0]: emulation \"exec\" needs an arch (set \"arch\" on the step or "
         "in \"defaults\")"},
        {one_step(R"(, "timeout": "0s")"),
         "pipeline.json: steps[0].timeout: must be longer than 0, got \"0s\""},
        {R"({"name": "p", "steps": [{"name": "a", "argv": "make all"}]})",
         "pipeline.json: steps[0].argv: expected an array of strings, got a string (split it into "
         "arguments, or set \"shell\": true)"},
        {R"({"name": "p", "steps": [{"name": "a", "argv": []}]})",
         "pipeline.json: steps[0].argv: expected a non-empty command, got an array"},
        {R"({"name": "p", "steps": [{"argv": ["x"]}]})",
         "pipeline.json: steps[0]: missing required key \"name\""},
        {R"({"name": "p", "steps": [{"name": "a"}]})",
         "pipeline.json: steps[0]: missing required key \"argv\""},
        {R"({"name": "p", "steps": [{"name": "a", "argv": ["x"]}, {"name": "a", "argv": ["y"]}]})",
         "pipeline.json: steps[1].name: duplicate step name \"a\" (first used by steps[0])"},
        {R"({"name": "p", "defaults": {"arch": "arm65"}, "steps": [{"name": "a", "argv": ["x"]}]})",
         "pipeline.json: defaults.arch: unknown architecture \"arm65\""},
        {R"({"name": "p", "defaults": {"shell": true}, "steps": [{"name": "a", "argv": ["x"]}]})",
         "pipeline.json: defaults.shell: unknown key"},
        {R"({"name": "p", "steps": [{"name": "a", "argv": ["x"], "needs": ["a"]}]})",
         "pipeline.json: steps[0].needs: cycle in needs: a -> a (remove one of these needs)"},
    };
    for (const auto& entry : cases) { // (no structured binding: INFO captures it in a lambda)
        const std::string& text = entry.first;
        const std::string& expected = entry.second;
        INFO(text);
        std::string got = error_of(text);
        // What a caller switches on: every malformed pipeline is bad input.
        CHECK(emurun::to_string(Pipeline::parse(text).error().kind) == "bad_input");
        // Arch errors carry the list of known arches as their hint; compare up to it.
        CHECK(got.substr(0, expected.size()) == expected);
        if (expected.find("unknown key") != std::string::npos &&
            expected.find("did you mean") == std::string::npos) {
            CHECK(got.find("(known keys: ") != std::string::npos);
        } else if (expected.find("architecture") == std::string::npos) {
            CHECK(got == expected);
        }
    }
    CHECK(cases.size() >= 15);
}

TEST_CASE("pipeline: a cycle in needs is named in full") {
    std::string text = R"({"name": "p", "steps": [
        {"name": "setup", "argv": ["x"]},
        {"name": "a", "argv": ["x"], "needs": ["setup", "c"]},
        {"name": "b", "argv": ["x"], "needs": ["a"]},
        {"name": "c", "argv": ["x"], "needs": ["b"]}]})";
    CHECK(error_of(text) ==
          "pipeline.json: steps[1].needs: cycle in needs: a -> c -> b -> a (remove one of these "
          "needs)");
}

TEST_CASE("pipeline: load names the file; relative cwd resolves against its directory") {
    auto file = emurun::test::write_file("pl.json", one_step(R"(, "cwd": "sub")"));
    auto p = Pipeline::load(file);
    REQUIRE(p.has_value());
    CHECK(p->steps[0].cwd == file.parent_path() / "sub");
    auto bad = emurun::test::write_file("bad.json", one_step(R"(, "timeout": "x")"));
    auto e = Pipeline::load(bad);
    REQUIRE_FALSE(e.has_value());
    CHECK(e.error().what == bad.string() + ": steps[0].timeout");
    auto missing = Pipeline::load(emurun::test::testdir() / "missing.json");
    REQUIRE_FALSE(missing.has_value());
    CHECK(missing.error().why == "No such file or directory");
}

namespace {

Pipeline tests_pipeline(int n) {
    std::string steps = R"({"name": "build", "kind": "build", "argv": ["make"]})";
    for (int i = 0; i < n; ++i) {
        steps += R"(, {"name": "t)" + std::to_string(i) +
                 R"(", "kind": "test", "argv": ["x"], "needs": ["build"]})";
    }
    return Pipeline::parse(R"({"name": "p", "steps": [)" + steps + "]}").value();
}

} // namespace

TEST_CASE("pipeline: priority is longest first by history, file order on ties") {
    Pipeline p = tests_pipeline(4);
    emurun::History h{{"t2", 50}, {"t0", 10}, {"t3", 50}};
    auto order = emurun::priority_order(p, h);
    std::vector<std::string> names;
    for (auto i : order) {
        names.push_back(p.steps[i].name);
    }
    CHECK(names == std::vector<std::string>{"t2", "t3", "t0", "build", "t1"});
}

TEST_CASE("pipeline: shards cover every test step once and are balanced") {
    Pipeline p = tests_pipeline(23);
    emurun::History h;
    for (int i = 0; i < 23; ++i) {
        h["t" + std::to_string(i)] = 1 + (i * 7919) % 37; // uneven durations
    }
    for (int n : {1, 2, 3, 5, 8, 30}) {
        auto plan = emurun::plan_shards(p, n, h);
        REQUIRE(plan.tests.size() == static_cast<std::size_t>(n));
        std::multiset<std::string> seen;
        for (const auto& shard : plan.tests) {
            seen.insert(shard.begin(), shard.end());
        }
        CHECK(seen.size() == 23);
        CHECK(std::set<std::string>(seen.begin(), seen.end()).size() == 23);
        CHECK(seen.count("build") == 0);
        // LPT's bound: no shard exceeds the mean by more than the longest single step.
        double total = 0, longest = 0;
        for (const auto& [k, v] : h) {
            total += v;
            longest = std::max(longest, v);
        }
        for (double load : plan.load) {
            CHECK(load <= total / n + longest);
        }
        CHECK(emurun::plan_shards(p, n, h).tests == plan.tests); // deterministic
    }
    auto shard2 = emurun::select_shard(p, {2, 3}, h);
    CHECK(shard2.find("build") != nullptr);
    CHECK(shard2.steps.size() == 1 + emurun::plan_shards(p, 3, h).tests[1].size());
}

TEST_CASE("pipeline: tests linked by needs stay in one shard; ties break by name") {
    auto p = Pipeline::parse(R"({"name": "p", "steps": [
        {"name": "b", "kind": "test", "argv": ["x"]},
        {"name": "a", "kind": "test", "argv": ["x"]},
        {"name": "c", "kind": "test", "argv": ["x"], "needs": ["d"]},
        {"name": "d", "kind": "test", "argv": ["x"]}]})");
    REQUIRE(p.has_value());
    auto plan = emurun::plan_shards(*p, 3, {});
    // c+d weigh 2 and go first; then a (name order) then b.
    CHECK(plan.tests[0] == std::vector<std::string>{"c", "d"});
    CHECK(plan.tests[1] == std::vector<std::string>{"a"});
    CHECK(plan.tests[2] == std::vector<std::string>{"b"});
    auto matrix = nlohmann::json::parse(emurun::ci_matrix_json(*p, 3, {}).value());
    CHECK(matrix["include"].size() == 3);
    CHECK(matrix["include"][1]["shard"] == "2/3");
}

TEST_CASE("pipeline: shard syntax") {
    CHECK(emurun::parse_shard("2/4").value().index == 2);
    for (const char* bad : {"0/4", "5/4", "2", "a/b", "2/4x", "/4"}) {
        INFO(bad);
        CHECK_FALSE(emurun::parse_shard(bad).has_value());
    }
}

TEST_CASE("pipeline: a step needing a test of another shard goes with that shard") {
    auto p = Pipeline::parse(R"({"name": "p", "steps": [
        {"name": "build", "argv": ["x"]},
        {"name": "t1", "kind": "test", "argv": ["x"], "needs": ["build"]},
        {"name": "t2", "kind": "test", "argv": ["x"], "needs": ["build"]},
        {"name": "after", "argv": ["x"], "needs": ["t2"]}]})");
    REQUIRE(p.has_value());
    int with_after = 0;
    for (int k = 1; k <= 2; ++k) {
        auto shard = emurun::select_shard(*p, {k, 2}, {});
        CHECK(shard.find("build") != nullptr);
        if (shard.find("after")) {
            ++with_after;
            CHECK(shard.find("t2") != nullptr);
        }
        for (const auto& s : shard.steps) {
            for (const auto& n : s.needs) {
                CHECK(shard.find(n) != nullptr);
            }
        }
    }
    CHECK(with_after == 1);
}

TEST_CASE("pipeline: cpu on defaults and steps; a model with spaces or none is refused") {
    auto p = Pipeline::parse(R"({"name": "p", "defaults": {"arch": "aarch64", "cpu": "max"},
        "steps": [{"name": "a", "argv": ["a"]},
                  {"name": "b", "argv": ["b"], "cpu": "cortex-a72,pauth=off"}]})");
    REQUIRE_MESSAGE(p.has_value(), p.error().message());
    CHECK(p->steps[0].cpu == "max");
    CHECK(p->steps[1].cpu == "cortex-a72,pauth=off");
    for (const char* bad : {R"("")", R"("cortex a72")", "5"}) {
        auto e = Pipeline::parse(std::string(R"({"name": "p", "steps": [{"name": "a",
            "argv": ["a"], "cpu": )") +
                                 bad + "}]}");
        REQUIRE_FALSE(e.has_value());
        CHECK(e.error().message().find("steps[0].cpu") != std::string::npos);
    }
    auto e = Pipeline::parse(R"({"name": "p", "steps": [{"name": "a", "argv": ["a"],
        "cpu": "a b"}]})");
    REQUIRE_FALSE(e.has_value());
    CHECK(e.error().hint.find("-cpu help") != std::string::npos);
}

TEST_CASE("pipeline: outputs stay below the step's cwd and the pipeline's directory") {
    auto p = Pipeline::parse(one_step(R"(, "cwd": "build", "outputs": ["bin/tool", "lib/*.so"])"),
                             "pipeline.json", "/base");
    REQUIRE_MESSAGE(p.has_value(), (p ? "" : p.error().message()));
    CHECK(p->steps[0].outputs == std::vector<std::string>{"bin/tool", "lib/*.so"});
    CHECK(p->dir == "/base");
    CHECK(p->digest.size() == 16);
    const std::pair<const char*, const char*> bad[] = {
        {R"(, "outputs": ["/etc/passwd"])", "steps[0].outputs[0]: is absolute"},
        {R"(, "outputs": ["../x"])", "is not below the step's cwd"},
        {R"(, "outputs": ["a/../../x"])", "is not below the step's cwd"},
        {R"(, "outputs": ["."])", "is not below the step's cwd"},
        {R"(, "outputs": [""])", "outputs[0]: is empty"},
        {R"(, "outputs": ["a\nb"])", "control character"},
        {R"(, "outputs": "bin")", "steps[0].outputs: expected"},
        {R"(, "cwd": "..", "outputs": ["x"])", "is not below the pipeline's directory"},
    };
    for (const auto& entry : bad) {
        const char* extra = entry.first; // not a structured binding: clang 15 cannot capture one
        CAPTURE(extra);
        CHECK_MESSAGE(error_of(one_step(extra)).find(entry.second) != std::string::npos,
                      error_of(one_step(extra)));
    }
    CHECK(error_of(R"({"name": "p", "defaults": {"outputs": ["x"]},
                       "steps": [{"name": "a", "argv": ["true"]}]})")
              .find("defaults.outputs: unknown key") != std::string::npos);
}

TEST_CASE("pipeline: the digest follows the document, not its spelling") {
    auto digest = [](const std::string& text, const std::string& dir) {
        auto p = Pipeline::parse(text, "pipeline.json", dir);
        REQUIRE(p.has_value());
        return p->digest;
    };
    const std::string a = R"({"name": "p", "steps": [{"name": "a", "argv": ["true"]}]})";
    const std::string spaced = "{ \"steps\" : [ {\"argv\":[\"true\"], \"name\":\"a\"} ],\n"
                               "  \"name\" : \"p\" }";
    const std::string changed = R"({"name": "p", "steps": [{"name": "a", "argv": ["false"]}]})";
    CHECK(digest(a, "/one") == digest(spaced, "/two")); // another checkout, another layout
    CHECK(digest(a, "/one") != digest(changed, "/one"));
}

TEST_CASE("pipeline: the build job's part leaves out tests and what needs them") {
    auto p = Pipeline::parse(R"({"name": "p", "steps": [
        {"name": "configure", "kind": "configure", "argv": ["c"]},
        {"name": "build", "kind": "build", "argv": ["b"], "needs": ["configure"]},
        {"name": "t1", "kind": "test", "argv": ["t"], "needs": ["build"]},
        {"name": "report", "argv": ["r"], "needs": ["t1"]},
        {"name": "docs", "argv": ["d"]}]})",
                             "pipeline.json", "/base");
    REQUIRE(p.has_value());
    std::vector<std::string> names;
    for (const auto& s : emurun::select_build(*p).steps) {
        names.push_back(s.name);
    }
    CHECK(names == std::vector<std::string>{"configure", "build", "docs"});
}

TEST_CASE("format_seconds: a hostile report's time (1e98 s, inf, NaN) prints, no undefined cast") {
    // Found by fuzz_junit and fuzz_report under UBSan: a test case's time of 3.7e98 s.
    CHECK(emurun::format_seconds(3.7037e98) == "3.7e+98s");
    CHECK(emurun::format_seconds(std::numeric_limits<double>::infinity()) == "infs");
    CHECK(emurun::format_seconds(std::nan("")) == "nans");
    CHECK(emurun::format_seconds(7200) == "2h00m");
}

TEST_CASE("pipeline: limits on steps overlay the defaults key by key") {
    auto p = Pipeline::parse(R"({"name": "p", "defaults": {"limits": {"pids": 100, "memory": "2G"}},
        "steps": [{"name": "a", "argv": ["a"], "limits": {"memory": "512M", "cpu": 1.5}},
                  {"name": "b", "argv": ["b"]},
                  {"name": "c", "argv": ["c"], "limits": {"memory": 1048576, "pids": 1}}]})")
                 .value();
    CHECK(p.steps[0].limits.pids == 100u);
    CHECK(p.steps[0].limits.memory_bytes == 512u << 20);
    CHECK(p.steps[0].limits.cpus == 1.5);
    CHECK(p.steps[1].limits.memory_bytes == 2ULL << 30);
    CHECK(!p.steps[1].limits.cpus);
    CHECK(p.steps[2].limits.memory_bytes == 1u << 20);
    CHECK(p.steps[2].limits.pids == 1u);
    auto gib = Pipeline::parse(one_step(R"(, "limits": {"memory": "1.5GiB"})")).value();
    CHECK(gib.steps[0].limits.memory_bytes == 3ULL << 29);
}

TEST_CASE("pipeline: bad limits give exact messages") {
    CHECK(error_of(one_step(R"(, "limits": {"pids": 0})")) ==
          "pipeline.json: steps[0].limits.pids: expected a whole number from 1 to 4194304, got 0 "
          "(the processes and threads the step may have at once: \"limits\": {\"pids\": 512})");
    CHECK(error_of(one_step(R"(, "limits": {"memory": "2X"})")) ==
          "pipeline.json: steps[0].limits.memory: expected a memory size, got \"2X\" (bytes, or a "
          "size such as \"512M\" or \"2G\" (at least 1M))");
    CHECK(error_of(one_step(R"(, "limits": {"memory": 100})")).find("expected a memory size") !=
          std::string::npos);
    CHECK(error_of(one_step(R"(, "limits": {"memory": "-1G"})")).find("expected a memory size") !=
          std::string::npos);
    CHECK(error_of(one_step(R"(, "limits": {"cpu": 0})")).find("limits.cpu: expected a number") !=
          std::string::npos);
    CHECK(error_of(one_step(R"(, "limits": {"disk": 1})")).find("limits") != std::string::npos);
    CHECK(
        error_of(
            R"({"name": "p", "defaults": {"limits": {"pids": "many"}}, "steps": [{"name": "a", "argv": ["a"]}]})")
            .find("defaults.limits.pids") != std::string::npos);
}
