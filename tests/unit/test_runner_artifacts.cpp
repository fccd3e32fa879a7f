// Artifact archives: the manifest, its match with the pipeline, the paths a build packs, and the
// checks a test job makes of the members and of the unpacked tree, without tar; with tar (skipped
// without it), an interrupt while it runs.
#include "fake_command_runner.hpp"
#include "skip.hpp"
#include "testdir.hpp"
#include "util/file.hpp"
#include "util/path.hpp"

#include <emurun/artifacts.hpp>

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <csignal>
#include <cstdlib>
#include <cstring>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace emurun;
namespace fs = std::filesystem;

namespace {

const char* const k_pipeline = R"({"name": "p", "steps": [
    {"name": "build", "kind": "build", "argv": ["b"], "cwd": "out",
     "outputs": ["bin/tool", "lib/*.so", "share"]},
    {"name": "docs", "argv": ["d"], "outputs": ["doc.txt"]},
    {"name": "t", "kind": "test", "argv": ["t"], "needs": ["build"]}]})";

Pipeline pipeline_in(const fs::path& dir, const std::string& text = k_pipeline) {
    auto p = Pipeline::parse(text, "pipeline.json", dir);
    REQUIRE_MESSAGE(p.has_value(), (p ? "" : p.error().message()));
    return *p;
}

void touch(const fs::path& file) {
    fs::create_directories(file.parent_path());
    std::ofstream(file) << "x";
}

// k_pipeline in `dir`, with the outputs of its step build made.
Pipeline built_in(const fs::path& dir) {
    touch(dir / "out/bin/tool");
    touch(dir / "out/lib/liba.so");
    touch(dir / "out/share/x");
    return pipeline_in(dir);
}

Report passed(std::initializer_list<const char*> names) {
    Report r;
    r.pipeline = "p";
    r.started = "2026-01-01T00:00:00Z";
    for (const char* n : names) {
        StepResult s;
        s.name = n;
        s.status = StepStatus::passed;
        s.exit_code = 0;
        s.wall = 2;
        r.steps.push_back(s);
    }
    return r;
}

ArtifactManifest manifest_of(const Pipeline& p, std::vector<std::string> paths) {
    ArtifactManifest m;
    m.pipeline = p.name;
    m.digest = p.digest;
    m.paths = std::move(paths);
    m.report = passed({"build"});
    m.id = artifact_id(m);
    return m;
}

std::string message_of(const Result<void>& r) {
    return r ? std::string() : r.error().message();
}

} // namespace

TEST_CASE("artifacts: the outputs of passed steps, globs expanded, relative to the pipeline") {
    const fs::path dir = test::testdir("collect");
    Pipeline p = pipeline_in(dir);
    touch(dir / "out/bin/tool");
    touch(dir / "out/lib/liba.so");
    touch(dir / "out/lib/libb.so");
    touch(dir / "out/share/x/y");
    touch(dir / "doc.txt");
    auto paths = collect_outputs(p, passed({"build"})); // docs did not pass: left out
    REQUIRE_MESSAGE(paths.has_value(), (paths ? "" : paths.error().message()));
    CHECK(*paths == std::vector<std::string>{"out/bin/tool", "out/lib/liba.so", "out/lib/libb.so",
                                             "out/share"});
    fs::remove(dir / "out/bin/tool");
    auto missing = collect_outputs(p, passed({"build", "docs"}));
    REQUIRE_FALSE(missing.has_value());
    CHECK(missing.error().message().find("step build: output \"bin/tool\"") != std::string::npos);
    CHECK(missing.error().message().find("does not exist") != std::string::npos);
    touch(dir / "out/bin/tool");
    fs::remove(dir / "out/lib/liba.so");
    fs::remove(dir / "out/lib/libb.so");
    auto none = collect_outputs(p, passed({"build"}));
    REQUIRE_FALSE(none.has_value());
    CHECK(none.error().message().find("\"lib/*.so\": matches nothing") != std::string::npos);
}

TEST_CASE("artifacts: a manifest round-trips and must match the pipeline that unpacks it") {
    const fs::path dir = test::testdir("manifest");
    Pipeline p = pipeline_in(dir);
    ArtifactManifest m = manifest_of(p, {"out/bin/tool", "out/share"});
    auto back = parse_manifest(manifest_json(m), "a.tar");
    REQUIRE_MESSAGE(back.has_value(), (back ? "" : back.error().message()));
    CHECK(back->id == m.id);
    CHECK(back->paths == m.paths);
    CHECK(message_of(check_manifest(*back, p, "a.tar")).empty());

    Pipeline changed = pipeline_in(
        dir,
        std::string(k_pipeline).replace(std::string(k_pipeline).find("[\"d\"]"), 5, "[\"e\"]"));
    CHECK(message_of(check_manifest(m, changed, "a.tar"))
              .find("packed from another version of pipeline \"p\"") != std::string::npos);
    Pipeline renamed = p;
    renamed.name = "q";
    CHECK(message_of(check_manifest(m, renamed, "a.tar")).find("packed for pipeline \"p\"") !=
          std::string::npos);
    ArtifactManifest tampered = m;
    tampered.paths.push_back("out/more");
    CHECK(message_of(check_manifest(tampered, p, "a.tar")).find("edited after packing") !=
          std::string::npos);
    ArtifactManifest test_step = m;
    test_step.report = passed({"t"});
    test_step.id = artifact_id(test_step);
    CHECK(message_of(check_manifest(test_step, p, "a.tar")).find("lists step \"t\"") !=
          std::string::npos);
}

