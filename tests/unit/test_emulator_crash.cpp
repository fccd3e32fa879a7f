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
    CHECK(is_qemu_crash_line(test::k_qemu_uncaught));
    CHECK(is_qemu_crash_line("qemu: unhandled CPU exception 0x8 - aborting"));
    CHECK(is_qemu_crash_line("qemu: fatal: Lockup: can't escalate 3 to HardFault"));
    CHECK(is_qemu_crash_line("QEMU internal SIGSEGV {code=MAPERR, addr=0x20}"));
    CHECK(
        is_qemu_crash_line("qemu:handle_cpu_signal received signal outside vCPU context @ pc=0x1"));
    CHECK(is_qemu_crash_line(
        "qemu-aarch64-static: ../../tcg/tcg.c:4120: tcg_reg_alloc_op: Assertion `ok' failed."));
    CHECK_FALSE(is_qemu_crash_line("Segmentation fault (core dumped)"));
    CHECK_FALSE(is_qemu_crash_line("qemu: could not open gdbserver on 1234"));
    CHECK_FALSE(is_qemu_crash_line("test.c:12: main: Assertion `x == 1' failed."));
}

TEST_CASE("qemu crash: the scanner finds the first matching line across chunks") {
    QemuCrashScanner s;
    s.feed("some test output\nqemu: uncaught tar");
    CHECK_FALSE(s.evidence().has_value());
    s.feed("get signal 11 (Segmentation fault) - core dumped\r\nqemu: fatal: later\n");
    REQUIRE(s.evidence().has_value());
    CHECK(*s.evidence() == test::k_qemu_uncaught); // the first one, without its line end

    QemuCrashScanner unterminated; // the emulator died mid-line
    unterminated.feed("qemu: unhandled CPU exception 0x8 - aborting");
    CHECK(unterminated.evidence() == "qemu: unhandled CPU exception 0x8 - aborting");

    QemuCrashScanner long_line; // a long line keeps its start, where the signature is
    long_line.feed(test::k_qemu_uncaught + std::string(100'000, 'x') + "\n");
    REQUIRE(long_line.evidence().has_value());
    CHECK(long_line.evidence()->size() == 1024);
    CHECK(long_line.evidence()->starts_with(test::k_qemu_uncaught));
}

TEST_CASE("qemu crash: an emulator killed by a crash signal, not by a stop, is evidence") {
    CHECK(qemu_killed_evidence(SIGSEGV).value_or("").find("signal 11 (SIGSEGV)") !=
          std::string::npos);
    CHECK(qemu_killed_evidence(SIGABRT).has_value());
    CHECK_FALSE(qemu_killed_evidence(SIGKILL).has_value());
    CHECK_FALSE(qemu_killed_evidence(SIGTERM).has_value());
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
    QemuCrashScanner seen;
    seen.feed(test::k_qemu_uncaught + "\n");
    r = killed(SIGSEGV);
    detail::classify_emulator_crash(step(Emulation::native), &seen, r); // native: never
    CHECK(r.status == StepStatus::failed);
    r.status = StepStatus::timed_out;
    detail::classify_emulator_crash(step(Emulation::sandbox), &seen, r); // a timeout stays one
    CHECK(r.status == StepStatus::timed_out);
}

TEST_CASE("runner: a failed emulated step with QEMU's message on stderr is an emulator crash") {
    FakeCommandRunner fake;
    const FakeOutcome crash{.status = ExitStatus::killed(SIGSEGV),
                            .stderr_output = test::k_qemu_uncaught};
    fake.script("emu", crash);
    fake.script("native", crash);
    fake.script("passes", {.stderr_output = test::k_qemu_uncaught});
    fake.script("plain", {.status = ExitStatus::exited(1), .stderr_output = "FAILED: 1 test\n"});
    auto r = Runner(pipeline_of(R"([
        {"name": "emu", "argv": ["emu"], "arch": "aarch64", "emulation": "host"},
        {"name": "native", "argv": ["native"]},
        {"name": "passes", "argv": ["passes"], "arch": "aarch64", "emulation": "host"},
        {"name": "plain", "argv": ["plain"], "arch": "aarch64", "emulation": "host"}])"),
                    runner_options("crash"))
                 .run(fake);
    REQUIRE(r.has_value());
    CHECK(status_of(*r, "emu") == StepStatus::emulator_crash);
    CHECK(r->find("emu")->evidence == test::k_qemu_uncaught);
    CHECK(r->find("emu")->signal == SIGSEGV);
    CHECK(status_of(*r, "native") == StepStatus::failed);
    CHECK_FALSE(r->find("native")->evidence.has_value());
    CHECK(status_of(*r, "passes") == StepStatus::passed);
    CHECK(status_of(*r, "plain") == StepStatus::failed);
    CHECK(Runner::exit_code(*r, false) == 1);
}

TEST_CASE("report: an emulator crash and its evidence in JSON, JUnit, Markdown and the table") {
    Report r;
    r.pipeline = "p";
    StepResult s;
    s.name = "t";
    s.status = StepStatus::emulator_crash;
    s.signal = SIGSEGV;
    s.evidence = test::k_qemu_uncaught;
    r.steps.push_back(s);
    auto json = r.to_json();
    CHECK(json["steps"][0]["status"] == "emulator_crash");
    CHECK(json["steps"][0]["evidence"] == test::k_qemu_uncaught);
    auto back = Report::from_json(json, "r.json");
    REQUIRE(back.has_value());
    CHECK(*back == r);
    r.steps[0].evidence.reset(); // absent or null: none
    CHECK(r.to_json()["steps"][0]["evidence"].is_null());
    r.steps[0].evidence = test::k_qemu_uncaught;
    const std::string junit = to_junit(r);
    CHECK(junit.find("<failure type=\"emulator_crash\" message=\"emulator crash: " +
                     test::k_qemu_uncaught) != std::string::npos);
    CHECK(junit.find("failures=\"1\"") != std::string::npos);
    CHECK(to_markdown(r).find("`t` emulator crash: " + test::k_qemu_uncaught) != std::string::npos);
    const std::string table = to_table(r);
    CHECK(table.find("emulator_crash") != std::string::npos);
    CHECK(table.find("emulator crash: t: " + test::k_qemu_uncaught) != std::string::npos);
    CHECK(annotations(r).front().find(test::k_qemu_uncaught) != std::string::npos);
}
