#include "elf_builder.hpp"
#include "scoped_env.hpp"
#include "skip.hpp"
#include "testdir.hpp"

#include <emurun/sysroot.hpp>

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <string>
#include <vector>

namespace fs = std::filesystem;
using namespace emurun;

namespace {
const Arch& arch(const char* name) {
    return **find_arch(name);
}

/// The first of `paths` that does not exist, or empty when all do: the reason to skip.
std::string missing_of(std::initializer_list<fs::path> paths) {
    for (const auto& p : paths) {
        if (!fs::exists(p)) {
            return p.string() + " missing (install the cross compilers: tools/install-deps)";
        }
    }
    return {};
}

/// A sysroot with only the aarch64 loader and libc copied from Debian's cross packages.
fs::path partial_sysroot(const std::string& name) {
    auto root = test::testdir(name);
    fs::create_directories(root / "lib");
    for (const char* f : {"ld-linux-aarch64.so.1", "libc.so.6"}) {
        fs::copy_file(fs::path("/usr/aarch64-linux-gnu/lib") / f, root / "lib" / f);
    }
    return root;
}
} // namespace

TEST_CASE("sysroot: guesses Debian packages by name and policy") {
    CHECK(guess_package("libz.so.1", arch("arm64")) == "zlib1g:arm64");
    CHECK(guess_package("libstdc++.so.6", arch("ppc64le")) == "libstdc++6:ppc64el");
    CHECK(guess_package("libprotobuf.so.32", arch("aarch64")) == "libprotobuf32:arm64");
    CHECK(guess_package("libfoo2.so.1.4", arch("aarch64")) == "libfoo2-1:arm64");
    CHECK(guess_package("/lib/ld64.so.1", arch("s390x")) == "libc6:s390x");
    CHECK(guess_package("weird", arch("s390x")).empty());
    // Which answers are guesses (said as such by inspect and the missing-library hint).
    CHECK_FALSE(package_guessed("libz.so.1"));
    CHECK_FALSE(package_guessed("/lib/ld64.so.1"));
    CHECK(package_guessed("libprotobuf.so.32"));
    CHECK(package_guessed("libxml2.so.2")); // "libxml2-2": Debian's package is libxml2
    CHECK_FALSE(package_guessed("weird"));  // no answer at all
}

TEST_CASE("sysroot: resolves a dynamic C++ fixture in Debian's cross sysroot" * test::may_skip()) {
    auto bin = test::fixture("aarch64/hello");
    if (auto why = missing_of({bin, "/usr/aarch64-linux-gnu/lib/libstdc++.so.6"}); !why.empty()) {
        EMURUN_SKIP(why);
    }
    auto elf = read_elf(bin);
    REQUIRE(elf.has_value());
    auto roots = default_sysroots(arch("aarch64"));
    REQUIRE_FALSE(roots.empty());
    CHECK(roots.front() == "/usr/aarch64-linux-gnu");
    auto map = resolve_libraries(bin, *elf, roots);
    CHECK(map.complete());
    REQUIRE(map.interpreter.has_value());
    CHECK(map.interpreter->path == fs::path("/usr/aarch64-linux-gnu/lib/ld-linux-aarch64.so.1"));
    std::vector<std::string> names;
    for (const auto& l : map.libraries) {
        names.push_back(l.name);
    }
    // libstdc++ pulls in libm and libgcc_s: the walk is recursive.
    for (const char* want : {"libstdc++.so.6", "libc.so.6", "libm.so.6", "libgcc_s.so.1"}) {
        CHECK_MESSAGE(std::ranges::find(names, want) != names.end(), want);
    }
}

