// Emulator crashes told apart from failures: QEMU's signatures on stderr (QemuCrashScanner),
// the emulator killed by a crash signal in exec mode, the runner's verdict and every report form.
#include "fake_command_runner.hpp"
#include "runner/runner_internal.hpp"

#include <emurun/qemu.hpp>
#include <emurun/report.hpp>
#include <emurun/runner.hpp>

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <csignal>
#include <string>

using namespace emurun;
using test::FakeCommandRunner;
using test::FakeOutcome;
using test::pipeline_of;
using test::runner_options;
using test::status_of;

TEST_CASE("qemu crash: QEMU's own messages are recognised, a guest's ordinary errors are not") {
    CHECK(is_qemu_crash_line(test::k_qemu_unhandled));
    CHECK(is_qemu_crash_line("qemu: fatal: Lockup: can't escalate 3 to HardFault"));
    CHECK(is_qemu_crash_line("QEMU internal SIGSEGV {code=MAPERR, addr=0x20}"));
    CHECK(
        is_qemu_crash_line("qemu:handle_cpu_signal received signal outside vCPU context @ pc=0x1"));
    CHECK(is_qemu_crash_line(
        "qemu-aarch64-static: ../../tcg/tcg.c:4120: tcg_reg_alloc_op: Assertion `ok' failed."));
    CHECK(is_qemu_crash_line("../../tcg/tcg.c:4120: tcg fatal error"));
    CHECK(is_qemu_crash_line("Unhandled trap: 0x10"));
    // QEMU prints this when the guest program itself dies of SIGSEGV: not QEMU's crash.
    CHECK_FALSE(is_qemu_crash_line(test::k_qemu_uncaught));
    CHECK_FALSE(is_qemu_crash_line("Segmentation fault (core dumped)"));
    CHECK_FALSE(is_qemu_crash_line("qemu: could not open gdbserver on 1234"));
    CHECK_FALSE(is_qemu_crash_line("test.c:12: main: Assertion `x == 1' failed."));
}

TEST_CASE("qemu crash: the guest's fatal signal and the features QEMU lacks are read") {
    CHECK(qemu_guest_signal(test::k_qemu_uncaught) == 11);
    CHECK(qemu_guest_signal("qemu: uncaught target signal 4 (Illegal instruction) - core dumped") ==
          4);
    CHECK_FALSE(qemu_guest_signal("qemu: uncaught target signal x").has_value());
    CHECK_FALSE(qemu_guest_signal(test::k_qemu_unhandled).has_value());
    CHECK(is_qemu_unsupported_line("Unsupported syscall: 1000"));
    CHECK(is_qemu_unsupported_line("Unsupported ioctl: cmd=0x5401"));
    CHECK(is_qemu_unsupported_line("unimplemented opcode 0xb2b0"));
    CHECK_FALSE(is_qemu_unsupported_line("test: Unsupported syscall: 3 skipped"));
}

