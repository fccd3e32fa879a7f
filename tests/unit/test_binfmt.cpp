// binfmt: the kernel's syntax, entry files, plans and persistence formats (pure; no mount).
#include <emurun/binfmt.hpp>
#include <emurun/binfmt_files.hpp>

#include "testdir.hpp"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <string>
#include <sys/stat.h>
#include <vector>

using namespace emurun;

namespace {

const std::string k_magic("\x7f"
                          "ELF\x02\x01\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x02\x00\xb7\x00",
                          20);
const std::string
    k_mask("\xff\xff\xff\xff\xff\xff\xff\x00\xff\xff\xff\xff\xff\xff\xff\xff\xfe\xff\xff\xff", 20);

BinfmtEntry aarch64_entry(std::string flags = "P") {
    BinfmtEntry e;
    e.name = "qemu-aarch64";
    e.magic = k_magic;
    e.mask = k_mask;
    e.interpreter = "/usr/bin/qemu-aarch64-static";
    e.flags = *BinfmtFlags::parse(flags);
    return e;
}

struct Malformed {
    std::string line;
    std::string why; // a substring of the expected error's "why"
};

} // namespace

TEST_CASE("binfmt line: Debian's qemu-aarch64 line parses to the table's bytes") {
    auto e = parse_binfmt_line(
        ":qemu-aarch64:M::\\x7f\\x45\\x4c\\x46\\x02\\x01\\x01\\x00\\x00\\x00\\x00\\x00\\x00\\x00"
        "\\x00\\x00\\x02\\x00\\xb7\\x00:"
        "\\xff\\xff\\xff\\xff\\xff\\xff\\xff\\x00\\xff\\xff\\xff\\xff"
        "\\xff\\xff\\xff\\xff\\xfe\\xff\\xff\\xff:/usr/libexec/qemu-binfmt/aarch64-binfmt-P:OPF\n");
    REQUIRE(e.has_value());
    CHECK(e->name == "qemu-aarch64");
    CHECK(e->magic == k_magic);
    CHECK(e->mask == k_mask);
    CHECK(e->interpreter == "/usr/libexec/qemu-binfmt/aarch64-binfmt-P");
    CHECK(e->flags.preserve_argv0);
    CHECK(e->flags.open_binary);
    CHECK(e->flags.fix_binary);
    CHECK_FALSE(e->flags.credentials);
}

TEST_CASE("binfmt line: kernel quirks") {
    SUBCASE("any first byte is the delimiter, escapes may use upper-case hex") {
        auto e = parse_binfmt_line(",x,M,3,\\x41\\X42B,,/bin/i,");
        REQUIRE(e.has_value());
        CHECK(e->offset == 3);
        CHECK(e->magic == "A\\X42B"); // only a lower-case \x is an escape
    }
    SUBCASE("a backslash before a backslash keeps both, and the x after them is literal") {
        auto e = parse_binfmt_line(":x:M::\\\\x41::/bin/i:"); // "\\" keeps both backslashes
        REQUIRE(e.has_value());
        CHECK(e->magic == "\\\\x41");
    }
    SUBCASE("C implies O") {
        auto e = parse_binfmt_line(":x:M::ab::/bin/i:C");
        REQUIRE(e.has_value());
        CHECK(e->flags.open_binary);
        CHECK(e->flags.credentials);
        CHECK(e->flags.to_string() == "OC");
    }
    SUBCASE("extension entries ignore offset and mask") {
        auto e = parse_binfmt_line(":py:E:zz:py:whatever:/usr/bin/python3:");
        REQUIRE(e.has_value());
        CHECK(e->type == BinfmtType::extension);
        CHECK(e->magic == "py");
        CHECK(e->offset == 0);
        CHECK(e->mask.empty());
    }
    SUBCASE("magic at offset 108 of size 20 fits exactly") {
        auto e = parse_binfmt_line(":x:M:108:aaaaaaaaaaaaaaaaaaaa::/bin/i:");
        CHECK(e.has_value());
    }
}

