#include "elf_builder.hpp"
#include "skip.hpp"
#include "testdir.hpp"

#include <emurun/elf.hpp>

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>

namespace fs = std::filesystem;
using namespace std::string_view_literals;
using emurun::parse_elf;
using emurun::read_elf;
using emurun::test::build_elf;
using emurun::test::BuiltElf;
using emurun::test::ElfSpec;
using emurun::test::why;

namespace {

bool contains(const std::vector<std::string>& v, const std::string& s) {
    return std::ranges::find(v, s) != v.end();
}

// The error text of parsing `bytes`, or "" when it parses.
std::string parse_error(const std::vector<unsigned char>& bytes) {
    auto r = parse_elf(bytes);
    return r ? std::string{} : r.error().message();
}

emurun::ElfInfo read_built(const BuiltElf& b) {
    auto r = parse_elf(b.bytes);
    REQUIRE_MESSAGE(r.has_value(), why(r));
    return *r;
}

std::vector<unsigned char> bytes_of(std::string_view s) {
    return {s.begin(), s.end()};
}

struct FixtureArch {
    const char* dir;
    const char* arch;
    int elf_class;
    int elf_data;
    const char* interpreter;
};

// Interpreters are fixed by each arch's glibc ABI.
constexpr FixtureArch k_fixtures[] = {
    {"aarch64", "aarch64", 2, 1, "/lib/ld-linux-aarch64.so.1"},
    {"ppc64le", "ppc64le", 2, 1, "/lib64/ld64.so.2"},
    {"s390x", "s390x", 2, 2, "/lib/ld64.so.1"},
    {"riscv64", "riscv64", 2, 1, "/lib/ld-linux-riscv64-lp64d.so.1"},
    {"arm", "arm", 1, 1, "/lib/ld-linux-armhf.so.3"},
};

} // namespace

namespace {

const FixtureArch& fixture_arch(std::string_view dir) {
    const auto* f =
        std::ranges::find_if(k_fixtures, [&](const FixtureArch& x) { return x.dir == dir; });
    REQUIRE(f != std::end(k_fixtures));
    return *f;
}

// The fixtures of `f`, which CMake built: each must exist and read as its arch.
void check_fixtures(const FixtureArch& f) {
    const fs::path dyn = emurun::test::fixture(std::string(f.dir) + "/probe");
    REQUIRE_MESSAGE(fs::exists(dyn), dyn << " missing, though CMake built the " << f.dir
                                         << " fixtures (arches.txt)");
    auto d = read_elf(dyn);
    REQUIRE_MESSAGE(d.has_value(), why(d));
    REQUIRE(d->arch != nullptr);
    CHECK(d->arch->name == f.arch);
    CHECK(d->machine_arch == d->arch);
    CHECK(d->elf_class == f.elf_class);
    CHECK(d->elf_data == f.elf_data);
    CHECK(d->machine == d->arch->e_machine);
    CHECK(d->interpreter == std::optional<std::string>(f.interpreter));
    CHECK(d->has_dynamic);
    CHECK_FALSE(d->is_static());
    CHECK(contains(d->needed, "libc.so.6"));

    auto s = read_elf(emurun::test::fixture(std::string(f.dir) + "/probe-static"));
    REQUIRE_MESSAGE(s.has_value(), why(s));
    CHECK(s->arch == d->arch);
    CHECK(s->is_static());
    CHECK(s->needed.empty());
    CHECK(s->type_name() == "EXEC");

    auto h = read_elf(emurun::test::fixture(std::string(f.dir) + "/hello"));
    REQUIRE_MESSAGE(h.has_value(), why(h));
    CHECK(contains(h->needed, "libstdc++.so.6"));
    CHECK(contains(h->needed, "libc.so.6"));
}

} // namespace

// One case per arch: an arch whose cross compiler is missing is reported as skipped on its own
// instead of being hidden in a pass of the others; a built arch's missing fixture fails.
#define EMURUN_ELF_FIXTURES_CASE(dir)                                                              \
    TEST_CASE("elf: cross-compiled " dir " fixtures, dynamic and static" *                         \
              emurun::test::may_skip()) {                                                          \
        if (!emurun::test::fixture_arch_built(dir)) {                                              \
            EMURUN_SKIP("no " dir                                                                  \
                        " fixtures: its cross compiler is missing (tools/install-deps)");          \
        }                                                                                          \
        check_fixtures(fixture_arch(dir));                                                         \
    }