TEST_CASE("artifacts: unsafe manifest paths are refused when read") {
    Pipeline p = pipeline_in(test::testdir("unsafe"));
    for (std::string bad : {"/etc/passwd", "../x", "a/../../x", "./a", "a//b", "a/", "", "a\nb"}) {
        CAPTURE(bad);
        ArtifactManifest m = manifest_of(p, {bad});
        auto r = parse_manifest(manifest_json(m), "a.tar");
        REQUIRE_FALSE(r.has_value());
        CHECK(r.error().message().find("paths[0]: unsafe path") != std::string::npos);
    }
    ArtifactManifest nested = manifest_of(p, {"out", "out/bin"});
    auto r = parse_manifest(manifest_json(nested), "a.tar");
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().message().find("one below another") != std::string::npos);
    CHECK_FALSE(parse_manifest("{\"format\": 2}", "a.tar").has_value());
    CHECK_FALSE(parse_manifest("[]", "a.tar").has_value());
}

TEST_CASE("artifacts: archive members must be the manifest's paths, relative, without ..") {
    Pipeline p = pipeline_in(test::testdir("members"));
    ArtifactManifest m = manifest_of(p, {"out/bin/tool", "out/share"});
    const std::vector<std::string> good{".emurun-artifacts.json", "out/bin/tool", "out/share/",
                                        "out/share/x/y"};
    CHECK(message_of(check_archive_members(good, m, "a.tar")).empty());
    for (std::string bad : {"/etc/passwd", "out/share/../../../etc/passwd", "out/bin/tool2",
                            "out/sharex", "other", "../out/share"}) {
        CAPTURE(bad);
        std::vector<std::string> members = good;
        members.emplace_back(bad);
        CHECK(message_of(check_archive_members(members, m, "a.tar")).find("member \"") !=
              std::string::npos);
    }
}

TEST_CASE("artifacts: an unpacked tree with an escaping symlink or a special file is refused") {
    const fs::path root = test::testdir("tree");
    touch(root / "out/bin/tool");
    fs::create_symlink("tool", root / "out/bin/alias");
    fs::create_symlink("../bin/tool", root / "out/bin/up");
    CHECK(message_of(check_unpacked_tree(root)).empty());
    fs::create_symlink("../../../etc", root / "out/escape");
    CHECK(message_of(check_unpacked_tree(root)).find("outside the archive") != std::string::npos);
    fs::remove(root / "out/escape");
    fs::create_symlink("/etc/passwd", root / "out/absolute");
    CHECK(message_of(check_unpacked_tree(root)).find("outside the archive") != std::string::npos);
    fs::remove(root / "out/absolute");
    REQUIRE(::mkfifo((root / "out/fifo").c_str(), 0600) == 0);
    CHECK(message_of(check_unpacked_tree(root)).find("neither a file") != std::string::npos);
    fs::remove(root / "out/fifo");
    const fs::path outside = test::testdir("tree-outside") / "secret";
    touch(outside);
    fs::create_hard_link(outside, root / "out/hard");
    CHECK(message_of(check_unpacked_tree(root)).find("hard link") != std::string::npos);
    fs::create_hard_link(root / "out/hard", root / "out/hard2");
    fs::remove(outside); // both links now inside the tree
    CHECK(message_of(check_unpacked_tree(root)).empty());
}

TEST_CASE("artifacts: outputs whose symlinks lead outside the pipeline are refused on pack") {
    // `ln -s /etc lnk` and an output lnk/passwd packed the host's /etc/passwd; an output
    // directory holding a symlink to an absolute path packed a link every unpack refuses.
    const fs::path dir = test::testdir("pack-symlinks");
    const std::string text = R"({"name": "p", "steps": [
        {"name": "build", "kind": "build", "argv": ["b"], "outputs": ["lnk/passwd"]},
        {"name": "tree", "argv": ["t"], "outputs": ["out"]},
        {"name": "up", "argv": ["u"], "outputs": ["up/*"]}]})";
    Pipeline p = pipeline_in(dir, text);
    fs::create_directory_symlink("/etc", dir / "lnk");
    touch(dir / "out/file");
    fs::create_symlink("file", dir / "out/inside");   // relative, inside: fine
    fs::create_symlink("../../x", dir / "out/above"); // leaves the pipeline's directory
    fs::create_directories(dir / "up");
    fs::create_symlink("/etc/passwd", dir / "up/abs");
    auto error_of = [&](const char* step) {
        auto paths = collect_outputs(p, passed({step}));
        return paths ? std::string() : paths.error().message();
    };
    const std::string lnk = error_of("build");
    CHECK_MESSAGE(lnk.starts_with("pack outputs: step build: output \"lnk/passwd\": " +
                                  (dir / "lnk/passwd").string() +
                                  " is outside the pipeline's directory (its directory is /etc"),
                  lnk);
    const std::string tree = error_of("tree");
    CHECK_MESSAGE(tree.starts_with("pack outputs: step tree: output \"out\": out/above is a "
                                   "symlink to ../../x, outside the archive"),
                  tree);
    const std::string up = error_of("up");
    CHECK_MESSAGE(up.find("up/abs is a symlink to /etc/passwd, outside the archive") !=
                      std::string::npos,
                  up);
    fs::remove(dir / "out/above");
    CHECK(error_of("tree").empty()); // the relative symlink inside stays
}