TEST_CASE("binfmt line: malformed lines are refused with the kernel's reason") {
    const std::string long_interp(1910, 'i');
    const std::vector<Malformed> table = {
        {":a:M::x::", "11 to 1920"},
        {":x:M::ab::/" + long_interp + ":", "11 to 1920"},
        {"::M::ab::/bin/i:", "name"},
        {":.:M::ab::/bin/i:", "name"},
        {":..:M::ab::/bin/i:", "name"},
        {":a/b:M::ab::/bin/i:", "name"},
        {":x:Q::ab::/bin/i:", "type 'Q'"},
        {":x:MM::ab::/bin/i:", "type field"},
        {":x:M:-1:ab::/bin/i:", "offset"},
        {":x:M:0x10:ab::/bin/i:", "offset"},
        {":x:M:99999999999:ab::/bin/i:", "offset"},
        {":x:M::::/bin/i:", "magic is empty"},
        {":x:M::a\\xg1::/bin/i:", "magic field"},
        {":x:M::a\\x1::/bin/i:", "magic field"},
        {":x:M::ab:\\xzz:/bin/i:", "mask field"},
        {":x:M::ab:\\xff:/bin/i:", "mask is 1 bytes but the magic is 2"},
        {":x:M:120:aaaaaaaaaa::/bin/i:", "exceeds the 128"},
        {":x:M::" + std::string(129, 'a') + "::/bin/i:", "exceeds the 128"},
        {":x:M::ab:::", "interpreter is empty"},
        {":x:M::ab::/bin/i:PX", "unexpected 'X'"},
        {":x:M::ab::/bin/i:P\n\n", "unexpected"},
        {":x:M::ab::/bin/i", "past the end"},
        {":x:E::::/bin/i:", "extension is empty"},
        {":x:E::a/b::/bin/i:", "extension is empty or contains '/'"},
        {std::string(":x:M::a\0b::/bin/i:", 18), "magic field"},
        {"PxPMPPabPP/bin/iP", "past the end"},
    };
    CHECK(table.size() >= 20);
    for (const auto& m : table) {
        CAPTURE(m.line);
        auto e = parse_binfmt_line(m.line);
        REQUIRE_FALSE(e.has_value());
        CHECK(e.error().why.find(m.why) != std::string::npos);
        CHECK_FALSE(e.error().hint.empty());
    }
}

TEST_CASE("binfmt line: format -> parse is an exact round trip") {
    std::vector<BinfmtEntry> entries{aarch64_entry("P"), aarch64_entry("POCF"), aarch64_entry(""),
                                     aarch64_entry("F")};
    BinfmtEntry odd = aarch64_entry("C");
    odd.name = "odd:name"; // forces another delimiter
    odd.magic = std::string("\\x41:,\n\0ab", 10);
    odd.mask.clear();
    odd.offset = 7;
    entries.push_back(odd);
    BinfmtEntry ext;
    ext.name = "py";
    ext.type = BinfmtType::extension;
    ext.magic = "py";
    ext.interpreter = "/usr/bin/python3";
    entries.push_back(ext);
    for (const auto& e : entries) {
        auto line = format_binfmt_line(e);
        REQUIRE(line.has_value());
        CAPTURE(*line);
        auto back = parse_binfmt_line(*line);
        REQUIRE(back.has_value());
        CHECK(*back == e);
        CHECK(format_binfmt_line(*back).value() == *line); // and the text is stable
    }
    CHECK(format_binfmt_line(odd)->front() == ',');
}

TEST_CASE("binfmt line: the formatter refuses what the kernel would misread") {
    auto e = aarch64_entry();
    e.interpreter = "/opt/qemu\n/x";
    CHECK_FALSE(format_binfmt_line(e).has_value());
    e = aarch64_entry();
    e.name = "a/b";
    CHECK_FALSE(format_binfmt_line(e).has_value());
    e = aarch64_entry();
    e.interpreter = "/opt/a:b";
    auto r = format_binfmt_line(e, ':');
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().why.find("delimiter") != std::string::npos);
    e.mask = "x";
    CHECK(format_binfmt_line(e).error().why.find("mask is 1 bytes") != std::string::npos);
    e = aarch64_entry();
    e.offset = 120;
    CHECK_FALSE(format_binfmt_line(e).has_value());
}

