// The root module's pure parts: acceleration lists, subordinate id ranges, the host mirror,
// the cache key, a root's arch, the runner's argument vector, pipeline steps in a root.
#include "fake_command_runner.hpp"
#include "known_arch.hpp"
#include "process/namespaces.hpp"
#include "root/root_internal.hpp"
#include "scoped_env.hpp"
#include "skip.hpp"
#include "util/fd.hpp"
#include "util/file.hpp"
#include "util/path.hpp"
#include "util/temp_dir.hpp"

#include <emurun/pipeline.hpp>
#include <emurun/root.hpp>
#include <emurun/runner.hpp>

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <arpa/inet.h>
#include <filesystem>
#include <fstream>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

namespace fs = std::filesystem;
using namespace emurun;

namespace {

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

TEST_CASE("root: the acceleration a report records") {
    CHECK(acceleration_name(*parse_acceleration("none")) == "none");
    CHECK(acceleration_name(*parse_acceleration("")) == "toolchain,shell");
    CHECK(acceleration_name(*parse_acceleration("all")) == "toolchain,shell");
    CHECK(acceleration_name(*parse_acceleration("toolchain")) == "toolchain");
    CHECK(acceleration_name(*parse_acceleration("toolchain,shell")) == "toolchain,shell");
    CHECK(acceleration_name(*parse_acceleration("gcc,as")) == "gcc,as");
}

TEST_CASE("root: --accelerate groups") {
    auto both = parse_acceleration("toolchain,shell");
    REQUIRE(both.has_value());
    CHECK(both->tools == std::vector<std::string>{"toolchain", "shell"});
    const auto names = root_tool_names();
    for (const char* n : {"sh", "make", "sed", "grep", "awk", "coreutils"}) {
        CHECK(std::ranges::find(names, n) != names.end());
    }
    for (const char* n : {"uname", "arch", "od", "bash", "python3", "perl"}) {
        CHECK(std::ranges::find(names, n) == names.end());
    }
}

TEST_CASE("root: the native tools are data, each justified; machine reporters stay out") {
    std::vector<std::string_view> files;
    for (const auto& t : root_detail::native_tools()) {
        CHECK_MESSAGE(t.why.size() > 20, t.name);
        CHECK_MESSAGE(!t.files.empty(), t.name);
        files.insert(files.end(), t.files.begin(), t.files.end());
    }
    for (const char* f : {"dash", "sed", "grep", "mawk", "m4", "cat", "find", "xargs", "tar",
                          "gzip", "xz", "diff", "cmp", "make"}) {
        CHECK_MESSAGE(std::ranges::find(files, f) != files.end(), f);
    }
    // They name the machine, or compute in long double (80-bit on x86-64, 128-bit on arm64).
    for (const char* f : {"uname", "arch", "nproc", "od", "bash", "perl", "python3", "printf",
                          "seq", "sort", "dpkg"}) {
        CHECK_MESSAGE(std::ranges::find(files, f) == files.end(), f);
    }
    // make's $(MAKE_HOST) names the host: opt-in, not in the shell group (the default).
    // cmake's cmake_host_system_information reads the host's machine: opt-in too. So are the
    // awks: a NaN arithmetic makes takes the CPU's sign (-nan on x86-64, nan on arm64).
    for (const char* n : {"make", "cmake", "awk", "gawk"}) {
        REQUIRE_MESSAGE(root_detail::find_native_tool(n) != nullptr, n);
        CHECK_FALSE_MESSAGE(root_detail::find_native_tool(n)->in_shell_group, n);
    }
    CHECK(root_detail::find_native_tool("sh")->in_shell_group);
}

TEST_CASE("root: commands get CONFIG_SHELL=/bin/sh, so configure stays in dash; --env wins") {
    using Env = std::vector<std::pair<std::string, std::string>>;
    const auto value = [](const Env& env, const std::string& k) {
        const auto it = std::ranges::find_if(env, [&](const auto& kv) { return kv.first == k; });
        return it == env.end() ? std::string("unset") : it->second;
    };
    CHECK(value(root_detail::root_environment({}), "CONFIG_SHELL") == "/bin/sh");
    CHECK(value(root_detail::root_environment({{"CONFIG_SHELL", "/bin/bash"}}), "CONFIG_SHELL") ==
          "/bin/bash");
}

namespace {

const char* k_host_sed = R"(Package: sed
Status: install ok installed
Architecture: amd64
Version: 4.9-1
Pre-Depends: libacl1 (>= 2.2.23), libc6 (>= 2.34), libselinux1 (>= 3.1~)

Package: libc6
Status: install ok installed
Architecture: amd64
Source: glibc
Version: 2.36-9+deb12u14

Package: libacl1
Status: install ok installed
Source: acl
Version: 2.3.1-3

Package: libselinux1
Status: install ok installed
Source: libselinux (3.4-1)
Version: 3.4-1+b6
)";

} // namespace

TEST_CASE("root: a native tool's identity: its package and the libraries it runs with") {
    const root_detail::NativeTool& sed = *root_detail::find_native_tool("sed");
    std::string root = k_host_sed; // binNMUs differ per arch: the source version counts
    root.replace(root.find("3.4-1+b6"), 8, "3.4-1+b5");
    auto id = root_detail::native_tool_identity(root, k_host_sed, sed);
    CHECK(id.same());
    CHECK(id.tool == "sed");
    CHECK(id.root == ToolSource{"sed", "sed", "4.9-1"});
    root.replace(root.find("2.36-9+deb12u14"), 15, "2.36-9+deb12u13");
    id = root_detail::native_tool_identity(root, k_host_sed, sed);
    CHECK_FALSE(id.same());
    CHECK(id.root == ToolSource{"libc6", "glibc", "2.36-9+deb12u13"});
    CHECK(id.host == ToolSource{"libc6", "glibc", "2.36-9+deb12u14"});
    const std::string text = ToolMismatch{id, false}.text();
    CHECK(text.find("sed kept emulated: the root's libc6 is built from glibc 2.36-9+deb12u13, "
                    "the host's libc6 from glibc 2.36-9+deb12u14") == 0);
    CHECK(text.find("behave as another revision") != std::string::npos);
    CHECK(text.find("CVE") == std::string::npos); // that is the compilers' sentence
}

TEST_CASE("root: the shell group binds host tools the root has, never uname or od" *
          test::may_skip()) {
    if (::access("/usr/bin/dash", X_OK) != 0 || ::access("/usr/bin/sed", X_OK) != 0) {
        EMURUN_SKIP("the host has no /usr/bin/dash or /usr/bin/sed");
    }
    if (runs_natively(*test::known_arch("aarch64"))) { // (the dogfood runs these on aarch64)
        EMURUN_SKIP("aarch64 is this machine's own arch: an arm64 root is refused here");
    }
    if (host_arch() != nullptr && host_arch()->elf_data != test::known_arch("aarch64")->elf_data) {
        EMURUN_SKIP(
            "this machine's byte order is not an arm64 root's: no tool runs natively there");
    }
    const fs::path d = fs::temp_directory_path() / ("emurun-shell-" + std::to_string(::getpid()));
    write(d / "var/lib/dpkg/arch", "arm64\n");
    fs::copy_file("/var/lib/dpkg/status", d / "var/lib/dpkg/status"); // the same sources
    for (const char* f : {"dash", "sed", "uname", "od", "cat"}) {
        write(d / "usr/bin" / f, "target program");
    }
    fs::create_directories(d / "bin");
    fs::create_symlink("../usr/bin/dash", d / "bin/sh");
    RootSpec spec;
    spec.dir = d;
    spec.accelerate = *parse_acceleration("sh,sed,coreutils");
    auto plan = plan_root(spec);
    if (!plan && plan.error().what.find("emulator") != std::string::npos) {
        fs::remove_all(d);
        EMURUN_SKIP("no qemu-aarch64 here: " + plan.error().message());
    }
    REQUIRE_MESSAGE(plan.has_value(), (plan ? "" : plan.error().message()));
    const auto& acc = plan->accelerated;
    CHECK(std::ranges::find(acc, "dash") != acc.end());
    CHECK(std::ranges::find(acc, "sed") != acc.end());
    CHECK(std::ranges::find(acc, "cat") != acc.end());
    CHECK(std::ranges::find(acc, "uname") == acc.end());
    CHECK(std::ranges::find(acc, "od") == acc.end());
    CHECK(std::ranges::find(acc, "grep") == acc.end()); // not asked for (and not in the root)
    CHECK(plan->gcc_major.empty());                     // no compiler asked: no gcc needed
    for (const auto& t : plan->tools) {
        CHECK(t.host == t.target);
        CHECK(t.host.parent_path() == "/usr/bin");
    }
    fs::remove_all(d);
}