namespace {

// Runs `body` with SIGTERM blocked and pending (as `emurun run` keeps it); whether it was
// pending again afterwards (then taken).
template <class F> bool with_pending_sigterm(F body) {
    sigset_t term, old;
    sigemptyset(&term);
    sigaddset(&term, SIGTERM);
    ::pthread_sigmask(SIG_BLOCK, &term, &old);
    ::raise(SIGTERM);
    body();
    sigset_t pending;
    sigemptyset(&pending);
    ::sigpending(&pending);
    const bool again = sigismember(&pending, SIGTERM) == 1;
    timespec now{};
    while (::sigtimedwait(&term, nullptr, &now) == SIGTERM) {
    }
    ::pthread_sigmask(SIG_SETMASK, &old, nullptr);
    return again;
}

bool holds_temporary(const fs::path& dir) {
    for (const auto& e : fs::directory_iterator(dir)) {
        const auto name = e.path().filename().string();
        if (name.find(".tmp-") != std::string::npos || name.starts_with(".emurun-unpack-")) {
            return true;
        }
    }
    return false;
}

} // namespace

TEST_CASE("artifacts: SIGTERM while tar packs or unpacks stops it, nothing is left" *
          test::may_skip()) {
    if (!emurun::util::find_executable("tar")) {
        EMURUN_SKIP("tar is not in PATH");
    }
    const fs::path dir = test::testdir("pack-interrupt");
    Pipeline p = built_in(dir);
    Report report = passed({"build"});
    const fs::path archive = dir / "b.tar";
    Result<ArtifactManifest> packed = ArtifactManifest{};
    CHECK(with_pending_sigterm([&] { packed = pack_artifacts(p, report, archive); }));
    REQUIRE_FALSE(packed.has_value());
    CHECK(packed.error().message() ==
          "pack " + archive.string() + ": interrupted by SIGTERM (nothing was written)");
    CHECK(report.interrupted_by == SIGTERM);
    CHECK_FALSE(report.artifacts.has_value());
    CHECK_FALSE(fs::exists(archive));
    CHECK_FALSE(holds_temporary(dir));

    report = passed({"build"});
    REQUIRE(pack_artifacts(p, report, archive).has_value()); // undisturbed, it packs
    const fs::path fresh = test::testdir("unpack-interrupt");
    fs::copy_file(archive, fresh / "b.tar");
    Pipeline q = pipeline_in(fresh);
    Result<ReusedSteps> reused = ReusedSteps{};
    CHECK(with_pending_sigterm([&] { reused = unpack_artifacts(q, fresh / "b.tar"); }));
    REQUIRE_FALSE(reused.has_value());
    CHECK(reused.error().message().find("interrupted by SIGTERM") != std::string::npos);
    CHECK_FALSE(fs::exists(fresh / "out"));
    CHECK_FALSE(holds_temporary(fresh));
}

namespace {

const char* const k_arches = R"({"name": "p", "arches": ["aarch64", "ppc64le"], "steps": [
    {"name": "build", "kind": "build", "argv": ["b"], "outputs": ["out-${arch}"]},
    {"name": "t", "kind": "test", "argv": ["t"], "per_arch": true, "needs": ["build"]}]})";

Pipeline arches_in(const fs::path& dir, const ArchSelection& selection) {
    auto p = Pipeline::parse(k_arches, "pipeline.json", dir, selection);
    REQUIRE_MESSAGE(p.has_value(), (p ? "" : p.error().message()));
    return *p;
}

// The manifest of a build job of `arch` (the native baseline's when `native`).
ArtifactManifest built_for(const Pipeline& p, const std::string& arch, bool native = false) {
    ArtifactManifest m = manifest_of(p, {"out-" + arch});
    m.report = passed({""});
    m.report.native_baseline = native;
    m.report.steps[0].name = "build[" + arch + "]";
    m.report.steps[0].template_name = "build";
    m.report.steps[0].arch = arch;
    m.id = artifact_id(m);
    return m;
}

} // namespace

TEST_CASE("artifacts: an arch's archive is refused by another arch's run and the native one") {
    const fs::path dir = test::testdir("arches");
    const Pipeline arm = arches_in(dir, {{"aarch64"}, false, {}});
    const ArtifactManifest m = built_for(arm, "aarch64");
    CHECK(message_of(check_manifest(m, arm, "a.tar")).empty());
    CHECK(message_of(check_manifest(m, arches_in(dir, {}), "a.tar")).empty()); // both arches
    const std::string other =
        message_of(check_manifest(m, arches_in(dir, {{"ppc64le"}, false, {}}), "a.tar"));
    CHECK(other == "artifacts a.tar: packed for arch aarch64, and this run selects ppc64le "
                   "(pack one archive in each arch's build job, or unpack it in the run of the "
                   "arches it was packed for (option arches))");
    // The native baseline (its arch named here: no host is assumed) and an arch's run.
    const Pipeline native = arches_in(dir, {{}, true, "s390x"});
    CHECK(message_of(check_manifest(m, native, "a.tar"))
              .find("packed by a run that was not the native baseline, and this run is one") !=
          std::string::npos);
    const ArtifactManifest baseline = built_for(native, "s390x", true);
    CHECK(message_of(check_manifest(baseline, native, "a.tar")).empty());
    CHECK(message_of(check_manifest(baseline, arches_in(dir, {}), "a.tar"))
              .find("packed by the native baseline's run, and this run is not one") !=
          std::string::npos);
}