TEST_CASE("binfmt entry file: what the kernel shows parses to the registered entry") {
    auto e = parse_binfmt_entry_file("qemu-aarch64",
                                     "enabled\ninterpreter /usr/bin/qemu-aarch64-static\n"
                                     "flags: PF\noffset 0\n"
                                     "magic 7f454c460201010000000000000000000200b700\n"
                                     "mask ffffffffffffff00fffffffffffffffffeffffff\n");
    REQUIRE(e.has_value());
    CHECK(*e == aarch64_entry("PF"));
    auto d = parse_binfmt_entry_file("py", "disabled\ninterpreter /usr/bin/python3\nflags: \n"
                                           "extension .py\n");
    REQUIRE(d.has_value());
    CHECK_FALSE(d->enabled);
    CHECK(d->type == BinfmtType::extension);
    CHECK(d->magic == "py");
    CHECK_FALSE(parse_binfmt_entry_file("x", "enabled\ninterpreter /a\nmagic 7g\n").has_value());
    CHECK_FALSE(parse_binfmt_entry_file("x", "enabled\ninterpreter /a\nbogus 1\nmagic 7f\n"));
    CHECK_FALSE(parse_binfmt_entry_file("x", "enabled\n").has_value());
}

TEST_CASE("binfmt plan: add, keep, enable, conflict, replace; others untouched") {
    auto want = aarch64_entry("PF");
    BinfmtEntry other = aarch64_entry("OCF");
    other.name = "qemu-arm";
    other.interpreter = "/opt/other/handler"; // a qemu of aarch64 would be kept (provider)
    SUBCASE("empty table: add") {
        auto p = plan_binfmt_register({want}, {other}, false);
        REQUIRE(p.items.size() == 1);
        CHECK(p.items[0].action == BinfmtAction::add);
        CHECK(p.changes_anything());
    }
    SUBCASE("identical: keep; identical but disabled: enable") {
        auto p = plan_binfmt_register({want}, {want, other}, false);
        CHECK(p.items.at(0).action == BinfmtAction::keep);
        CHECK_FALSE(p.changes_anything());
        auto off = want;
        off.enabled = false;
        CHECK(plan_binfmt_register({want}, {off}, false).items.at(0).action ==
              BinfmtAction::enable);
    }
    SUBCASE("other flags under the same name: conflict, or replace when asked") {
        auto cur = aarch64_entry("OCF");
        cur.interpreter = "/opt/other/handler"; // not a qemu: test_binfmt_provider keeps those
        auto p = plan_binfmt_register({want}, {cur}, false);
        CHECK(p.has_conflict());
        CHECK(p.items.at(0).detail.find("flags 'OCF' registered, 'PF' wanted") !=
              std::string::npos);
        auto r = plan_binfmt_register({want}, {cur}, true);
        CHECK(r.items.at(0).action == BinfmtAction::replace);
        CHECK(r.items.at(0).current->flags.credentials);
    }
    SUBCASE("unregister: remove what is there, absent otherwise") {
        auto p = plan_binfmt_unregister({"qemu-aarch64", "qemu-s390x"}, {want, other});
        CHECK(p.items.at(0).action == BinfmtAction::remove);
        CHECK(p.items.at(1).action == BinfmtAction::absent);
        CHECK(p.items.size() == 2);
        CHECK(p.describe().find("absent   qemu-s390x") != std::string::npos);
    }
}

TEST_CASE("binfmt persistence: binfmt.d and update-binfmts round trips") {
    std::vector<BinfmtEntry> entries{aarch64_entry("PF"), aarch64_entry("OC")};
    entries[1].name = "qemu-aarch64-c";
    auto text = format_binfmt_d(entries);
    REQUIRE(text.has_value());
    auto back = parse_binfmt_d(*text + "; comment\n\n");
    REQUIRE(back.has_value());
    CHECK(*back == entries);
    auto bad = parse_binfmt_d("# c\n:x:Q::a::/b:\n");
    REQUIRE_FALSE(bad.has_value());
    CHECK(bad.error().what.find("line 2") != std::string::npos);

    for (const auto& e : entries) {
        auto deb = format_update_binfmts(e);
        REQUIRE(deb.has_value());
        auto e2 = parse_update_binfmts(e.name, *deb);
        REQUIRE(e2.has_value());
        CHECK(*e2 == e);
    }
    auto o_only = aarch64_entry("O");
    CHECK_FALSE(format_update_binfmts(o_only).has_value());
    auto debian = parse_update_binfmts(
        "qemu-aarch64",
        "package qemu-user-static\ninterpreter /usr/bin/qemu-aarch64-static\n"
        "magic \\x7f\\x45\\x4c\\x46\\x02\\x01\\x01\\x00\\x00\\x00\\x00\\x00\\x00\\x00"
        "\\x00\\x00\\x02\\x00\\xb7\\x00\noffset 0\n"
        "mask \\xff\\xff\\xff\\xff\\xff\\xff\\xff\\x00\\xff\\xff\\xff\\xff\\xff\\xff"
        "\\xff\\xff\\xfe\\xff\\xff\\xff\ncredentials no\nfix_binary yes\npreserve yes\n");
    REQUIRE(debian.has_value());
    CHECK(*debian == aarch64_entry("PF"));
    CHECK_FALSE(parse_update_binfmts("x", "interpreter /a\nmagic ab\nweird yes\n").has_value());
}

