// plan_launch on hand-made ELF images (elf_builder.hpp) and a fake qemu dir: native vs foreign,
// static vs dynamic, sysroot selection, and the errors for what is missing.
#include "elf_builder.hpp"
#include "launch/launch_record.h"
#include "scoped_env.hpp"
#include "testdir.hpp"
#include "util/file.hpp"

#include <emurun/launch.hpp>

#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <sys/stat.h>
#include <vector>

namespace fs = std::filesystem;
using namespace emurun;
using emurun::test::why;
using Strings = std::vector<std::string>;

namespace {

// An arch that needs emulation on this host (under the dogfood run the host is aarch64).
const Arch& foreign() {
    for (const char* name : {"s390x", "ppc64le", "riscv64", "aarch64"}) {
        const Arch& a = **find_arch(name);
        if (!runs_natively(a)) {
            return a;
        }
    }
    FAIL("no foreign arch among s390x, ppc64le, riscv64, aarch64");
    throw;
}

test::ElfSpec spec_for(const Arch& a, std::string interp = {}, Strings needed = {}) {
    test::ElfSpec s;
    s.elf_class = a.elf_class;
    s.elf_data = a.elf_data;
    s.machine = a.e_machine;
    s.flags = a.e_flags_value;
    s.type = needed.empty() && interp.empty() ? 2 : 3;
    s.dynamic = !interp.empty() || !needed.empty();
    s.interp = std::move(interp);
    s.needed = std::move(needed);
    return s;
}

// Writes the image of `spec` to testdir()/rel with `mode`.
fs::path write_elf(const std::string& rel, const test::ElfSpec& spec, mode_t mode = 0755) {
    auto bytes = test::build_elf(spec).bytes;
    auto p = test::write_file(rel, std::string(bytes.begin(), bytes.end()));
    REQUIRE(::chmod(p.c_str(), mode) == 0);
    return p;
}

// A static program of `a` and a directory with a (static) qemu for it.
struct Foreign {
    fs::path program;
    fs::path qemu_dir;
    fs::path qemu;
};

Foreign foreign_static(const std::string& dir) {
    const Arch& a = foreign();
    Foreign f;
    f.program = write_elf(dir + "/prog", spec_for(a));
    f.qemu_dir = test::testdir(dir + "/qemu");
    f.qemu = write_elf(dir + "/qemu/qemu-" + a.qemu + "-static", spec_for(*host_arch()));
    return f;
}

LaunchRequest request(const fs::path& program, const fs::path& qemu_dir = {}) {
    LaunchRequest r;
    r.program = program;
    r.emulators = EmulatorSearch{{qemu_dir}, false, true}; // never the machine's own qemu
    return r;
}

// A sysroot for `a` with the loader `interp` and libc.so.6 in lib/<triplet>.
fs::path fake_sysroot(const std::string& dir, const Arch& a, const std::string& interp) {
    write_elf(dir + interp, spec_for(a));
    auto libc = spec_for(a);
    libc.type = 3; // ET_DYN
    libc.dynamic = true;
    libc.soname = "libc.so.6";
    write_elf(dir + "/lib/" + a.triplet + "/libc.so.6", libc);
    return test::testdir(dir);
}

// DIR/app (loader /lib/ld-fake.so.1, RUNPATH `runpath`) needing libc.so.6 and DIR/libown.so.
fs::path app_with_own_library(const std::string& dir, const Arch& a, const std::string& runpath) {
    auto own = spec_for(a);
    own.type = 3;
    own.dynamic = true;
    own.soname = "libown.so";
    own.needed = {"libc.so.6"};
    write_elf(dir + "/libown.so", own);
    auto spec = spec_for(a, "/lib/ld-fake.so.1", {"libown.so", "libc.so.6"});
    spec.runpath = runpath;
    return write_elf(dir + "/app", spec);
}

bool has_note(const LaunchPlan& p, const std::string& part) {
    return std::ranges::any_of(p.notes,
                               [&](const auto& n) { return n.find(part) != std::string::npos; });
}

} // namespace