TEST_CASE("sysroot: missing libraries are named with their package, wrong-arch ones skipped" *
          test::may_skip()) {
    auto bin = test::fixture("aarch64/hello");
    if (auto why = missing_of({bin, "/usr/aarch64-linux-gnu/lib/libc.so.6",
                               "/usr/powerpc64le-linux-gnu/lib/libstdc++.so.6"});
        !why.empty()) {
        EMURUN_SKIP(why);
    }
    auto root = partial_sysroot("partial");
    // A ppc64le libstdc++ where an aarch64 one is looked for must not count.
    fs::copy_file("/usr/powerpc64le-linux-gnu/lib/libstdc++.so.6", root / "lib/libstdc++.so.6");
    auto map = resolve_libraries(bin, *read_elf(bin), {root});
    CHECK_FALSE(map.complete());
    CHECK(map.interpreter->path.has_value());
    auto missing = map.missing();
    CHECK(std::ranges::find(missing, "libstdc++.so.6") != missing.end());
    CHECK(std::ranges::find(missing, "libc.so.6") == missing.end());
    auto msg = map.missing_error(bin).message();
    CHECK(msg.find("libstdc++.so.6 (needed by hello)") != std::string::npos);
    CHECK(msg.find("libstdc++6:arm64") != std::string::npos);
    CHECK(msg.find(root.string()) != std::string::npos);
}

TEST_CASE("sysroot: an empty sysroot misses the interpreter first" * test::may_skip()) {
    auto bin = test::fixture("aarch64/probe");
    if (auto why = missing_of({bin}); !why.empty()) {
        EMURUN_SKIP(why);
    }
    auto map = resolve_libraries(bin, *read_elf(bin), {test::testdir("empty-root")});
    auto missing = map.missing();
    REQUIRE_FALSE(missing.empty());
    CHECK(missing.front() == "/lib/ld-linux-aarch64.so.1");
}

TEST_CASE("sysroot: one arch with one sysroot uses it directly as QEMU_LD_PREFIX") {
    auto p = make_ld_prefix({{&arch("aarch64"), {"/usr/aarch64-linux-gnu"}}}, test::testdir("c1"));
    REQUIRE(p.has_value());
    CHECK(*p == "/usr/aarch64-linux-gnu");
}

TEST_CASE("sysroot: a merged prefix serves several arches without collisions" * test::may_skip()) {
    if (auto why = missing_of(
            {"/usr/aarch64-linux-gnu/lib/libc.so.6", "/usr/powerpc64le-linux-gnu/lib/libc.so.6"});
        !why.empty()) {
        EMURUN_SKIP(why);
    }
    auto cache = test::testdir("merged");
    std::vector<ArchSysroots> spec{{&arch("aarch64"), {"/usr/aarch64-linux-gnu"}},
                                   {&arch("ppc64le"), {"/usr/powerpc64le-linux-gnu"}}};
    auto p = make_ld_prefix(spec, cache);
    REQUIRE(p.has_value());
    auto target = [&](const char* rel) { return fs::canonical(*p / rel); };
    CHECK(target("lib/ld-linux-aarch64.so.1").string().starts_with("/usr/aarch64-linux-gnu/"));
    CHECK(target("lib64/ld64.so.2").string().starts_with("/usr/powerpc64le-linux-gnu/"));
    CHECK(
        target("lib/aarch64-linux-gnu/libc.so.6").string().starts_with("/usr/aarch64-linux-gnu/"));
    CHECK(target("lib/powerpc64le-linux-gnu/libc.so.6")
              .string()
              .starts_with("/usr/powerpc64le-linux-gnu/"));
    // Built once, then reused.
    auto again = make_ld_prefix(spec, cache);
    REQUIRE(again.has_value());
    CHECK(*again == *p);
}

namespace {

fs::path write_elf(const std::string& name, const test::ElfSpec& spec) {
    const auto image = test::build_elf(spec).bytes;
    return test::write_file(name, std::string(image.begin(), image.end()));
}

test::ElfSpec aarch64_spec() {
    test::ElfSpec spec;
    spec.type = 2;
    spec.machine = 183;
    spec.interp = "/lib/ld-linux-aarch64.so.1";
    spec.needed = {"libfoo.so.1"};
    return spec;
}

} // namespace