TEST_CASE("binfmt table arches map back to their arch") {
    for (const auto& a : all_arches()) {
        auto e = binfmt_entry_for(a, "/usr/bin/qemu-" + a.qemu, {});
        CHECK(binfmt_entry_arch(e) == &a);
        CHECK(e.name == "qemu-" + a.qemu);
        auto line = format_binfmt_line(e);
        REQUIRE(line.has_value());
        CHECK(*parse_binfmt_line(*line) == e);
    }
}

TEST_CASE("binfmt interpreter checks refuse writable interpreters") {
    BinfmtWarnings w;
    CHECK_FALSE(check_binfmt_interpreter("relative/qemu", {}, w).has_value());
    CHECK_FALSE(check_binfmt_interpreter("/nonexistent/qemu-x", {}, w).has_value());
    auto flags = *BinfmtFlags::parse("C");
    auto r = check_binfmt_interpreter("/bin/sh", flags, w);
    REQUIRE(r.has_value());
    CHECK(w.size() == 1);
}

namespace {

// An executable file at testdir()/rel with `mode`, in a directory with `dir_mode`.
std::filesystem::path interpreter_file(const std::string& rel, mode_t mode, mode_t dir_mode) {
    auto path = test::write_file(rel, "#!/bin/sh\n");
    REQUIRE(::chmod(path.c_str(), mode) == 0);
    REQUIRE(::chmod(path.parent_path().c_str(), dir_mode) == 0);
    return path;
}

// The reason an interpreter is refused, or "" when it is accepted.
std::string refusal(const std::filesystem::path& interp) {
    BinfmtWarnings w;
    auto r = check_binfmt_interpreter(interp, {}, w);
    return r ? std::string() : r.error().message();
}

} // namespace

TEST_CASE("binfmt interpreter checks: files and directories others can write to") {
    // chmod sets exact modes, whatever the umask.
    auto ok = interpreter_file("safe/qemu-ok", 0755, 0755);
    CHECK(refusal(ok).empty());

    auto world = interpreter_file("safe/qemu-world", 0757, 0755);
    CHECK(refusal(world).find("writable by group or others (mode 757)") != std::string::npos);
    auto group = interpreter_file("safe/qemu-group", 0775, 0755);
    CHECK(refusal(group).find("writable by group or others (mode 775)") != std::string::npos);
    CHECK(refusal(group).find("chmod go-w") != std::string::npos);

    auto in_open = interpreter_file("open/qemu-x", 0755, 0777);
    CHECK(refusal(in_open).find("is writable by others without the sticky bit") !=
          std::string::npos);
    // Through a link in a safe directory: the directory of the real file counts too.
    auto link = ok.parent_path() / "qemu-link";
    std::filesystem::create_symlink(in_open, link);
    CHECK(refusal(link).find("open is writable by others without the sticky bit") !=
          std::string::npos);
    // A sticky directory (like /tmp) is fine: others cannot replace a file they do not own.
    auto sticky = interpreter_file("sticky/qemu-x", 0755, 01777);
    CHECK(refusal(sticky).empty());
}