EMURUN_ELF_FIXTURES_CASE("aarch64")
EMURUN_ELF_FIXTURES_CASE("ppc64le")
EMURUN_ELF_FIXTURES_CASE("s390x")
EMURUN_ELF_FIXTURES_CASE("riscv64")
EMURUN_ELF_FIXTURES_CASE("arm")
#undef EMURUN_ELF_FIXTURES_CASE

TEST_CASE("elf: host binaries and a shared library") {
    auto ls = read_elf("/bin/ls");
    REQUIRE_MESSAGE(ls.has_value(), why(ls));
    REQUIRE(ls->arch != nullptr);
    // Our own executable, not /bin/ls, is of the host's arch everywhere: under qemu-user (the
    // dogfood run) host_arch() is the emulated arch while /bin/ls is still x86-64.
    auto self = read_elf("/proc/self/exe");
    REQUIRE_MESSAGE(self.has_value(), why(self));
    CHECK(self->arch == emurun::host_arch());
    CHECK(ls->interpreter.has_value());
    CHECK(contains(ls->needed, "libc.so.6"));
    CHECK(emurun::looks_like_elf("/bin/ls"));

    const fs::path libc = fs::canonical(fs::path("/lib") / "x86_64-linux-gnu" / "libc.so.6");
    if (fs::exists(libc) && emurun::host_arch() && emurun::host_arch()->name == "x86_64") {
        auto l = read_elf(libc);
        REQUIRE_MESSAGE(l.has_value(), why(l));
        CHECK(l->soname == std::optional<std::string>("libc.so.6"));
        CHECK(l->type_name() == "DYN");
    }
}

TEST_CASE("elf: static-pie has PT_DYNAMIC but no interpreter" * emurun::test::may_skip()) {
    const auto dir = emurun::test::testdir("static-pie");
    emurun::test::write_file("static-pie/p.c", "int main(void) { return 0; }\n");
    const std::string cmd = "cc -static-pie -o " + (dir / "p").string() + " " +
                            (dir / "p.c").string() + " >/dev/null 2>&1";
    if (std::system(cmd.c_str()) != 0) {
        EMURUN_SKIP("the host compiler cannot link -static-pie (" << cmd << ")");
    }
    auto r = read_elf(dir / "p");
    REQUIRE_MESSAGE(r.has_value(), why(r));
    CHECK(r->type_name() == "DYN");
    CHECK(r->has_dynamic);
    CHECK(r->is_static());
    CHECK(r->needed.empty());
    CHECK(r->linkage() == "static"); // DF_1_PIE
    // A shared object that needs and names nothing is no static-pie (no DF_1_PIE).
    const std::string so = "cc -shared -nostdlib -fPIC -o " + (dir / "p.so").string() + " " +
                           (dir / "p.c").string() + " >/dev/null 2>&1";
    REQUIRE(std::system(so.c_str()) == 0);
    auto lib = read_elf(dir / "p.so");
    REQUIRE_MESSAGE(lib.has_value(), why(lib));
    CHECK(lib->needed.empty());
    CHECK(lib->linkage() == "shared library");
}

TEST_CASE("elf: linkage tells a static-pie, a bare shared object, an object file and a core") {
    ElfSpec bare;
    bare.interp.clear();
    bare.needed.clear();
    CHECK(read_built(build_elf(bare)).linkage() == "shared library");
    ElfSpec pie = bare;
    pie.flags_1 = 0x08000001; // DF_1_PIE | DF_1_NOW
    auto p = read_built(build_elf(pie));
    CHECK(p.flags_1 == 0x08000001);
    CHECK(p.linkage() == "static");
    ElfSpec object = bare;
    object.type = 1;
    object.machine = 183; // EM_AARCH64
    object.dynamic = false;
    const auto o = read_built(build_elf(object));
    CHECK(o.linkage() == "object file");
    CHECK(o.arch == nullptr); // binfmt_misc runs no ET_REL
    REQUIRE(o.machine_arch != nullptr);
    CHECK(o.machine_arch->name == "aarch64");
    object.type = 4;
    CHECK(read_built(build_elf(object)).linkage() == "core dump");
}

