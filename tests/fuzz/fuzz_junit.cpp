// Fuzz target for the JUnit reader (the files a step's "junit" names): no input may crash it or
// run away; what it reads must survive the report (JSON round trip, every format), and emurun's
// own JUnit output of it must read back with each test as a test case.
#include <emurun/report.hpp>

#include <nlohmann/json.hpp>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

namespace {

[[noreturn]] void broken(const char* promise) {
    std::fprintf(stderr, "fuzz_junit: broken promise: %s\n", promise);
    std::abort();
}

emurun::Report report_of(std::vector<emurun::TestResult> tests) {
    emurun::Report r;
    r.pipeline = "fuzz";
    emurun::StepResult s;
    s.name = "unit";
    s.status = emurun::StepStatus::passed;
    s.tests = std::move(tests);
    r.steps.push_back(std::move(s));
    return r;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    std::string_view text(reinterpret_cast<const char*>(data), size);
    auto tests = emurun::parse_junit(text, "fuzz.xml");
    if (!tests) {
        return 0;
    }
    const std::size_t n = tests->size();
    emurun::Report r = report_of(std::move(*tests));
    emurun::flag_step(r.steps[0], {}, &r, nullptr); // each test is its own baseline
    auto again = emurun::Report::from_json(r.to_json(), "again.json");
    if (!again || !(*again == r)) {
        broken("a report with the file's tests does not round-trip");
    }
    (void)emurun::to_markdown(r);
    (void)emurun::to_table(r);
    auto back = emurun::parse_junit(emurun::to_junit(r), "out.xml");
    // A name of control characters only is dropped from XML: then it has no name to read.
    if (back ? back->size() != n + 1
             : back.error().why.find("without a name") == std::string::npos) {
        broken("emurun's JUnit output does not read back with every test as a test case");
    }
    return 0;
}