TEST_CASE("root: a step's report says which host tools really ran, not only what it asked" *
          test::may_skip()) {
    if (::access("/usr/bin/dash", X_OK) != 0) {
        EMURUN_SKIP("the host has no /usr/bin/dash");
    }
    if (runs_natively(*test::known_arch("aarch64"))) {
        EMURUN_SKIP("aarch64 is this machine's own arch: an arm64 root is refused here");
    }
    if (host_arch() != nullptr && host_arch()->elf_data != test::known_arch("aarch64")->elf_data) {
        EMURUN_SKIP(
            "this machine's byte order is not an arm64 root's: no tool runs natively there");
    }
    const fs::path d = fs::temp_directory_path() / ("emurun-told-" + std::to_string(::getpid()));
    write(d / "var/lib/dpkg/arch", "arm64\n");
    fs::copy_file("/var/lib/dpkg/status", d / "var/lib/dpkg/status"); // the same sources
    write(d / "usr/bin/dash", "target program"); // no sed: "sed" has nothing to serve
    fs::create_directories(d / "bin");
    fs::create_symlink("../usr/bin/dash", d / "bin/sh");
    const test::ScopedEnv exe("EMURUN_EXE", "/bin/true"); // the fake runner starts nothing
    const std::string root = R"(, "arch": "arm64", "emulation": "root", "root": ")" + d.string();
    const Pipeline p = test::pipeline_of(R"([{"name": "sh", "argv": ["true"])" + root +
                                         R"(", "accelerate": "sh"}, {"name": "sed", "argv": )"
                                         R"(["true"])" +
                                         root + R"(", "accelerate": "sed"}])");
    test::FakeCommandRunner fake;
    auto r = Runner(p, test::runner_options("root-told")).run(fake);
    fs::remove_all(d);
    REQUIRE_MESSAGE(r.has_value(), (r ? "" : r.error().message()));
    const StepResult& sh = r->steps.at(0);
    if (sh.status != StepStatus::passed && sh.message.find("emulator") != std::string::npos) {
        EMURUN_SKIP("no qemu-aarch64 here: " + sh.message);
    }
    REQUIRE_MESSAGE(sh.status == StepStatus::passed, sh.message);
    CHECK(sh.accelerated);
    CHECK(sh.acceleration == std::optional<std::string>("sh"));
    CHECK(sh.accelerated_tools == std::vector<std::string>{"dash"});
    const StepResult& sed = r->steps.at(1); // asked, but nothing could serve it
    CHECK_FALSE(sed.accelerated);
    CHECK_FALSE(sed.acceleration.has_value());
    CHECK(sed.accelerated_tools.empty());
    const auto j = r->to_json()["steps"][1];
    CHECK(j["accelerated"] == false);
    CHECK(j["accelerated_tools"].empty());
    auto back = Report::parse(r->to_json().dump(), "r.json");
    REQUIRE(back.has_value());
    CHECK(back->steps.at(0).accelerated_tools == std::vector<std::string>{"dash"});
}

TEST_CASE("root: the binutils are accelerated only with the compilers that run them") {
    const auto why = [](const std::string& list) {
        auto r = check_acceleration(*parse_acceleration(list));
        return r ? std::string("accepted") : r.error().message();
    };
    CHECK(why("ld").find("accelerate ld: the binutils are accelerated only together with the "
                         "compilers that run them, and gcc would stay emulated") == 0);
    CHECK(why("ld").find("LTO plugin") != std::string::npos);
    CHECK(why("as,ar").find("accelerate gcc too") != std::string::npos);
    CHECK(why("shell,ld.bfd").find("accelerate ld.bfd:") == 0);
    for (const char* fine : {"gcc,ld,ar,nm,ranlib", "cc,c++,as,ld.bfd,ar,nm,ranlib", "toolchain",
                             "", "shell", "cpp", "cpp,shell", "none"}) {
        CHECK_MESSAGE(why(fine) == "accepted", fine);
    }
    // The other way: the host's cross compiler hands ld and ar its x86-64 LTO plugin.
    CHECK(why("gcc,g++") ==
          "accelerate gcc,g++: the compilers are accelerated only together with the binutils "
          "that load their LTO plugin (ld, ar, nm, ranlib), and ld,ar,nm,ranlib would stay "
          "emulated: the host's cross compiler hands them its plugin, an x86-64 library the "
          "root's emulated binutils cannot load (every link would fail) (leave the compilers "
          "emulated, or accelerate ld,ar,nm,ranlib too, e.g. gcc,g++,ld,ar,nm,ranlib, or the "
          "default list (toolchain) (option accelerate))");
    CHECK(why("g++").find("accelerate g++: the compilers are accelerated only") == 0);
    CHECK(why("gcc,as,ld").find("and ar,nm,ranlib would stay emulated") != std::string::npos);
    CHECK(why("cc,ld.gold,ar,nm").find("and ranlib would stay emulated") != std::string::npos);
    // Every refusal's example is itself accepted and keeps what was asked for.
    for (const char* refused : {"ld", "as", "objdump", "gcc", "gcc,g++", "g++,as", "shell,ld"}) {
        const std::string text = why(refused);
        const auto at = text.find("e.g. ");
        REQUIRE_MESSAGE(at != std::string::npos, text);
        const std::string list = text.substr(at + 5, text.find(", or", at) - at - 5);
        INFO(refused << " -> " << list);
        CHECK(why(list) == "accepted");
        const auto asked = parse_acceleration(refused);
        REQUIRE(asked.has_value());
        for (const auto& part : asked->tools) {
            CHECK((part == "shell" ||
                   ("," + list + ",").find("," + part + ",") != std::string::npos));
        }
    }
    auto p = Pipeline::parse(R"({"name": "n", "steps": [{"name": "link", "argv": ["make"],
        "arch": "arm64", "emulation": "root", "root": "r", "accelerate": "ld"}]})",
                             "p.json", "/w");
    REQUIRE(p.has_value());
    auto refused = check_root_steps(*p);
    REQUIRE_FALSE(refused.has_value());
    CHECK(refused.error().what == "step \"link\": accelerate \"ld\"");
    CHECK(refused.error().why.find("gcc would stay emulated") != std::string::npos);
    // plan_root refuses it before looking at the root.
    RootSpec spec;
    spec.dir = "/nonexistent-root";
    spec.accelerate = *parse_acceleration("ld");
    auto plan = plan_root(spec);
    REQUIRE_FALSE(plan.has_value());
    CHECK(plan.error().what == "accelerate ld");
}

TEST_CASE("root: gcc and the binutils accelerated in a root with g++: g++ is needed too" *
          test::may_skip()) {
    const Arch* arm = test::known_arch("aarch64");
    const std::string t = arm->triplet;
    if (runs_natively(*arm) || ::access(("/usr/bin/" + t + "-gcc-12").c_str(), X_OK) != 0 ||
        !fs::is_directory("/usr/lib/gcc-cross/" + t + "/12")) {
        EMURUN_SKIP("no host cross gcc-12 for aarch64 (apt-get install gcc-aarch64-linux-gnu)");
    }
    const fs::path d = fs::temp_directory_path() / ("emurun-gxx-" + std::to_string(::getpid()));
    write(d / "var/lib/dpkg/arch", "arm64\n");
    write(d / "var/lib/dpkg/status", ""); // a Debian root: an image without it runs emulated
    write(d / "bin/sh", "target program");
    write(d / ("usr/bin/" + t + "-gcc-12"), "target program");
    fs::create_symlink(t + "-gcc-12", d / ("usr/bin/" + t + "-gcc"));
    RootSpec spec;
    spec.dir = d;
    spec.accelerate = *parse_acceleration("gcc,ld,ar,nm,ranlib");
    auto without_gxx = plan_root(spec); // a root without g++: gcc is company enough
    if (!without_gxx && without_gxx.error().what.find("emulator") != std::string::npos) {
        fs::remove_all(d);
        EMURUN_SKIP("no qemu-aarch64 here: " + without_gxx.error().message());
    }
    CHECK_MESSAGE(without_gxx.has_value(), (without_gxx ? "" : without_gxx.error().message()));
    fs::create_symlink(t + "-g++-12", d / ("usr/bin/" + t + "-g++"));
    auto with_gxx = plan_root(spec);
    fs::remove_all(d);
    REQUIRE_FALSE(with_gxx.has_value());
    CHECK(with_gxx.error().why.find("g++ would stay emulated") != std::string::npos);
    CHECK(with_gxx.error().hint.find("e.g. gcc,g++,ld") != std::string::npos);
}

