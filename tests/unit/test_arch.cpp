#include "elf_builder.hpp"
#include "skip.hpp"
#include "testdir.hpp"

#include <emurun/arch.hpp>

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <set>

namespace fs = std::filesystem;
using emurun::all_arches;
using emurun::Arch;
using emurun::arch_for_header;
using emurun::find_arch;
using emurun::test::why;

namespace {

std::string upper(std::string s) {
    std::ranges::transform(s, s.begin(), [](unsigned char c) { return std::toupper(c); });
    return s;
}

const Arch& arch(std::string_view name) {
    auto a = find_arch(name);
    REQUIRE_MESSAGE(a.has_value(), why(a));
    return **a;
}

// A header as a toolchain for `a` would write it: the table's class, data, e_machine and the
// e_flags value that tells its variant apart.
std::vector<unsigned char> header_for(const Arch& a, std::uint16_t type) {
    emurun::test::ElfSpec spec;
    spec.elf_class = a.elf_class;
    spec.elf_data = a.elf_data;
    spec.machine = a.e_machine;
    spec.flags = a.e_flags_value;
    spec.type = type;
    return emurun::test::build_elf(spec).bytes;
}

std::vector<unsigned char> first_bytes(const fs::path& p, std::size_t n = 128) {
    std::ifstream in(p, std::ios::binary);
    std::vector<unsigned char> out(n);
    in.read(reinterpret_cast<char*>(out.data()), static_cast<std::streamsize>(n));
    out.resize(static_cast<std::size_t>(in.gcount()));
    return out;
}

} // namespace

TEST_CASE("arch: the table has upstream's arches and records its source") {
    for (const char* name :
         {"i386",        "x86_64", "arm",         "armeb",      "aarch64", "aarch64_be",
          "ppc",         "ppc64",  "ppc64le",     "s390x",      "riscv32", "riscv64",
          "mips",        "mipsel", "mips64",      "mips64el",   "mipsn32", "mipsn32el",
          "loongarch64", "sparc",  "sparc32plus", "sparc64",    "m68k",    "alpha",
          "sh4",         "sh4eb",  "hppa",        "microblaze", "xtensa",  "or1k"}) {
        CAPTURE(name);
        CHECK(arch(name).name == name);
    }
    auto doc = nlohmann::json::parse(emurun::arch_table_json());
    CHECK(doc.at("source").get<std::string>().find("qemu-binfmt-conf.sh") != std::string::npos);
    CHECK(doc.at("arches").size() == all_arches().size());
}

// The table is generated from binfmt/arches.json at build time (cmake/ArchTable.cmake); read
// here the way the JSON says it, field by field, it must come out the same.
TEST_CASE("arch: the generated table is binfmt/arches.json, field by field") {
    const auto doc = nlohmann::json::parse(emurun::arch_table_json());
    const auto& arches = doc.at("arches");
    REQUIRE(arches.size() == all_arches().size());
    for (std::size_t i = 0; i < arches.size(); ++i) {
        const auto& j = arches[i];
        const Arch& a = all_arches()[i];
        CAPTURE(a.name);
        CHECK(a.name == j.at("name").get<std::string>());
        CHECK(a.aliases == j.value("aliases", std::vector<std::string>{}));
        CHECK(a.elf_class == (j.at("elf_class").get<int>() == 64 ? 2 : 1));
        CHECK(a.elf_data == (j.at("elf_data").get<std::string>() == "big" ? 2 : 1));
        CHECK(a.e_machine == j.at("e_machine").get<int>());
        CHECK(a.e_flags_mask == j.value("e_flags_mask", 0U));
        CHECK(a.e_flags_value == j.value("e_flags_value", 0U));
        CHECK(a.qemu == j.at("qemu").get<std::string>());
        CHECK(a.triplet == j.value("triplet", ""));
        CHECK(a.debian == j.value("debian", ""));
        CHECK(a.family == j.value("family", a.name));
        CHECK(a.known_issue == j.value("known_issue", ""));
        // magic and mask: \xHH escapes become the byte, everything else stays.
        // (pair.first/.second, not a structured binding: clang-15 cannot capture one in
        // doctest's CHECK_MESSAGE lambda, and the sanitizer build is clang-15)
        for (const auto& entry : {std::pair{&a.magic, "magic"}, std::pair{&a.mask, "mask"}}) {
            const auto* bytes = entry.first;
            const char* field = entry.second;
            const auto text = j.at(field).get<std::string>();
            std::string expected;
            for (std::size_t k = 0; k < text.size(); ++k) {
                if (text.compare(k, 2, "\\x") == 0) {
                    expected.push_back(
                        static_cast<char>(std::stoi(text.substr(k + 2, 2), nullptr, 16)));
                    k += 3;
                } else {
                    expected.push_back(text[k]);
                }
            }
            CHECK_MESSAGE(*bytes == expected, field);
        }
    }
}