TEST_CASE("inspect: a binary's facts and what is missing, in the sysroots given or the default") {
    const auto empty = test::testdir("inspect-empty-sysroot");
    const auto dyn = write_elf("inspect/dyn", aarch64_spec());
    auto in = inspect_binary(dyn, {empty});
    REQUIRE_MESSAGE(in.has_value(), test::why(in));
    CHECK(in->file == dyn);
    CHECK(in->elf.arch == &arch("aarch64"));
    CHECK(in->links.sysroots == std::vector<fs::path>{empty});
    CHECK_FALSE(in->links.complete());
    CHECK(in->links.missing().front() == "/lib/ld-linux-aarch64.so.1");
    test::ElfSpec st = aarch64_spec();
    st.interp.clear();
    st.dynamic = false;
    st.needed.clear();
    auto stat = inspect_binary(write_elf("inspect/static", st));
    REQUIRE_MESSAGE(stat.has_value(), test::why(stat));
    CHECK(stat->links.complete()); // nothing to resolve
    CHECK(stat->links.libraries.empty());
    CHECK(stat->links.sysroots == default_sysroots(arch("aarch64")));
    auto not_elf = inspect_binary(test::write_file("inspect/text", "hello\n"));
    REQUIRE_FALSE(not_elf.has_value());
    CHECK(not_elf.error().message().find("inspect/text") != std::string::npos);
}

TEST_CASE("inspect JSON: every field, null for what is absent, package only when guessed") {
    Inspection in;
    in.file = "out/prog";
    in.elf.elf_class = 2;
    in.elf.elf_data = 1;
    in.elf.type = 3;
    in.elf.machine = 183;
    in.elf.arch = &arch("aarch64");
    in.elf.interpreter = "/lib/ld-linux-aarch64.so.1";
    in.elf.needed = {"libz.so.1"};
    in.elf.runpath = {"$ORIGIN"};
    in.links.interpreter =
        LibraryLookup{"/lib/ld-linux-aarch64.so.1", "prog", "/sr/lib/ld-linux-aarch64.so.1", ""};
    in.links.libraries = {LibraryLookup{"libz.so.1", "prog", std::nullopt, "zlib1g:arm64"}};
    in.links.sysroots = {"/sr"};
    CHECK(inspection_json({&in, 1}, -1) ==
          R"([{"arch":"aarch64","class":64,"endianness":"little","file":"out/prog",)"
          R"("interpreter":{"name":"/lib/ld-linux-aarch64.so.1","needed_by":"prog",)"
          R"("path":"/sr/lib/ld-linux-aarch64.so.1"},"libraries":[{"name":"libz.so.1",)"
          R"("needed_by":"prog","package":"zlib1g:arm64","package_guessed":false,"path":null}],)"
          R"("linkage":"dynamic",)"
          R"("machine":183,"machine_arch":null,)"
          R"("missing":["libz.so.1"],"needed":["libz.so.1"],"rpath":[],"runpath":["$ORIGIN"],)"
          R"("soname":null,"static":false,"sysroots":["/sr"],"type":"DYN"}])");
    in.elf.arch = nullptr;
    in.elf.interpreter.reset();
    in.links = LinkMap{};
    const auto j = nlohmann::json::parse(inspection_json({&in, 1})).at(0);
    CHECK(j["arch"].is_null());
    CHECK(j["interpreter"].is_null());
    CHECK(j["static"] == false); // needs libz.so.1, no interpreter: a shared library
    CHECK(j["linkage"] == "shared library");
}

