#include "scoped_env.hpp"
#include "skip.hpp"
#include "testdir.hpp"

#include <emurun/qemu.hpp>

#include <doctest/doctest.h>

#include <csignal>
#include <filesystem>
#include <fstream>

namespace fs = std::filesystem;
using namespace emurun;

namespace {
const Arch& arch(const char* name) {
    return **find_arch(name);
}

fs::path fake_emulator(const fs::path& dir, const std::string& name, const std::string& body) {
    fs::create_directories(dir);
    auto p = dir / name;
    std::ofstream(p, std::ios::binary) << body;
    fs::permissions(p, fs::perms::owner_all);
    return p;
}
} // namespace

TEST_CASE("qemu: static emulator preferred over dynamic, explicit dirs first") {
    auto dir = test::testdir("qemu-prefer");
    fake_emulator(dir, "qemu-aarch64", "dyn");
    fake_emulator(dir, "qemu-aarch64-static", "sta");
    EmulatorSearch s{{dir}, false, true};
    auto e = find_emulator(arch("arm64"), s);
    REQUIRE(e.has_value());
    CHECK(e->path == dir / "qemu-aarch64-static");
    s.prefer_static = false;
    CHECK(find_emulator(arch("arm64"), s)->path == dir / "qemu-aarch64");
}

TEST_CASE("qemu: missing emulator names the binary and the package") {
    EmulatorSearch s{{test::testdir("qemu-empty")}, false, true};
    auto e = find_emulator(arch("ppc64el"), s);
    REQUIRE_FALSE(e.has_value());
    CHECK(e.error().message().find("no emulator for ppc64le") != std::string::npos);
    CHECK(e.error().message().find("qemu-ppc64le") != std::string::npos);
    CHECK(e.error().message().find("apt-get install qemu-user") != std::string::npos);
}

TEST_CASE("qemu: a non-executable file is not an emulator") {
    auto dir = test::testdir("qemu-noexec");
    auto p = fake_emulator(dir, "qemu-s390x", "x");
    fs::permissions(p, fs::perms::owner_read | fs::perms::owner_write);
    CHECK_FALSE(find_emulator(arch("s390x"), EmulatorSearch{{dir}, false, true}).has_value());
}

TEST_CASE("qemu: version is read from the binary's banner") {
    auto dir = test::testdir("qemu-version");
    std::string body(3 << 20, 'x'); // the banner straddles the 1 MiB read boundary
    body.replace((1 << 20) - 10, 40, std::string("qemu-riscv64 version 9.1.3 (Debian)\0", 37));
    fake_emulator(dir, "qemu-riscv64", body);
    auto e = find_emulator(arch("riscv64"), EmulatorSearch{{dir}, false, true});
    REQUIRE(e.has_value());
    CHECK_FALSE(e->is_static); // not even ELF
    CHECK(emulator_version(*e) == "9.1.3");
}

TEST_CASE("qemu: the installed emulators report their version and linkage" * test::may_skip()) {
    auto e = find_emulator(arch("aarch64"));
    if (!e) {
        EMURUN_SKIP(e.error().message());
    }
    auto v = emulator_version(*e);
    REQUIRE(v.has_value());
    CHECK(std::isdigit(static_cast<unsigned char>(v->front())));
    if (e->path.filename() == "qemu-aarch64-static") {
        CHECK(e->is_static);
    }
}

TEST_CASE("qemu: command line keeps arguments verbatim") {
    Emulator emu{&arch("aarch64"), "/usr/bin/qemu-aarch64-static", true};
    auto argv =
        qemu_command(emu, "/bin/prog", {"a b", "", "-0"}, QemuOptions{"cortex-a72", "prog"});
    CHECK(argv == std::vector<std::string>{"/usr/bin/qemu-aarch64-static", "-cpu", "cortex-a72",
                                           "-0", "prog", "/bin/prog", "a b", "", "-0"});
}

