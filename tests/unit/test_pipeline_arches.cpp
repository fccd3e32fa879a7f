// "arches": per-arch templates, placeholders, needs, --arch, --native; the report side
// (baseline by template, merge of per-arch reports, the per-arch table). No arch is assumed
// foreign: the unit tests also run under qemu on aarch64, ppc64le and s390x.
#include <emurun/arch.hpp>
#include <emurun/json.hpp>
#include <emurun/pipeline.hpp>
#include <emurun/report.hpp>

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <string>
#include <vector>

using emurun::ArchSelection;
using emurun::Pipeline;
using emurun::Report;
using emurun::StepResult;
using emurun::StepStatus;

namespace {

const char* k_three = R"({"name": "p", "arches": ["arm64", "ppc64le", "s390x"],
  "steps": [
    {"name": "build", "kind": "build", "argv": ["make", "CC=${triplet}-gcc"],
     "env": {"DEB": "${debian_arch}"}, "outputs": ["out-${arch}/prog"],
     "native": {"argv": ["make", "CC=cc"]}},
    {"name": "test-${arch}", "kind": "test", "argv": ["out-${arch}/prog"], "needs": ["build"],
     "emulation": "sandbox"},
    {"name": "lint", "argv": ["true"], "per_arch": true, "native": false},
    {"name": "summary", "argv": ["echo", "$${HOME}"], "needs": ["build", "lint"]}
  ]})";

Pipeline parsed(const std::string& text, const ArchSelection& sel = {}) {
    auto p = Pipeline::parse(text, "pipeline.json", "/base", sel);
    REQUIRE_MESSAGE(p.has_value(), (p ? "" : p.error().message()));
    return *p;
}

std::string error_of(const std::string& text, const ArchSelection& sel = {}) {
    auto p = Pipeline::parse(text, "pipeline.json", "/base", sel);
    return p ? std::string() : p.error().message();
}

std::vector<std::string> names(const Pipeline& p) {
    std::vector<std::string> out;
    for (const auto& s : p.steps) {
        out.push_back(s.name);
    }
    return out;
}

// An arch that is not the one running these tests: its instance is emulated by default.
std::string other_arch(const std::vector<std::string>& from) {
    const auto* host = emurun::host_arch();
    for (const auto& a : from) {
        if (!host || a != host->name) {
            return a;
        }
    }
    return from.front();
}

} // namespace

TEST_CASE("arches: templates expand per arch, with placeholders substituted and needs rewired") {
    Pipeline p = parsed(k_three);
    CHECK(p.arches == std::vector<std::string>{"aarch64", "ppc64le", "s390x"});
    CHECK(names(p) == std::vector<std::string>{"build[aarch64]", "build[ppc64le]", "build[s390x]",
                                               "test-aarch64", "test-ppc64le", "test-s390x",
                                               "lint[aarch64]", "lint[ppc64le]", "lint[s390x]",
                                               "summary"});
    const auto* b = p.find("build[s390x]");
    REQUIRE(b);
    CHECK(b->template_name == "build");
    CHECK(b->arch == "s390x");
    CHECK(b->argv == std::vector<std::string>{"make", "CC=s390x-linux-gnu-gcc"});
    CHECK(b->env.at("DEB") == "s390x");
    CHECK(b->outputs == std::vector<std::string>{"out-s390x/prog"});
    const auto* arm = p.find("build[aarch64]");
    CHECK(arm->env.at("DEB") == "arm64");
    const auto* t = p.find("test-ppc64le");
    CHECK(t->template_name == "test-${arch}");
    CHECK(t->needs == std::vector<std::string>{"build[ppc64le]"});
    CHECK(t->emulation == emurun::Emulation::sandbox);
    // Not per arch: runs once, needs every instance, "$${" is a literal "${".
    const auto* sum = p.find("summary");
    CHECK(sum->template_name.empty());
    CHECK(sum->needs == std::vector<std::string>{"build[aarch64]", "build[ppc64le]", "build[s390x]",
                                                 "lint[aarch64]", "lint[ppc64le]", "lint[s390x]"});
    CHECK(sum->argv == std::vector<std::string>{"echo", "${HOME}"});
}