TEST_CASE("inspect: a shared object without an interpreter is a shared library, not static") {
    ElfInfo e;
    e.type = 3;
    e.needed = {"libpython3.11.so.1.0", "libxml2.so.2"};
    CHECK(e.linkage() == "shared library");
    CHECK(e.is_shared_library());
    e.needed.clear();
    e.soname = "libfoo.so.1"; // needs nothing, but a soname names a library
    CHECK(e.linkage() == "shared library");
    e.soname.reset(); // static-pie: DYN, no interpreter, needs nothing
    CHECK(e.linkage() == "static");
    e.interpreter = "/lib/ld-linux-aarch64.so.1";
    e.needed = {"libc.so.6"};
    CHECK(e.linkage() == "dynamic");
    e.type = 2;
    e.interpreter.reset();
    e.needed.clear();
    CHECK(e.linkage() == "static");
    Inspection in;
    in.elf.type = 3;
    in.elf.needed = {"libc.so.6"};
    const auto j = nlohmann::json::parse(inspection_json({&in, 1})).at(0);
    CHECK(j["static"] == false);
    CHECK(j["linkage"] == "shared library");
}

namespace {

/// An aarch64 shared object named `name` in `dir` (a header is all the prefix looks at).
void put_library(const fs::path& dir, const std::string& name) {
    test::ElfSpec spec;
    spec.type = 3;
    spec.machine = 183;
    spec.interp.clear();
    spec.soname = name;
    const auto image = test::build_elf(spec).bytes;
    fs::create_directories(dir);
    std::ofstream(dir / name, std::ios::binary)
        .write(reinterpret_cast<const char*>(image.data()), std::streamsize(image.size()));
}

/// Two aarch64 sysroots (one with a loader and libc, one with a tool's library) and a cache.
struct TwoSysroots {
    fs::path base;
    fs::path libc_root;
    fs::path tool_root;
    fs::path cache;
    std::vector<ArchSysroots> spec;
    explicit TwoSysroots(const std::string& name)
        : base(test::testdir(name)), libc_root(base / "libc"), tool_root(base / "tool"),
          cache(base / "cache") {
        put_library(libc_root / "lib", "ld-linux-aarch64.so.1");
        put_library(libc_root / "lib/aarch64-linux-gnu", "libc.so.6");
        put_library(tool_root / "usr/lib/aarch64-linux-gnu", "libtool.so.1");
        spec = {{&arch("aarch64"), {libc_root, tool_root}}};
    }
};

} // namespace

TEST_CASE("sysroot: a merged prefix follows its sysroots when they gain a package (xz case)") {
    TwoSysroots s("prefix-stale");
    auto first = make_ld_prefix(s.spec, s.cache);
    REQUIRE(first.has_value());
    CHECK(fs::exists(*first / "lib/aarch64-linux-gnu/libtool.so.1"));
    CHECK_FALSE(fs::exists(*first / "lib/aarch64-linux-gnu/liblzma.so.5"));
    // A package unpacked later into the tool's sysroot (a new file in /lib/<triplet>).
    put_library(s.tool_root / "lib/aarch64-linux-gnu", "liblzma.so.5");
    auto second = make_ld_prefix(s.spec, s.cache);
    REQUIRE(second.has_value());
    CHECK(*second == *first); // the same name: a shim's sidecar keeps pointing at a valid prefix
    CHECK(fs::exists(*second / "lib/aarch64-linux-gnu/liblzma.so.5"));
    CHECK(fs::exists(*first / "lib/aarch64-linux-gnu/libtool.so.1"));
}

TEST_CASE("trust 1: a merged prefix is never built in a cache dir others can write") {
    TwoSysroots s("prefix-open-cache");
    fs::create_directories(s.cache);
    fs::permissions(s.cache, fs::perms::all); // 0777: another user could swap a library in
    auto p = make_ld_prefix(s.spec, s.cache);
    REQUIRE_FALSE(p.has_value());
    CHECK(p.error().why.find("writable by others") != std::string::npos);
    CHECK_FALSE(fs::exists(s.cache / "prefix"));
}