TEST_CASE("root: binutils of another source keep the compilers emulated with them" *
          test::may_skip()) {
    const Arch* arm = test::known_arch("aarch64");
    const std::string t = arm->triplet;
    const std::string host = util::read_file("/var/lib/dpkg/status").value_or("");
    const ToolSource gcc = dpkg_tool_source(host, "gcc-12-" + t, "gcc-12");
    const ToolSource bin = dpkg_tool_source(host, "binutils-" + t, "binutils");
    if (runs_natively(*arm) || gcc.version.empty() || bin.version.empty() ||
        !fs::is_directory("/usr/lib/gcc-cross/" + t + "/12")) {
        EMURUN_SKIP("no host cross gcc-12 and binutils for aarch64 (apt-get install g++-" + t +
                    ")");
    }
    const fs::path d = fs::temp_directory_path() / ("emurun-binold-" + std::to_string(::getpid()));
    write(d / "var/lib/dpkg/arch", "arm64\n");
    write(d / "bin/sh", "target program");
    for (const char* tool : {"gcc-12", "ld.bfd", "as"}) {
        write(d / "usr/bin" / (t + "-" + tool), "target program");
    }
    fs::create_symlink(t + "-gcc-12", d / ("usr/bin/" + t + "-gcc"));
    const auto stanza = [](const std::string& pkg, const std::string& src, const std::string& v) {
        return "Package: " + pkg + "\nStatus: install ok installed\nSource: " + src +
               "\nVersion: " + v + "\n\n";
    };
    write(d / "var/lib/dpkg/status", stanza("gcc-12", "gcc-12", gcc.version) +
                                         stanza("cpp-12", "gcc-12", gcc.version) +
                                         stanza("binutils-" + t, "binutils", bin.version + "~old"));
    RootSpec spec;
    spec.dir = d;
    spec.accelerate = *parse_acceleration("toolchain");
    spec.accelerate.probe = false;
    auto plan = plan_root(spec);
    fs::remove_all(d);
    if (!plan && plan.error().what.find("emulator") != std::string::npos) {
        EMURUN_SKIP("no qemu-aarch64 here: " + plan.error().message());
    }
    REQUIRE_MESSAGE(plan.has_value(), (plan ? "" : plan.error().message()));
    CHECK(plan->accelerated.empty()); // neither gcc-12 nor ld.bfd nor as bound
    for (const auto& m : plan->mismatches) {
        INFO(m.text());
    }
    REQUIRE_MESSAGE(plan->mismatches.size() == 1,
                    (plan->mismatches.size() > 1 ? plan->mismatches[1].text() : ""));
    CHECK(plan->mismatches[0].identity.tool == "binutils");
    CHECK(plan->mismatches[0].text().starts_with(
        "binutils kept emulated and the compilers with them (the host's cross compiler hands ld "
        "and ar its LTO plugin"));
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

TEST_CASE("root: the login name of a uid, from passwd(5) text") {
    const std::string text = "root:x:0:0:root:/root:/bin/bash\n"
                             "# not a line\n"
                             ":x:1000:1000::/:/bin/sh\n"
                             "alice:x:10000:10000:Alice:/home/alice:/bin/bash\n"
                             "al:x:1000:1000::/home/al:/bin/sh\n"
                             "bob:x:1001\n";
    CHECK(process::passwd_name(text, 0) == "root");
    CHECK(process::passwd_name(text, 1000) == "al");  // not alice's 10000, not the nameless line
    CHECK(process::passwd_name(text, 1001) == "bob"); // getent's line may end after the uid
    CHECK_FALSE(process::passwd_name(text, 100).has_value());
    CHECK_FALSE(process::passwd_name("", 0).has_value());
}

// The mirror check resolves names with getent (libc-bin), not getaddrinfo: the emurun binary is
// linked statically. A listener on 127.0.0.1 answers by address and by the name localhost; once
// closed, the check says it cannot connect.
TEST_CASE("root: the mirror check connects by address and by name" * test::may_skip()) {
    if (!util::find_executable("getent")) {
        EMURUN_SKIP("no getent in PATH (package libc-bin)");
    }
    const test::ScopedEnv no_proxy("http_proxy", std::nullopt);
    util::UniqueFd listener(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
    REQUIRE(listener.get() >= 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof addr;
    REQUIRE(::bind(listener.get(), reinterpret_cast<sockaddr*>(&addr), len) == 0);
    REQUIRE(::listen(listener.get(), 4) == 0);
    REQUIRE(::getsockname(listener.get(), reinterpret_cast<sockaddr*>(&addr), &len) == 0);
    const std::string port = std::to_string(ntohs(addr.sin_port));
    for (const std::string host : {"127.0.0.1", "localhost"}) {
        CAPTURE(host);
        auto r = root_detail::check_mirror("http://" + host + ":" + port + "/debian");
        CHECK_MESSAGE(r.has_value(), (r ? "" : r.error().message()));
    }
    listener.reset();
    auto closed = root_detail::check_mirror("http://127.0.0.1:" + port + "/debian");
    REQUIRE_FALSE(closed.has_value());
    CHECK(closed.error().why.find("cannot connect to 127.0.0.1:" + port) != std::string::npos);
    CHECK_FALSE(root_detail::check_mirror("http://127.0.0.1:http/debian").has_value());
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
    a.arch = test::known_arch("aarch64");
    a.include = {"python3", "zlib1g-dev"};
    RootCreateSpec b = a;
    b.include = {"zlib1g-dev", "python3", "gcc"};
    CHECK(root_cache_key(a, "http://m/debian") == root_cache_key(b, "http://m/debian"));
    CHECK(root_cache_key(a, "http://m/debian") != root_cache_key(a, "http://n/debian"));
    b.arch = test::known_arch("s390x");
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
    spec.arch = test::known_arch("aarch64");
    auto plan = plan_root(spec);
    REQUIRE_FALSE(plan.has_value());
    CHECK(plan.error().why.find("it is a ppc64le root") != std::string::npos);
    fs::remove_all(d);
}

TEST_CASE("root: the runner's argument vector") {
    RootSpec spec;
    spec.dir = "/r";
    spec.arch = test::known_arch("arm64");
    spec.binds.push_back(RootBind{"/src", "/src", false});
    spec.cwd = "/src";
    spec.env = {{"K", "v"}};
    spec.accelerate.mode = Acceleration::Mode::defaults;
    spec.binds.push_back(RootBind{"/ro", "/in", true});
    spec.emulators.dirs = {"/q"};
    spec.emulators.prefer_static = false;
    auto argv = root_argv("/bin/emurun", spec, {"make", "-j2"});
    REQUIRE(argv.has_value());
    REQUIRE(argv->size() == 5);
    CHECK((*argv)[0] == "/bin/emurun");
    CHECK((*argv)[1] == k_root_helper_marker);
    CHECK((*argv)[3] == "make");
    CHECK((*argv)[4] == "-j2");
    // No CLI syntax crosses: the spec is JSON, and reads back field by field.
    auto back = root_detail::root_spec_from_json((*argv)[2]);
    REQUIRE_MESSAGE(back.has_value(), (back ? "" : back.error().message()));
    CHECK(back->dir == "/r");
    CHECK(back->arch == test::known_arch("aarch64"));
    REQUIRE(back->binds.size() == 2);
    CHECK(back->binds[1].source == "/ro");
    CHECK(back->binds[1].target == "/in");
    CHECK(back->binds[1].read_only);
    CHECK(back->cwd == fs::path("/src"));
    CHECK(back->env == spec.env);
    CHECK(back->accelerate.mode == Acceleration::Mode::defaults);
    CHECK(back->emulators.dirs == std::vector<fs::path>{"/q"});
    CHECK_FALSE(back->emulators.prefer_static);
    spec.accelerate = Acceleration{Acceleration::Mode::listed, {"gcc", "as"}};
    back = root_detail::root_spec_from_json(*root_detail::root_spec_to_json(spec));
    REQUIRE(back.has_value());
    CHECK(back->accelerate.mode == Acceleration::Mode::listed);
    CHECK(back->accelerate.tools == std::vector<std::string>{"gcc", "as"});
    CHECK_FALSE(root_argv("e", spec, {}).has_value());
    spec.env = {{"K", std::string("\xff")}};
    CHECK_FALSE(root_argv("e", spec, {"x"}).has_value());
}

TEST_CASE("root: the helper end of the argument vector") {
    std::vector<std::string> args{"emurun", "root", "run"};
    std::vector<char*> argv;
    for (auto& a : args) {
        argv.push_back(a.data());
    }
    CHECK_FALSE(run_if_root_helper(static_cast<int>(argv.size()), argv.data()).has_value());
    CHECK_FALSE(run_if_root_helper(1, argv.data()).has_value());
    args = {"emurun", std::string(k_root_helper_marker), "{not json", "true"};
    argv.clear();
    for (auto& a : args) {
        argv.push_back(a.data());
    }
    auto malformed = run_if_root_helper(4, argv.data());
    REQUIRE(malformed.has_value());
    REQUIRE_FALSE(malformed->has_value());
    CHECK(malformed->error().what == "read the root spec");
    auto no_command = run_if_root_helper(3, argv.data());
    REQUIRE(no_command.has_value());
    CHECK_FALSE(no_command->has_value());
    // A well-formed spec of a directory that is no root: refused by plan_root, nothing entered.
    RootSpec spec;
    spec.dir = "/nonexistent-emurun-root";
    args[2] = *root_detail::root_spec_to_json(spec);
    argv[2] = args[2].data();
    auto not_root = run_if_root_helper(4, argv.data());
    REQUIRE(not_root.has_value());
    REQUIRE_FALSE(not_root->has_value());
    CHECK(not_root->error().why.find("does not exist") != std::string::npos);
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
    CHECK(p->steps[0].accelerate_tools.empty());
    CHECK_FALSE(p->steps[1].accelerate);
    auto listed = Pipeline::parse(R"({"name": "n", "defaults": {"arch": "arm64",
        "emulation": "root", "root": "r", "accelerate": "toolchain,shell"},
        "steps": [{"name": "b", "argv": ["make"]}, {"name": "o", "argv": ["make"],
                   "accelerate": "none"}, {"name": "x", "argv": ["make"], "accelerate": "bogus"}]})",
                                  "p.json", "/w");
    REQUIRE_MESSAGE(listed.has_value(), (listed ? "" : listed.error().message()));
    CHECK(listed->steps[0].accelerate);
    CHECK(listed->steps[0].accelerate_tools == "toolchain,shell");
    CHECK_FALSE(listed->steps[1].accelerate);
    auto unknown = check_root_steps(*listed);
    REQUIRE_FALSE(unknown.has_value());
    CHECK(unknown.error().what.find("step \"x\"") != std::string::npos);
    CHECK(unknown.error().why == "unknown tool 'bogus'");
    auto empty = Pipeline::parse(R"({"name": "n", "steps": [{"name": "b", "argv": ["make"],
        "arch": "arm64", "emulation": "root", "root": "r", "accelerate": ""}]})");
    REQUIRE_FALSE(empty.has_value());
    CHECK(empty.error().message().find("empty string") != std::string::npos);
    // A wrong type is told with the values accepted.
    auto number = Pipeline::parse(R"({"name": "n", "steps": [{"name": "b", "argv": ["make"],
        "arch": "arm64", "emulation": "root", "root": "r", "accelerate": 1}]})");
    REQUIRE_FALSE(number.has_value());
    CHECK(number.error().why == "expected true, false, a string of tools or an object, got 1");
    CHECK(number.error().hint.find("\"toolchain,shell\"") != std::string::npos);
    CHECK(number.error().hint.find("\"none\"") != std::string::npos);
    auto bad = Pipeline::parse(R"({"name": "n", "steps": [{"name": "b", "argv": ["make"],
        "arch": "arm64", "emulation": "root"}]})");
    REQUIRE_FALSE(bad.has_value());
    CHECK(bad.error().message().find("needs a root") != std::string::npos);
}