TEST_CASE("binfmt opt-in: C and O only with an explicit opt-in") {
    BinfmtOptions o;
    CHECK_FALSE(missing_binfmt_opt_in(*BinfmtFlags::parse("PF"), o).has_value());
    CHECK(missing_binfmt_opt_in(*BinfmtFlags::parse("C"), o) == BinfmtOptIn::credentials);
    CHECK(missing_binfmt_opt_in(*BinfmtFlags::parse("OC"), o) == BinfmtOptIn::credentials);
    CHECK(missing_binfmt_opt_in(*BinfmtFlags::parse("PO"), o) == BinfmtOptIn::open_binary);
    o.allow_open_binary = true; // O allowed does not allow C
    CHECK_FALSE(missing_binfmt_opt_in(*BinfmtFlags::parse("O"), o).has_value());
    CHECK(missing_binfmt_opt_in(*BinfmtFlags::parse("C"), o) == BinfmtOptIn::credentials);
    o = BinfmtOptions{};
    o.allow_credentials = true; // C brings its O: allowed with allow_credentials alone
    CHECK_FALSE(missing_binfmt_opt_in(*BinfmtFlags::parse("OC"), o).has_value());
    CHECK(opt_in_reason(BinfmtOptIn::credentials) ==
          "C runs setuid binaries with raised privileges");
    CHECK(opt_in_reason(BinfmtOptIn::open_binary) ==
          "O hands the emulator binaries users cannot read");
}

TEST_CASE("binfmt opt-in: register_binfmt refuses C or O without it, before touching the mount") {
    BinfmtOptions o;
    o.mount = "/nonexistent/binfmt_misc";
    o.mount_if_missing = false;
    for (const char* flags : {"PC", "PO"}) {
        CAPTURE(flags);
        auto r = register_binfmt({aarch64_entry(flags)}, o);
        REQUIRE_FALSE(r.has_value());
        CHECK(r.error().what ==
              "register qemu-aarch64 with flags " + BinfmtFlags::parse(flags)->to_string());
        CHECK(r.error().hint.find(flags[1] == 'C' ? "allow_credentials" : "allow_open_binary") !=
              std::string::npos);
    }
    o.allow_credentials = true; // with the opt-in the request gets as far as the mount
    auto r = register_binfmt({aarch64_entry("PC")}, o);
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().why.find("setuid") == std::string::npos);
}

TEST_CASE("binfmt status JSON: every field of every entry, escaped bytes, null for others") {
    BinfmtTable t;
    t.enabled = false;
    t.entries.push_back(aarch64_entry("PF"));
    BinfmtEntry ext;
    ext.name = "cli";
    ext.type = BinfmtType::extension;
    ext.magic = "exe";
    ext.interpreter = "/usr/bin/mono";
    ext.enabled = false;
    t.entries.push_back(ext);
    CHECK(binfmt_status_json("/mnt/b", t, -1) ==
          R"({"enabled":false,"entries":[{"arch":"aarch64","enabled":true,"flags":"PF",)"
          R"("interpreter":"/usr/bin/qemu-aarch64-static","line":)" +
              nlohmann::json(*format_binfmt_line(aarch64_entry("PF"))).dump() +
              R"(,"magic":"\\x7fELF\\x02\\x01\\x01\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00)"
              R"(\\x02\\x00\\xb7\\x00","mask":"\\xff\\xff\\xff\\xff\\xff\\xff\\xff\\x00\\xff\\xff)"
              R"(\\xff\\xff\\xff\\xff\\xff\\xff\\xfe\\xff\\xff\\xff","name":"qemu-aarch64",)"
              R"("offset":0,"type":"magic"},{"arch":null,"enabled":false,"flags":"",)"
              R"("interpreter":"/usr/bin/mono","line":":cli:E::exe::/usr/bin/mono:","magic":"exe",)"
              R"("mask":"","name":"cli","offset":0,"type":"extension"}],"mount":"/mnt/b"})");
}