TEST_CASE("launch: a program of the host's arch runs natively, even with libraries missing") {
    REQUIRE(host_arch() != nullptr);
    auto prog =
        write_elf("native/prog", spec_for(*host_arch(), "/lib/ld-none.so.1", {"libnowhere.so.9"}));
    auto req = request(prog);
    req.args = {"x", "y z"};
    req.env = {{"A", "1"}};
    auto plan = plan_launch(req);
    REQUIRE_MESSAGE(plan.has_value(), why(plan));
    CHECK(plan->mode == Emulation::native);
    CHECK(plan->arch == host_arch());
    CHECK(plan->exe == prog);
    CHECK(plan->argv == Strings{prog.string(), "x", "y z"});
    CHECK(plan->env_set == std::map<std::string, std::string>{{"A", "1"}});
    CHECK_FALSE(plan->emulator.has_value());
    CHECK_FALSE(plan->ld_prefix.has_value());
}

TEST_CASE("launch: a static foreign program runs under its emulator, without a sysroot") {
    auto f = foreign_static("static");
    auto req = request(f.program, f.qemu_dir);
    req.args = {"--flag"};
    req.argv0 = "tool";
    req.cpu = "max";
    auto plan = plan_launch(req);
    REQUIRE_MESSAGE(plan.has_value(), why(plan));
    CHECK(plan->mode == Emulation::exec);
    CHECK(plan->arch == &foreign());
    CHECK(plan->program == f.program);
    CHECK(plan->exe == f.qemu);
    CHECK(plan->argv ==
          Strings{f.qemu.string(), "-cpu", "max", "-0", "tool", f.program.string(), "--flag"});
    REQUIRE(plan->emulator.has_value());
    CHECK(plan->emulator->is_static);
    CHECK(has_note(*plan, "(static)"));
    CHECK_FALSE(plan->ld_prefix.has_value());
    CHECK_FALSE(plan->env_set.contains("QEMU_LD_PREFIX"));
}

TEST_CASE("launch: the explicit arch must be the file's") {
    auto f = foreign_static("wrong-arch");
    auto req = request(f.program, f.qemu_dir);
    req.arch = host_arch();
    auto plan = plan_launch(req);
    REQUIRE_FALSE(plan.has_value());
    CHECK(plan.error().what == "cannot run " + f.program.string() + " as " + host_arch()->name);
    CHECK(plan.error().why == "the file is a program for " + foreign().name);
    // The library names the option by its API name (LaunchRequest::arch), never a CLI flag.
    CHECK(plan.error().hint == "ask for no arch, or for " + foreign().name);
    CHECK(plan.error().field == "arch");
    CHECK(plan.error().kind == ErrorKind::bad_input);
    CHECK(plan.error().message().ends_with("(ask for no arch, or for " + foreign().name +
                                           " (option arch))"));
    req.arch = &foreign();
    CHECK(plan_launch(req).has_value());
}

TEST_CASE("launch: no emulator for a foreign program is a named error") {
    auto f = foreign_static("no-qemu");
    auto plan = plan_launch(request(f.program, test::testdir("no-qemu/empty")));
    REQUIRE_FALSE(plan.has_value());
    CHECK(plan.error().message().find("no emulator for " + foreign().name) != std::string::npos);
    CHECK(plan.error().message().find("qemu-" + foreign().qemu) != std::string::npos);
}

TEST_CASE("launch: a dynamic foreign program gets QEMU_LD_PREFIX from the sysroot that has it") {
    const Arch& a = foreign();
    auto f = foreign_static("dynamic");
    auto prog = write_elf("dynamic/dyn", spec_for(a, "/lib/ld-fake.so.1", {"libc.so.6"}));
    // The first sysroot holds the same names for another arch: they do not count.
    const Arch& other = *host_arch();
    auto wrong = fake_sysroot("dynamic/wrong", other, "/lib/ld-fake.so.1");
    fs::create_directories(wrong / "lib" / a.triplet);
    fs::copy_file(wrong / "lib" / other.triplet / "libc.so.6",
                  wrong / "lib" / a.triplet / "libc.so.6");
    auto right = fake_sysroot("dynamic/right", a, "/lib/ld-fake.so.1");
    auto req = request(prog, f.qemu_dir);
    req.sysroots = {wrong, right};
    auto plan = plan_launch(req);
    REQUIRE_MESSAGE(plan.has_value(), why(plan));
    CHECK(plan->mode == Emulation::exec);
    CHECK(plan->ld_prefix == right);
    CHECK(plan->env_set.at("QEMU_LD_PREFIX") == right.string());
    CHECK(has_note(*plan, "QEMU_LD_PREFIX=" + right.string()));
    CHECK(plan->argv == Strings{f.qemu.string(), "-0", prog.string(), prog.string()});
}

