// Honest skips. A test case whose precondition is probed at run time (an emulator, a cross
// sysroot, a kernel feature) is decorated `* test::may_skip()` and ends with EMURUN_SKIP(why)
// when the probe fails. Each such case is its own ctest (tests/CMakeLists.txt: "unit.<name>",
// SKIP_RETURN_CODE 125) and a run in which every case skipped exits 125, so ctest reports
// "Skipped" with the reason in the output; the `unit` ctest runs every other case. A direct run
// of the whole binary lists the skipped cases after doctest's summary (whose "passed" includes
// them: doctest has no run-time skip).
#pragma once

#include <doctest/doctest.h>

#include <sstream>
#include <string>

namespace emurun::test {

/// The doctest suite of cases that may skip (what tests/CMakeLists.txt selects).
inline constexpr const char* k_may_skip_suite = "may_skip";

/// Decorator for a case that may skip: `TEST_CASE("x: y" * test::may_skip()) { ... }`.
inline doctest::test_suite may_skip() {
    return doctest::test_suite(k_may_skip_suite);
}

/// The doctest suite of cases of the `stress` tier (CONTRIBUTING.md): sizes rather than behaviour
/// (gigabytes through pipes), each its own ctest "stress.<name>", left out of `unit`.
inline constexpr const char* k_stress_suite = "stress";

/// Decorator for a stress case: `TEST_CASE("x: 1 GiB ..." * test::stress()) { ... }`.
inline doctest::test_suite stress() {
    return doctest::test_suite(k_stress_suite);
}

/// Records that the running case skipped and prints why. Fails the case instead when it is not
/// decorated with may_skip(): its skip would be counted as a pass. Use EMURUN_SKIP.
void mark_skipped(const std::string& why);

/// After the run: lists the skipped cases and returns the exit code, 125 when every case that
/// ran skipped and none failed, else `doctest_rc`.
int finish_skips(int doctest_rc);

} // namespace emurun::test

/// End the running test case as skipped: EMURUN_SKIP("no qemu-aarch64: " << error). Returns
/// from the test case, so use it in the TEST_CASE body (not in a helper function).
#define EMURUN_SKIP(why)                                                                           \
    do {                                                                                           \
        std::ostringstream emurun_skip_why_;                                                       \
        emurun_skip_why_ << why;                                                                   \
        ::emurun::test::mark_skipped(emurun_skip_why_.str());                                      \
        return;                                                                                    \
    } while (false)
