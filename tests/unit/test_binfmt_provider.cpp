// binfmt: entries other tools registered (Debian's qemu-user-static, tonistiigi/binfmt) that
// emurun keeps, the equivalence of magic/mask, default flags and the files that restore entries.
#include <emurun/binfmt.hpp>

#include "elf_builder.hpp"
#include "testdir.hpp"

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <sys/stat.h>

using namespace emurun;
namespace fs = std::filesystem;

namespace {

// Exactly what Debian 12's /usr/lib/binfmt.d/qemu-aarch64.conf says, with the interpreter's
// directory moved under `root`.
std::string debian_line(const fs::path& root) {
    return ":qemu-aarch64:M::\\x7f\\x45\\x4c\\x46\\x02\\x01\\x01\\x00\\x00\\x00\\x00\\x00\\x00"
           "\\x00\\x00\\x00\\x02\\x00\\xb7\\x00:\\xff\\xff\\xff\\xff\\xff\\xff\\xff\\x00\\xff\\xff"
           "\\xff\\xff\\xff\\xff\\xff\\xff\\xfe\\xff\\xff\\xff:" +
           (root / "usr/libexec/qemu-binfmt/aarch64-binfmt-P").string() + ":OPF";
}

void write_elf(const fs::path& p, bool is_static) {
    test::ElfSpec spec;
    spec.machine = 183; // EM_AARCH64: what the file is does not matter, only static or not
    if (is_static) {
        spec.interp.clear();
        spec.dynamic = false;
    }
    auto b = test::build_elf(spec);
    fs::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary)
        .write(reinterpret_cast<const char*>(b.bytes.data()),
               static_cast<std::streamsize>(b.bytes.size()));
    ::chmod(p.c_str(), 0755);
}

// A fake root with Debian's layout: usr/bin/qemu-aarch64{,-static} and the -binfmt-P symlink.
fs::path debian_root(const std::string& name) {
    fs::path root = test::testdir(name);
    write_elf(root / "usr/bin/qemu-aarch64-static", true);
    write_elf(root / "usr/bin/qemu-aarch64", false);
    fs::create_directories(root / "usr/libexec/qemu-binfmt");
    const fs::path link = root / "usr/libexec/qemu-binfmt/aarch64-binfmt-P";
    if (!fs::is_symlink(link)) { // doctest runs the case again for each SUBCASE
        fs::create_symlink("../../bin/qemu-aarch64-static", link);
    }
    return root;
}

} // namespace

TEST_CASE("binfmt provider: magic/mask equivalence is the kernel's matching") {
    const Arch& a = **find_arch("aarch64");
    BinfmtEntry table;
    table.magic = a.magic;
    table.mask = a.mask;
    auto e = table;
    CHECK(binfmt_magic_equivalent(e, table));
    SUBCASE("bytes the mask clears may differ") {
        e.magic[7] = '\x55'; // mask byte 7 is 0x00 (ELF OS/ABI)
        CHECK(binfmt_magic_equivalent(e, table));
    }
    SUBCASE("trailing bytes masked to 0 do not matter") {
        e.magic += std::string("\x12\x34", 2);
        e.mask += std::string("\x00\x00", 2);
        CHECK(binfmt_magic_equivalent(e, table));
        CHECK(binfmt_magic_equivalent(table, e));
    }
    SUBCASE("a masked byte that differs, another mask, another length or offset: not") {
        auto m = e;
        m.magic[18] = '\x28'; // EM_ARM
        CHECK_FALSE(binfmt_magic_equivalent(m, table));
        auto k = e;
        k.mask[16] = '\xff';
        CHECK_FALSE(binfmt_magic_equivalent(k, table));
        auto s = e;
        s.magic.resize(18);
        s.mask.resize(18);
        CHECK_FALSE(binfmt_magic_equivalent(s, table));
        auto o = e;
        o.offset = 1;
        CHECK_FALSE(binfmt_magic_equivalent(o, table));
    }
}

