// The scheduler's cost grows linearly in steps + needs (issues 14 and 15): a 5,000-step chain whose
// steps need 200 earlier steps each, scheduled on the fake CommandRunner.
#include "fake_command_runner.hpp"

#include <emurun/runner.hpp>

#include <doctest/doctest.h>

#include <algorithm>
#include <ctime>
#include <string>

using namespace emurun;
using test::FakeCommandRunner;
using test::runner_options;

namespace {

// Step i needs step i-1 (a chain: one step at a time, every event wakes one step) and up to
// 199 more earlier steps spread over 0..i-2.
Pipeline wide_chain(std::size_t steps, std::size_t needs) {
    Pipeline p;
    p.name = "scale";
    p.steps.reserve(steps);
    for (std::size_t i = 0; i < steps; ++i) {
        Step s;
        s.name = "s" + std::to_string(i);
        s.argv = {s.name};
        if (i > 0) {
            s.needs.push_back("s" + std::to_string(i - 1));
        }
        std::size_t others = std::min(needs - 1, i > 1 ? i - 1 : 0);
        for (std::size_t k = 0; k < others; ++k) {
            s.needs.push_back("s" + std::to_string(k * (i - 1) / others));
        }
        p.steps.push_back(std::move(s));
    }
    return p;
}

double cpu_seconds() {
    timespec ts{};
    ::clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

struct Cost {
    double seconds;  ///< CPU seconds of the run
    double per_item; ///< the same per step + need
};

// CPU cost of one run (the pipeline built beforehand), checking that every step passed.
Cost schedule(std::size_t steps, std::size_t needs) {
    Pipeline p = wide_chain(steps, needs);
    std::size_t size = steps;
    for (const auto& s : p.steps) {
        size += s.needs.size();
    }
    Runner runner(std::move(p), runner_options("scale", 4));
    FakeCommandRunner fake;
    double t0 = cpu_seconds();
    auto r = runner.run(fake);
    double spent = cpu_seconds() - t0;
    REQUIRE(r.has_value());
    CHECK(r->steps.size() == steps);
    CHECK(Runner::exit_code(*r, false) == 0);
    CHECK(fake.started().size() == steps);
    CHECK(fake.max_running() == 1); // a chain: nothing runs beside its predecessor
    MESSAGE(steps << " steps, " << size - steps << " needs: " << spent << " s CPU");
    return Cost{spent, spent / static_cast<double>(size)};
}

} // namespace

TEST_CASE("runner: scheduling 5,000 steps x 200 needs is linear and fast") {
    // The best of three small runs, so that one slow sample does not inflate the ratio.
    double small = std::min(
        {schedule(500, 200).per_item, schedule(500, 200).per_item, schedule(500, 200).per_item});
    Cost large = schedule(5000, 200);
    // ~1M needs: the quadratic scheduler took minutes here; linear is well under a second.
    CHECK(large.seconds < 5.0);
    // Cost per step + need stays flat (a quadratic one grows ~10x from 500 to 5,000 steps);
    // generous for caches and a loaded machine.
    CHECK(large.per_item / std::max(small, 1e-12) < 4.0);
}