TEST_CASE("artifacts: the manifest's logs are plain file names, each once, and archive members") {
    Pipeline p = pipeline_in(test::testdir("logs-manifest"));
    ArtifactManifest m = manifest_of(p, {"out/bin/tool"});
    m.logs = {"build.log", "build@attempt1.log"};
    m.report.steps[0].log = "logs/build.log";
    m.report.steps[0].attempts.resize(2);
    m.report.steps[0].attempts[0].log = "logs/build@attempt1.log";
    m.report.steps[0].attempts[1].log = "logs/build.log";
    m.id = artifact_id(m);
    ArtifactManifest no_logs = m;
    no_logs.logs.clear();
    CHECK(m.id != artifact_id(no_logs)); // the logs are part of the identity
    auto back = parse_manifest(manifest_json(m), "a.tar");
    REQUIRE_MESSAGE(back.has_value(), (back ? "" : back.error().message()));
    CHECK(back->logs == m.logs);
    CHECK(message_of(check_manifest(*back, p, "a.tar")).empty());
    for (std::string bad : {"a/b.log", "..", ".", "", "x\ny", "build.log"}) {
        CAPTURE(bad);
        ArtifactManifest b = m;
        b.logs.push_back(bad); // "build.log" twice
        auto r = parse_manifest(manifest_json(b), "a.tar");
        REQUIRE_FALSE(r.has_value());
        CHECK(r.error().message().find("logs[2]: expected a log's file name, each once") !=
              std::string::npos);
    }
    const std::vector<std::string> good{".emurun-artifacts.json", ".emurun-logs/",
                                        ".emurun-logs/build.log", "out/bin/tool"};
    CHECK(message_of(check_archive_members(good, m, "a.tar")).empty());
    const std::vector<std::string> extra{".emurun-logs/other.log"};
    CHECK(message_of(check_archive_members(extra, m, "a.tar"))
              .find("member \".emurun-logs/other.log\" is not one of the manifest's paths") !=
          std::string::npos);
}

TEST_CASE("artifacts: the packed steps' logs travel in the archive to the test job's log dir" *
          test::may_skip()) {
    if (!emurun::util::find_executable("tar")) {
        EMURUN_SKIP("tar is not in PATH");
    }
    const fs::path dir = test::testdir("pack-logs");
    Pipeline p = built_in(dir);
    touch(dir / "doc.txt");
    fs::create_directories(dir / "logs");
    std::ofstream(dir / "logs/build.log") << "the build's output\n";
    std::ofstream(dir / "logs/build@attempt1.log") << "the first attempt\n";
    Report report = passed({"build", "docs"});
    report.steps[0].log = dir / "logs/build.log";
    report.steps[0].attempts.resize(2);
    report.steps[0].attempts[0].status = StepStatus::failed;
    report.steps[0].attempts[0].log = dir / "logs/build@attempt1.log";
    report.steps[0].attempts[1].status = StepStatus::passed;
    report.steps[0].attempts[1].log = dir / "logs/build.log";
    report.steps[1].log = dir / "logs/docs.log"; // gone: not packed
    auto packed = pack_artifacts(p, report, dir / "b.tar");
    REQUIRE_MESSAGE(packed.has_value(), (packed ? "" : packed.error().message()));
    CHECK(packed->logs == std::vector<std::string>{"build.log", "build@attempt1.log"});

    const fs::path fresh = test::testdir("unpack-logs");
    auto reused = unpack_artifacts(pipeline_in(fresh), dir / "b.tar", fresh / "test-logs");
    REQUIRE_MESSAGE(reused.has_value(), (reused ? "" : reused.error().message()));
    REQUIRE(reused->steps.size() == 2);
    const StepResult& build = reused->steps[0];
    CHECK(build.log == fresh / "test-logs/build.log");
    CHECK(emurun::util::read_file(build.log).value_or("") == "the build's output\n");
    CHECK(build.attempts.at(0).log == fresh / "test-logs/build@attempt1.log");
    CHECK(emurun::util::read_file(build.attempts[0].log).value_or("") == "the first attempt\n");
    CHECK(reused->steps[1].log.empty());
    CHECK_FALSE(fs::exists(fresh / ".emurun-logs"));
    CHECK(fs::exists(fresh / "out/bin/tool"));
}

TEST_CASE("artifacts: a reused step whose log was not packed gets a log saying so") {
    RunnerOptions o = test::runner_options("reused-log");
    StepResult built;
    built.name = "build";
    built.status = StepStatus::passed;
    built.wall = 3;
    o.reused = ReusedSteps{"0123456789abcdef", {built}};
    test::FakeCommandRunner fake;
    auto r = Runner(test::pipeline_of(R"([{"name": "build", "kind": "build", "argv": ["b"]},
        {"name": "t", "kind": "test", "argv": ["t"], "needs": ["build"]}])"),
                    o)
                 .run(fake);
    REQUIRE_MESSAGE(r.has_value(), (r ? "" : r.error().message()));
    const StepResult* step = r->find("build");
    REQUIRE(step != nullptr);
    CHECK(step->status == StepStatus::reused);
    CHECK(step->log == o.log_dir / "build.log");
    CHECK(emurun::util::read_file(step->log).value_or("") ==
          "reused: passed in the build job (artifacts 0123456789abcdef); its log is not "
          "in the archive\n");
    CHECK(test::status_of(*r, "t") == StepStatus::passed);
}