TEST_CASE("elf: hand-made images of every class and byte order parse back") {
    for (int cls : {1, 2}) {
        for (int data : {1, 2}) {
            CAPTURE(cls);
            CAPTURE(data);
            ElfSpec spec;
            spec.elf_class = cls;
            spec.elf_data = data;
            spec.machine = cls == 1 ? (data == 1 ? 40 : 20) : (data == 1 ? 183 : 22);
            spec.soname = "libself.so.2";
            spec.runpath = "$ORIGIN/../lib:/opt/x";
            spec.rpath = "/r1";
            auto r = parse_elf(build_elf(spec).bytes);
            REQUIRE_MESSAGE(r.has_value(), why(r));
            CHECK(r->elf_class == cls);
            CHECK(r->elf_data == data);
            CHECK(r->machine == spec.machine);
            CHECK(r->interpreter == std::optional<std::string>(spec.interp));
            CHECK(r->needed == spec.needed);
            CHECK(r->soname == std::optional<std::string>("libself.so.2"));
            CHECK(r->runpath == std::vector<std::string>{"$ORIGIN/../lib", "/opt/x"});
            CHECK(r->rpath == std::vector<std::string>{"/r1"});
            REQUIRE(r->arch != nullptr);
            CHECK(r->arch->e_machine == spec.machine);
        }
    }
}

TEST_CASE("elf: a 32-bit big-endian header made by hand is ppc") {
    ElfSpec spec;
    spec.elf_class = 1;
    spec.elf_data = 2;
    spec.machine = 20;
    spec.type = 2;
    auto b = build_elf(spec);
    CHECK(b.bytes[4] == 1);
    CHECK(b.bytes[5] == 2);
    CHECK(b.bytes[18] == 0); // e_machine high byte first
    CHECK(b.bytes[19] == 20);
    auto r = parse_elf(b.bytes);
    REQUIRE_MESSAGE(r.has_value(), why(r));
    REQUIRE(r->arch != nullptr);
    CHECK(r->arch->name == "ppc");
    CHECK(r->endianness() == "big");
}

TEST_CASE("elf: arch follows e_flags for MIPS o32/n32 and is void for ET_REL") {
    ElfSpec spec;
    spec.elf_class = 1;
    spec.elf_data = 2;
    spec.machine = 8;
    spec.type = 2;
    spec.flags = 0x20; // EF_MIPS_ABI2
    auto n32 = parse_elf(build_elf(spec).bytes);
    REQUIRE(n32.has_value());
    REQUIRE(n32->arch != nullptr);
    CHECK(n32->arch->name == "mipsn32");
    spec.flags = 0x1000; // some other bit: o32
    auto o32 = parse_elf(build_elf(spec).bytes);
    REQUIRE(o32.has_value());
    REQUIRE(o32->arch != nullptr);
    CHECK(o32->arch->name == "mips");

    ElfSpec rel;
    rel.machine = 183;
    rel.type = 1;
    rel.interp.clear();
    rel.dynamic = false;
    auto r = parse_elf(build_elf(rel).bytes);
    REQUIRE(r.has_value());
    CHECK(r->arch == nullptr); // binfmt_misc runs EXEC and DYN only
    REQUIRE(r->machine_arch != nullptr);
    CHECK(r->machine_arch->name == "aarch64");
    CHECK(r->type_name() == "REL");
}

TEST_CASE("elf: DT_STRTAB outside every PT_LOAD is found through the section headers") {
    ElfSpec spec;
    spec.sections = true;
    auto b = build_elf(spec);
    b.set_p_filesz(0, b.dynstr_off); // PT_LOAD stops before .dynstr
    auto r = parse_elf(b.bytes);
    REQUIRE_MESSAGE(r.has_value(), why(r));
    CHECK(r->needed == spec.needed);
    b.put(b.shoff + 64 + 4, 1, 4); // the section is no longer SHT_STRTAB
    CHECK(parse_error(b.bytes).find("is in no PT_LOAD segment") != std::string::npos);
}