TEST_CASE("root: a pipeline's image roots, IMAGE#PLATFORM") {
    auto p = Pipeline::parse(R"({"name": "n", "defaults": {"emulation": "root",
        "root": "img.tar#arm64"}, "steps": [{"name": "a", "argv": ["true"]},
        {"name": "b", "argv": ["true"], "root": "r#x#linux/arm/v7"},
        {"name": "c", "argv": ["true"], "root": "plain"}]})",
                             "p.json", "/w");
    REQUIRE_MESSAGE(p.has_value(), (p ? "" : p.error().message()));
    CHECK(p->steps[0].root == "/w/img.tar");
    CHECK(p->steps[0].root_platform == "arm64");
    CHECK(p->steps[1].root == "/w/r#x"); // the last '#' splits
    CHECK(p->steps[1].root_platform == "linux/arm/v7");
    CHECK(p->steps[2].root == "/w/plain");
    CHECK_FALSE(p->steps[2].root_platform); // a step's own root drops the defaults' platform
    CHECK(check_root_steps(*p).has_value());
    for (const char* bad : {"img.tar#", "#arm64", ""}) {
        auto r = Pipeline::parse(std::string(R"({"name": "n", "steps": [{"name": "a",
            "argv": ["true"], "emulation": "root", "root": ")") +
                                 bad + "\"}]}");
        REQUIRE_FALSE(r.has_value());
        CHECK_MESSAGE(r.error().why.find("expected a root directory or an image") == 0,
                      r.error().message());
    }
    auto odd = Pipeline::parse(R"({"name": "n", "steps": [{"name": "a", "argv": ["true"],
        "emulation": "root", "root": "img.tar#windows/arm64"}]})");
    REQUIRE(odd.has_value());
    auto refused = check_root_steps(*odd);
    REQUIRE_FALSE(refused.has_value());
    CHECK(refused.error().what.find("step \"a\": root ") == 0);
    CHECK(refused.error().why == "only linux images become roots");
    auto same = Pipeline::parse(R"({"name": "n", "steps": [{"name": "a", "argv": ["true"],
        "arch": "aarch64", "emulation": "root", "root": "img.tar#linux/arm64/v8"}]})");
    REQUIRE(same.has_value());
    CHECK(check_root_steps(*same).has_value());
    auto other = Pipeline::parse(R"({"name": "n", "steps": [{"name": "a", "argv": ["true"],
        "arch": "s390x", "emulation": "root", "root": "img.tar#arm64"}]})");
    REQUIRE(other.has_value());
    auto mismatch = check_root_steps(*other); // refused before the run, naming the image
    REQUIRE_FALSE(mismatch.has_value());
    CHECK(mismatch.error().what.find("step \"a\": root ") == 0);
    CHECK(mismatch.error().what.ends_with("img.tar#arm64"));
    CHECK(mismatch.error().why == "the platform is aarch64, the step's arch s390x");
}

TEST_CASE("root: an imported root's image file names its digest, time and platform") {
    const fs::path d = fs::temp_directory_path() / ("emurun-imgfile-" + std::to_string(::getpid()));
    write(d / "new/.emurun-image.json",
          R"({"format": 1, "source_kind": "oci", "architecture": "arm64", "variant": "v8",
              "digest": "sha256:ab", "imported": "2026-12-03T16:10:55Z",
              "notes": ["cleared the setuid/setgid bits of 1 files"]})");
    const auto image = read_root_image(d / "new").value();
    REQUIRE(image);
    CHECK(image->digest == "sha256:ab");
    CHECK(image->imported == "2026-12-03T16:10:55Z");
    CHECK(image->notes == std::vector<std::string>{"cleared the setuid/setgid bits of 1 files"});
    CHECK(oci_platform_text(*image) == "linux/arm64/v8");
    // An import of an older emurun: no digest, time or notes (a cache never uses it).
    write(d / "old/.emurun-image.json",
          R"({"format": 1, "source_kind": "rootfs", "architecture": "ppc64el"})");
    const auto old = read_root_image(d / "old").value();
    REQUIRE(old);
    CHECK(old->digest.empty());
    CHECK(old->imported.empty());
    CHECK(old->notes.empty());
    CHECK(oci_platform_text(*old) == "linux/ppc64le"); // a rootfs says Debian's name: OCI's said
    RootImage armhf;
    armhf.architecture = "arm";
    armhf.variant = "v7";
    CHECK(oci_platform_text(armhf) == "linux/arm/v7");
    fs::remove_all(d);
}