TEST_CASE("artifacts: the id covers the report entries; an edited manifest is refused") {
    // Only the steps' names were hashed: a report entry's wall or message edited in the manifest
    // unpacked as if packed so.
    const fs::path dir = test::testdir("manifest-id");
    Pipeline p = pipeline_in(dir);
    ArtifactManifest m = manifest_of(p, {"out/bin/tool"});
    m.report.steps[0].wall = 0.1 + 0.2; // the id survives the JSON round trip of any double
    m.report.steps[0].user = 1e-7;
    m.report.steps[0].message = "built";
    m.id = artifact_id(m);
    CHECK(m.id.size() == 16);
    CHECK(m.id.find_first_not_of("0123456789abcdef") == std::string::npos);
    auto back = parse_manifest(manifest_json(m), "a.tar");
    REQUIRE_MESSAGE(back.has_value(), (back ? "" : back.error().message()));
    CHECK(message_of(check_manifest(*back, p, "a.tar")).empty());
    for (int edit = 0; edit < 3; ++edit) {
        CAPTURE(edit);
        ArtifactManifest e = *back;
        if (edit == 0) {
            e.report.steps[0].wall = 9999;
        } else if (edit == 1) {
            e.report.steps[0].message = "edited";
        } else {
            e.report.wall = 1;
        }
        CHECK(message_of(check_manifest(e, p, "a.tar")) ==
              "artifacts a.tar: its manifest's id " + m.id +
                  " does not match its content: the archive was edited after packing, or written "
                  "by another emurun version (use the archive as the build job of this emurun "
                  "version packed it (run the build job again))");
    }
}

TEST_CASE("artifacts: a packed log is one of its step's own; another step's is refused") {
    // With a recomputed id, "logs": ["t.log"] and the build step's log named t.log made the
    // build's log the test step t's.
    Pipeline p = pipeline_in(test::testdir("logs-own"));
    ArtifactManifest m = manifest_of(p, {"out/bin/tool"});
    m.report.steps[0].log = "logs/t.log";
    m.logs = {"t.log"};
    m.id = artifact_id(m);
    CHECK(message_of(check_manifest(m, p, "a.tar")) ==
          "artifacts a.tar: its manifest lists the log \"t.log\", which is not the log of a "
          "packed step (use the archive as the build job packed it)");
    m.report.steps[0].log = "logs/build.log";
    m.id = artifact_id(m);
    CHECK(message_of(check_manifest(m, p, "a.tar")).find("the log \"t.log\", which is not") !=
          std::string::npos);
    m.logs = {"build.log"};
    m.id = artifact_id(m);
    CHECK(message_of(check_manifest(m, p, "a.tar")).empty());
    m.report.steps.push_back(m.report.steps[0]);
    m.id = artifact_id(m);
    CHECK(message_of(check_manifest(m, p, "a.tar")).find("lists step \"build\" twice") !=
          std::string::npos);
}

namespace {

// An archive of built_in(dir) whose build step has the log `text`, packed as `dir`/b.tar.
fs::path packed_with_log(const fs::path& dir, const std::string& text) {
    Pipeline p = built_in(dir);
    fs::create_directories(dir / "logs");
    std::ofstream(dir / "logs/build.log") << text;
    Report report = passed({"build"});
    report.steps[0].log = dir / "logs/build.log";
    auto packed = pack_artifacts(p, report, dir / "b.tar");
    REQUIRE_MESSAGE(packed.has_value(), (packed ? "" : packed.error().message()));
    return dir / "b.tar";
}

} // namespace

TEST_CASE("artifacts: a reused log replaces a symlink at its name, never writes through it" *
          test::may_skip()) {
    if (!emurun::util::find_executable("tar")) {
        EMURUN_SKIP("tar is not in PATH");
    }
    const fs::path archive = packed_with_log(test::testdir("log-symlink"), "the build's log\n");
    const fs::path fresh = test::testdir("log-symlink-unpack");
    const fs::path victim = test::testdir("log-symlink-victim") / "victim.txt";
    std::ofstream(victim) << "keep me\n";
    fs::create_directories(fresh / "L");
    fs::create_symlink(victim, fresh / "L/build.log");
    auto reused = unpack_artifacts(pipeline_in(fresh), archive, fresh / "L");
    REQUIRE_MESSAGE(reused.has_value(), (reused ? "" : reused.error().message()));
    CHECK(emurun::util::read_file(victim).value_or("") == "keep me\n");
    CHECK(fs::is_regular_file(fs::symlink_status(fresh / "L/build.log")));
    CHECK(emurun::util::read_file(fresh / "L/build.log").value_or("") == "the build's log\n");
    CHECK(reused->steps.at(0).log == fresh / "L/build.log");
    for (const auto& e : fs::directory_iterator(fresh / "L")) {
        CHECK(e.path().filename() == "build.log"); // no temporary file left
    }
}