TEST_CASE("launch: files of a sysroot inside another sysroot count for the inner one only") {
    // Debian's defaults are /usr/<triplet> and /, and / holds /usr/<triplet> too: the loader and
    // libc of the inner one must not make / a used sysroot (a merged prefix of the host's root).
    const Arch& a = foreign();
    auto f = foreign_static("nested");
    auto prog = write_elf("nested/dyn", spec_for(a, "/lib/ld-fake.so.1", {"libc.so.6"}));
    auto inner = fake_sysroot("nested/outer/inner", a, "/lib/ld-fake.so.1");
    auto req = request(prog, f.qemu_dir);
    req.sysroots = {inner, test::testdir("nested/outer")};
    auto plan = plan_launch(req);
    REQUIRE_MESSAGE(plan.has_value(), why(plan));
    CHECK(plan->ld_prefix == inner);
    CHECK(plan->env_set.at("QEMU_LD_PREFIX") == inner.string());
}

TEST_CASE("launch: the loader counts for the sysroot it was found in, whatever its path spells") {
    // PT_INTERP "/../inner/lib/ld" climbs out of the sysroot and back in: found in it, so it is
    // the one QEMU_LD_PREFIX names (qemu joins the two the same way).
    const Arch& a = foreign();
    auto f = foreign_static("climb");
    auto inner = fake_sysroot("climb/inner", a, "/lib/ld-fake.so.1");
    auto prog = write_elf("climb/dyn", spec_for(a, "/../inner/lib/ld-fake.so.1", {"libc.so.6"}));
    auto req = request(prog, f.qemu_dir);
    req.sysroots = {inner};
    auto plan = plan_launch(req);
    REQUIRE_MESSAGE(plan.has_value(), why(plan));
    CHECK(plan->env_set.at("QEMU_LD_PREFIX") == inner.string());
}

TEST_CASE(
    "launch: an absolute RUNPATH outside the sysroot is found on the host, as qemu finds it") {
    // A cross build's own library in its build tree (CMake's build RUNPATH): qemu looks for
    // PREFIX/dir/lib, then dir/lib on the host.
    const Arch& a = foreign();
    auto f = foreign_static("runpath");
    auto sr = fake_sysroot("runpath/sr", a, "/lib/ld-fake.so.1");
    const fs::path build = test::testdir("runpath/build");
    auto prog = app_with_own_library("runpath/build", a, build.string());
    auto req = request(prog, f.qemu_dir);
    req.sysroots = {sr};
    auto plan = plan_launch(req);
    REQUIRE_MESSAGE(plan.has_value(), why(plan));
    CHECK(plan->env_set.at("QEMU_LD_PREFIX") == sr.string());
    // Not there either: named as missing.
    fs::remove(build / "libown.so");
    auto missing = plan_launch(req);
    REQUIRE_FALSE(missing.has_value());
    CHECK(missing.error().message().find("libown.so") != std::string::npos);
}

TEST_CASE("launch: $ORIGIN is the directory of the program's real path, as ld.so takes it") {
    // ld.so reads the program's origin from /proc/self/exe (qemu-user: the realpath), so a
    // symlink to the program in another directory still finds the program's own libraries.
    const Arch& a = foreign();
    auto f = foreign_static("origin");
    auto sr = fake_sysroot("origin/sr", a, "/lib/ld-fake.so.1");
    auto prog = app_with_own_library("origin/app", a, "$ORIGIN");
    const fs::path link = test::testdir("origin/bin") / "app";
    fs::create_symlink(prog, link);
    auto req = request(link, f.qemu_dir);
    req.sysroots = {sr};
    auto plan = plan_launch(req);
    REQUIRE_MESSAGE(plan.has_value(), why(plan));
    CHECK(std::ranges::find(plan->inputs, prog.parent_path() / "libown.so") != plan->inputs.end());
    // A copy of libown.so beside the symlink is not what the loader takes.
    fs::copy_file(prog.parent_path() / "libown.so", link.parent_path() / "libown.so");
    auto again = plan_launch(req);
    REQUIRE_MESSAGE(again.has_value(), why(again));
    CHECK(std::ranges::find(again->inputs, link.parent_path() / "libown.so") ==
          again->inputs.end());
}

