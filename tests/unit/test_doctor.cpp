#include "testdir.hpp"

#include <emurun/doctor.hpp>
#include <emurun_term.hpp>

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>

namespace fs = std::filesystem;
using namespace emurun;

namespace {

const DoctorCheck* find_check(const std::vector<DoctorCheck>& checks, const std::string& id) {
    auto it = std::ranges::find(checks, id, &DoctorCheck::id);
    return it == checks.end() ? nullptr : &*it;
}

/// Facts of a healthy machine: recent kernel, mounted and enabled, an aarch64 emulator.
DoctorFacts healthy() {
    DoctorFacts f;
    f.kernel_release = "6.8.0-1-amd64";
    f.mount = "/proc/sys/fs/binfmt_misc";
    f.mounted = true;
    f.binfmt_enabled = true;
    f.max_user_namespaces = 1000;
    f.sandbox_probed = true;
    f.emulators.push_back({"aarch64", "/bin/sh", "7.2.0", true});
    return f;
}

BinfmtEntry aarch64_entry(const std::string& interp, const char* flags) {
    auto a = find_arch("aarch64");
    REQUIRE(a.has_value());
    return binfmt_entry_for(**a, interp, BinfmtFlags::parse(flags).value());
}

void check_every_problem_has_a_fix(const std::vector<DoctorCheck>& checks) {
    for (const auto& c : checks) {
        if (c.status != CheckStatus::ok) {
            CHECK_MESSAGE(!c.fix.empty(), c.id);
        }
    }
}

} // namespace

TEST_CASE("doctor: kernel versions from release strings") {
    auto v = parse_kernel_version("6.1.0-18-amd64");
    REQUIRE(v.has_value());
    CHECK(v->major == 6);
    CHECK(v->minor == 1);
    CHECK(v->patch == 0);
    CHECK(parse_kernel_version("6.18.44-fc-v782")->minor == 18);
    CHECK(parse_kernel_version("4.8")->at_least(4, 8));
    CHECK_FALSE(parse_kernel_version("4.7.10")->at_least(4, 8));
    CHECK(parse_kernel_version("10.0")->at_least(6, 7));
    CHECK_FALSE(parse_kernel_version("abc").has_value());
    CHECK_FALSE(parse_kernel_version("6").has_value());
    CHECK_FALSE(parse_kernel_version("").has_value());
}

TEST_CASE("doctor: kernel features by version") {
    auto f = healthy();
    CHECK(find_check(judge_doctor_facts(f), "kernel")->status == CheckStatus::ok);
    f.kernel_release = "6.1.0-18-amd64";
    auto checks = judge_doctor_facts(f);
    const auto* k = find_check(checks, "kernel");
    CHECK(k->status == CheckStatus::warn);
    CHECK(k->summary.find("6.7") != std::string::npos);
    CHECK(k->fix.find("emurun exec") != std::string::npos);
    f.kernel_release = "4.4.0";
    checks = judge_doctor_facts(f);
    CHECK(find_check(checks, "kernel")->summary.find("F flag") != std::string::npos);
    check_every_problem_has_a_fix(checks);
}

TEST_CASE("doctor: mount state") {
    auto f = healthy();
    CHECK(find_check(judge_doctor_facts(f), "binfmt.mount")->status == CheckStatus::ok);
    f.binfmt_enabled = false;
    auto m = *find_check(judge_doctor_facts(f), "binfmt.mount");
    CHECK(m.status == CheckStatus::warn);
    CHECK(m.fix.find("echo 1 >") != std::string::npos);
    f.mounted = false;
    m = *find_check(judge_doctor_facts(f), "binfmt.mount");
    CHECK(m.summary.find("not mounted") != std::string::npos);
    CHECK(m.fix.find("mount -t binfmt_misc") != std::string::npos);
}

