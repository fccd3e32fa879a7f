#include "skip.hpp"
#include "testdir.hpp"

#include <emurun/arch.hpp>
#include <emurun/qemu.hpp>
#include <emurun/shim.hpp>

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sys/stat.h>

namespace fs = std::filesystem;
using namespace emurun;
using emurun::test::fixture;
using emurun::test::testdir;
using emurun::test::write_file;

namespace {

/// Any executable works as the launcher for creation tests; running shims is tested by
/// tests/integration/test_shim.sh with the real emurun.
fs::path launcher() {
    return write_file("launcher", "#!/bin/sh\n");
}

/// The creation tests need a foreign aarch64 program: not on an aarch64 host (or under
/// qemu-aarch64, where host_arch() is aarch64), where the probe runs natively.
bool have_aarch64() {
    auto arch = find_arch("aarch64");
    const Arch* host = host_arch();
    return fs::exists(fixture("aarch64/probe")) && arch && find_emulator(**arch).has_value() &&
           !(host && runs_natively_on(*host, **arch));
}

} // namespace

TEST_CASE("shim: names that are not plain file names are refused") {
    fs::path l = launcher();
    ::chmod(l.c_str(), 0755);
    for (const std::string name : {"", "a/b", ".hidden", ".."}) {
        auto r = add_shim(testdir("names"), ShimSpec{.name = name, .target = "/bin/true"}, l);
        REQUIRE_FALSE(r);
        CHECK(r.error().message().find("shim name") != std::string::npos);
    }
}

TEST_CASE("shim: bad targets are named in the error") {
    fs::path l = launcher();
    ::chmod(l.c_str(), 0755);
    const fs::path dir = testdir("bad");
    auto missing = add_shim(dir, ShimSpec{.name = "t", .target = dir / "no-such-tool"}, l);
    REQUIRE_FALSE(missing);
    CHECK(missing.error().message().find("no-such-tool") != std::string::npos);

    fs::path text = write_file("notelf", "just text, not a program\n");
    ::chmod(text.c_str(), 0755);
    auto not_elf = add_shim(dir, ShimSpec{.name = "t", .target = text}, l);
    REQUIRE_FALSE(not_elf);
    CHECK(not_elf.error().message().find("ELF") != std::string::npos);
    CHECK_FALSE(fs::exists(dir / "t"));
}

TEST_CASE("shim: wrong --arch and missing libraries fail at creation" * test::may_skip()) {
    if (!have_aarch64() || !find_arch("ppc64le")) {
        EMURUN_SKIP("no aarch64 probe fixture or qemu-aarch64, or aarch64 is native here");
    }
    fs::path l = launcher();
    ::chmod(l.c_str(), 0755);
    const fs::path dir = testdir("checks");
    auto wrong = add_shim(
        dir,
        ShimSpec{.name = "p", .target = fixture("aarch64/probe"), .arch = *find_arch("ppc64le")},
        l);
    REQUIRE_FALSE(wrong);
    CHECK(wrong.error().message().find("aarch64") != std::string::npos);
    CHECK(wrong.error().message().find("ppc64le") != std::string::npos);

    auto empty_root = testdir("empty-sysroot");
    auto nolibs = add_shim(
        dir, ShimSpec{.name = "p", .target = fixture("aarch64/probe"), .sysroots = {empty_root}},
        l);
    REQUIRE_FALSE(nolibs);
    CHECK(nolibs.error().message().find("ld-linux-aarch64.so.1") != std::string::npos);
    CHECK_FALSE(fs::exists(dir / "p"));
}