TEST_CASE("launch: the plan is keyed on what the emulator and PATH searches passed over") {
    const Arch& a = foreign();
    auto f = foreign_static("passed");
    const fs::path early = test::testdir("passed/early");
    const fs::path absent = test::testdir("passed") / "absent" / "deeper";
    auto req = request(f.program, {});
    req.emulators =
        EmulatorSearch{{early, absent, f.qemu_dir, test::testdir("passed/late")}, false, true};
    auto plan = plan_launch(req);
    REQUIRE_MESSAGE(plan.has_value(), why(plan));
    CHECK(plan->exe == f.qemu);
    auto keyed = [&](const fs::path& p) {
        return std::ranges::find(plan->inputs, p) != plan->inputs.end();
    };
    const std::string sta = "qemu-" + a.qemu + "-static";
    CHECK(keyed(early / sta));  // searched first: a qemu put there would win
    CHECK(keyed(absent / sta)); // in a dir that does not exist (yet)
    CHECK_FALSE(keyed(test::testdir("passed/late") / sta));
    // A dynamic qemu-<cpu> found: every dir was searched for the static one first.
    fs::rename(f.qemu, f.qemu_dir / ("qemu-" + a.qemu));
    plan = plan_launch(req);
    REQUIRE_MESSAGE(plan.has_value(), why(plan));
    CHECK(keyed(test::testdir("passed/late") / sta));
    CHECK_FALSE(keyed(test::testdir("passed/late") / ("qemu-" + a.qemu)));
    // A program named without '/' is keyed on the PATH entries before its own.
    const fs::path bin = test::testdir("passed/bin");
    fs::copy_file(f.program, bin / "tool");
    test::ScopedEnv path("PATH", early.string() + ":" + bin.string());
    req.program = "tool";
    plan = plan_launch(req);
    REQUIRE_MESSAGE(plan.has_value(), why(plan));
    CHECK(plan->program == bin / "tool");
    CHECK(keyed(early / "tool"));
}

TEST_CASE("launch: missing loader and libraries are named, with their package") {
    const Arch& a = foreign();
    auto f = foreign_static("missing");
    auto prog = write_elf("missing/dyn", spec_for(a, "/lib/ld-fake.so.1", {"libz.so.1"}));
    auto req = request(prog, f.qemu_dir);
    req.sysroots = {test::testdir("missing/empty-root")};
    auto plan = plan_launch(req);
    REQUIRE_FALSE(plan.has_value());
    const std::string msg = plan.error().message();
    CHECK(msg.find("/lib/ld-fake.so.1") != std::string::npos);
    CHECK(msg.find("libz.so.1") != std::string::npos);
    CHECK(msg.find("zlib1g:" + a.debian) != std::string::npos);
    // A loader alone is not enough: libz is still named.
    auto root = fake_sysroot("missing/partial", a, "/lib/ld-fake.so.1");
    req.sysroots = {root};
    plan = plan_launch(req);
    REQUIRE_FALSE(plan.has_value());
    CHECK(plan.error().message().find("libz.so.1") != std::string::npos);
    CHECK(plan.error().message().find("/lib/ld-fake.so.1 (needed") == std::string::npos);
}

TEST_CASE("launch: what is not a runnable program is refused with the reason") {
    auto text = test::write_file("refuse/text", "just words\n");
    ::chmod(text.c_str(), 0755);
    auto plan = plan_launch(request(text));
    REQUIRE_FALSE(plan.has_value());
    CHECK(plan.error().hint == "emurun runs ELF programs and #! scripts");
    CHECK(plan.error().kind == emurun::ErrorKind::not_elf);

    auto odd = spec_for(*host_arch());
    odd.machine = 0x1234;
    plan = plan_launch(request(write_elf("refuse/odd", odd)));
    REQUIRE_FALSE(plan.has_value());
    CHECK(plan.error().why.find("ELF machine 4660") != std::string::npos);
    CHECK(plan.error().why.find("is not in emurun's table") != std::string::npos);
    CHECK(plan.error().kind == emurun::ErrorKind::no_emulator); // no arch, so no QEMU for it

    auto unexec = write_elf("refuse/unexec", spec_for(*host_arch()), 0644);
    plan = plan_launch(request(unexec));
    REQUIRE_FALSE(plan.has_value());
    CHECK(plan.error().why == "not executable");
    CHECK(plan.error().hint == "chmod +x " + unexec.string());
    // A source file is no program at all: chmod +x would not help.
    test::write_file("refuse/hello.c", "int main(void) { return 0; }\n");
    plan = plan_launch(request(test::testdir("refuse") / "hello.c"));
    REQUIRE_FALSE(plan.has_value());
    CHECK(plan.error().why == "not a program: neither an ELF executable nor a #! script");
    CHECK(plan.error().hint.find("chmod") == std::string::npos);

    plan = plan_launch(request(test::testdir("refuse/dir")));
    REQUIRE_FALSE(plan.has_value());
    CHECK(plan.error().why == "is a directory");

    auto none = test::testdir("refuse") / "none";
    plan = plan_launch(request(none));
    REQUIRE_FALSE(plan.has_value());
    CHECK(plan.error().what.starts_with("stat " + none.string()));
    CHECK(plan.error().why == "No such file or directory");
}

