// Durations, enum names, scheduling priority and sharding. Loading is in pipeline_load.cpp.
#include <emurun/pipeline.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <numeric>

namespace emurun {
namespace {

constexpr std::string_view k_duration_example = "expected a duration like \"90s\"";

// Milliseconds per unit, or 0 for an unknown unit.
double unit_ms(std::string_view unit) {
    if (unit == "ms") {
        return 1;
    }
    if (unit == "s") {
        return 1e3;
    }
    if (unit == "m") {
        return 60e3;
    }
    if (unit == "h") {
        return 3600e3;
    }
    if (unit == "d") {
        return 86400e3;
    }
    return 0;
}

} // namespace

Result<Duration> parse_duration(std::string_view text) {
    auto bad = [&] {
        return fail("duration",
                    std::string(k_duration_example) + ", got \"" + std::string(text) + "\"",
                    "units: ms, s, m, h, d, largest first, each at most once, as in \"1h30m\"");
    };
    if (text.empty()) {
        return bad();
    }
    double total = 0;
    double last_unit = 0; // the previous unit's size: each next one must be smaller
    std::size_t i = 0;
    while (i < text.size()) {
        std::size_t start = i;
        while (i < text.size() &&
               (std::isdigit(static_cast<unsigned char>(text[i])) || text[i] == '.')) {
            ++i;
        }
        double number = 0;
        auto [ptr, ec] = std::from_chars(text.data() + start, text.data() + i, number);
        if (start == i || ec != std::errc{} || ptr != text.data() + i) {
            return bad();
        }
        std::size_t unit_start = i;
        while (i < text.size() && std::isalpha(static_cast<unsigned char>(text[i]))) {
            ++i;
        }
        double ms = unit_ms(text.substr(unit_start, i - unit_start));
        if (ms == 0 || (last_unit != 0 && ms >= last_unit)) {
            return bad();
        }
        last_unit = ms;
        total += number * ms;
    }
    if (!std::isfinite(total) || total > 1e15) {
        return bad();
    }
    return Duration(static_cast<Duration::rep>(std::llround(total)));
}

std::string format_duration(Duration d) {
    return format_seconds(static_cast<double>(d.count()) / 1e3);
}

std::string format_seconds(double seconds) {
    char buf[64];
    if (!std::isfinite(seconds) || seconds >= 1e15) {
        // Only a hostile report holds such a time; casting it to an integer is undefined.
        std::snprintf(buf, sizeof buf, "%.3gs", seconds);
    } else if (seconds < 1) {
        std::snprintf(buf, sizeof buf, "%.0fms", seconds * 1e3);
    } else if (seconds < 60) {
        std::snprintf(buf, sizeof buf, "%.1fs", seconds);
    } else if (seconds < 3600) {
        auto s = static_cast<long long>(seconds);
        std::snprintf(buf, sizeof buf, "%lldm%02llds", s / 60, s % 60);
    } else {
        auto m = static_cast<long long>(seconds / 60);
        std::snprintf(buf, sizeof buf, "%lldh%02lldm", m / 60, m % 60);
    }
    return buf;
}

std::string_view to_string(StepKind kind) {
    switch (kind) {
    case StepKind::configure:
        return "configure";
    case StepKind::build:
        return "build";
    case StepKind::test:
        return "test";
    case StepKind::other:
        break;
    }
    return "other";
}

std::optional<StepKind> step_kind_from(std::string_view text) {
    for (auto k : {StepKind::configure, StepKind::build, StepKind::test, StepKind::other}) {
        if (to_string(k) == text) {
            return k;
        }
    }
    return std::nullopt;
}

std::string_view to_string(JunitMissing mode) {
    switch (mode) {
    case JunitMissing::fail:
        return "fail";
    case JunitMissing::ignore:
        return "ignore";
    case JunitMissing::flag:
        break;
    }
    return "flag";
}

const Step* Pipeline::find(std::string_view step_name) const {
    auto it = std::ranges::find(steps, step_name, &Step::name);
    return it == steps.end() ? nullptr : &*it;
}

std::vector<std::size_t> priority_order(const Pipeline& pipeline, const History& history) {
    std::vector<std::size_t> order(pipeline.steps.size());
    std::iota(order.begin(), order.end(), std::size_t{0});
    auto expected = [&](std::size_t i) {
        auto it = history.find(pipeline.steps[i].name);
        return it == history.end() ? 0.0 : it->second;
    };
    std::ranges::stable_sort(
        order, [&](std::size_t a, std::size_t b) { return expected(a) > expected(b); });
    return order;
}

Result<Shard> parse_shard(std::string_view text) {
    Shard s;
    auto slash = text.find('/');
    auto bad = [&] {
        return fail("shard \"" + std::string(text) + "\"", "expected K/N with 1 <= K <= N",
                    "e.g. 2/4 runs the second of four shards");
    };
    if (slash == std::string_view::npos) {
        return bad();
    }
    auto k = text.substr(0, slash);
    auto n = text.substr(slash + 1);
    auto rk = std::from_chars(k.data(), k.data() + k.size(), s.index);
    auto rn = std::from_chars(n.data(), n.data() + n.size(), s.count);
    if (rk.ec != std::errc{} || rk.ptr != k.data() + k.size() || rn.ec != std::errc{} ||
        rn.ptr != n.data() + n.size() || s.index < 1 || s.count < 1 || s.index > s.count) {
        return bad();
    }
    return s;
}

} // namespace emurun