TEST_CASE("shim: add, read back, list, command line, remove" * test::may_skip()) {
    if (!have_aarch64()) {
        EMURUN_SKIP("no aarch64 probe fixture or qemu-aarch64, or aarch64 is native here");
    }
    fs::path l = launcher();
    ::chmod(l.c_str(), 0755);
    const fs::path dir = testdir("roundtrip");
    auto made = add_shim(
        dir, ShimSpec{.name = "probe", .target = fixture("aarch64/probe"), .env = {{"K", "V"}}}, l);
    REQUIRE_MESSAGE(made, (made ? "" : made.error().message()));
    CHECK(fs::exists(dir / "probe"));
    CHECK(fs::equivalent(fs::path(made->target), fixture("aarch64/probe")));

    auto back = read_shim(dir / "probe");
    REQUIRE(back);
    CHECK(back->arch == "aarch64");
    CHECK_FALSE(back->native);
    CHECK(back->env.at("K") == "V");
    CHECK(back->emulator == made->emulator);
    CHECK(back->ld_prefix == made->ld_prefix);

    auto argv = shim_command(*back, {"my-name", "a b", ""});
    REQUIRE(argv.size() >= 6);
    CHECK(argv.front() == back->emulator.string());
    CHECK(std::ranges::find(argv, "my-name") != argv.end());
    CHECK(argv[argv.size() - 3] == back->target.string());
    CHECK(argv[argv.size() - 2] == "a b");
    CHECK(argv.back().empty());

    // Added again (the same launcher, so already the same file): replaced, no stray link left
    // in the config dir (rename(2) of two links of one file does nothing).
    for (int again = 0; again < 2; ++again) {
        REQUIRE(add_shim(dir, ShimSpec{.name = "probe", .target = fixture("aarch64/probe")}, l));
    }
    for (const auto& e : fs::directory_iterator(dir / ".emurun-shims")) {
        INFO(e.path());
        CHECK(e.path().filename().string().find(".exe") == std::string::npos);
    }

    auto listed = list_shims(dir);
    REQUIRE(listed);
    REQUIRE(listed->size() == 1);
    CHECK(listed->front().name == "probe");

    REQUIRE(remove_shim(dir, "probe"));
    CHECK_FALSE(fs::exists(dir / "probe"));
    CHECK(list_shims(dir)->empty());
    CHECK_FALSE(remove_shim(dir, "probe"));
}

TEST_CASE("shim: a stale shim is planned again with the sysroots it was made with" *
          test::may_skip()) {
    if (!have_aarch64() || !fs::exists("/usr/aarch64-linux-gnu/lib")) {
        EMURUN_SKIP("no aarch64 fixture, emulator or /usr/aarch64-linux-gnu");
    }
    fs::path l = launcher();
    ::chmod(l.c_str(), 0755);
    const fs::path dir = testdir("replan-sysroots");
    auto made = add_shim(dir, ShimSpec{.name = "probe", .target = fixture("aarch64/probe")}, l);
    REQUIRE_MESSAGE(made, (made ? "" : made.error().message()));
    REQUIRE(made->ld_prefix);
    // None given: the arch's default ones when planned again, not the prefix they made (a
    // merged prefix in the cache is no sysroot to search).
    auto back = read_shim(dir / "probe");
    REQUIRE(back);
    CHECK(back->sysroots.empty());
    // A sidecar written before "sysroots" was: its ld_prefix is all it says of them.
    const fs::path sidecar = dir / ".emurun-shims" / "probe.json";
    auto j = nlohmann::json::parse(std::ifstream(sidecar));
    REQUIRE(j.contains("sysroots"));
    j.erase("sysroots");
    std::ofstream(sidecar) << j.dump(2);
    back = read_shim(dir / "probe");
    REQUIRE(back);
    CHECK(back->sysroots == std::vector<fs::path>{*made->ld_prefix});
}

TEST_CASE("shim: a new shim that cannot be written leaves nothing behind" * test::may_skip()) {
    if (!have_aarch64()) {
        EMURUN_SKIP("no aarch64 probe fixture or qemu-aarch64, or aarch64 is native here");
    }
    fs::path l = launcher();
    ::chmod(l.c_str(), 0755);
    const fs::path dir = testdir("half-made");
    // The emurun link's place taken by a directory: written after the sidecar, it fails.
    fs::create_directories(dir / ".emurun-shims" / "probe.emurun");
    auto made = add_shim(dir, ShimSpec{.name = "probe", .target = fixture("aarch64/probe")}, l);
    REQUIRE_FALSE(made);
    CHECK_FALSE(fs::exists(dir / ".emurun-shims" / "probe.json"));
    CHECK_FALSE(fs::exists(dir / ".emurun-shims" / "probe.rec"));
    CHECK_FALSE(fs::exists(dir / "probe"));
    auto listed = list_shims(dir);
    REQUIRE(listed);
    CHECK(listed->empty());
}