TEST_CASE("binfmt apply and verify JSON: the plan item by item, ok only when every arch is") {
    BinfmtApplyResult r;
    // Not a qemu, so not kept as another tool's provider (test_binfmt_provider).
    auto want = aarch64_entry("PF");
    auto cur = aarch64_entry("P");
    want.interpreter = cur.interpreter = "/opt/other/handler";
    r.plan = plan_binfmt_register({want}, {cur}, false);
    r.warnings = {"w"};
    const auto j = nlohmann::json::parse(binfmt_apply_json(r));
    CHECK(j["applied"] == false);
    CHECK(j["conflict"] == true);
    CHECK(j["warnings"] == nlohmann::json::array({"w"}));
    REQUIRE(j["plan"].size() == 1);
    CHECK(j["plan"][0]["action"] == "conflict");
    CHECK(j["plan"][0]["wanted"]["flags"] == "PF");
    CHECK(j["plan"][0]["current"]["flags"] == "P");
    CHECK(j["plan"][0]["detail"] == "flags 'P' registered, 'PF' wanted");
    r.plan = plan_binfmt_unregister({"qemu-x"}, {});
    CHECK(nlohmann::json::parse(binfmt_apply_json(r))["plan"][0]["wanted"].is_null());
    CHECK(binfmt_verify_json({{"aarch64", true, "fine"}, {"s390x", false, "no handler"}}, -1) ==
          R"({"arches":[{"arch":"aarch64","detail":"fine","ok":true},)"
          R"({"arch":"s390x","detail":"no handler","ok":false}],"ok":false})");
    CHECK(nlohmann::json::parse(binfmt_verify_json({{"aarch64", true, "fine"}}))["ok"] == true);
}

TEST_CASE("binfmt files: export writes one file per entry, import reads it back by its name") {
    const auto dir = test::testdir("binfmt_files");
    auto e = parse_binfmt_line(":qemu-x:M::\\x7fELF::/usr/bin/qemu-x-static:PF");
    REQUIRE(e);
    auto conf = export_binfmt_file(*e, BinfmtFileFormat::binfmt_d, dir);
    REQUIRE(conf);
    CHECK(*conf == dir / "qemu-x.conf");
    auto deb = export_binfmt_file(*e, BinfmtFileFormat::update_binfmts, dir);
    REQUIRE(deb);
    CHECK(*deb == dir / "qemu-x");
    for (const auto& file : {*conf, *deb}) {
        auto back = read_binfmt_file(file);
        REQUIRE(back);
        REQUIRE(back->size() == 1);
        CHECK(back->front() == *e);
    }
    auto missing = read_binfmt_file(dir / "none.conf");
    REQUIRE_FALSE(missing);
    CHECK(missing.error().message().find("none.conf") != std::string::npos);
    const auto bad_file = test::write_file("bad.conf", "# a comment\n:broken\n");
    auto bad = read_binfmt_file(bad_file);
    REQUIRE_FALSE(bad);
    CHECK(bad.error().what.starts_with(bad_file.string() + ": "));
    CHECK(bad.error().what.find("line 2") != std::string::npos);
    CHECK_FALSE(export_binfmt_file(*e, BinfmtFileFormat::binfmt_d, dir / "no-such-dir"));
    const auto empty_file = test::write_file("empty.conf", "# only a comment\n\n");
    auto empty = read_binfmt_file(empty_file); // importing it would register nothing, silently
    REQUIRE_FALSE(empty);
    CHECK(empty.error().what == empty_file.string());
    CHECK(empty.error().why == "the file holds no entry");
}

namespace {

/// A binfmt_misc in a directory, changed only through BinfmtOptions::writer as the kernel
/// changes its own: `register` adds an entry file (as the kernel shows it), "-1" removes one,
/// "0"/"1" disable/enable it. `fail_at` (counted from 1) fails that one write, once, and lets
/// every later one through: the rollback's writes must reach the table.
struct FakeBinfmtKernel {
    std::filesystem::path mount;
    std::size_t fail_at = 0;
    std::vector<std::string> writes; ///< "FILE TEXT", in order