TEST_CASE("launch: a #! script runs natively, with a note about what it starts") {
    auto script = test::write_file("script/run.sh", "#!/bin/sh\nexit 0\n");
    ::chmod(script.c_str(), 0755);
    auto f = foreign_static("script"); // an emulator is there, and not used
    auto req = request(script, f.qemu_dir);
    req.args = {"a"};
    auto plan = plan_launch(req);
    REQUIRE_MESSAGE(plan.has_value(), why(plan));
    CHECK(plan->mode == Emulation::native);
    CHECK(plan->arch == nullptr);
    CHECK(plan->exe == script);
    CHECK(plan->argv == Strings{script.string(), "a"});
    CHECK(has_note(*plan, "#! script"));
}

TEST_CASE("launch: launch_command runs the plan's exe with its argv and its variables on top") {
    LaunchPlan plan;
    plan.exe = "/usr/bin/qemu-x";
    plan.argv = {"/usr/bin/qemu-x", "-0", "tool", "/t/tool", "a"};
    plan.env_set = {{"QEMU_LD_PREFIX", "/p"}, {"K", "plan"}};
    const Command cmd = launch_command(plan, {{"K", "caller"}, {"PATH", "/bin"}});
    CHECK(cmd.argv == plan.argv);
    CHECK(cmd.program == fs::path("/usr/bin/qemu-x"));
    REQUIRE(cmd.env.has_value());
    CHECK(*cmd.env == std::map<std::string, std::string>{
                          {"K", "plan"}, {"PATH", "/bin"}, {"QEMU_LD_PREFIX", "/p"}});
    CHECK_FALSE(cmd.cwd.has_value());
}

TEST_CASE("launch: a sysroot that is not a directory is named as such, before any library") {
    auto f = foreign_static("bad-sysroot");
    auto req = request(f.program, f.qemu_dir);
    req.sysroots = {test::testdir("bad-sysroot") / "nonexistent"};
    auto plan = plan_launch(req);
    REQUIRE_FALSE(plan.has_value());
    CHECK(plan.error().what == "sysroot " + req.sysroots[0].string());
    CHECK(plan.error().why == "no such directory");
    req.sysroots = {f.program}; // a file
    plan = plan_launch(req);
    REQUIRE_FALSE(plan.has_value());
    CHECK(plan.error().why == "not a directory");
}

// --- launch records (launch_record.h: the launcher's one reader, here checked against the
// library's one writer) ---------------------------------------------------------------------

namespace {

struct Parsed {
    std::string bytes;
    std::unique_ptr<elr_view> view = std::make_unique<elr_view>();
    const char* why = nullptr;
};

Parsed parse(std::string bytes) {
    Parsed p{std::move(bytes)};
    p.why = elr_parse(reinterpret_cast<const unsigned char*>(p.bytes.data()), p.bytes.size(),
                      p.view.get());
    return p;
}

Strings view_argv(const elr_view& v) {
    return Strings(v.argv, v.argv + v.n_argv);
}

} // namespace