TEST_CASE("qemu crash: the scanner finds the first line of each kind across chunks") {
    QemuCrashScanner s;
    s.feed("some test output\nqemu: unhandled CPU exc");
    CHECK_FALSE(s.guest_signal_line().has_value());
    s.feed("eption 0x8 - aborting\r\nqemu: fatal: later\nUnsupported syscall: 293\n");
    s.feed(test::k_qemu_uncaught + "\n" + "Unsupported syscall: 1000\n");
    CHECK(s.evidence() == test::k_qemu_unhandled); // the first one, without its line end
    CHECK(s.guest_signal_line() == test::k_qemu_uncaught);
    CHECK(s.unsupported_line() == "Unsupported syscall: 293");

    QemuCrashScanner unterminated; // the emulator died mid-line
    unterminated.feed(test::k_qemu_unhandled);
    CHECK(unterminated.evidence() == test::k_qemu_unhandled);
    CHECK_FALSE(unterminated.guest_signal_line().has_value());

    QemuCrashScanner long_line; // a long line keeps its start, where the signature is
    long_line.feed(test::k_qemu_unhandled + std::string(100'000, 'x') + "\n");
    REQUIRE(long_line.evidence().has_value());
    CHECK(long_line.evidence()->size() == 1024);
    CHECK(long_line.evidence()->starts_with(test::k_qemu_unhandled));
}

TEST_CASE("qemu crash: an emulator killed by a crash signal, not by a stop, is evidence") {
    CHECK(qemu_killed_evidence(SIGSEGV).value_or("").find("signal 11 (SIGSEGV)") !=
          std::string::npos);
    CHECK(qemu_killed_evidence(SIGABRT).has_value());
    CHECK_FALSE(qemu_killed_evidence(SIGKILL).has_value());
    CHECK_FALSE(qemu_killed_evidence(SIGTERM).has_value());
}

namespace {

QemuCrashScanner scanned(const std::string& text) {
    QemuCrashScanner s;
    s.feed(text);
    return s;
}

} // namespace

TEST_CASE("qemu crash: a guest's own fatal signal is told apart from QEMU's crash") {
    using Kind = QemuVerdict::Kind;
    const auto guest_segv = scanned("before\n" + test::k_qemu_uncaught + "\n");
    // QEMU re-raises the guest's signal: the emulator dying of it is the guest's crash.
    auto v = judge_qemu_failure(guest_segv, SIGSEGV);
    CHECK(v.kind == Kind::guest_signal);
    CHECK(v.text.find("died of signal 11 (SIGSEGV)") != std::string::npos);
    CHECK(v.text.find(test::k_qemu_uncaught) != std::string::npos);
    CHECK(judge_qemu_failure(guest_segv, std::nullopt).kind == Kind::guest_signal);
    // Killed by another crash signal than the guest's, or without a guest line: QEMU's own.
    CHECK(judge_qemu_failure(guest_segv, SIGABRT).kind == Kind::emulator_crash);
    v = judge_qemu_failure(scanned("before\n"), SIGSEGV);
    CHECK(v.kind == Kind::emulator_crash);
    CHECK(v.text.find("QEMU itself crashed") != std::string::npos);
    CHECK(judge_qemu_failure(scanned("before\n"), SIGKILL).kind == Kind::none);
    // QEMU's own message wins over everything else.
    v = judge_qemu_failure(scanned(test::k_qemu_unhandled + "\n" + test::k_qemu_uncaught), SIGSEGV);
    CHECK(v.kind == Kind::emulator_crash);
    CHECK(v.text == test::k_qemu_unhandled);
    v = judge_qemu_failure(
        scanned("qemu: uncaught target signal 4 (Illegal instruction) - core dumped\n"), SIGILL);
    CHECK(v.kind == Kind::guest_signal);
    CHECK(v.text.find("CPU model") != std::string::npos);
    v = judge_qemu_failure(scanned("Unsupported syscall: 1000\n"), std::nullopt);
    CHECK(v.kind == Kind::unsupported);
    CHECK(v.text.find("Unsupported syscall: 1000") != std::string::npos);
    CHECK(judge_qemu_failure(scanned("FAILED\n"), std::nullopt).kind == Kind::none);
}

TEST_CASE("qemu crash: only failed emulated steps are classified; exec mode trusts the signal") {
    auto step = [](Emulation mode) {
        Step s;
        s.name = "t";
        s.arch = "aarch64";
        s.emulation = mode;
        return s;
    };
    auto killed = [](int sig) {
        StepResult r;
        r.status = StepStatus::failed;
        r.signal = sig;
        return r;
    };
    StepResult r = killed(SIGSEGV);
    detail::classify_emulator_crash(step(Emulation::exec), nullptr, r);
    CHECK(r.status == StepStatus::emulator_crash);
    CHECK(r.evidence.value_or("").find("QEMU itself crashed") != std::string::npos);
    r = killed(SIGSEGV); // in the sandbox the step's process is a shell or the guest: no verdict
    detail::classify_emulator_crash(step(Emulation::sandbox), nullptr, r);
    CHECK(r.status == StepStatus::failed);
    r = killed(SIGKILL);
    detail::classify_emulator_crash(step(Emulation::exec), nullptr, r);
    CHECK(r.status == StepStatus::failed);
    const auto guest = scanned(test::k_qemu_uncaught + "\n");
    r = killed(SIGSEGV);
    detail::classify_emulator_crash(step(Emulation::exec), &guest, r); // the guest's own crash
    CHECK(r.status == StepStatus::failed);
    CHECK_FALSE(r.evidence.has_value());
    CHECK(r.message.find("a guest program died of signal 11 (SIGSEGV)") != std::string::npos);
    const auto crash = scanned(test::k_qemu_unhandled + "\n");
    r = killed(SIGABRT);
    detail::classify_emulator_crash(step(Emulation::native), &crash, r); // native: never
    CHECK(r.status == StepStatus::failed);
    CHECK(r.message.empty());
    r.status = StepStatus::timed_out;
    detail::classify_emulator_crash(step(Emulation::sandbox), &crash, r); // a timeout stays one
    CHECK(r.status == StepStatus::timed_out);
}

TEST_CASE("runner: a failed emulated step with QEMU's message on stderr is an emulator crash") {
    FakeCommandRunner fake;
    const FakeOutcome crash{.status = ExitStatus::killed(SIGABRT),
                            .stderr_output = test::k_qemu_unhandled};
    fake.script("emu", crash);
    fake.script("native", crash);
    fake.script("guest",
                {.status = ExitStatus::killed(SIGSEGV), .stderr_output = test::k_qemu_uncaught});
    fake.script("passes", {.stderr_output = test::k_qemu_unhandled});
    fake.script("plain", {.status = ExitStatus::exited(1), .stderr_output = "FAILED: 1 test\n"});
    auto r = Runner(pipeline_of(R"([
        {"name": "emu", "argv": ["emu"], "arch": "aarch64", "emulation": "host"},
        {"name": "native", "argv": ["native"]},
        {"name": "guest", "argv": ["guest"], "arch": "aarch64", "emulation": "host"},
        {"name": "passes", "argv": ["passes"], "arch": "aarch64", "emulation": "host"},
        {"name": "plain", "argv": ["plain"], "arch": "aarch64", "emulation": "host"}])"),
                    runner_options("crash"))
                 .run(fake);
    REQUIRE(r.has_value());
    CHECK(status_of(*r, "emu") == StepStatus::emulator_crash);
    CHECK(r->find("emu")->evidence == test::k_qemu_unhandled);
    CHECK(r->find("emu")->signal == SIGABRT);
    CHECK(status_of(*r, "native") == StepStatus::failed);
    CHECK_FALSE(r->find("native")->evidence.has_value());
    CHECK(status_of(*r, "guest") == StepStatus::failed); // the guest's own SIGSEGV
    CHECK_FALSE(r->find("guest")->evidence.has_value());
    CHECK(r->find("guest")->message.find(test::k_qemu_uncaught) != std::string::npos);
    CHECK(status_of(*r, "passes") == StepStatus::passed);
    CHECK(status_of(*r, "plain") == StepStatus::failed);
    CHECK(r->find("plain")->message.empty());
    CHECK(Runner::exit_code(*r, false) == 1);
}

TEST_CASE("report: an emulator crash and its evidence in JSON, JUnit, Markdown and the table") {
    Report r;
    r.pipeline = "p";
    StepResult s;
    s.name = "t";
    s.status = StepStatus::emulator_crash;
    s.signal = SIGABRT;
    s.evidence = test::k_qemu_unhandled;
    r.steps.push_back(s);
    auto json = r.to_json();
    CHECK(json["steps"][0]["status"] == "emulator_crash");
    CHECK(json["steps"][0]["evidence"] == test::k_qemu_unhandled);
    auto back = Report::from_json(json, "r.json");
    REQUIRE(back.has_value());
    CHECK(*back == r);
    r.steps[0].evidence.reset(); // absent or null: none
    CHECK(r.to_json()["steps"][0]["evidence"].is_null());
    r.steps[0].evidence = test::k_qemu_unhandled;
    const std::string junit = to_junit(r);
    CHECK(junit.find("<failure type=\"emulator_crash\" message=\"emulator crash: " +
                     test::k_qemu_unhandled) != std::string::npos);
    CHECK(junit.find("failures=\"1\"") != std::string::npos);
    CHECK(to_markdown(r).find("`t` emulator crash: " + test::k_qemu_unhandled) !=
          std::string::npos);
    const std::string table = to_table(r);
    CHECK(table.find("emulator_crash") != std::string::npos);
    CHECK(table.find("emulator crash: t: " + test::k_qemu_unhandled) != std::string::npos);
    CHECK(annotations(r).front().find(test::k_qemu_unhandled) != std::string::npos);
}