TEST_CASE("root: an image root that does not exist is said so") {
    const fs::path d = fs::temp_directory_path() / ("emurun-noimg-" + std::to_string(::getpid()));
    fs::create_directories(d);
    fs::permissions(d, fs::perms::owner_all);
    auto made = make_image_root(
        {.source = d / "app.tar", .arch = nullptr, .variant = {}, .cache_dir = d / "cache"});
    REQUIRE_FALSE(made.has_value());
    CHECK(made.error().what == "use " + (d / "app.tar").string() + " as an image root");
    CHECK(made.error().why == "it does not exist");
    fs::remove_all(d);
}

TEST_CASE("root: a root path with '#' that exists is taken whole") {
    const fs::path d = fs::temp_directory_path() / ("emurun-hash-" + std::to_string(::getpid()));
    fs::create_directories(d / "roots" / "build#2");
    fs::create_directories(d / "img#1");
    auto p = Pipeline::parse(R"({"name": "n", "defaults": {"emulation": "root"}, "steps": [
        {"name": "a", "argv": ["true"], "root": "roots/build#2"},
        {"name": "b", "argv": ["true"], "root": "img#1/app.tar#arm64"}]})",
                             "p.json", d);
    REQUIRE_MESSAGE(p.has_value(), (p ? "" : p.error().message()));
    CHECK(p->steps[0].root == d / "roots" / "build#2");
    CHECK_FALSE(p->steps[0].root_platform);
    CHECK(check_root_steps(*p).has_value());
    CHECK(p->steps[1].root == d / "img#1" / "app.tar");
    CHECK(p->steps[1].root_platform == "arm64");
    fs::remove_all(d);
}

TEST_CASE("root: binds that are refused, and why") {
    const fs::path d = fs::temp_directory_path() / ("emurun-binds-" + std::to_string(::getpid()));
    const fs::path src = d / "src";
    fs::create_directories(src);
    write(d / "file", "x");
    write(d / "root/bin/sh", "");
    fs::create_directories(d / "root/var/lib/dpkg");
    fs::create_symlink("/tmp", d / "root/evil");
    const auto why = [&](const RootBind& b) {
        auto r = root_detail::check_bind(d / "root", b);
        return r ? std::string("accepted") : r.error().why;
    };
    CHECK(why({src, "/w", false}) == "accepted");
    CHECK(why({src, "/var/lib/x", false}) == "accepted");
    CHECK(why({"", "/w", false}) == "the source is an empty path");
    CHECK(why({src, "", false}) == "the destination is an empty path");
    CHECK(why({src, "w", false}) == "the destination is not an absolute path");
    CHECK(why({src, "/../../tmp/x", false}).find("'..'") != std::string::npos);
    CHECK(why({src, "/a/../../x", false}).find("'..'") != std::string::npos);
    CHECK(why({src, "/", false}).find("hide the whole root") != std::string::npos);
    CHECK(why({src, "/evil/x", false}).find("/evil is a symlink in the root") != std::string::npos);
    CHECK(why({src, "/bin/sh", false}).find("is a file in the root") != std::string::npos);
    CHECK(why({src, "/bin/sh/x", false}).find("/bin/sh is not a directory") != std::string::npos);
    CHECK(why({d / "file", "/bin", false}).find("is a directory in the root") != std::string::npos);
    CHECK(why({d / "missing", "/m", false}).find("No such file") != std::string::npos);
    fs::remove_all(d);
}

TEST_CASE("trust review 5: a bind at or below the root's /proc or /sys is refused up front") {
    // The old check took them: the bind went under emurun's own /proc or /sys mount (or was
    // hidden by it), with no word of why.
    const fs::path d =
        fs::temp_directory_path() / ("emurun-binds-ps-" + std::to_string(::getpid()));
    fs::create_directories(d / "src");
    fs::create_directories(d / "root/proc");
    for (const char* target : {"/proc/p", "/sys/p", "/proc", "/sys/kernel/x", "/proc/./p"}) {
        INFO(target);
        auto r = root_detail::check_bind(d / "root", {d / "src", target, false});
        REQUIRE_FALSE(r.has_value());
        CHECK(r.error().why ==
              "/proc and /sys are emurun's own mounts in the root (the kernel's views of the "
              "root's processes and of the system): a bind at or below them is refused");
    }
    CHECK(root_detail::check_bind(d / "root", {d / "src", "/procs", false}).has_value());
    fs::remove_all(d);
}

TEST_CASE("root: hints name the request's options, never a CLI flag") {
    const fs::path d = fs::temp_directory_path() / ("emurun-hints-" + std::to_string(::getpid()));
    write(d / "r/var/lib/dpkg/arch", "s390x\n");
    write(d / "r/bin/sh", "");
    RootSpec spec;
    spec.dir = d / "r";
    spec.arch = test::known_arch("aarch64");
    auto plan = plan_root(spec);
    REQUIRE_FALSE(plan.has_value());
    CHECK(plan.error().why == "it is an s390x root (var/lib/dpkg/arch: s390x)");
    CHECK(plan.error().hint == "create an aarch64 root, or expect s390x instead");
    CHECK(plan.error().field == "arch");
    fs::remove_all(d);
}

TEST_CASE("root: no command to run is the argv field's, with no command line in the text") {
    const fs::path d = fs::temp_directory_path() / ("argv-field-" + std::to_string(::getpid()));
    write(d / "r/.emurun-image.json", R"({"format": 1, "source_kind": "rootfs"})");
    RootSpec spec;
    spec.dir = d / "r";
    std::vector<std::string> argv;
    auto applied = apply_root_image(spec, argv); // an image without Entrypoint or Cmd
    REQUIRE_FALSE(applied.has_value());
    auto ran = exec_in_root(spec, {});
    REQUIRE_FALSE(ran.has_value());
    for (const Error& e : {applied.error(), ran.error()}) {
        INFO(e.message());
        CHECK(e.kind == ErrorKind::bad_input);
        CHECK(e.field == "argv");
        CHECK(e.what == "run in " + spec.dir.string());
        CHECK(e.message().find("root run") == std::string::npos);
        CHECK(e.message().find("CMD") == std::string::npos);
        CHECK(e.message().find("--") == std::string::npos);
    }
    CHECK(applied.error().why == "no command given, and the image has no Entrypoint or Cmd");
    fs::remove_all(d);
}

TEST_CASE("root: a bind's mount point is resolved by the kernel inside the root" *
          test::may_skip()) {
    if (std::distance(fs::directory_iterator("/proc/self/task"), {}) > 1) {
        EMURUN_SKIP("more than one thread here (qemu-user's own?): no user namespace");
    }
    const Command noop{.argv = {"true"}};
    if (auto probe = process::run_in_namespaces([] { return Result<void>{}; }, noop); !probe) {
        EMURUN_SKIP("no user namespace with 64Ki ids here: " << probe.error().message());
    }
    const fs::path d = fs::temp_directory_path() / ("emurun-bindfd-" + std::to_string(::getpid()));
    write(d / "src/marker", "x");
    fs::create_directories(d / "outside");
    fs::create_directories(d / "root");
    // What a root could swap in after check_bind looked: a symlink to a place outside it.
    fs::create_symlink(d / "outside", d / "root/swapped");
    fs::create_directories(d / "root" / d.relative_path() / "outside"); // the same path inside
    // A user's bind (strict): refused by the mount itself, not only by the check before.
    auto refused = process::run_in_namespaces(
        [&] { return root_detail::bind_into(d / "root", d / "src", "/swapped", false, true); },
        noop);
    REQUIRE_FALSE(refused.has_value());
    CHECK(refused.error().why.find("/swapped is a symlink in the root") != std::string::npos);
    // The root's own mounts follow it, but as if the root were /: it lands inside the root.
    auto inside = process::run_in_namespaces(
        [&]() -> Result<void> {
            if (auto r = root_detail::bind_into(d / "root", d / "src", "/swapped", true); !r) {
                return r;
            }
            if (fs::exists(d / "outside/marker")) {
                return fail("bind", "it was mounted outside the root");
            }
            if (!fs::exists(d / "root" / d.relative_path() / "outside/marker")) {
                return fail("bind", "it is not at the symlink's target inside the root");
            }
            return {};
        },
        noop);
    CHECK_MESSAGE(inside.has_value(), (inside ? "" : inside.error().message()));
    CHECK_FALSE(fs::exists(d / "outside/marker"));
    fs::remove_all(d);
}