TEST_CASE("launch record: a dynamic plan's record reads back as the plan, keyed on its inputs") {
    const Arch& a = foreign();
    auto f = foreign_static("rec-dyn");
    auto root = fake_sysroot("rec-dyn/sysroot", a, "/lib/ld-fake.so.1");
    auto prog = write_elf("rec-dyn/dyn", spec_for(a, "/lib/ld-fake.so.1", {"libc.so.6"}));
    auto req = request(prog, f.qemu_dir);
    req.sysroots = {root};
    req.args = {"arg"};
    req.env = {{"A", "1"}};
    auto plan = plan_launch(req);
    REQUIRE_MESSAGE(plan.has_value(), why(plan));
    CHECK(plan->argv.size() == plan->args_at + 1);
    CHECK(std::ranges::find(plan->inputs, prog) != plan->inputs.end());
    CHECK(std::ranges::find(plan->inputs, root / "lib" / a.triplet / "libc.so.6") !=
          plan->inputs.end());
    CHECK(std::ranges::find(plan->inputs, root / "lib" / a.triplet) != plan->inputs.end());
    auto record = exec_record(*plan);
    REQUIRE(record.has_value());
    auto bytes = encode_launch_record(*record);
    REQUIRE_MESSAGE(bytes.has_value(), why(bytes));
    auto p = parse(*bytes);
    REQUIRE(p.why == nullptr);
    CHECK(std::string(p.view->exe) == plan->exe.string());
    CHECK(view_argv(*p.view) == Strings(plan->argv.begin(), plan->argv.end() - 1));
    CHECK(p.view->argv0_at == ELR_NO_ARGV0);
    CHECK(Strings(p.view->env, p.view->env + p.view->n_env) ==
          Strings{"A=1", "QEMU_LD_PREFIX=" + root.string()});
    REQUIRE(p.view->n_ids == plan->inputs.size());
    struct stat st {};
    REQUIRE(::stat(p.view->paths[0], &st) == 0);
    elr_id id{};
    elr_id_at(p.view.get(), 0, &id);
    CHECK(id.ino == st.st_ino);
    CHECK(id.mtime_nsec == st.st_mtim.tv_nsec);
    CHECK(id.ctime_sec == st.st_ctim.tv_sec);
    CHECK(id.ctime_nsec == st.st_ctim.tv_nsec);
}

TEST_CASE("launch record: a native plan has none; a shim's argv[0] slot is kept") {
    auto prog = write_elf("rec-native/prog", spec_for(*host_arch()));
    auto plan = plan_launch(request(prog));
    REQUIRE_MESSAGE(plan.has_value(), why(plan));
    CHECK_FALSE(exec_record(*plan).has_value());
    LaunchRecord r{.exe = prog, .argv = {"-x"}, .argv0_at = 0, .key = {prog}};
    auto p = parse(encode_launch_record(r).value());
    REQUIRE(p.why == nullptr);
    CHECK(p.view->argv0_at == 0);
    r.argv0_at.reset();
    r.argv.clear();
    CHECK_FALSE(encode_launch_record(r).has_value()); // no argv[0] at all
    r.exe = "relative/qemu";
    CHECK_FALSE(encode_launch_record(r).has_value());
}

TEST_CASE("launch record: every truncation and every corruption of the frame is refused") {
    auto prog = write_elf("rec-bad/prog", spec_for(*host_arch()));
    LaunchRecord r{.exe = "/usr/bin/qemu-x",
                   .argv = {"/usr/bin/qemu-x", "-0", "p", "/p"},
                   .env = {{"K", "v"}},
                   .key = {prog, prog.parent_path()}};
    const std::string good = encode_launch_record(r).value();
    REQUIRE(parse(good).why == nullptr);
    for (std::size_t n = 0; n < good.size(); ++n) {
        CAPTURE(n);
        CHECK(parse(good.substr(0, n)).why != nullptr);
    }
    CHECK(parse(good + std::string(1, '\0')).why != nullptr);
    auto with = [&](std::size_t at, char c) {
        std::string b = good;
        b[at] = c;
        return parse(b).why;
    };
    CHECK(with(0, 'X') != nullptr);                           // magic
    CHECK(with(offsetof(elr_header, version), 1) != nullptr); // another version
    CHECK(with(offsetof(elr_header, n_env), 9) != nullptr);   // counts that do not add up
    CHECK(with(good.size() - 1, 'x') != nullptr);             // last string unterminated
    CHECK(with(good.rfind(prog.parent_path().string()), 'r') != nullptr); // a relative key path
    // Any byte of the body changed (a corrupt record that still looks well formed: another
    // argv word, another identity) fails the checksum.
    for (std::size_t at = sizeof(elr_header); at < good.size(); ++at) {
        CAPTURE(at);
        CHECK(with(at, static_cast<char>(good[at] ^ 0x20)) != nullptr);
    }
    CHECK(std::string(with(good.size() - 2, 'y')) == "checksum mismatch");
}