TEST_CASE("shim: a file that is not a shim is never replaced" * test::may_skip()) {
    if (!have_aarch64()) {
        EMURUN_SKIP("no aarch64 probe fixture or qemu-aarch64, or aarch64 is native here");
    }
    fs::path l = launcher();
    ::chmod(l.c_str(), 0755);
    const fs::path dir = testdir("occupied");
    write_file("occupied/protoc", "mine");
    auto r = add_shim(dir, ShimSpec{.name = "protoc", .target = fixture("aarch64/probe")}, l);
    REQUIRE_FALSE(r);
    CHECK(r.error().message().find("not a shim") != std::string::npos);
    std::ifstream in(dir / "protoc");
    std::string content;
    in >> content;
    CHECK(content == "mine");
}

TEST_CASE("shim: paths inside the shim dir survive moving it" * test::may_skip()) {
    if (!have_aarch64() || !fs::exists("/usr/aarch64-linux-gnu/lib")) {
        EMURUN_SKIP("no aarch64 fixture, emulator or /usr/aarch64-linux-gnu");
    }
    fs::path l = launcher();
    ::chmod(l.c_str(), 0755);
    const fs::path dir = testdir("reloc-a");
    fs::create_directory_symlink("/usr/aarch64-linux-gnu", dir / "sysroot");
    fs::copy_file(fixture("aarch64/probe"), dir / "tool");
    auto made = add_shim(
        dir, ShimSpec{.name = "t", .target = dir / "tool", .sysroots = {dir / "sysroot"}}, l);
    REQUIRE_MESSAGE(made, (made ? "" : made.error().message()));
    const fs::path moved = testdir() / "reloc-b";
    fs::rename(dir, moved);
    auto back = read_shim(moved / "t");
    REQUIRE(back);
    CHECK(back->target == moved / "tool");
    if (made->ld_prefix && made->ld_prefix->string().starts_with(dir.string())) {
        CHECK(back->ld_prefix == moved / "sysroot");
    }
}

TEST_CASE("shim: listing a dir that is not there is an error, an empty dir lists nothing") {
    // `shim list --dir /nonexistent` printed [] and exited 0: a mistyped dir looked empty.
    const fs::path dir = testdir("list-empty");
    auto empty = list_shims(dir);
    REQUIRE(empty.has_value());
    CHECK(empty->empty());
    auto missing = list_shims(dir / "nonexistent");
    REQUIRE_FALSE(missing.has_value());
    CHECK(missing.error().message().starts_with("shim dir " + (dir / "nonexistent").string() +
                                                ": no such directory ("));
    auto file = write_file("list-file", "x");
    REQUIRE_FALSE(list_shims(file).has_value());
    CHECK(list_shims(file).error().why == "not a directory");
}

TEST_CASE("shim: shim_environment puts the shim dir first in PATH") {
    auto env = shim_environment("/opt/shims", {{"PATH", "/usr/bin:/bin"}, {"HOME", "/root"}});
    CHECK(env.at("PATH") == "/opt/shims:/usr/bin:/bin");
    CHECK(env.at("HOME") == "/root");
    auto bare = shim_environment("/opt/shims", {});
    CHECK(bare.at("PATH").starts_with("/opt/shims:"));
}

TEST_CASE("shim list JSON: one object per shim, ld_prefix null when there is none") {
    ShimInfo emulated{"protoc",    "/s/protoc",  "/t/protoc",
                      "aarch64",   false,        "/usr/bin/qemu-aarch64-static",
                      "/c/prefix", {{"A", "1"}}, std::nullopt};
    ShimInfo native{"tool", "/s/tool", "/t/tool", "x86_64", true, "", std::nullopt, {}, "max"};
    CHECK(shim_list_json({emulated, native}, -1) ==
          R"([{"arch":"aarch64","emulator":"/usr/bin/qemu-aarch64-static","env":{"A":"1"},)"
          R"("ld_prefix":"/c/prefix","name":"protoc","native":false,"path":"/s/protoc",)"
          R"("target":"/t/protoc"},{"arch":"x86_64","emulator":"","env":{},"ld_prefix":null,)"
          R"("name":"tool","native":true,"path":"/s/tool","target":"/t/tool"}])");
    CHECK(shim_list_json({}, -1) == "[]");
}