TEST_CASE("sysroot: old prefix versions and prefixes of vanished sysroots are pruned") {
    TwoSysroots s("prefix-prune");
    REQUIRE(make_ld_prefix(s.spec, s.cache).has_value());
    auto versions = [&] {
        std::size_t n = 0;
        for (const auto& e : fs::directory_iterator(s.cache / "prefix")) {
            n += e.path().filename().string().starts_with(".v-") ? 1 : 0;
        }
        return n;
    };
    CHECK(versions() == 1);
    put_library(s.tool_root / "lib/aarch64-linux-gnu", "liblzma.so.5");
    REQUIRE(make_ld_prefix(s.spec, s.cache).has_value());
    CHECK(versions() == 2); // the old one is kept for a grace period (running programs)
    // Age every version past the grace: only the current one stays.
    for (const auto& e : fs::directory_iterator(s.cache / "prefix")) {
        if (!e.is_symlink()) {
            fs::last_write_time(e.path(),
                                fs::file_time_type::clock::now() - std::chrono::hours(48));
        }
    }
    put_library(s.tool_root / "lib/aarch64-linux-gnu", "libxz2.so.1");
    REQUIRE(make_ld_prefix(s.spec, s.cache).has_value());
    CHECK(versions() == 1);
    // The sysroot goes away: the next rebuild of any prefix drops its entry.
    const std::vector<ArchSysroots> other{{&arch("aarch64"), {s.libc_root, s.libc_root / "lib"}}};
    fs::remove_all(s.tool_root);
    REQUIRE(make_ld_prefix(other, s.cache).has_value());
    std::size_t names = 0;
    for (const auto& e : fs::directory_iterator(s.cache / "prefix")) {
        names += e.is_symlink() ? 1 : 0;
    }
    CHECK(names == 1);
    CHECK(versions() == 1);
}

TEST_CASE("sysroot tool: a request becomes the tool's argument vector, checked first") {
    SysrootRequest r;
    r.arch = "aarch64";
    r.dir = test::testdir("tool-sr");
    r.packages = {"libpng-dev", "libc6-dev"};
    r.cache = "/c";
    auto argv = sysroot_tool_argv(r, "/t/emurun-sysroot");
    REQUIRE(argv.has_value());
    CHECK(*argv == std::vector<std::string>{"/t/emurun-sysroot", "fetch", "--arch", "arm64",
                                            "--dir", r.dir.string(), "--cache", "/c", "--",
                                            "libpng-dev", "libc6-dev"});
    r.op = SysrootOp::build_dep;
    r.arch = "ppc64le";
    r.packages = {"libpng1.6"};
    r.profiles = "nocheck";
    argv = sysroot_tool_argv(r, "t");
    REQUIRE(argv.has_value());
    CHECK((*argv)[1] == "build-dep");
    CHECK((*argv)[3] == "ppc64el");
    CHECK(std::ranges::find(*argv, "--profiles") != argv->end());
    r.op = SysrootOp::source;
    r.arch.clear();
    r.packages = {"expat=2.5.0-1"};
    argv = sysroot_tool_argv(r, "t");
    REQUIRE(argv.has_value());
    CHECK(std::ranges::find(*argv, "--arch") == argv->end());
    CHECK(argv->back() == "expat=2.5.0-1");
}

TEST_CASE(
    "sysroot tool: the apt cache is emurun's cache dir's apt/, so EMURUN_CACHE_DIR moves it") {
    SysrootRequest r;
    r.arch = "arm64";
    r.dir = test::testdir("tool-cache");
    r.packages = {"zlib1g"};
    const auto cache = test::testdir("tool-cache-root");
    test::ScopedEnv moved("EMURUN_CACHE_DIR", cache.string());
    auto argv = sysroot_tool_argv(r, "t");
    REQUIRE(argv.has_value());
    auto at = std::ranges::find(*argv, "--cache");
    REQUIRE(at != argv->end());
    REQUIRE(std::next(at) != argv->end());
    CHECK(*std::next(at) == (cache / "apt").string());
    CHECK(*std::next(at) == (cache_dir() / "apt").string());
    r.cache = "/elsewhere"; // an explicit cache wins
    argv = sysroot_tool_argv(r, "t");
    REQUIRE(argv.has_value());
    CHECK(*std::next(std::ranges::find(*argv, "--cache")) == "/elsewhere");
}