TEST_CASE("launch record: a key path that does not exist is keyed by its absence") {
    const fs::path gone = test::testdir("rec-absent") / "no" / "such";
    LaunchRecord r{.exe = "/usr/bin/qemu-x", .argv = {"/usr/bin/qemu-x"}, .key = {gone}};
    auto p = parse(encode_launch_record(r).value());
    REQUIRE(p.why == nullptr);
    elr_id id{};
    elr_id_at(p.view.get(), 0, &id);
    CHECK(id.absent == 1);
    CHECK(id.ino == 0);
}

TEST_CASE("launch record: it holds the hash of the request it answers") {
    LaunchRecord r{.exe = "/usr/bin/qemu-x", .argv = {"/usr/bin/qemu-x"}, .request = 0x1234};
    auto p = parse(encode_launch_record(r).value());
    REQUIRE(p.why == nullptr);
    CHECK(p.view->request == 0x1234);
    // A shim's request is its path's: another shim's record answers another request.
    CHECK(elr_shim_request("/s/protoc") != elr_shim_request("/s/protoc2"));
}

TEST_CASE("launch record: saved only under a record name in emurun's own cache dir") {
    test::ScopedEnv cache("EMURUN_CACHE_DIR", test::testdir("rec-save/cache").string());
    auto f = foreign_static("rec-save");
    auto plan = plan_launch(request(f.program, f.qemu_dir));
    REQUIRE_MESSAGE(plan.has_value(), why(plan));
    auto dir = launch_record_dir();
    REQUIRE_MESSAGE(dir.has_value(), why(dir));
    CHECK(save_exec_record(*plan, *dir / "0123456789abcdef.rec").value());
    struct stat st {};
    REQUIRE(::stat((*dir / "0123456789abcdef.rec").c_str(), &st) == 0);
    CHECK((st.st_mode & 0777) == 0600);
    auto saved = parse(util::read_file(*dir / "0123456789abcdef.rec").value());
    CHECK(saved.why == nullptr);
    CHECK(saved.view->request == 0x0123456789abcdefull); // the launcher's name is the hash
    CHECK_FALSE(save_exec_record(*plan, *dir / "not-a-record-name.rec").value());
    CHECK_FALSE(save_exec_record(*plan, *dir / "0123456789ABCDEF.rec").value());
    CHECK_FALSE(
        save_exec_record(*plan, test::testdir("rec-save/elsewhere") / "0123456789abcdef.rec")
            .value());
    CHECK_FALSE(fs::exists(test::testdir("rec-save/elsewhere") / "0123456789abcdef.rec"));
    // Records not written for 30 days go when the next one is written, once a day.
    const auto old = fs::file_time_type::clock::now() - std::chrono::hours(24 * 31);
    fs::copy_file(*dir / "0123456789abcdef.rec", *dir / "00000000000000aa.rec");
    fs::last_write_time(*dir / "00000000000000aa.rec", old);
    fs::last_write_time(*dir / ".pruned", old);
    REQUIRE(save_exec_record(*plan, *dir / "0123456789abcdef.rec").value());
    CHECK_FALSE(fs::exists(*dir / "00000000000000aa.rec"));
    CHECK(fs::exists(*dir / "0123456789abcdef.rec"));
    fs::copy_file(*dir / "0123456789abcdef.rec", *dir / "00000000000000bb.rec");
    fs::last_write_time(*dir / "00000000000000bb.rec", old);
    REQUIRE(save_exec_record(*plan, *dir / "0123456789abcdef.rec").value());
    CHECK(fs::exists(*dir / "00000000000000bb.rec")); // pruned less than a day ago
}

TEST_CASE("launch record: the launcher's reading of `exec WORDS` is checked against the CLI's") {
    CHECK(launcher_reads_alike({"--arch", "a", "--", "p", "x"}, {"p", "x"}));
    CHECK_FALSE(launcher_reads_alike({"p", "x"}, {"p", "x"}));
    CHECK_FALSE(launcher_reads_alike({"--argv0", "--", "--", "p"}, {"p"}));
}