TEST_CASE("root: roots that are refused before anything starts") {
    const fs::path d = fs::temp_directory_path() / ("emurun-roots-" + std::to_string(::getpid()));
    write(d / "native/var/lib/dpkg/arch", std::string(host_arch()->debian) + "\n");
    write(d / "native/bin/sh", "");
    write(d / "file", "");
    const auto why = [](const fs::path& dir) {
        RootSpec spec;
        spec.dir = dir;
        auto plan = plan_root(spec);
        return plan ? std::string("accepted") : plan.error().why;
    };
    CHECK(why("").find("empty path") != std::string::npos);
    CHECK(why("/").find("the host's own root directory") != std::string::npos);
    CHECK(why("/.").find("the host's own root directory") != std::string::npos);
    CHECK(why(d / "file").find("not a directory") != std::string::npos);
    CHECK(why(d / "native").find("natively") != std::string::npos);
    fs::remove_all(d);
}

TEST_CASE("root: a create's directory is checked before anything is downloaded") {
    // A foreign arch wherever this runs (the dogfood runs the unit tests on aarch64 too).
    const Arch* foreign = test::known_arch("aarch64");
    if (runs_natively(*foreign)) {
        foreign = test::known_arch("s390x");
    }
    const fs::path d = fs::temp_directory_path() / ("emurun-create-" + std::to_string(::getpid()));
    write(d / "file", "");
    write(d / "full/x", "");
    const auto why = [&](const fs::path& dir) {
        RootCreateSpec spec;
        spec.arch = foreign;
        spec.dir = dir;
        spec.mirror = "http://127.0.0.1:9/debian"; // never reached: the dir is refused first
        spec.cache_dir = d / "cache";
        auto made = create_root(spec);
        return made ? std::string("created") : made.error().message();
    };
    CHECK(why("").find("empty path") != std::string::npos);
    CHECK(why("/proc/nonexist/x").find("/proc/nonexist/x") != std::string::npos);
    CHECK(why(d / "file/x").find("Not a directory") != std::string::npos);
    CHECK(why(d / "file").find("not an empty directory") != std::string::npos);
    CHECK(why(d / "full").find("not an empty directory") != std::string::npos);
    CHECK_FALSE(fs::exists("/proc/nonexist"));
    CHECK_FALSE(fs::exists(d / "cache")); // refused before the cache was touched
    fs::remove_all(d);
}

TEST_CASE("root: arch names with their article") {
    CHECK(root_detail::with_article("aarch64") == "an aarch64");
    CHECK(root_detail::with_article("x86_64") == "an x86_64");
    CHECK(root_detail::with_article("s390x") == "an s390x");
    CHECK(root_detail::with_article("ppc64le") == "a ppc64le");
    CHECK(root_detail::with_article("riscv64") == "a riscv64");
}

namespace {

// dpkg status text as bookworm has it: the root's (arm64) gcc-12 with the CVE-2023-4039 fix,
// the host's cross gcc built from the revision before it, binutils the same on both sides.
constexpr const char* k_root_status = R"(Package: gcc-12
Status: install ok installed
Architecture: arm64
Version: 12.2.0-14+deb12u1

Package: cpp-12
Status: install ok installed
Architecture: arm64
Source: gcc-12
Version: 12.2.0-14+deb12u1

Package: g++-12
Status: install ok installed
Architecture: arm64
Source: gcc-12
Version: 12.2.0-14+deb12u1

Package: binutils-aarch64-linux-gnu
Status: install ok installed
Architecture: arm64
Source: binutils
Version: 2.40-2
)";

constexpr const char* k_host_status = R"(Package: gcc-12-aarch64-linux-gnu
Status: install ok installed
Architecture: amd64
Source: gcc-12-cross (15)
Version: 12.2.0-14cross1
Built-Using: gcc-12 (= 12.2.0-14)

Package: cpp-12-aarch64-linux-gnu
Status: install ok installed
Source: gcc-12-cross (15)
Version: 12.2.0-14cross1
Built-Using: gcc-12 (= 12.2.0-14)

Package: g++-12-aarch64-linux-gnu
Status: deinstall ok config-files
Source: gcc-12-cross (15)
Version: 12.2.0-14cross1
Built-Using: gcc-12 (= 12.2.0-14)

Package: binutils-aarch64-linux-gnu
Status: install ok installed
Architecture: amd64
Source: binutils
Version: 2.40-2
)";

} // namespace

TEST_CASE("root: the source a toolchain package was built from, from dpkg status text") {
    auto root_gcc = dpkg_tool_source(k_root_status, "gcc-12");
    CHECK(root_gcc == ToolSource{"gcc-12", "gcc-12", "12.2.0-14+deb12u1"}); // no Source field
    CHECK(dpkg_tool_source(k_root_status, "cpp-12").version == "12.2.0-14+deb12u1");
    // The cross compiler's own source is gcc-12-cross 15; Built-Using names the compiler's.
    CHECK(dpkg_tool_source(k_host_status, "gcc-12-aarch64-linux-gnu", "gcc-12") ==
          ToolSource{"gcc-12-aarch64-linux-gnu", "gcc-12", "12.2.0-14"});
    CHECK(dpkg_tool_source(k_host_status, "gcc-12-aarch64-linux-gnu") ==
          ToolSource{"gcc-12-aarch64-linux-gnu", "gcc-12-cross", "15"});
    CHECK(dpkg_tool_source(k_host_status, "binutils-aarch64-linux-gnu", "binutils") ==
          ToolSource{"binutils-aarch64-linux-gnu", "binutils", "2.40-2"});
    // Not installed (config files only, or absent): no source.
    CHECK(dpkg_tool_source(k_host_status, "g++-12-aarch64-linux-gnu", "gcc-12").source.empty());
    CHECK(dpkg_tool_source(k_root_status, "clang-14").source.empty());
}

TEST_CASE("root: toolchain identity compares source and Debian revision exactly") {
    const auto ids = toolchain_identity(k_root_status, k_host_status, "aarch64-linux-gnu", "12",
                                        {"gcc", "cc", "g++", "as", "ld", "objdump"});
    REQUIRE(ids.size() == 3); // gcc (cc is gcc), g++, binutils (as, ld, objdump)
    CHECK(ids[0].tool == "gcc");
    CHECK_FALSE(ids[0].same());
    CHECK(ids[0].root.version == "12.2.0-14+deb12u1");
    CHECK(ids[0].host.version == "12.2.0-14");
    const std::string why = ids[0].why();
    CHECK(why.find("gcc-12 12.2.0-14+deb12u1") != std::string::npos);
    CHECK(why.find("gcc-12-aarch64-linux-gnu from gcc-12 12.2.0-14") != std::string::npos);
    CHECK(why.find("CVE-2023-4039") != std::string::npos);
    CHECK(ids[1].tool == "g++");
    CHECK_FALSE(ids[1].same()); // the host's g++ is not installed: not known to be the same
    CHECK(ids[1].why().find("not installed") != std::string::npos);
    CHECK(ids[2].tool == "binutils");
    CHECK(ids[2].same());
    CHECK(ids[2].why().empty());
    // The same revision on both sides: identical.
    std::string fixed_host = k_host_status;
    for (std::size_t at = 0; (at = fixed_host.find("(= 12.2.0-14)", at)) != std::string::npos;) {
        fixed_host.replace(at, 13, "(= 12.2.0-14+deb12u1)");
    }
    const auto same =
        toolchain_identity(k_root_status, fixed_host, "aarch64-linux-gnu", "12", {"gcc", "cpp"});
    REQUIRE(same.size() == 2);
    CHECK(same[0].same());
    CHECK(same[1].same());
    // gcc is gcc-12 and cpp-12 (cc1): a cpp-12 of another revision makes gcc differ.
    std::string cpp_only = fixed_host;
    cpp_only.replace(cpp_only.rfind("(= 12.2.0-14+deb12u1)"), 21, "(= 12.2.0-13)"); // g++'s
    const auto g = toolchain_identity(k_root_status, cpp_only, "aarch64-linux-gnu", "12", {"gcc"});
    CHECK(g[0].same()); // g++'s stanza changed, not gcc's or cpp's
    std::string cpp_differs = fixed_host;
    const auto cpp_at = cpp_differs.find("(= 12.2.0-14+deb12u1)", cpp_differs.find("cpp-12"));
    cpp_differs.replace(cpp_at, 21, "(= 12.2.0-13)");
    const auto c =
        toolchain_identity(k_root_status, cpp_differs, "aarch64-linux-gnu", "12", {"gcc"});
    CHECK_FALSE(c[0].same());
    CHECK(c[0].root.package == "cpp-12");
}