TEST_CASE("sysroot tool: bad requests name the culprit and the fix") {
    SysrootRequest r;
    r.dir = test::testdir("tool-bad");
    r.packages = {"zlib1g"};
    r.arch = "sparc99";
    auto e = sysroot_tool_argv(r, "t");
    REQUIRE_FALSE(e.has_value());
    CHECK(e.error().what == "architecture sparc99");
    CHECK(e.error().field == "arch");
    CHECK(e.error().message().ends_with("(option arch))"));
    CHECK(e.error().message().find("aarch64 (arm64)") != std::string::npos);
    r.arch = "aarch64_be"; // known to emurun, no Debian port
    e = sysroot_tool_argv(r, "t");
    REQUIRE_FALSE(e.has_value());
    CHECK(e.error().message().find("Debian has no port for aarch64_be") != std::string::npos);
    r.arch = "mips64el"; // a Debian port the emurun-sysroot tool makes no sysroots for
    e = sysroot_tool_argv(r, "t");
    REQUIRE_FALSE(e.has_value());
    CHECK(e.error().message().find("emurun-sysroot makes no sysroots for mips64el") !=
          std::string::npos);
    CHECK(e.error().hint.find("mips64el") == std::string::npos); // not offered as one to use
    CHECK(e.error().message().find("riscv64 (riscv64)") != std::string::npos);
    r.arch = "arm64";
    r.dir = test::write_file("tool-file", "x");
    e = sysroot_tool_argv(r, "t");
    REQUIRE_FALSE(e.has_value());
    CHECK(e.error().message().find("is not a directory") != std::string::npos);
    r.dir = test::testdir("tool-bad");
    r.packages.clear();
    CHECK_FALSE(sysroot_tool_argv(r, "t").has_value());
    r.op = SysrootOp::source;
    r.packages = {"a", "b"};
    e = sysroot_tool_argv(r, "t");
    REQUIRE_FALSE(e.has_value());
    CHECK(e.error().message().find("takes one package, got 2") != std::string::npos);
}

TEST_CASE("sysroot: a missing library's hint is an emurun-sysroot fetch command that works") {
    LinkMap map;
    map.interpreter =
        LibraryLookup{"/lib/ld-linux-aarch64.so.1", "xz", std::nullopt, "libc6:arm64"};
    map.libraries = {{"liblzma.so.5", "xz", std::nullopt, "liblzma5:arm64"},
                     {"libc.so.6", "xz", std::nullopt, "libc6:arm64"}};
    map.sysroots = {"/srv/sr-arm64"};
    const std::string msg = map.missing_error("xz").message();
    CHECK(msg.find("'emurun-sysroot fetch --arch arm64 --dir /srv/sr-arm64 libc6 liblzma5'") !=
          std::string::npos);
    CHECK(msg.find("to the sysroots") == std::string::npos); // that sysroot was searched already
    CHECK(map.missing_error("xz").field.empty());
    CHECK(msg.find("--sysroot") == std::string::npos); // no CLI syntax in the library
    map.sysroots = {"/usr/aarch64-linux-gnu", "/"};
    const std::string sys = map.missing_error("xz").message();
    CHECK(sys.find("--dir sysroot-arm64 libc6 liblzma5' and add sysroot-arm64 to the sysroots "
                   "(option sysroots)") != std::string::npos);
    map.libraries = {{"libfoo.so.1", "xz", std::nullopt, ""}};
    map.interpreter.reset();
    const Error none = map.missing_error("xz");
    CHECK(none.kind == ErrorKind::missing_library);
    CHECK(none.hint == "name a sysroot holding them");
    CHECK(none.field == "sysroots");
    CHECK(none.message().ends_with("(name a sysroot holding them (option sysroots))"));
}
