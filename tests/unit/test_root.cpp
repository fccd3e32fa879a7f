// The root module's pure parts: acceleration lists, subordinate id ranges, the host mirror,
// the cache key, a root's arch, the runner's argument vector, pipeline steps in a root.
#include "process/namespaces.hpp"

#include <emurun/pipeline.hpp>
#include <emurun/root.hpp>

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <unistd.h>

namespace fs = std::filesystem;
using namespace emurun;

namespace {

const Arch* arch(const char* name) {
    auto a = find_arch(name);
    REQUIRE(a.has_value());
    return *a;
}

void write(const fs::path& p, const std::string& text) {
    fs::create_directories(p.parent_path());
    std::ofstream(p) << text;
}

} // namespace

TEST_CASE("root: --accelerate values") {
    CHECK(parse_acceleration("none")->mode == Acceleration::Mode::none);
    CHECK(parse_acceleration("")->mode == Acceleration::Mode::defaults);
    CHECK(parse_acceleration("default")->mode == Acceleration::Mode::defaults);
    auto listed = parse_acceleration("gcc,cc,ld");
    REQUIRE(listed.has_value());
    CHECK(listed->mode == Acceleration::Mode::listed);
    CHECK(listed->tools == std::vector<std::string>{"gcc", "cc", "ld"});
    auto bad = parse_acceleration("gcc,clang");
    REQUIRE_FALSE(bad.has_value());
    CHECK(bad.error().why == "unknown tool 'clang'");
    CHECK(bad.error().hint.find("g++") != std::string::npos);
}

TEST_CASE("root: subordinate id ranges") {
    const std::string text = "alice:100000:65536\n1001:200000:1000\nbob:300000:65536\n";
    auto a = process::find_subid_range(text, "alice", 1000, "/etc/subuid", 65535);
    REQUIRE(a.has_value());
    CHECK(a->start == 100000);
    CHECK(process::find_subid_range(text, "x", 1001, "/etc/subuid", 999)->start == 200000);
    auto small = process::find_subid_range(text, "x", 1001, "/etc/subuid", 65535);
    REQUIRE_FALSE(small.has_value());
    CHECK(small.error().hint.find("usermod --add-subuids 100000-165535") != std::string::npos);
    CHECK(small.error().hint.find("uidmap") != std::string::npos);
}

TEST_CASE("root: the host's mirror, deb822 first, security skipped") {
    const fs::path d = fs::temp_directory_path() / ("emurun-apt-" + std::to_string(::getpid()));
    write(d / "sources.list.d/debian.sources",
          "Types: deb\nURIs: http://security.debian.org/debian-security\n\n"
          "Types: deb\nURIs: http://mirror.example/debian\nSuites: bookworm\n");
    CHECK(host_mirror(d) == "http://mirror.example/debian");
    fs::remove_all(d / "sources.list.d");
    write(d / "sources.list", "# c\ndeb [arch=amd64] http://other.example/debian bookworm main\n");
    CHECK(host_mirror(d) == "http://other.example/debian");
    fs::remove_all(d);
    CHECK(host_mirror(d) == "http://deb.debian.org/debian");
}

TEST_CASE("root: cache key depends on the spec, not on the order of packages") {
    RootCreateSpec a;
    a.arch = arch("aarch64");
    a.include = {"python3", "zlib1g-dev"};
    RootCreateSpec b = a;
    b.include = {"zlib1g-dev", "python3", "gcc"};
    CHECK(root_cache_key(a, "http://m/debian") == root_cache_key(b, "http://m/debian"));
    CHECK(root_cache_key(a, "http://m/debian") != root_cache_key(a, "http://n/debian"));
    b.arch = arch("s390x");
    CHECK(root_cache_key(a, "http://m/debian") != root_cache_key(b, "http://m/debian"));
    CHECK(root_cache_key(a, "http://m/debian").size() == 16);
}

TEST_CASE("root: a root's arch, and what is not a root") {
    const fs::path d = fs::temp_directory_path() / ("emurun-root-" + std::to_string(::getpid()));
    fs::create_directories(d);
    auto none = root_arch(d);
    REQUIRE_FALSE(none.has_value());
    CHECK(none.error().why.find("not a Debian root") != std::string::npos);
    write(d / "var/lib/dpkg/arch", "ppc64el\n");
    write(d / "bin/sh", "");
    auto a = root_arch(d);
    REQUIRE(a.has_value());
    CHECK((*a)->name == "ppc64le");
    RootSpec spec;
    spec.dir = d;
    spec.arch = arch("aarch64");
    auto plan = plan_root(spec);
    REQUIRE_FALSE(plan.has_value());
    CHECK(plan.error().why.find("it is a ppc64le root") != std::string::npos);
    fs::remove_all(d);
}

TEST_CASE("root: the runner's argument vector") {
    RootSpec spec;
    spec.dir = "/r";
    spec.arch = arch("arm64");
    spec.binds.push_back(RootBind{"/src", "/src", false});
    spec.cwd = "/src";
    spec.env = {{"K", "v"}};
    spec.accelerate.mode = Acceleration::Mode::defaults;
    CHECK(root_argv("/bin/emurun", spec, {"make", "-j2"}) ==
          std::vector<std::string>{"/bin/emurun", "root", "run", "/r", "--arch", "aarch64",
                                   "--bind", "/src:/src", "--cwd", "/src", "--env", "K=v",
                                   "--accelerate", "--", "make", "-j2"});
    spec.accelerate = Acceleration{Acceleration::Mode::listed, {"gcc", "as"}};
    CHECK(root_argv("e", spec, {"x"})[12] == "--accelerate=gcc,as");
}

TEST_CASE("root: pipeline steps in a root") {
    auto p = Pipeline::parse(R"({"name": "n", "defaults": {"arch": "arm64", "emulation": "root",
        "root": "roots/arm64", "accelerate": true},
        "steps": [{"name": "b", "argv": ["make"]}, {"name": "e", "argv": ["make"],
                   "accelerate": false}]})",
                             "p.json", "/w");
    REQUIRE_MESSAGE(p.has_value(), (p ? "" : p.error().message()));
    CHECK(p->steps[0].emulation == Emulation::root);
    CHECK(p->steps[0].root == fs::path("/w/roots/arm64"));
    CHECK(p->steps[0].accelerate);
    CHECK_FALSE(p->steps[1].accelerate);
    auto bad = Pipeline::parse(R"({"name": "n", "steps": [{"name": "b", "argv": ["make"],
        "arch": "arm64", "emulation": "root"}]})");
    REQUIRE_FALSE(bad.has_value());
    CHECK(bad.error().message().find("needs a root") != std::string::npos);
}