TEST_CASE("arches: --arch picks instances; arch-less steps stay and need only those") {
    Pipeline p = parsed(k_three, ArchSelection{{"s390x", "arm64"}, false, {}});
    CHECK(p.arches == std::vector<std::string>{"aarch64", "s390x"}); // the file's order
    CHECK(names(p) == std::vector<std::string>{"build[aarch64]", "build[s390x]", "test-aarch64",
                                               "test-s390x", "lint[aarch64]", "lint[s390x]",
                                               "summary"});
    CHECK(p.find("summary")->needs == std::vector<std::string>{"build[aarch64]", "build[s390x]",
                                                               "lint[aarch64]", "lint[s390x]"});
    auto e = error_of(k_three, ArchSelection{{"riscv64"}, false, {}});
    CHECK(e.find("riscv64") != std::string::npos);
    CHECK(e.find("not in the pipeline's arches (aarch64, ppc64le, s390x)") != std::string::npos);
    CHECK(error_of(k_three, ArchSelection{{"nosuch"}, false, {}}).find("unknown architecture") !=
          std::string::npos);
    auto plain = R"({"name": "p", "steps": [{"name": "a", "argv": ["true"]}]})";
    CHECK(error_of(plain, ArchSelection{{"s390x"}, false, {}}).find("has no \"arches\"") !=
          std::string::npos);
}

TEST_CASE("arches: --native runs each template once natively with its overrides") {
    const std::string host = other_arch({"x86_64", "aarch64"}); // any arch of the table
    Pipeline p = parsed(k_three, ArchSelection{{}, true, host});
    CHECK(p.arches == std::vector<std::string>{host});
    CHECK(p.native);
    CHECK_FALSE(parsed(k_three).native);
    CHECK(names(p) == std::vector<std::string>{"build[" + host + "]", "test-" + host, "summary"});
    const auto* b = p.find("build[" + host + "]");
    CHECK(b->template_name == "build");
    CHECK(b->emulation == emurun::Emulation::native);
    CHECK(b->argv == std::vector<std::string>{"make", "CC=cc"}); // "native" override
    CHECK(b->env.at("DEB") == emurun::find_arch(host).value()->debian);
    const auto* t = p.find("test-" + host);
    CHECK(t->emulation == emurun::Emulation::native); // "emulation": "sandbox" dropped
    CHECK(t->needs == std::vector<std::string>{"build[" + host + "]"});
    CHECK(p.find("summary")->needs == std::vector<std::string>{"build[" + host + "]"}); // no lint
    CHECK(error_of(k_three, ArchSelection{{"s390x"}, true, host}).find("no arch selection") !=
          std::string::npos);
    CHECK(error_of(k_three, ArchSelection{{}, true, ""}).find("not in emurun's table") !=
          std::string::npos);
}

TEST_CASE("arches: --native refuses a pipeline the emulated runs refuse") {
    // The baseline job would pass a pipeline its emulated jobs then reject (review finding).
    std::string bad = k_three;
    const std::string sandbox = "\"emulation\": \"sandbox\"";
    bad.replace(bad.find(sandbox), sandbox.size(), "\"emulation\": \"qemu\"");
    const std::string emulated = error_of(bad);
    CHECK(emulated.find("expected native, exec, sandbox, host, auto or root, got \"qemu\"") !=
          std::string::npos);
    CHECK(error_of(bad, ArchSelection{{}, true, "x86_64"}) == emulated);
}

TEST_CASE("arches: native env overrides merge; a need on a step left out natively goes away") {
    auto text = R"({"name": "p", "arches": ["s390x"], "steps": [
      {"name": "cfg", "argv": ["cmake", "-DCMAKE_TOOLCHAIN_FILE=${triplet}.cmake"],
       "env": {"A": "1", "CC": "${triplet}-gcc"}, "native": {"argv": ["cmake"], "env": {"CC": "cc"}}},
      {"name": "pre", "argv": ["true"], "native": false},
      {"name": "build", "argv": ["make"], "needs": ["cfg", "pre"], "per_arch": true}]})";
    Pipeline p = parsed(text, ArchSelection{{}, true, "x86_64"});
    CHECK(names(p) == std::vector<std::string>{"cfg[x86_64]", "build[x86_64]"});
    CHECK(p.steps[0].argv == std::vector<std::string>{"cmake"});
    CHECK(p.steps[0].env.at("A") == "1");
    CHECK(p.steps[0].env.at("CC") == "cc");
    CHECK(p.steps[1].needs == std::vector<std::string>{"cfg[x86_64]"});
    // In an arch run the "native" object is not used.
    Pipeline q = parsed(text);
    CHECK(q.steps[0].argv[1] == "-DCMAKE_TOOLCHAIN_FILE=s390x-linux-gnu.cmake");
    CHECK(q.find("pre"));
}