TEST_CASE("arch: every name and alias resolves to its arch, case-insensitively") {
    for (const auto& a : all_arches()) {
        CAPTURE(a.name);
        CHECK(&arch(a.name) == &a);
        CHECK(&arch(upper(a.name)) == &a);
        for (const auto& alias : a.aliases) {
            CAPTURE(alias);
            CHECK(&arch(alias) == &a);
        }
        if (!a.debian.empty()) {
            CHECK(&arch(a.debian) == &a);
        }
    }
    for (auto [alias, name] : std::map<std::string, std::string>{{"arm64", "aarch64"},
                                                                 {"ppc64el", "ppc64le"},
                                                                 {"powerpc64le", "ppc64le"},
                                                                 {"amd64", "x86_64"},
                                                                 {"armhf", "arm"},
                                                                 {"armv7l", "arm"},
                                                                 {"armel", "arm"},
                                                                 {"i686", "i386"},
                                                                 {"x86", "i386"},
                                                                 {"mips64le", "mips64el"},
                                                                 {"loong64", "loongarch64"},
                                                                 {"s390", "s390x"},
                                                                 {"powerpc", "ppc"}}) {
        CHECK(arch(alias).name == name);
    }
    auto unknown = find_arch("vax");
    REQUIRE_FALSE(unknown.has_value());
    CHECK(unknown.error().hint.find("aarch64") != std::string::npos);
}

TEST_CASE("arch: names, aliases, qemu binaries and triplets are unique") {
    std::set<std::string> names;
    std::set<std::string> qemus;
    std::set<std::string> triplets;
    for (const auto& a : all_arches()) {
        CAPTURE(a.name);
        CHECK(names.insert(a.name).second);
        for (const auto& alias : a.aliases) {
            CAPTURE(alias);
            CHECK(std::ranges::none_of(alias, [](unsigned char c) { return std::isupper(c); }));
            CHECK(names.insert(alias).second);
        }
        CHECK(qemus.insert(a.qemu).second);
        if (!a.triplet.empty()) {
            CHECK(triplets.insert(a.triplet).second);
        }
    }
}

TEST_CASE("arch: magic and mask are well-formed binfmt patterns") {
    for (const auto& a : all_arches()) {
        CAPTURE(a.name);
        CHECK(a.magic.size() == a.mask.size());
        CHECK(a.magic.size() >= 20);
        CHECK(a.magic.size() <= 128);
        CHECK(a.magic.starts_with("\x7f"
                                  "ELF"));
        CHECK((a.elf_class == 1 || a.elf_class == 2));
        CHECK((a.elf_data == 1 || a.elf_data == 2));
        CHECK((a.e_flags_value & ~a.e_flags_mask) == 0);
        CHECK_FALSE(a.family.empty());
    }
}

TEST_CASE("arch: each pattern matches headers of its arch, and only that arch") {
    for (const auto& a : all_arches()) {
        for (std::uint16_t type : {2, 3}) {
            CAPTURE(a.name);
            CAPTURE(type);
            const auto h = header_for(a, type);
            if (!a.known_issue.empty()) {
                // Kept verbatim from upstream: prove the defect is still there, so that an
                // upstream fix is noticed and the note removed.
                CHECK_FALSE(a.matches(h));
                MESSAGE(a.name << ": " << a.known_issue);
                continue;
            }
            CHECK(a.matches(h));
            CHECK(arch_for_header(h) == &a);
            const auto n = std::ranges::count_if(all_arches(), [&](const Arch& o) {
                return o.matches(h) && o.has_elf_fields(h[4], h[5], a.e_machine, a.e_flags_value);
            });
            CHECK(n == 1);
        }
    }
}