    explicit FakeBinfmtKernel(const std::string& name) : mount(fresh(name)) {
        write("register", "");
        write("status", "enabled\n");
    }
    static std::filesystem::path fresh(const std::string& name) { // one per (sub)case run
        static int runs = 0;
        return test::testdir(name + "-" + std::to_string(++runs));
    }
    void write(const std::string& file, const std::string& text) const {
        std::ofstream(mount / file) << text;
    }
    static std::string hex(const std::string& bytes) {
        std::string out;
        for (unsigned char c : bytes) {
            out += "0123456789abcdef"[c >> 4];
            out += "0123456789abcdef"[c & 15];
        }
        return out;
    }
    void show(const BinfmtEntry& e) const {
        write(e.name, std::string(e.enabled ? "enabled" : "disabled") + "\ninterpreter " +
                          e.interpreter + "\nflags: " + e.flags.to_string() + "\noffset " +
                          std::to_string(e.offset) + "\nmagic " + hex(e.magic) + "\nmask " +
                          hex(e.mask) + "\n");
    }
    Result<void> apply(const std::filesystem::path& file, std::string_view text) const {
        const std::string name = file.filename().string();
        if (name == "register") {
            auto e = EMURUN_TRY(parse_binfmt_line(text));
            show(e);
            return {};
        }
        if (text == "-1") {
            std::filesystem::remove(file);
            return {};
        }
        auto e = EMURUN_TRY(read_binfmt_entry(mount, name));
        e.enabled = text == "1";
        show(e);
        return {};
    }
    BinfmtWriter writer() {
        return [this](const std::filesystem::path& file, std::string_view text) -> Result<void> {
            writes.push_back(file.filename().string() + " " + std::string(text));
            if (writes.size() == fail_at) {
                return fail("write " + file.string(), "No space left on device");
            }
            return apply(file, text);
        };
    }
    BinfmtOptions options() {
        BinfmtOptions o;
        o.mount = mount;
        o.writer = writer();
        return o;
    }
    std::vector<std::string> names() const {
        std::vector<std::string> out;
        const auto table = read_binfmt_table(mount);
        REQUIRE(table.has_value());
        for (const auto& e : table->entries) {
            out.push_back(e.name + (e.enabled ? "" : " (disabled)"));
        }
        return out;
    }
};

BinfmtEntry named(const std::string& name, const std::string& flags = "P") {
    BinfmtEntry e = aarch64_entry(flags);
    e.name = name;
    e.interpreter = "/bin/sh"; // exists and is root's: the interpreter checks pass
    return e;
}

} // namespace

TEST_CASE("binfmt apply: every change goes through the writer; a failure part-way is rolled back") {
    FakeBinfmtKernel kernel("binfmt-fake-kernel");
    BinfmtEntry other = named("other");
    other.interpreter = "/bin/true";
    kernel.show(other);
    kernel.show(named("t1")); // there before: kept, never written
    SUBCASE("without a failure, each new entry is one write to register") {
        auto r = register_binfmt({named("t1"), named("t2"), named("t3")}, kernel.options());
        REQUIRE(r.has_value());
        CHECK(r->applied);
        CHECK(kernel.writes.size() == 2);
        CHECK(kernel.names() == std::vector<std::string>{"other", "t1", "t2", "t3"});
    }
    SUBCASE("the second write fails: the first is undone, the others untouched") {
        kernel.fail_at = 2;
        auto r = register_binfmt({named("t1"), named("t2"), named("t3")}, kernel.options());
        REQUIRE_FALSE(r.has_value());
        CHECK(r.error().why.find("No space left on device") != std::string::npos);
        CHECK(r.error().why.find("every change of this run was rolled back") != std::string::npos);
        REQUIRE(kernel.writes.size() == 3);
        CHECK(kernel.writes[2] == "t2 -1"); // the undo of the first write
        CHECK(kernel.names() == std::vector<std::string>{"other", "t1"});
    }
    SUBCASE("a replace whose add fails registers the replaced entry again, disabled as it was") {
        BinfmtEntry old = named("t1", "PF");
        old.enabled = false;
        kernel.show(old);
        auto o = kernel.options();
        o.replace = true;
        kernel.fail_at = 2; // remove t1 (1), register the new t1 (2) fails
        auto r = register_binfmt({named("t1")}, o);
        REQUIRE_FALSE(r.has_value());
        CHECK(kernel.names() == std::vector<std::string>{"other", "t1 (disabled)"});
        auto back = read_binfmt_entry(kernel.mount, "t1");
        REQUIRE(back.has_value());
        CHECK(back->flags.to_string() == "PF");
    }
    SUBCASE("unregister and its rollback go through the writer too") {
        kernel.show(named("t2"));
        kernel.fail_at = 2;
        auto r = unregister_binfmt({"t1", "t2"}, kernel.options());
        REQUIRE_FALSE(r.has_value());
        CHECK(kernel.names() == std::vector<std::string>{"other", "t1", "t2"});
    }
}