TEST_CASE("root: a mismatch's text names the tool, both versions, why and the way out") {
    const auto ids =
        toolchain_identity(k_root_status, k_host_status, "aarch64-linux-gnu", "12", {"gcc"});
    ToolMismatch kept{ids.at(0), false};
    CHECK(kept.text().starts_with("gcc kept emulated: the root's gcc-12 is built from gcc-12 "
                                  "12.2.0-14+deb12u1, the host's gcc-12-aarch64-linux-gnu from "
                                  "gcc-12 12.2.0-14"));
    CHECK(kept.text().find("(option allow_revision_mismatch)") != std::string::npos);
    ToolMismatch allowed{ids.at(0), true};
    CHECK(allowed.text().starts_with("gcc accelerated although the sources differ"));
}

namespace {

/// A 64-bit ELF relocatable of `big` endianness with the sections `named` (name, content).
std::string tiny_object(const std::vector<std::pair<std::string, std::string>>& named, bool big) {
    std::string names(1, '\0'), data;
    std::vector<std::pair<std::size_t, std::pair<std::size_t, std::size_t>>> sh; // name, off, size
    for (const auto& [n, content] : named) {
        sh.push_back({names.size(), {64 + data.size(), content.size()}});
        names += n + '\0';
        data += content;
    }
    sh.push_back({names.size(), {64 + data.size() + 0, 0}}); // .shstrtab, filled below
    names += std::string(".shstrtab") + '\0';
    sh.back().second = {64 + data.size(), names.size()};
    data += names;
    const std::size_t shoff = 64 + data.size();
    std::string out(64, '\0');
    const auto put = [&](std::string& b, std::size_t at, std::uint64_t v, int size) {
        for (int i = 0; i < size; ++i) {
            b[at + (big ? size - 1 - i : i)] = static_cast<char>(v >> (8 * i) & 0xff);
        }
    };
    out.replace(0, 4,
                "\x7f"
                "ELF");
    out[4] = 2;
    out[5] = big ? 2 : 1;
    put(out, 0x28, shoff, 8);
    put(out, 0x3a, 64, 2);
    put(out, 0x3c, sh.size() + 1, 2);
    put(out, 0x3e, sh.size(), 2);
    out += data;
    out += std::string(64, '\0'); // [0] null
    for (const auto& [name, where] : sh) {
        std::string h(64, '\0');
        put(h, 0, name, 4);
        put(h, 4, 1, 4); // PROGBITS
        put(h, 0x18, where.first, 8);
        put(h, 0x20, where.second, 8);
        out += h;
    }
    return out;
}

} // namespace

using namespace emurun::root_detail;

TEST_CASE("root: the probe's cache key follows every toolchain version on both sides") {
    const std::string t = "aarch64-linux-gnu";
    const std::string key = probe_key(k_root_status, k_host_status, t, "12");
    CHECK(key.size() == 16);
    CHECK(probe_key(k_root_status, k_host_status, t, "12") == key); // stable
    std::string root_fixed = k_root_status;
    root_fixed.replace(root_fixed.find("12.2.0-14+deb12u1"), 17, "12.2.0-14+deb12u2");
    CHECK(probe_key(root_fixed, k_host_status, t, "12") != key);
    std::string host_rebuilt = k_host_status; // cross1 -> cross2: the same source, another build
    host_rebuilt.replace(host_rebuilt.find("12.2.0-14cross1"), 15, "12.2.0-14cross2");
    CHECK(probe_key(k_root_status, host_rebuilt, t, "12") != key);
    std::string binutils = k_host_status;
    binutils.replace(binutils.find("2.40-2"), 6, "2.40-3");
    CHECK(probe_key(k_root_status, binutils, t, "12") != key);
    CHECK(probe_key(k_root_status, k_host_status, t, "13") != key);
    CHECK(probe_key(k_root_status, k_host_status, "powerpc64le-linux-gnu", "12") != key);
}

TEST_CASE("root: the probe's verdict: the same bytes, else the first file and its sections") {
    const std::string a = tiny_object({{".text", "\x01\x02"}, {".data", "x"}}, false);
    const std::string b = tiny_object({{".text", "\x01\x03"}, {".data", "x"}}, false);
    CHECK(judge_probe({{"stack.c.dpkg-buildflags", a, a}, {"pic.c.dpkg-buildflags", b, b}})
              .identical);
    const auto v =
        judge_probe({{"pic.c.dpkg-buildflags", b, b}, {"stack.c.dpkg-buildflags", a, b}});
    CHECK_FALSE(v.identical);
    CHECK(v.file == "stack.c.dpkg-buildflags");
    CHECK(v.why.starts_with("the emulated and the accelerated compiler's objects differ beyond "
                            ".comment: stack.c.dpkg-buildflags: sections .text differ"));
    // Every object that differs is named, the first one is the verdict's file.
    const auto two = judge_probe({{"stack.c.x", a, b}, {"pic.c.x", b, b}, {"except.cpp.x", b, a}});
    CHECK(two.file == "stack.c.x");
    CHECK(two.why.find("; except.cpp.x: sections .text differ") != std::string::npos);
    CHECK(two.why.find("pic.c.x") == std::string::npos);
    // Big-endian objects (s390x) are read too; a section only one side has is named.
    const auto be = judge_probe({{"f.c.x", tiny_object({{".text", "a"}}, true),
                                  tiny_object({{".text", "a"}, {".rodata", "s"}}, true)}});
    CHECK(be.why.find("sections .rodata, .shstrtab differ") != std::string::npos);
    // Not ELF: the sizes only. Missing on one side, or no objects at all: not identical.
    CHECK(judge_probe({{"f.c.x", "ab", "abc"}}).why.find("the objects differ (2 vs 3 bytes)") !=
          std::string::npos);
    CHECK(judge_probe({{"f.cpp.x", "ab", ""}})
              .why.ends_with("f.cpp.x: the accelerated compiler made no object"));
    CHECK_FALSE(judge_probe({}).identical);
}

TEST_CASE("root: the probe's verdict is cached per key; a damaged entry runs the probe again") {
    auto dir = util::TempDir::make(fs::temp_directory_path() / "emurun-probe-test-");
    REQUIRE(dir);
    CHECK_FALSE(read_probe_cache(dir->path(), "k1"));
    const ProbeVerdict differs{false, "stack.c.dpkg-buildflags", "stack.c: sections .text differ"};
    REQUIRE(write_probe_cache(dir->path(), "k1", differs));
    CHECK(read_probe_cache(dir->path(), "k1") == differs);
    CHECK_FALSE(read_probe_cache(dir->path(), "k2")); // another toolchain: not this verdict
    REQUIRE(write_probe_cache(dir->path(), "k2", ProbeVerdict{true, "", ""}));
    CHECK(read_probe_cache(dir->path(), "k2")->identical);
    const std::string text = probe_verdict_json(differs);
    std::ofstream(dir->path() / "k1.json") << text.substr(0, text.size() / 2); // truncated
    CHECK_FALSE(read_probe_cache(dir->path(), "k1"));
    std::ofstream(dir->path() / "k1.json") << R"({"identical": "yes", "file": "", "why": ""})";
    CHECK_FALSE(read_probe_cache(dir->path(), "k1"));
}

TEST_CASE("root: a probe difference is said like a source mismatch, with the file") {
    auto ids = toolchain_identity(k_root_status, k_host_status, "aarch64-linux-gnu", "12", {"gcc"});
    const ProbeVerdict v{false, "stack.c.dpkg-buildflags",
                         "stack.c.dpkg-buildflags: ... sections .text differ (10 vs 12 bytes)"};
    // Only the probe differed (the sources are the same): kept emulated, saying which file.
    ToolIdentity same = ids.at(0);
    same.host = same.root;
    same.host.package = "gcc-12-aarch64-linux-gnu";
    REQUIRE(same.same());
    const ToolMismatch kept{same, false, false, v};
    CHECK(kept.text().starts_with("gcc kept emulated: the probe corpus (the root's hardening "
                                  "flags) compiled both ways: stack.c.dpkg-buildflags"));
    CHECK(kept.text().find("(option allow_revision_mismatch)") != std::string::npos);
    // A revision mismatch allowed: accelerated, the probe's verdict recorded with it.
    const ToolMismatch allowed{ids.at(0), true, false, v};
    CHECK(allowed.text().starts_with("gcc accelerated although the sources differ"));
    CHECK(allowed.text().find("12.2.0-14+deb12u1") != std::string::npos);
    CHECK(allowed.text().find("sections .text differ") != std::string::npos);
    const ToolMismatch fine{ids.at(0), true, false, ProbeVerdict{true, "", ""}};
    CHECK(fine.text().find("the probe corpus compiled to the same objects") != std::string::npos);
}