TEST_CASE("qemu: the library prefix goes in as -L when asked for (shims)") {
    Emulator emu{&arch("aarch64"), "/usr/bin/qemu-aarch64", false};
    QemuOptions options{.cpu = {}, .argv0 = "tool", .ld_prefix = "/sr"};
    CHECK(qemu_command(emu, "/t/tool", {"x"}, options) ==
          std::vector<std::string>{"/usr/bin/qemu-aarch64", "-0", "tool", "-L", "/sr", "/t/tool",
                                   "x"});
}

TEST_CASE("qemu: select_arches expands 'all' to the foreign arches with an emulator") {
    auto dir = test::testdir("qemu-select");
    fake_emulator(dir, "qemu-s390x-static", "s");
    fake_emulator(dir, "qemu-ppc64le", "p");
    EmulatorSearch only_dir{{dir}, false};
    auto all = select_arches({"all"}, only_dir);
    REQUIRE(all.has_value());
    std::vector<const Arch*> want;
    for (const auto& a : all_arches()) { // table order, natively run arches left out
        if ((a.name == "s390x" || a.name == "ppc64le") && !runs_natively(a)) {
            want.push_back(&a);
        }
    }
    CHECK(*all == want);
    auto named = select_arches({"arm64", "all", "s390x"}, only_dir);
    REQUIRE(named.has_value());
    CHECK(named->size() == want.size() + 2);
    CHECK(named->front() == &arch("aarch64"));
    CHECK(named->back() == &arch("s390x"));
    auto bad = select_arches({"s390x", "vax"}, only_dir);
    REQUIRE_FALSE(bad.has_value());
    CHECK(bad.error().message().find("vax") != std::string::npos);
    auto none = select_arches({"all"}, EmulatorSearch{{test::testdir("qemu-none")}, false});
    REQUIRE_FALSE(none.has_value()); // an empty selection is refused, naming the fix
    CHECK(none.error().why == "'all' found no emulator for a foreign architecture");
    CHECK(none.error().hint.find("apt-get install qemu-user-static") != std::string::npos);
    auto nothing = select_arches({}, only_dir);
    REQUIRE_FALSE(nothing.has_value());
    CHECK(nothing.error().why == "no architecture named");
}

TEST_CASE("qemu: the default CPU model is known for QEMU 7 on the measured arches") {
    CHECK(qemu_default_cpu(arch("aarch64"), "7.2.22") == "max");
    CHECK(qemu_default_cpu(arch("ppc64le"), "7.2.22") == "POWER9");
    CHECK(qemu_default_cpu(arch("riscv64"), "7.2.0") == "rv64");
    CHECK(qemu_default_cpu(arch("s390x"), "7.2.22") == "qemu");
    CHECK_FALSE(qemu_default_cpu(arch("riscv64"), "9.1.3").has_value()); // "max" there
    CHECK_FALSE(qemu_default_cpu(arch("mips64el"), "7.2.22").has_value());
    CHECK_FALSE(qemu_default_cpu(arch("aarch64"), "").has_value());
}

TEST_CASE("qemu: the version is remembered per file and read again when the file changes") {
    auto dir = test::testdir("qemu-version-cache");
    auto path = fake_emulator(dir, "qemu-s390x", std::string("qemu-s390x version 7.2.1 \0", 27));
    Emulator e{&arch("s390x"), path, false};
    CHECK(emulator_version(e) == "7.2.1");
    // Same size, same content length, a new modification time: read again.
    std::ofstream(path, std::ios::binary) << std::string("qemu-s390x version 7.2.9 \0", 27);
    fs::last_write_time(path, fs::last_write_time(path) + std::chrono::seconds(5));
    CHECK(emulator_version(e) == "7.2.9");
    fs::remove(path);
    CHECK_FALSE(emulator_version(e).has_value());
}

TEST_CASE("qemu: trust 11: a guest's real-time signal N is QEMU's host signal N+2") {
    CHECK(emurun::guest_rt_signal(36) == 34); // guest 34 exits 164 in a shell
    CHECK(emurun::guest_rt_signal(34) == 32);
    CHECK(emurun::guest_rt_signal(64) == 62);
    CHECK_FALSE(emurun::guest_rt_signal(SIGSEGV));
    CHECK_FALSE(emurun::guest_rt_signal(33)); // glibc's own: no guest signal maps there
    CHECK_FALSE(emurun::guest_rt_signal(65));
}