TEST_CASE("doctor: user namespaces and the sandbox probe") {
    auto f = healthy();
    auto checks = judge_doctor_facts(f);
    CHECK(find_check(checks, "userns.sysctl")->status == CheckStatus::ok);
    CHECK(find_check(checks, "userns.probe")->status == CheckStatus::ok);
    f.max_user_namespaces = 0;
    f.apparmor_restrict_userns = 1;
    f.sandbox_probe_error = "unshare(CLONE_NEWUSER|CLONE_NEWNS) failed: No space left on device";
    checks = judge_doctor_facts(f);
    const auto* s = find_check(checks, "userns.sysctl");
    CHECK(s->status == CheckStatus::warn);
    CHECK(s->fix.find("user.max_user_namespaces") != std::string::npos);
    CHECK(s->fix.find("apparmor") != std::string::npos); // not root in this fake
    CHECK(find_check(checks, "userns.probe")->summary.find("No space left") != std::string::npos);
    check_every_problem_has_a_fix(checks);
    f.is_root = true; // AppArmor's restriction does not apply to root
    CHECK(find_check(judge_doctor_facts(f), "userns.sysctl")->fix.find("apparmor") ==
          std::string::npos);
}

TEST_CASE("doctor: emulators, static or dynamic, and none at all") {
    auto f = healthy();
    f.emulators.push_back({"s390x", "/usr/bin/qemu-s390x", "7.2.0", false});
    f.arches_without_emulator = {"riscv64"};
    auto checks = judge_doctor_facts(f);
    CHECK(find_check(checks, "emulator.aarch64")->status == CheckStatus::ok);
    CHECK(find_check(checks, "emulator.s390x")->status == CheckStatus::warn);
    CHECK(find_check(checks, "emulators.missing")->summary.find("riscv64") != std::string::npos);
    CHECK_FALSE(DoctorReport{f, checks}.has_failure());
    f.emulators.clear();
    checks = judge_doctor_facts(f);
    CHECK(find_check(checks, "emulators")->status == CheckStatus::fail);
    CHECK(DoctorReport{f, checks}.has_failure());
    check_every_problem_has_a_fix(checks);
}

TEST_CASE("doctor: registered entries against emurun's table") {
    auto f = healthy(); // the aarch64 emulator is /bin/sh: exists and is executable
    f.entries.push_back(aarch64_entry("/bin/sh", "PF"));
    CHECK(find_check(judge_doctor_facts(f), "binfmt.entry.qemu-aarch64")->status ==
          CheckStatus::ok);

    f.entries[0] = aarch64_entry("/bin/sh", "P"); // same name, other flags
    auto c = *find_check(judge_doctor_facts(f), "binfmt.entry.qemu-aarch64");
    CHECK(c.status == CheckStatus::warn);
    CHECK(c.summary.find("flags P (emurun: PF)") != std::string::npos);
    // The fix names the request field apart from its text: each tool spells it its own way.
    CHECK(c.fix.find("binfmt register aarch64'") != std::string::npos);
    CHECK(c.fix.find("replace)") == std::string::npos);
    CHECK(c.field == "replace");
    CHECK(c.fix_text().ends_with("binfmt register aarch64' (option replace)"));
    CHECK(c.fix_text([](std::string_view field) {
               return "--" + std::string(field);
           }).ends_with("binfmt register aarch64' (--replace)"));
    CHECK(c.fix_text([](std::string_view) { return std::string(); }) == c.fix);

    f.entries[0] = aarch64_entry("/bin/sh", "PF");
    f.entries[0].magic[1] = 'X'; // same name, other magic
    c = *find_check(judge_doctor_facts(f), "binfmt.entry.qemu-aarch64");
    CHECK(c.summary.find("magic") != std::string::npos);

    f.entries[0] = aarch64_entry("/nonexistent/handler", "P");
    c = *find_check(judge_doctor_facts(f), "binfmt.entry.qemu-aarch64");
    CHECK(c.status == CheckStatus::fail);
    f.entries[0].flags.fix_binary = true; // pinned: still works until re-registered
    CHECK(find_check(judge_doctor_facts(f), "binfmt.entry.qemu-aarch64")->status ==
          CheckStatus::warn);
    // tonistiigi/binfmt registers a path inside its container, pinned by F: its entry, OK.
    f.entries[0] = aarch64_entry("/nonexistent/qemu-aarch64", "PF");
    c = *find_check(judge_doctor_facts(f), "binfmt.entry.qemu-aarch64");
    CHECK(c.status == CheckStatus::ok);
    CHECK(c.summary.find("provided by another tool (tonistiigi/binfmt") != std::string::npos);

    f.entries[0] = aarch64_entry("/bin/sh", "PF");
    f.entries[0].enabled = false;
    c = *find_check(judge_doctor_facts(f), "binfmt.entry.qemu-aarch64");
    CHECK(c.fix == "emurun binfmt enable qemu-aarch64");

    // The qemu of another CPU (pinned by F, so its absence here does not matter): it fails.
    f.entries[0] = aarch64_entry("/nonexistent/qemu-arm-static", "PF");
    c = *find_check(judge_doctor_facts(f), "binfmt.entry.qemu-aarch64");
    CHECK(c.status == CheckStatus::fail);
    CHECK(c.summary.find("qemu for arm, not for aarch64") != std::string::npos);
    CHECK(c.fix_text().find("binfmt register aarch64' (option replace)") != std::string::npos);
}