TEST_CASE("artifacts: a directory at a reused log's name: replaced when empty, else refused" *
          test::may_skip()) {
    if (!emurun::util::find_executable("tar")) {
        EMURUN_SKIP("tar is not in PATH");
    }
    const fs::path archive = packed_with_log(test::testdir("log-dir"), "the build's log\n");
    const fs::path fresh = test::testdir("log-dir-unpack");
    fs::create_directories(fresh / "L/build.log/inside");
    auto refused = unpack_artifacts(pipeline_in(fresh), archive, fresh / "L");
    REQUIRE_FALSE(refused.has_value());
    const std::string log = (fresh / "L/build.log").string();
    CHECK(refused.error().message() ==
          "unpack the log build.log into " + (fresh / "L").string() + ": " + log +
              " is a directory, and not empty (a run fails the step whose log it is: open "
              "failed: Is a directory) (nothing was unpacked and no step ran; remove it, or "
              "choose another log directory (option log_dir))");
    CHECK(refused.error().kind == ErrorKind::conflict);
    CHECK(refused.error().field == "log_dir");
    CHECK_FALSE(fs::exists(fresh / "out"));
    CHECK_FALSE(holds_temporary(fresh));
    fs::remove(fresh / "L/build.log/inside"); // empty: replaced, as a run replaces it
    auto reused = unpack_artifacts(pipeline_in(fresh), archive, fresh / "L");
    REQUIRE_MESSAGE(reused.has_value(), (reused ? "" : reused.error().message()));
    CHECK(emurun::util::read_file(fresh / "L/build.log").value_or("") == "the build's log\n");
}

TEST_CASE("artifacts: a refused unpack leaves no log directory it made, and no log" *
          test::may_skip()) {
    if (!emurun::util::find_executable("tar")) {
        EMURUN_SKIP("tar is not in PATH");
    }
    const fs::path archive = packed_with_log(test::testdir("log-undo"), "the build's log\n");
    const fs::path fresh = test::testdir("log-undo-unpack");
    touch(fresh / "out"); // a file where the outputs' directory goes: moving them fails
    auto refused = unpack_artifacts(pipeline_in(fresh), archive, fresh / "new/logs");
    REQUIRE_FALSE(refused.has_value());
    CHECK(refused.error().message().starts_with("unpack out/bin/tool into "));
    CHECK_FALSE(fs::exists(fresh / "new"));
    CHECK_FALSE(holds_temporary(fresh));
    fs::create_directories(fresh / "logs");
    std::ofstream(fresh / "logs/other.log") << "x";
    CHECK_FALSE(unpack_artifacts(pipeline_in(fresh), archive, fresh / "logs").has_value());
    CHECK_FALSE(fs::exists(fresh / "logs/build.log"));
    CHECK(fs::exists(fresh / "logs/other.log")); // a directory that was there stays
}

namespace {

// An archive of built_in(dir) (after `prepare` changed its outputs), packed as `dir`/b.tar.
template <class F> fs::path packed_after(const fs::path& dir, F prepare) {
    Pipeline p = built_in(dir);
    prepare(dir);
    Report report = passed({"build"});
    auto packed = pack_artifacts(p, report, dir / "b.tar");
    REQUIRE_MESSAGE(packed.has_value(), (packed ? "" : packed.error().message()));
    return dir / "b.tar";
}

bool is_empty_dir(const fs::path& dir) {
    return fs::is_directory(dir) && fs::is_empty(dir);
}

} // namespace

TEST_CASE("trust 3: an unpack never writes through a symlink of the checkout" * test::may_skip()) {
    if (!emurun::util::find_executable("tar")) {
        EMURUN_SKIP("tar is not in PATH");
    }
    const fs::path archive = packed_after(test::testdir("t3-pack"), [](const fs::path&) {});
    // The checkout's "out" leads outside it: the old unpack wrote victim/bin/tool, exit 0.
    const fs::path fresh = test::testdir("t3-unpack");
    const fs::path victim = test::testdir("t3-victim");
    fs::create_directory_symlink("../t3-victim", fresh / "out");
    auto refused = unpack_artifacts(pipeline_in(fresh), archive, fresh / "logs");
    REQUIRE_FALSE(refused.has_value());
    CHECK(refused.error().message() ==
          "artifacts: unpack out/bin/tool into " + fresh.string() +
              ": its directory leads outside " + fresh.string() +
              " (a symlink) (unpack into a fresh checkout; nothing was moved)");
    CHECK(is_empty_dir(victim));
    CHECK_FALSE(holds_temporary(fresh));
    // A symlink that stays inside the checkout is a directory like any other.
    fs::remove(fresh / "out");
    fs::create_directory(fresh / "inner");
    fs::create_directory_symlink("inner", fresh / "out");
    auto reused = unpack_artifacts(pipeline_in(fresh), archive, fresh / "logs");
    REQUIRE_MESSAGE(reused.has_value(), (reused ? "" : reused.error().message()));
    CHECK(fs::is_regular_file(fresh / "inner/bin/tool"));
    CHECK(is_empty_dir(victim));
}