TEST_CASE("arches: bad input names the step, the key and what to do") {
    auto with = [](const std::string& arches, const std::string& step) {
        return std::string(R"({"name": "p", )") + arches + R"("steps": [)" + step + "]}";
    };
    const std::string a = R"("arches": ["aarch64"], )";
    CHECK(error_of(with(a, R"({"name": "x", "argv": ["echo", "${arc}"]})")) ==
          "pipeline.json: steps[0].argv[1]: unknown placeholder ${arc} (the placeholders are "
          "${arch}, ${triplet} and ${debian_arch}; write $${NAME} for a literal ${NAME} (a shell "
          "variable))");
    CHECK(error_of(with(a, R"({"name": "x", "argv": ["${arch"]})")).find("unclosed") !=
          std::string::npos);
    CHECK(error_of(with("", R"({"name": "x", "argv": ["${triplet}-gcc"]})")) ==
          "pipeline.json: steps[0]: uses ${triplet}, but the pipeline has no \"arches\" (add "
          "\"arches\": [\"aarch64\", ...] at the top of the pipeline)");
    // Without "arches" a shell's own ${VAR} stays as it is.
    auto plain =
        Pipeline::parse(with("", R"({"name": "x", "shell": true, "argv": "echo ${HOME}"})"),
                        "pipeline.json", "/base");
    REQUIRE(plain);
    CHECK(plain->steps[0].argv[2] == "echo ${HOME}");
    CHECK(error_of(with("", R"({"name": "x", "argv": ["a"], "per_arch": true})"))
              .find("steps[0].per_arch: is true, but the pipeline has no \"arches\"") !=
          std::string::npos);
    CHECK(error_of(with(R"("arches": ["aarch64", "arm64"], )", R"({"name": "x", "argv": ["a"]})"))
              .find("arches[1]: \"arm64\" is aarch64, listed twice") != std::string::npos);
    CHECK(error_of(with(R"("arches": [], )", R"({"name": "x", "argv": ["a"]})"))
              .find("non-empty list") != std::string::npos);
    CHECK(error_of(with(R"("arches": ["vax"], )", R"({"name": "x", "argv": ["a"]})"))
              .find("arches[0]: unknown architecture \"vax\"") != std::string::npos);
    CHECK(error_of(with(a, R"({"name": "x", "argv": ["a"], "per_arch": true, "arch": "s390x"})"))
              .find("steps[0].arch: is s390x in the aarch64 instance") != std::string::npos);
    CHECK(error_of(with(a, R"({"name": "x", "argv": ["a"], "native": 1})"))
              .find("steps[0].native: expected false or an object") != std::string::npos);
    CHECK(error_of(with(a, R"({"name": "x", "argv": ["a"], "native": {"name": "y"}})"))
              .find("steps[0].native") != std::string::npos);
    CHECK(error_of(
              R"({"name": "p", "arches": ["s390x"], "defaults": {"env": {"CC": "${triplet}-gcc"}},
                       "steps": [{"name": "x", "argv": ["a"]}]})")
              .find("defaults: uses ${triplet}") != std::string::npos);
    // An instance's own error says which instance, at the template's place.
    CHECK(error_of(with(a, R"({"name": "x-${arch}", "argv": ["a"], "needs": ["nope-${arch}"]})")) ==
          "pipeline.json: steps[0].needs[0]: unknown step \"nope-aarch64\" (in its aarch64 "
          "instance)");
    CHECK(error_of(with(a, R"({"name": "x", "argv": ["a"], "per_arch": true},
                             {"name": "x[aarch64]", "argv": ["b"]})"))
              .find("steps[1].name: duplicate step name \"x[aarch64]\" (first used by steps[0])") !=
          std::string::npos);
    // A name that is no string is an error, not an exception, in every variant.
    const std::string bad_name = with(a, R"({"name": 5, "argv": ["${arch}"]})");
    CHECK(error_of(bad_name) ==
          "pipeline.json: steps[0].name: expected a string, got 5 (in its aarch64 instance)");
    CHECK(error_of(bad_name, ArchSelection{{}, true, "x86_64"}).find("steps[0].name") !=
          std::string::npos);
    const std::string all_out = with(a, R"({"name": "x", "argv": ["a"], "native": false})");
    CHECK(error_of(all_out, ArchSelection{{}, true, "x86_64"}).find("no step is left") !=
          std::string::npos);
}

namespace {

StepResult result(const std::string& name, const std::string& tmpl, const std::string& arch,
                  double wall, StepStatus status = StepStatus::passed) {
    StepResult s;
    s.name = name;
    s.template_name = tmpl;
    s.arch = arch;
    s.wall = wall;
    s.status = status;
    s.exit_code = 0;
    // A step of a foreign arch runs emulated (the host's and arch-less steps natively).
    s.emulation =
        arch.empty() || arch == "x86_64" ? emurun::Emulation::native : emurun::Emulation::exec;
    return s;
}

Report report(std::vector<StepResult> steps, double wall = 10) {
    Report r;
    r.pipeline = "p";
    r.started = "2026-01-01T00:00:00Z";
    r.host_arch = "x86_64";
    r.wall = wall;
    r.steps = std::move(steps);
    return r;
}

} // namespace

TEST_CASE("arches: a native baseline is matched by template, then by exact name") {
    Report native =
        report({result("build[x86_64]", "build", "x86_64", 2), result("summary", "", "", 1)});
    Report run =
        report({result("build[s390x]", "build", "s390x", 30),
                result("build[aarch64]", "build", "aarch64", 10), result("summary", "", "", 1.5)});
    emurun::apply_flags(run, emurun::FlagRules{}, &native, nullptr);
    CHECK(run.steps[0].baseline_wall == 2.0);
    CHECK(run.steps[0].flags.size() == 1); // 15x over 10x
    CHECK(run.steps[1].baseline_wall == 2.0);
    CHECK(run.steps[1].flags.empty());
    CHECK_FALSE(run.steps[2].baseline_wall); // a native step has no emulation factor
    // A baseline with several instances: the same arch's.
    Report both = report({result("build[aarch64]", "build", "aarch64", 4),
                          result("build[s390x]", "build", "s390x", 6)});
    CHECK(both.find_like(run.steps[0])->name == "build[s390x]");
}

TEST_CASE("arches: report merge joins per-arch reports of one pipeline") {
    Report arm =
        report({result("build[aarch64]", "build", "aarch64", 3), result("summary", "", "", 1)}, 12);
    Report z = report({result("build[s390x]", "build", "s390x", 5),
                       result("summary", "", "", 1, StepStatus::failed)},
                      20);
    std::vector<Report> two{arm, z};
    auto m = emurun::merge_reports(two);
    REQUIRE_MESSAGE(m.has_value(), (m ? "" : m.error().message()));
    CHECK(m->steps.size() == 3);
    CHECK(m->find("summary")->status == StepStatus::failed); // the worst
    CHECK(m->wall == 20);
    CHECK(m->arches() == std::vector<std::string>{"aarch64", "s390x"});
    // The same arch twice, a report without per-arch steps, another pipeline: refused.
    std::vector<Report> twice{arm, arm};
    CHECK(emurun::merge_reports(twice).error().message().find("given twice") != std::string::npos);
    Report plain = report({result("summary", "", "", 1)});
    std::vector<Report> mixed{arm, plain};
    CHECK(emurun::merge_reports(mixed).error().message().find("no per-arch steps") !=
          std::string::npos);
    Report overlap = report({result("build[aarch64]", "build", "aarch64", 3),
                             result("build[s390x]", "build", "s390x", 3)});
    std::vector<Report> over{arm, overlap};
    CHECK(emurun::merge_reports(over).error().message().find("arch aarch64 is in two reports") !=
          std::string::npos);
    Report other = z;
    other.pipeline = "q";
    std::vector<Report> diff{arm, other};
    CHECK(emurun::merge_reports(diff).error().message().find("different pipelines") !=
          std::string::npos);
    // Shards of one arch's run are still checked: 1/2 without 2/2 is refused.
    Report shard = z;
    shard.shard_count = 2;
    std::vector<Report> missing{arm, shard};
    CHECK(emurun::merge_reports(missing).error().message().find("shard 2 of 2 is missing") !=
          std::string::npos);
}

TEST_CASE("arches: report merge refuses the native baseline's report, naming its file") {
    Report arm =
        report({result("build[aarch64]", "build", "aarch64", 3), result("summary", "", "", 1)});
    Report z = report({result("build[s390x]", "build", "s390x", 5), result("summary", "", "", 1)});
    Report native =
        report({result("build[x86_64]", "build", "x86_64", 1), result("summary", "", "", 1)});
    native.native_baseline = true;
    std::vector<Report> three{arm, native, z};
    const std::vector<std::string> files{"aarch64.json", "native.json", "s390x.json"};
    auto m = emurun::merge_reports(three, files);
    REQUIRE_FALSE(m.has_value());
    CHECK(m.error().message() ==
          "merge reports: native.json is the native baseline's report (each per-arch step once, "
          "natively), not one arch's run (merge the other reports without it: it is their "
          "baseline, given to each arch's run (option baseline))");
    CHECK(emurun::merge_reports(three).error().message().find("report 2 is the native") !=
          std::string::npos); // without names, its place
    // The shards of one native run merge as any shards do.
    Report one = native, two = native;
    one.shard_count = two.shard_count = 2;
    two.shard_index = 2;
    std::vector<Report> shards{one, two};
    auto both = emurun::merge_reports(shards);
    REQUIRE_MESSAGE(both.has_value(), (both ? "" : both.error().message()));
    CHECK(both->native_baseline);
    // The mark survives JSON; a report without it (older emurun) is not a baseline.
    auto back = Report::parse(emurun::json_text(native.to_json()), "native.json");
    REQUIRE(back.has_value());
    CHECK(back->native_baseline);
    auto j = arm.to_json();
    j.erase("native_baseline");
    CHECK_FALSE(Report::from_json(j, "old.json").value().native_baseline);
    j["native_baseline"] = "yes";
    CHECK(Report::from_json(j, "bad.json").error().message().find("native_baseline") !=
          std::string::npos);
}

TEST_CASE("arches: table and Markdown have a row per template and a column per arch") {
    Report r = report({result("build[aarch64]", "build", "aarch64", 3),
                       result("build[s390x]", "build", "s390x", 5, StepStatus::failed),
                       result("test-aarch64", "test-${arch}", "aarch64", 8),
                       result("summary", "", "", 1)});
    r.steps[0].baseline_wall = 1.5;
    const std::string table = emurun::to_table(r);
    CHECK(table.find("per arch (wall, x baseline wall):\nstep          aarch64    s390x\n"
                     "build         3.0s 2.0x  failed 5.0s\n"
                     "test-${arch}  8.0s       -\n") != std::string::npos);
    const std::string md = emurun::to_markdown(r);
    CHECK(md.find(
              "#### Per arch (wall, x baseline wall)\n\n| step | aarch64 | s390x |\n|---|---|---|\n"
              "| build | 3.0s 2.0x | failed 5.0s |\n| test-${arch} | 8.0s | - |\n") !=
          std::string::npos);
    // JSON stays flat, with the template and arch of each step.
    auto j = r.to_json();
    CHECK(j["steps"][2]["template"] == "test-${arch}");
    CHECK(j["steps"][3]["template"] == "");
    auto back = Report::from_json(j, "r.json");
    REQUIRE(back);
    CHECK(back->steps[2].template_name == "test-${arch}");
    // Without per-arch steps there is no per-arch table.
    CHECK(emurun::to_table(report({result("a", "", "", 1)})).find("per arch") == std::string::npos);
}