namespace {
std::string banner(const char* cpu, const char* version) {
    return std::string("qemu-") + cpu + " version " + version + " (Debian)\n";
}
} // namespace

TEST_CASE("qemu: a step's choice by version picks the matching emulator, by components") {
    auto a = test::testdir("qemu-choice-a");
    auto b = test::testdir("qemu-choice-b");
    fake_emulator(a, "qemu-aarch64-static", banner("aarch64", "7.2.22"));
    fake_emulator(b, "qemu-aarch64-static", banner("aarch64", "10.0.13"));
    EmulatorSearch s{{a, b}, false, true};
    auto ten = choose_emulator(arch("aarch64"), "10.0", s);
    REQUIRE(ten.has_value());
    CHECK(find_emulator(arch("aarch64"), *ten)->path == b / "qemu-aarch64-static");
    CHECK(find_emulator(arch("aarch64"), *choose_emulator(arch("aarch64"), "7.2.22", s))->path ==
          a / "qemu-aarch64-static");
    auto none = choose_emulator(arch("aarch64"), "10.01", s);
    REQUIRE_FALSE(none.has_value());
    CHECK(none.error().message().find("7.2.22") != std::string::npos);
    CHECK(none.error().message().find("10.0.13") != std::string::npos);
    CHECK(none.error().message().find("emurun qemu fetch --suite") != std::string::npos);
}

TEST_CASE("qemu: a step's choice by path: a file or a directory, else an error") {
    auto d = test::testdir("qemu-choice-path");
    auto dyn = fake_emulator(d, "qemu-s390x", banner("s390x", "8.2.2"));
    fake_emulator(d, "qemu-s390x-static", banner("s390x", "8.2.2"));
    EmulatorSearch s{{}, false, true};
    auto file = choose_emulator(arch("s390x"), dyn.string(), s);
    REQUIRE(file.has_value());
    CHECK(find_emulator(arch("s390x"), *file)->path == dyn);
    auto dir = choose_emulator(arch("s390x"), d.string(), s);
    REQUIRE(dir.has_value());
    CHECK(find_emulator(arch("s390x"), *dir)->path == d / "qemu-s390x-static");
    CHECK_FALSE(choose_emulator(arch("aarch64"), d.string(), s).has_value());
    auto missing = choose_emulator(arch("s390x"), (d / "nope").string(), s);
    REQUIRE_FALSE(missing.has_value());
    CHECK(missing.error().message().find("no such file or directory") != std::string::npos);
}

TEST_CASE("qemu: a step's choice by suite looks in the fetched emulators, names the fetch") {
    auto cache = test::testdir("qemu-choice-cache");
    fs::permissions(cache, fs::perms(0700));
    test::ScopedEnv env("EMURUN_CACHE_DIR", cache.string());
    auto bad = choose_emulator(arch("aarch64"), "tri..xie");
    REQUIRE_FALSE(bad.has_value());
    CHECK(bad.error().message().find("not a Debian suite name") != std::string::npos);
    auto absent = choose_emulator(arch("aarch64"), "trixie");
    REQUIRE_FALSE(absent.has_value());
    CHECK(absent.error().message().find("emurun qemu fetch --suite trixie aarch64") !=
          std::string::npos);
    auto dir = fetched_emulator_dir("trixie");
    REQUIRE(dir.has_value());
    fake_emulator(*dir, "qemu-aarch64-static", banner("aarch64", "10.0.13"));
    std::ofstream(*dir / "qemu-aarch64-static.source") << "qemu-user 1:10.0.13+ds-0+deb13u1\n";
    auto chosen = choose_emulator(arch("aarch64"), "trixie");
    REQUIRE(chosen.has_value());
    CHECK(find_emulator(arch("aarch64"), *chosen)->path == *dir / "qemu-aarch64-static");
    auto listed = list_emulators(&arch("aarch64"), EmulatorSearch{{}, false, true});
    REQUIRE(listed.size() == 1);
    CHECK(listed[0].version == "10.0.13");
    CHECK(listed[0].suite == "trixie");
    CHECK(listed[0].source == "trixie: qemu-user 1:10.0.13+ds-0+deb13u1");
}