TEST_CASE("trust review 1: a chain of symlinks that leaves the tree is refused, on unpack and "
          "pack") {
    // Each link looks inside as text; the kernel resolves out/w through out/a (-> ..) and
    // leaves the tree: the old check, lexical, let the unpack place them (echo x > out/w/p
    // then wrote outside the checkout).
    const fs::path root = test::testdir("tr1-tree");
    touch(root / "out/bin/tool");
    fs::create_directory_symlink("..", root / "out/a");
    fs::create_directory_symlink("a/out/bin", root / "out/inside"); // through a, still inside
    CHECK(message_of(check_unpacked_tree(root)).empty());
    fs::create_directory_symlink("a/out/a/../../../../tmp/victim", root / "out/w");
    CHECK(message_of(check_unpacked_tree(root)) ==
          "artifacts: unpacked out/w: is a symlink to a/out/a/../../../../tmp/victim, outside "
          "the archive (symlinks it passes followed) (use the archive as the build job packed "
          "it; nothing was moved)");
    fs::remove(root / "out/w");
    fs::create_directory_symlink("a/out/a/../../../../etc", root / "out/e");
    CHECK(message_of(check_unpacked_tree(root)).find("out/e: is a symlink") != std::string::npos);
    fs::remove(root / "out/e");
    fs::create_directory_symlink("loop", root / "out/loop"); // never resolves: refused
    CHECK(message_of(check_unpacked_tree(root)).find("out/loop: is a symlink") !=
          std::string::npos);
    fs::remove(root / "out/loop");
    // A pack of the same outputs refuses too (every unpack would).
    fs::create_directory_symlink("a/out/a/../../../../tmp/victim", root / "out/w");
    const Pipeline p =
        pipeline_in(root, R"({"name": "p", "steps": [{"name": "tree", "argv": ["t"], )"
                          R"("outputs": ["out"]}]})");
    auto packed = collect_outputs(p, passed({"tree"}));
    REQUIRE_FALSE(packed.has_value());
    CHECK(packed.error().message().find("out/w is a symlink to a/out/a/../../../../tmp/victim") !=
          std::string::npos);
}

TEST_CASE("trust review 5: an archive tar refuses to extract is refused, tar's message the why" *
          test::may_skip()) {
    if (!emurun::util::find_executable("tar")) {
        EMURUN_SKIP("tar is not in PATH");
    }
    // A symlink (out/share/l -> ../../..) then a file written through it: tar refuses the file.
    // The old unpack let tar's errors through and said "tar failed (exited with 2)".
    const fs::path archive = packed_after(test::testdir("tr5-pack"), [](const fs::path&) {});
    const fs::path extra = test::testdir("tr5-extra");
    fs::create_directories(extra / "out/share");
    fs::create_directory_symlink("../../..", extra / "out/share/l");
    touch(extra / "x/f");
    const std::string append = "tar -rf '" + archive.string() + "' -C '" + extra.string() +
                               "' --transform 's,^x,out/share/l,' out/share/l x/f";
    REQUIRE(std::system(append.c_str()) == 0);
    const fs::path fresh = test::testdir("tr5-unpack");
    auto refused = unpack_artifacts(pipeline_in(fresh), archive, fresh / "logs");
    REQUIRE_FALSE(refused.has_value());
    const std::string message = refused.error().message();
    CHECK_MESSAGE(message.starts_with("artifacts " + archive.string() + ": refused: tar: "),
                  message);
    CHECK_MESSAGE(message.find("out/share/l/f") != std::string::npos, message);
    CHECK(message.ends_with("(use the archive as the build job packed it; nothing was moved)"));
    CHECK_FALSE(fs::exists(fresh / "out"));
    CHECK_FALSE(holds_temporary(fresh));
}

TEST_CASE("trust 6: unpacking strips setuid, setgid and sticky bits" * test::may_skip()) {
    if (!emurun::util::find_executable("tar")) {
        EMURUN_SKIP("tar is not in PATH");
    }
    const fs::path archive = packed_after(test::testdir("t6-pack"), [](const fs::path& dir) {
        REQUIRE(::chmod((dir / "out/bin/tool").c_str(), 06755) == 0);
        REQUIRE(::chmod((dir / "out/share").c_str(), 03775) == 0);
    });
    const fs::path fresh = test::testdir("t6-unpack");
    auto reused = unpack_artifacts(pipeline_in(fresh), archive, fresh / "logs");
    REQUIRE_MESSAGE(reused.has_value(), (reused ? "" : reused.error().message()));
    auto mode = [](const fs::path& p) {
        struct stat st {};
        REQUIRE(::lstat(p.c_str(), &st) == 0);
        return st.st_mode & 07777;
    };
    CHECK((mode(fresh / "out/bin/tool") & 07000) == 0); // as root, tar kept 06755
    CHECK((mode(fresh / "out/bin/tool") & 0100) != 0);  // still executable
    CHECK((mode(fresh / "out/share") & 07000) == 0);
}