TEST_CASE("doctor: without a sandbox, says where emulation auto runs") {
    auto f = healthy();
    CHECK(find_check(judge_doctor_facts(f), "auto.host") == nullptr); // the sandbox works
    f.kernel_release = "5.14.0-362.el9.x86_64";
    auto c = *find_check(judge_doctor_facts(f), "auto.host");
    CHECK(c.status == CheckStatus::warn);
    CHECK(c.fix.find("emurun binfmt register ARCH") != std::string::npos);
    // tonistiigi's entry (pinned by F): a sane handler, so auto runs through it.
    f.entries.push_back(aarch64_entry("/nonexistent/qemu-aarch64", "POCF"));
    c = *find_check(judge_doctor_facts(f), "auto.host");
    CHECK(c.status == CheckStatus::ok);
    CHECK(c.summary.find("host's handlers for aarch64") != std::string::npos);
    f.binfmt_enabled = false; // binfmt_misc switched off: nothing runs through it
    CHECK(find_check(judge_doctor_facts(f), "auto.host")->status == CheckStatus::warn);
    f.binfmt_enabled = true;
    f.kernel_release = "6.8.0";
    f.sandbox_probe_error = "mount binfmt_misc in a user namespace failed: Operation not permitted";
    CHECK(find_check(judge_doctor_facts(f), "auto.host")->status == CheckStatus::ok);
}

TEST_CASE("doctor: emurun's own entry for a dynamic emulator has P alone, and that is OK") {
    auto f = healthy();
    f.emulators[0].is_static = false; // register writes P without F for it
    f.entries.push_back(aarch64_entry("/bin/sh", "P"));
    CHECK(find_check(judge_doctor_facts(f), "binfmt.entry.qemu-aarch64")->status ==
          CheckStatus::ok);
    f.entries[0] = aarch64_entry("/bin/sh", "PF");
    CHECK(find_check(judge_doctor_facts(f), "binfmt.entry.qemu-aarch64")
              ->summary.find("flags PF (emurun: P)") != std::string::npos);
}

