// A step's own test results: the JUnit XML files its `junit` names, read after it ended, their
// test cases into its report; what could not be read is said in its message and log, and a
// pattern that gave no results flags the step junit_missing (or fails it, or neither: the
// step's junit_missing).
#include "runner/runner_internal.hpp"
#include "util/file.hpp"

#include <glob.h>

#include <chrono>
#include <string>
#include <vector>

namespace emurun::detail {
namespace {

namespace fs = std::filesystem;

// A file's time may trail the clock a step's start was read from (file systems stamp with a
// coarse clock, NFS servers with their own): only a file older than this is someone else's.
constexpr auto k_stale_margin = std::chrono::seconds(1);
// A file dated more than this after the step ended was not written by it (a clock set ahead,
// `touch -d tomorrow`), though it would pass the "older than the step" check.
constexpr auto k_future_margin = std::chrono::seconds(60);
// The notes a step's message lists (the log has them all), then "… N more".
constexpr std::size_t k_max_message_notes = 10;

// `dir` as a glob(3) pattern that matches itself: its metacharacters escaped.
std::string glob_escaped(const std::string& dir) {
    std::string out;
    for (char c : dir) {
        if (c == '*' || c == '?' || c == '[' || c == ']' || c == '\\') {
            out += '\\';
        }
        out += c;
    }
    return out;
}

// The files `pattern` matches, relative to `cwd`, sorted (glob's order); none when none match.
std::vector<fs::path> matches(const fs::path& cwd, const std::string& pattern) {
    std::string full =
        fs::path(pattern).is_absolute() ? pattern : glob_escaped(cwd.string()) + "/" + pattern;
    glob_t g{};
    std::vector<fs::path> out;
    if (::glob(full.c_str(), 0, nullptr, &g) == 0) {
        for (std::size_t k = 0; k < g.gl_pathc; ++k) {
            out.emplace_back(g.gl_pathv[k]);
        }
    }
    ::globfree(&g);
    return out;
}

void add_note(std::vector<std::string>& notes, std::string note) {
    notes.push_back("junit: " + std::move(note));
}

// The test cases of one file into `into` (up to k_junit_max_tests), or a note why not (false).
bool read_one(const fs::path& file, fs::file_time_type started, std::vector<TestResult>& into,
              std::vector<std::string>& notes, std::size_t& dropped) {
    std::error_code ec;
    auto mtime = fs::last_write_time(file, ec);
    if (!ec && mtime + k_stale_margin < started) {
        add_note(notes, file.string() + " is older than the step (left from an earlier run?): "
                                        "not read");
        return false;
    }
    if (!ec && mtime > fs::file_time_type::clock::now() + k_future_margin) {
        add_note(notes, file.string() + " is dated in the future, so not written by this step "
                                        "(a clock set ahead, or touch -d?): not read");
        return false;
    }
    auto tests = read_junit(file);
    if (!tests) {
        add_note(notes, "not read: " + tests.error().message());
        return false;
    }
    for (auto& t : *tests) {
        if (into.size() < k_junit_max_tests) {
            into.push_back(std::move(t));
        } else {
            ++dropped;
        }
    }
    return true;
}

// The patterns of `junit` that gave no results, as the step's junit_missing says: a flag, and
// for "fail" a step that passed failed (as a step whose log is incomplete).
void judge_missing(const Step& step, const std::vector<std::string>& missing, StepResult& result) {
    if (missing.empty() || step.junit_missing == JunitMissing::ignore) {
        return;
    }
    std::string patterns;
    for (const auto& p : missing) {
        patterns += (patterns.empty() ? "" : ", ") + p;
    }
    result.flags.push_back(
        {"junit_missing", "no test results from " + patterns + " (the junit notes say why)"});
    if (step.junit_missing == JunitMissing::fail && result.status == StepStatus::passed) {
        result.status = StepStatus::failed;
        result.message += (result.message.empty() ? "" : "; ") +
                          std::string("exited 0, but gave no test results from ") + patterns +
                          " (\"junit_missing\": \"fail\")";
    }
}

} // namespace

void collect_tests(const Step& step, fs::file_time_type started, StepResult& result) {
    std::vector<std::string> notes;
    std::size_t dropped = 0;
    std::vector<std::string> missing;
    for (const auto& pattern : step.junit) {
        auto files = matches(step.cwd, pattern);
        if (files.empty()) {
            add_note(notes, "no file matched " + pattern + " (in " + step.cwd.string() + ")");
        }
        bool read = false;
        for (const auto& file : files) {
            read = read_one(file, started, result.tests, notes, dropped) || read;
        }
        if (!read) {
            missing.push_back(pattern);
        }
    }
    if (dropped > 0) {
        add_note(notes, std::to_string(dropped) + " more test cases left out (a step keeps " +
                            std::to_string(k_junit_max_tests) + ")");
    }
    std::string text;
    for (std::size_t i = 0; i < notes.size(); ++i) {
        if (i < k_max_message_notes) {
            result.message += (result.message.empty() ? "" : "; ") + notes[i];
        }
        text += "emurun: " + notes[i] + "\n";
    }
    if (notes.size() > k_max_message_notes) {
        result.message += "; … " + std::to_string(notes.size() - k_max_message_notes) +
                          " more junit notes (in the step's log)";
    }
    if (!text.empty() && !result.log.empty()) {
        (void)util::append_file(result.log, "\n" + text); // the report says it too
    }
    judge_missing(step, missing, result);
}

} // namespace emurun::detail