TEST_CASE("trust 7: an archive's members are capped by its size, and holes stay holes" *
          test::may_skip()) {
    if (!emurun::util::find_executable("tar")) {
        EMURUN_SKIP("tar is not in PATH");
    }
    const fs::path base = test::testdir("t7-pack");
    auto sparse = [](const fs::path& file, off_t size) {
        std::ofstream(file) << "data";
        fs::resize_file(file, static_cast<std::uintmax_t>(size));
    };
    const fs::path archive = packed_after(
        base, [&](const fs::path& dir) { sparse(dir / "out/share/holes", off_t{64} << 20); });
    CHECK(fs::file_size(archive) < (1u << 20)); // packed with its holes: the old pack wrote 64 MiB
    const fs::path fresh = test::testdir("t7-unpack");
    auto reused = unpack_artifacts(pipeline_in(fresh), archive, fresh / "logs");
    REQUIRE_MESSAGE(reused.has_value(), (reused ? "" : reused.error().message()));
    struct stat st {};
    REQUIRE(::stat((fresh / "out/share/holes").c_str(), &st) == 0);
    CHECK(st.st_size == off_t{64} << 20);
    CHECK(st.st_blocks * 512 < (1 << 20)); // holes kept, not 64 MiB of zeros on disk
    // A small archive whose member claims 1.5 GiB: over the cap, refused before extraction.
    sparse(base / "out/share/holes", off_t{3} << 29);
    const fs::path evil = base / "evil.tar";
    const std::string cmd = "cd '" + base.string() + "' && tar -x -f b.tar .emurun-artifacts.json" +
                            " && tar -c --sparse -f evil.tar .emurun-artifacts.json out/bin/tool" +
                            " out/lib/liba.so out/share";
    REQUIRE(std::system(cmd.c_str()) == 0);
    REQUIRE(fs::file_size(evil) < (1u << 20));
    const fs::path again = test::testdir("t7-evil");
    auto refused = unpack_artifacts(pipeline_in(again), evil, again / "logs");
    REQUIRE_FALSE(refused.has_value());
    CHECK(refused.error().message().starts_with("artifacts " + evil.string() +
                                                ": its members hold more than 1073741824 bytes"));
    CHECK_FALSE(fs::exists(again / "out"));
    CHECK_FALSE(holds_temporary(again));
}

namespace {

// `body` run as user nobody (65534) in a child when this is root, else here; its exit code.
template <class F> int as_user(F body) {
    if (::geteuid() != 0) {
        return body();
    }
    const pid_t pid = ::fork();
    if (pid == 0) {
        if (::setgid(65534) != 0 || ::setuid(65534) != 0) {
            ::_exit(99);
        }
        ::_exit(body());
    }
    int status = 0;
    ::waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

} // namespace

TEST_CASE("trust 8: unpacking a read-only directory as a user leaves nothing on any failure" *
          test::may_skip()) {
    if (!emurun::util::find_executable("tar")) {
        EMURUN_SKIP("tar is not in PATH");
    }
    const fs::path base = test::testdir("t8-pack");
    const fs::path archive = packed_after(base, [](const fs::path& dir) {
        REQUIRE(::chmod((dir / "out/share").c_str(), 0555) == 0);
    });
    ::chmod((base / "out/share").c_str(), 0755);
    const fs::path ok = test::testdir("t8-unpack"), conflict = test::testdir("t8-conflict");
    touch(conflict / "out"); // a file where the outputs' directory goes: the move fails
    if (::geteuid() == 0 && ::chown(ok.c_str(), 65534, static_cast<gid_t>(-1)) != 0) {
        EMURUN_SKIP("cannot give a file to uid 65534 here ("
                    << std::strerror(errno)
                    << "): a user namespace that does not map it, as the dogfood's sandbox");
    }
    for (const auto& d : {ok, conflict, conflict / "out"}) {
        REQUIRE(::chown(d.c_str(), ::geteuid() == 0 ? 65534 : ::geteuid(),
                        static_cast<gid_t>(-1)) == 0);
    }
    CHECK(as_user([&] { return unpack_artifacts(pipeline_in(ok), archive, ok / "L") ? 0 : 1; }) ==
          0);
    CHECK(fs::is_regular_file(ok / "out/share/x"));
    CHECK((fs::status(ok / "out/share").permissions() & fs::perms::owner_write) ==
          fs::perms::none); // moved as packed, read-only
    CHECK_FALSE(holds_temporary(ok));
    CHECK(as_user([&] {
              return unpack_artifacts(pipeline_in(conflict), archive, conflict / "L") ? 0 : 1;
          }) == 1);
    CHECK_FALSE(holds_temporary(conflict)); // the old unpack left .emurun-unpack-XXXXXX
    ::chmod((ok / "out/share").c_str(), 0755);
}

TEST_CASE("trust 10: a pack killed with SIGKILL leaves a temporary dir the next pack removes" *
          test::may_skip()) {
    if (!emurun::util::find_executable("tar")) {
        EMURUN_SKIP("tar is not in PATH");
    }
    const fs::path dir = test::testdir("t10-pack");
    Pipeline p = built_in(dir);
    const pid_t dead = ::fork(); // a pid that was, and is no more
    if (dead == 0) {
        ::_exit(0);
    }
    ::waitpid(dead, nullptr, 0);
    const fs::path stale = dir / (".b.tar.tmp-" + std::to_string(dead) + "-AbC123");
    const fs::path live = dir / ".b.tar.tmp-1-XyZ789"; // pid 1 runs: a pack in progress
    const fs::path other = dir / ".b.tar.tmp-AbC123";  // not a name emurun gives: left alone
    for (const auto& d : {stale, live, other}) {
        touch(d / "b.tar");
    }
    Report report = passed({"build"});
    REQUIRE(pack_artifacts(p, report, dir / "b.tar").has_value());
    CHECK_FALSE(fs::exists(stale));
    CHECK(fs::exists(live / "b.tar"));
    CHECK(fs::exists(other / "b.tar"));
}