namespace {

using Mutation = void (*)(BuiltElf&);

struct Hostile {
    const char* name;
    Mutation mutate;
    const char* expected; // substring of the error message
};

BuiltElf valid64() {
    return build_elf(ElfSpec{});
}

// Each case breaks one field of a valid 64-bit image (or a 32-bit big-endian one where noted).
const Hostile k_hostile[] = {
    {"bad class", [](BuiltElf& b) { b.bytes[4] = 3; },
     "bad EI_CLASS 0x3 (expected 1 = 32-bit or 2 = 64-bit)"},
    {"bad data", [](BuiltElf& b) { b.bytes[5] = 0; }, "bad EI_DATA 0x0"},
    {"truncated header", [](BuiltElf& b) { b.bytes.resize(40); },
     "truncated ELF header: 40 of 64 bytes"},
    {"e_phoff beyond file", [](BuiltElf& b) { b.put(32, 0x100000, 8); },
     "program header table: e_phoff 0x100000 + e_phnum * e_phentsize 0xa8 beyond end of file"},
    {"e_phoff + size overflows", [](BuiltElf& b) { b.put(32, ~std::uint64_t{0} - 8, 8); },
     "program header table: e_phoff 0xfffffffffffffff7"},
    {"e_phentsize wrong", [](BuiltElf& b) { b.put(54, 40, 2); },
     "e_phentsize 40, expected 56 for ELF64"},
    {"e_phnum huge via PN_XNUM",
     [](BuiltElf& b) {
         b.put(56, 0xffff, 2);
         b.put(40, 64, 8);              // e_shoff: section header 0 at offset 64
         b.put(64 + 44, 0xffffffff, 4); // its sh_info: 4294967295 program headers
     },
     "e_phnum * e_phentsize 0x37ffffffc8 beyond end of file"},
    {"PN_XNUM without section headers", [](BuiltElf& b) { b.put(56, 0xffff, 2); },
     "e_phnum is PN_XNUM (0xffff) but section header 0"},
    {"PT_INTERP past end", [](BuiltElf& b) { b.set_p_filesz(b.interp_ph, 0x2000); },
     "program header 1: p_offset 0xe8 + p_filesz 0x2000 beyond end of file"},
    {"PT_INTERP offset overflows", [](BuiltElf& b) { b.set_p_offset(b.interp_ph, ~0ULL); },
     "program header 1: p_offset 0xffffffffffffffff + p_filesz"},
    {"unterminated interp",
     [](BuiltElf& b) { b.bytes[b.interp_off + b.get(b.ph(1, 32, 16), 8) - 1] = 'x'; },
     "PT_INTERP (program header 1): not NUL-terminated within its 18 bytes"},
    {"empty interp", [](BuiltElf& b) { b.bytes[b.interp_off] = 0; }, "empty path"},
    {"PT_DYNAMIC past end", [](BuiltElf& b) { b.set_p_offset(b.dynamic_ph, b.bytes.size()); },
     "program header 2: p_offset"},
    {"DT_STRTAB unmapped", [](BuiltElf& b) { b.put(b.dyn(b.find_dyn(5)) + 8, 0x7777777, 8); },
     "DT_STRTAB 0x7777777 is in no PT_LOAD segment's file bytes"},
    {"DT_STRSZ beyond segment", [](BuiltElf& b) { b.put(b.dyn(b.find_dyn(10)) + 8, 0x100000, 8); },
     "runs past the file bytes of PT_LOAD (program header 0)"},
    {"DT_NEEDED offset beyond DT_STRSZ", [](BuiltElf& b) { b.put(b.dyn(0) + 8, 0x4000, 8); },
     "DT_NEEDED (dynamic entry 0): string offset 0x4000 beyond DT_STRSZ"},
    {"string not NUL-terminated within DT_STRSZ",
     [](BuiltElf& b) { b.put(b.dyn(b.find_dyn(10)) + 8, b.dynstr_size - 1, 8); },
     "DT_NEEDED (dynamic entry 1): string at offset 0xd not NUL-terminated"},
    {"dynamic without DT_NULL", [](BuiltElf& b) { b.put(b.dyn(b.find_dyn(0)), 21, 8); },
     "dynamic section (program header 2): no DT_NULL among its 5 entries"},
    {"DT_NEEDED without DT_STRTAB", [](BuiltElf& b) { b.put(b.dyn(b.find_dyn(5)), 21, 8); },
     "DT_NEEDED present but the dynamic section has no DT_STRTAB"},
};

} // namespace

