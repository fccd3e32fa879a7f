// Artifact archives: the manifest, its match with the pipeline, the paths a build packs, and the
// checks a test job makes of the members and of the unpacked tree, without tar; with tar (skipped
// without it), an interrupt while it runs.
#include "skip.hpp"
#include "testdir.hpp"
#include "util/path.hpp"

#include <emurun/artifacts.hpp>

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <csignal>
#include <sys/stat.h>

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
    CHECK(message_of(check_manifest(tampered, p, "a.tar")).find("changed after packing") !=
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
    Pipeline p = pipeline_in(dir);
    touch(dir / "out/bin/tool");
    touch(dir / "out/lib/liba.so");
    touch(dir / "out/share/x");
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