TEST_CASE("doctor: gathers facts from a fake mount and fake sysctls") {
    const fs::path mount = test::testdir("mnt");
    test::write_file("mnt/register", "");
    test::write_file("mnt/status", "enabled\n");
    test::write_file("mnt/qemu-aarch64",
                     "enabled\ninterpreter /nonexistent/qemu-aarch64-static\nflags: OCF\noffset 0\n"
                     "magic 7f454c460201010000000000000000000200b700\n"
                     "mask ffffffffffffff00fffffffffffffffffeffffff\n");
    test::write_file("mnt/python3.11", "enabled\ninterpreter /usr/bin/python3.11\nflags: \n"
                                       "offset 0\nmagic a70d0d0a\n");
    test::write_file("sys/user/max_user_namespaces", "0\n");
    test::write_file("sys/kernel/unprivileged_userns_clone", "1\n");
    DoctorOptions o;
    o.mount = mount;
    o.proc_sys = test::testdir("sys");
    o.kernel_release = "6.6.1";
    o.probe_sandbox = false;
    const auto r = diagnose(o);
    CHECK(r.facts.mounted);
    REQUIRE(r.facts.entries.size() == 2);
    CHECK(r.facts.max_user_namespaces == 0L);
    CHECK(r.facts.unprivileged_userns_clone == 1L);
    CHECK_FALSE(r.facts.apparmor_restrict_userns.has_value());
    CHECK(find_check(r.checks, "userns.probe") == nullptr);
    // Missing interpreter, but F pins it: WARN, not FAIL.
    CHECK(find_check(r.checks, "binfmt.entry.qemu-aarch64")->status == CheckStatus::warn);
    CHECK(find_check(r.checks, "binfmt.others")->summary.find("python3.11") != std::string::npos);
    CHECK(find_check(r.checks, "kernel")->status == CheckStatus::warn);

    const auto j = doctor_json(r);
    CHECK(j["schema"] == 1);
    CHECK(j["ok"] == !r.has_failure());
    CHECK(j["facts"]["binfmt"]["entries"][1]["arch"] == "aarch64"); // sorted by name
    CHECK(j["facts"]["binfmt"]["entries"][0]["arch"].is_null());
    CHECK(j["facts"]["kernel"]["userns_binfmt"] == false);
    CHECK(j["checks"].size() == r.checks.size());
    const auto flag = [](std::string_view field) { return "--" + std::string(field); };
    const auto fix_of = [](const nlohmann::json& checks, std::string_view id) {
        for (const auto& c : checks) {
            if (c["id"] == id) {
                return c["fix"].get<std::string>();
            }
        }
        return std::string();
    };
    CHECK(fix_of(j["checks"], "binfmt.entry.qemu-aarch64").ends_with("(option replace)"));
    CHECK(fix_of(doctor_json(r, flag)["checks"], "binfmt.entry.qemu-aarch64")
              .ends_with("' (--replace)"));
    // The CLI's text (emurun_term.hpp): the fix with the field as the CLI spells it.
    const auto text = format_doctor_text(r, flag);
    CHECK(text.find("WARN  kernel: Linux 6.6.1") != std::string::npos);
    CHECK(text.find("      fix: ") != std::string::npos);
    CHECK(text.find("aarch64' (--replace)\n") != std::string::npos);
    CHECK(text.find("option replace") == std::string::npos);
}

TEST_CASE("doctor: an entry with both C and O gives the reason for each flag") {
    auto f = healthy();
    f.entries.push_back(aarch64_entry("/bin/sh", "POCF"));
    const auto c = *find_check(judge_doctor_facts(f), "binfmt.entry.qemu-aarch64");
    CHECK(c.status == CheckStatus::warn);
    CHECK(c.summary.find("flag C: setuid") != std::string::npos);
    CHECK(c.summary.find("flag O: the emulator is handed") != std::string::npos);
    f.entries[0] = aarch64_entry("/bin/sh", "OPF");
    const auto o = *find_check(judge_doctor_facts(f), "binfmt.entry.qemu-aarch64");
    CHECK(o.summary.find("flag C") == std::string::npos);
    CHECK(o.summary.find(": flag O: the emulator is handed") != std::string::npos);
}