namespace {

// The fixtures of `dir`, which CMake built: each must exist and be recognised as its arch.
void check_real_binaries(const std::string& dir) {
    for (const char* name : {"probe", "probe-static"}) {
        const fs::path p = emurun::test::fixture(dir + "/" + name);
        REQUIRE_MESSAGE(fs::exists(p), p << " missing, though CMake built the " << dir
                                         << " fixtures (arches.txt)");
        const Arch* a = arch_for_header(first_bytes(p));
        REQUIRE_MESSAGE(a != nullptr, p);
        CHECK(a->name == dir);
    }
}

} // namespace

// One case per arch: an arch whose cross compiler is missing is reported as skipped on its own
// instead of being hidden in a pass of the others.
#define EMURUN_REAL_BINARIES_CASE(dir)                                                             \
    TEST_CASE("arch: real " dir " binaries are recognised by the kernel's rule" *                  \
              emurun::test::may_skip()) {                                                          \
        if (!emurun::test::fixture_arch_built(dir)) {                                              \
            EMURUN_SKIP("no " dir                                                                  \
                        " fixtures: its cross compiler is missing (tools/install-deps)");          \
        }                                                                                          \
        check_real_binaries(dir);                                                                  \
    }
EMURUN_REAL_BINARIES_CASE("aarch64")
EMURUN_REAL_BINARIES_CASE("ppc64le")
EMURUN_REAL_BINARIES_CASE("s390x")
EMURUN_REAL_BINARIES_CASE("riscv64")
EMURUN_REAL_BINARIES_CASE("arm")
#undef EMURUN_REAL_BINARIES_CASE

TEST_CASE("arch: the host's /bin/true is recognised as x86_64" * emurun::test::may_skip()) {
    const Arch* host = emurun::host_arch();
    if (host == nullptr || host->name != "x86_64") {
        EMURUN_SKIP("host is not x86_64");
    }
    const Arch* t = arch_for_header(first_bytes("/bin/true"));
    REQUIRE(t != nullptr);
    CHECK(t->name == "x86_64");
}

TEST_CASE("arch: no match for non-ELF, short or foreign-OS headers") {
    CHECK(arch_for_header({}) == nullptr);
    const std::string script = "#!/bin/sh\n";
    CHECK(arch_for_header({reinterpret_cast<const unsigned char*>(script.data()), script.size()}) ==
          nullptr);
    auto h = header_for(arch("aarch64"), 2);
    h.resize(19);
    CHECK(arch_for_header(h) == nullptr);
    auto rel = header_for(arch("aarch64"), 1); // ET_REL: not runnable
    CHECK(arch_for_header(rel) == nullptr);
    CHECK(emurun::arch_for_elf_fields(2, 1, 183, 0) == &arch("aarch64"));
    CHECK(emurun::arch_for_elf_fields(1, 2, 8, 0x20) == &arch("mipsn32"));
    CHECK(emurun::arch_for_elf_fields(1, 2, 8, 0) == &arch("mips"));
    CHECK(emurun::arch_for_elf_fields(2, 1, 0x1234, 0) == nullptr);
}

TEST_CASE("arch: what runs natively") {
    const Arch& x86_64 = arch("x86_64");
    CHECK(emurun::runs_natively_on(x86_64, x86_64));
    CHECK(emurun::runs_natively_on(x86_64, arch("i386")));
    CHECK_FALSE(emurun::runs_natively_on(x86_64, arch("aarch64")));
    CHECK_FALSE(emurun::runs_natively_on(arch("i386"), x86_64));
    CHECK(emurun::runs_natively_on(arch("aarch64"), arch("aarch64")));
    CHECK_FALSE(emurun::runs_natively_on(arch("aarch64"), arch("arm")));
    const Arch* host = emurun::host_arch();
    REQUIRE_MESSAGE(host != nullptr, "uname -m of this machine is not in the table");
    CHECK(emurun::runs_natively(*host));
    CHECK_FALSE(emurun::runs_natively(arch(host->name == "s390x" ? "aarch64" : "s390x")));
}

TEST_CASE("arch: an unknown name gets the closest known one, aliases included") {
    auto r = emurun::find_arch("arm65");
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().hint.starts_with("did you mean 'arm64'? known: x86_64, "));
    auto far = emurun::find_arch("bogus");
    REQUIRE_FALSE(far.has_value());
    CHECK(far.error().hint.starts_with("known: x86_64, "));
}