TEST_CASE("binfmt provider: Debian's and tonistiigi's entries are recognised") {
    const fs::path root = debian_root("provider-debian");
    auto debian = parse_binfmt_line(debian_line(root));
    REQUIRE(debian.has_value());
    auto p = binfmt_entry_provider(*debian);
    REQUIRE(p.has_value());
    CHECK(p->arch->name == "aarch64");
    CHECK(p->owner == "qemu-user-static");
    CHECK(p->emulator == fs::canonical(root / "usr/bin/qemu-aarch64-static"));
    CHECK(p->static_emulator);
    CHECK(p->sane());

    BinfmtEntry toni = *debian; // tonistiigi/binfmt: same magic, its own path, POCF
    toni.interpreter = (root / "usr/bin/qemu-aarch64").string();
    toni.flags = *BinfmtFlags::parse("POCF");
    auto t = binfmt_entry_provider(toni);
    REQUIRE(t.has_value());
    CHECK(t->owner.find("tonistiigi/binfmt") != std::string::npos);
    CHECK_FALSE(t->static_emulator);
    CHECK(t->sane()); // F pins it

    SUBCASE("Debian's qemu-user-binfmt: the -binfmt-P link to the dynamic qemu") {
        const fs::path link = root / "usr/libexec/qemu-binfmt/aarch64-binfmt-dyn";
        if (!fs::is_symlink(link)) {
            fs::create_symlink("../../bin/qemu-aarch64", link);
        }
        auto dyn = *debian;
        dyn.interpreter = link.string();
        dyn.flags = *BinfmtFlags::parse("P");
        auto d = binfmt_entry_provider(dyn);
        REQUIRE(d.has_value());
        CHECK(d->owner == "qemu-user-binfmt");
        CHECK_FALSE(d->sane()); // dynamic and not pinned: auto does not run through it
    }
    SUBCASE("a path that is gone counts only with F (the kernel holds it open)") {
        toni.interpreter = (root / "gone/qemu-aarch64").string();
        CHECK(binfmt_entry_provider(toni).has_value());
        toni.flags.fix_binary = false;
        CHECK_FALSE(binfmt_entry_provider(toni).has_value());
    }
    SUBCASE("another arch's emulator, a non-qemu handler or a disabled entry: not a provider") {
        auto arm = *debian;
        arm.interpreter = (root / "usr/bin/qemu-arm-static").string();
        write_elf(arm.interpreter, true);
        CHECK_FALSE(binfmt_entry_provider(arm).has_value());
        auto other = *debian;
        other.interpreter = "/bin/false";
        CHECK_FALSE(binfmt_entry_provider(other).has_value());
        auto off = *debian;
        off.enabled = false;
        CHECK_FALSE(binfmt_entry_provider(off).has_value());
    }
}

TEST_CASE("binfmt plan: a provider's entry is kept, under its name or another") {
    const fs::path root = debian_root("provider-plan");
    const Arch& a = **find_arch("aarch64");
    auto debian = *parse_binfmt_line(debian_line(root));
    auto want = binfmt_entry_for(a, root / "usr/bin/qemu-aarch64-static",
                                 default_binfmt_flags(root / "usr/bin/qemu-aarch64-static"));
    auto p = plan_binfmt_register({want}, {debian}, false);
    REQUIRE(p.items.size() == 1);
    CHECK(p.items[0].action == BinfmtAction::keep);
    CHECK_FALSE(p.has_conflict());
    CHECK(p.items[0].detail.find("kept: provided by qemu-user-static") != std::string::npos);

    auto renamed = debian;
    renamed.name = "aarch64-by-hand";
    auto q = plan_binfmt_register({want}, {renamed}, false);
    CHECK(q.items.at(0).action == BinfmtAction::keep);
    CHECK(q.items.at(0).current->name == "aarch64-by-hand");

    auto r = plan_binfmt_register({want}, {debian}, true);
    CHECK(r.items.at(0).action == BinfmtAction::replace);
}

TEST_CASE("binfmt flags: P always, F for a static interpreter") {
    const fs::path root = debian_root("provider-flags");
    CHECK(default_binfmt_flags(root / "usr/bin/qemu-aarch64-static").to_string() == "PF");
    CHECK(default_binfmt_flags(root / "usr/bin/qemu-aarch64").to_string() == "P");
}

TEST_CASE("binfmt restore files: binfmt.d lines and update-binfmts files naming an entry") {
    const fs::path root = test::testdir("provider-restore");
    fs::create_directories(root / "usr/lib/binfmt.d");
    fs::create_directories(root / "usr/share/binfmts");
    std::ofstream(root / "usr/lib/binfmt.d/qemu-aarch64.conf") << debian_line(root) << '\n';
    std::ofstream(root / "usr/lib/binfmt.d/other.conf") << "# :qemu-s390x:\n:x:E::y::/bin/y:\n";
    std::ofstream(root / "usr/share/binfmts/qemu-s390x") << "package qemu-user-static\n";
    // A FIFO named like a binfmt.d file is passed over, not blocked on (nobody writes to it).
    REQUIRE(::mkfifo((root / "usr/lib/binfmt.d/stuck.conf").c_str(), 0600) == 0);
    auto a = binfmt_restore_files("qemu-aarch64", root);
    REQUIRE(a.size() == 1);
    CHECK(a[0] == root / "usr/lib/binfmt.d/qemu-aarch64.conf");
    auto s = binfmt_restore_files("qemu-s390x", root);
    REQUIRE(s.size() == 1);
    CHECK(s[0] == root / "usr/share/binfmts/qemu-s390x");
    CHECK(binfmt_restore_files("qemu-mips", root).empty());
}