TEST_CASE("elf: hostile inputs fail with precise errors") {
    REQUIRE(parse_error(valid64().bytes).empty());
    for (const auto& h : k_hostile) {
        CAPTURE(h.name);
        BuiltElf b = valid64();
        h.mutate(b);
        const std::string err = parse_error(b.bytes);
        CHECK_MESSAGE(err.find(h.expected) != std::string::npos, err);
    }
}

TEST_CASE("elf: files that are not ELF say what they are") {
    CHECK(parse_error({}).find("empty file (0 bytes)") != std::string::npos);
    CHECK(parse_error({0x7f, 'E', 'L'}).find("not an ELF file (starts with 7f 45 4c)") !=
          std::string::npos);
    CHECK(parse_error(bytes_of("MZ\x90\x00 windows"sv)).find("starts with 4d 5a 90 00") !=
          std::string::npos);
    const auto script = parse_error(bytes_of("#!/bin/sh\necho hi\n"));
    CHECK(script.find("not an ELF file (starts with 23 21 2f 62)") != std::string::npos);
    CHECK(script.find("a script for '/bin/sh'") != std::string::npos);
    CHECK(parse_error(bytes_of("\x7f"
                               "ELF\x02\x01"))
              .find("truncated e_ident: 6 of 16") != std::string::npos);
}

TEST_CASE("elf: a 32-bit big-endian image is checked as strictly as a 64-bit one") {
    ElfSpec spec;
    spec.elf_class = 1;
    spec.elf_data = 2;
    spec.machine = 20;
    auto b = build_elf(spec);
    b.set_p_filesz(b.interp_ph, 0x2000);
    CHECK(parse_error(b.bytes).find("program header 1: p_offset 0x94 + p_filesz 0x2000 beyond "
                                    "end of file") != std::string::npos);
    b = build_elf(spec);
    b.put(b.dyn(0) + 4, 0x4000, 4);
    CHECK(parse_error(b.bytes).find("string offset 0x4000 beyond DT_STRSZ") != std::string::npos);
}

TEST_CASE("elf: read_elf names the file and the system error") {
    auto missing = read_elf("/nonexistent/emurun-no-such-file");
    REQUIRE_FALSE(missing.has_value());
    CHECK(missing.error().message().find("open /nonexistent/emurun-no-such-file failed: No such "
                                         "file or directory") != std::string::npos);
    auto dir = read_elf(emurun::test::testdir());
    REQUIRE_FALSE(dir.has_value());
    CHECK(dir.error().why == "not a regular file");

    const auto script = emurun::test::write_file("script.sh", "#!/bin/sh\nexit 0\n");
    auto s = read_elf(script);
    REQUIRE_FALSE(s.has_value());
    CHECK(s.error().what == script.string());
    CHECK(s.error().why.find("a script") != std::string::npos);
    CHECK_FALSE(emurun::looks_like_elf(script));
    CHECK_FALSE(emurun::looks_like_elf("/nonexistent/emurun-no-such-file"));

    auto big = read_elf("/bin/ls", 100);
    REQUIRE_FALSE(big.has_value());
    CHECK(big.error().why.find("more than the limit of 100") != std::string::npos);
}

TEST_CASE("elf: a truncated real binary is reported, not misread") {
    const fs::path src = "/bin/ls";
    std::ifstream in(src, std::ios::binary);
    std::vector<unsigned char> bytes{std::istreambuf_iterator<char>(in), {}};
    REQUIRE(bytes.size() > 4096);
    bytes.resize(4096);
    const std::string err = parse_error(bytes);
    CHECK(err.find("beyond end of file (4096 bytes)") != std::string::npos);
}