TEST_CASE("root: accelerate as an object allows a revision mismatch, carried to the helper") {
    auto p = Pipeline::parse(R"({"name": "n", "defaults": {"arch": "arm64", "emulation": "root",
        "root": "r", "accelerate": {"allow_revision_mismatch": true}},
        "steps": [{"name": "a", "argv": ["make"]},
                  {"name": "b", "argv": ["make"], "accelerate": {"tools": "gcc,as"}},
                  {"name": "c", "argv": ["make"], "accelerate": {"tools": false}}]})",
                             "p.json", "/w");
    REQUIRE_MESSAGE(p.has_value(), (p ? "" : p.error().message()));
    CHECK(p->steps[0].accelerate);
    CHECK(p->steps[0].accelerate_tools.empty());
    CHECK(p->steps[0].allow_revision_mismatch);
    CHECK(p->steps[1].accelerate_tools == "gcc,as");
    CHECK(p->steps[1].allow_revision_mismatch); // from the defaults
    CHECK_FALSE(p->steps[2].accelerate);
    auto bad = Pipeline::parse(R"({"name": "n", "steps": [{"name": "b", "argv": ["make"],
        "arch": "arm64", "emulation": "root", "root": "r",
        "accelerate": {"allow_revision_mismatch": "yes"}}]})");
    REQUIRE_FALSE(bad.has_value());
    CHECK(bad.error().message().find("allow_revision_mismatch") != std::string::npos);
    auto unknown = Pipeline::parse(R"({"name": "n", "steps": [{"name": "b", "argv": ["make"],
        "arch": "arm64", "emulation": "root", "root": "r", "accelerate": {"tool": "gcc"}}]})");
    REQUIRE_FALSE(unknown.has_value());
    CHECK(unknown.error().message().find("\"tools\"") != std::string::npos);
    for (const char* none : {"false", "\"none\""}) { // a mismatch allowed for no tool at all
        auto nothing = Pipeline::parse(
            std::string(R"({"name": "n", "steps": [{"name": "b", "argv": ["make"], "arch": "arm64",
            "emulation": "root", "root": "r", "accelerate": {"tools": )") +
            none + R"(, "allow_revision_mismatch": true}}]})");
        REQUIRE_FALSE(nothing.has_value());
        CHECK(nothing.error().message().find("accelerate.allow_revision_mismatch: is true but "
                                             "\"tools\" accelerates none: it allows nothing") !=
              std::string::npos);
    }
    RootSpec spec;
    spec.dir = "/r";
    spec.accelerate.mode = Acceleration::Mode::defaults;
    spec.accelerate.allow_revision_mismatch = true;
    auto json = root_detail::root_spec_to_json(spec);
    REQUIRE(json.has_value());
    auto back = root_detail::root_spec_from_json(*json);
    REQUIRE(back.has_value());
    CHECK(back->accelerate.allow_revision_mismatch);
}

TEST_CASE("root: create keeps mmdebstrap's known noise out, and tells resource failures") {
    CHECK(root_detail::harmless_create_noise("mount: /tmp/mmdebstrap.aB3/sys: permission denied"));
    // As mmdebstrap prints it when creating a root as root in emurun's namespaces:
    CHECK(root_detail::harmless_create_noise(
        "mount: /c/tmp/create-9472/mmdebstrap.5c7csxZuHu/sys: permission denied."));
    CHECK(root_detail::harmless_create_noise(
        "       dmesg(1) may have more information after failed mount system call."));
    CHECK_FALSE(root_detail::harmless_create_noise("mount: /proc: permission denied"));
    CHECK_FALSE(
        root_detail::harmless_create_noise("E: Failed to fetch .../sys: permission denied"));
    CHECK(root_detail::resource_failure_line(
              "I: running apt-get update...\n"
              "E: Method http has died unexpectedly!\n"
              "bash: fork: retry: Resource temporarily unavailable\n") ==
          "bash: fork: retry: Resource temporarily unavailable");
    CHECK(root_detail::resource_failure_line("tar: ./usr/bin/x: Cannot write: No space left on "
                                             "device\n")
              .find("No space left") != std::string::npos);
    // A mirror mid-sync is no resource failure: retried once.
    CHECK(
        root_detail::resource_failure_line("E: Failed to fetch http://deb.debian.org/debian/dists/"
                                           "bookworm/main/binary-arm64/Packages.xz  Hash Sum "
                                           "mismatch\n")
            .empty());
}

TEST_CASE("root: a create's log tells a request that cannot work from a mirror mid-sync") {
    using root_detail::request_failure;
    // apt-get update of a suite the mirror does not have (bookworm's apt 2.6)
    const auto suite = request_failure(
        "Err:1 http://deb.debian.org/debian nosuch Release\n  404  Not Found [IP: 1.2.3.4 80]\n"
        "E: The repository 'http://deb.debian.org/debian nosuch Release' does not have a Release "
        "file.\nE: The repository 'http://deb.debian.org/debian-security nosuch-security "
        "Release' does not have a Release file.\n",
        "nosuch");
    REQUIRE(suite.has_value());
    CHECK(suite->why.starts_with("the mirror has no suite nosuch (The repository "
                                 "'http://deb.debian.org/debian nosuch Release'"));
    CHECK(suite->field == "suite");
    CHECK(suite->message().find("(option suite)") != std::string::npos);
    // Only the security suite missing is no such refusal (sid has none; a mirror mid-sync).
    CHECK_FALSE(request_failure("E: The repository 'http://deb.debian.org/debian-security "
                                "bookworm-security Release' does not have a Release file.\n",
                                "bookworm"));
    const auto include = request_failure(
        "I: running --setup-hook\nE: Unable to locate package nosuchpkg\nE: emurun: include: apt "
        "cannot install the packages asked for from bookworm for arm64: E: Unable to locate "
        "package nosuchpkg \n",
        "bookworm");
    REQUIRE(include.has_value());
    CHECK(include->why.starts_with("apt cannot install the packages asked for from bookworm for "
                                   "arm64: E: Unable to locate package nosuchpkg"));
    CHECK(include->field == "include");
    const auto pin = request_failure("E: emurun: pin: bookworm has no gcc-12 12.2.0-14 for arm64, "
                                     "the revision the host's cross toolchain is built from (it "
                                     "has: 12.2.0-14+deb12u1 )\n",
                                     "bookworm");
    REQUIRE(pin.has_value());
    CHECK(pin->why.starts_with("bookworm has no gcc-12 12.2.0-14 for arm64"));
    CHECK(pin->field == "pin_toolchain");
    CHECK_FALSE(request_failure("E: Failed to fetch http://deb.debian.org/debian/dists/bookworm/"
                                "main/binary-arm64/Packages.xz  Hash Sum mismatch\n",
                                "bookworm"));
}

TEST_CASE("root: a later create finds the temp dirs of creates that are gone") {
    const fs::path tmp = fs::temp_directory_path() / ("emurun-stale-" + std::to_string(::getpid()));
    fs::remove_all(tmp);
    for (const char* d :
         {"create-111", "create-222", "create-" /* no pid */, "create-12x", "other-333"}) {
        fs::create_directories(tmp / d);
    }
    fs::create_directories(tmp / ("create-" + std::to_string(::getpid()))); // this one's own
    const auto stale =
        root_detail::stale_pid_dirs(tmp, "create-", [](long pid) { return pid == 222; });
    CHECK(stale == std::vector<fs::path>{tmp / "create-111"});
    CHECK(root_detail::stale_pid_dirs(tmp / "missing", "create-", [](long) {
              return false;
          }).empty());
    fs::remove_all(tmp);
}

TEST_CASE("root: pinning the root's toolchain to the host cross toolchain's revisions") {
    const auto pins = toolchain_pins(k_host_status, "aarch64-linux-gnu");
    REQUIRE(pins.size() == 2);
    CHECK(pins[0] == std::pair<std::string, std::string>{"gcc-12", "12.2.0-14"});
    CHECK(pins[1] == std::pair<std::string, std::string>{"binutils", "2.40-2"});
    CHECK(toolchain_pins(k_host_status, "s390x-linux-gnu").empty());
    CHECK(toolchain_preferences(pins) ==
          "Package: src:gcc-12\nPin: version 12.2.0-14\nPin-Priority: 1001\n\n"
          "Package: src:binutils\nPin: version 2.40-2\nPin-Priority: 1001\n");
}
