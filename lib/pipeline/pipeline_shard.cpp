// Sharding test steps over CI jobs: longest-processing-time greedy, deterministic.
#include <emurun/json.hpp>
#include <emurun/pipeline.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <numeric>
#include <set>
#include <string_view>
#include <unordered_map>

namespace emurun {
namespace {

// Test steps linked by `needs` must run in the same job, so they form one unit.
struct Unit {
    std::vector<std::size_t> steps; // indices into pipeline.steps
    std::string key;                // smallest step name: the deterministic tie-break
    double weight = 0;
};

// Step names to indices, built once (Pipeline::find is a linear scan).
std::unordered_map<std::string_view, std::size_t> name_index(const Pipeline& pipeline) {
    std::unordered_map<std::string_view, std::size_t> index;
    index.reserve(pipeline.steps.size());
    for (std::size_t i = 0; i < pipeline.steps.size(); ++i) {
        index.emplace(pipeline.steps[i].name, i);
    }
    return index;
}

std::size_t find_root(std::vector<std::size_t>& parent, std::size_t i) {
    while (parent[i] != i) {
        parent[i] = parent[parent[i]];
        i = parent[i];
    }
    return i;
}

double default_weight(const Pipeline& pipeline, const History& history) {
    double sum = 0;
    int known = 0;
    for (const auto& s : pipeline.steps) {
        if (auto it = history.find(s.name); s.kind == StepKind::test && it != history.end()) {
            sum += it->second;
            ++known;
        }
    }
    return known > 0 ? sum / known : 1.0;
}

std::vector<Unit> test_units(const Pipeline& pipeline, const History& history) {
    const auto& steps = pipeline.steps;
    std::vector<std::size_t> parent(steps.size());
    std::iota(parent.begin(), parent.end(), std::size_t{0});
    const auto index = name_index(pipeline);
    for (std::size_t i = 0; i < steps.size(); ++i) {
        for (const auto& need : steps[i].needs) {
            auto it = index.find(need);
            if (steps[i].kind == StepKind::test && it != index.end() &&
                steps[it->second].kind == StepKind::test) {
                parent[find_root(parent, i)] = find_root(parent, it->second);
            }
        }
    }
    double fallback = default_weight(pipeline, history);
    std::map<std::size_t, Unit> by_root;
    for (std::size_t i = 0; i < steps.size(); ++i) {
        if (steps[i].kind != StepKind::test) {
            continue;
        }
        Unit& u = by_root[find_root(parent, i)];
        u.steps.push_back(i);
        if (u.key.empty() || steps[i].name < u.key) {
            u.key = steps[i].name;
        }
        auto it = history.find(steps[i].name);
        u.weight += it != history.end() ? it->second : fallback;
    }
    std::vector<Unit> units;
    for (auto& [root, u] : by_root) {
        units.push_back(std::move(u));
    }
    std::ranges::sort(units, [](const Unit& a, const Unit& b) {
        return a.weight != b.weight ? a.weight > b.weight : a.key < b.key;
    });
    return units;
}

} // namespace

ShardPlan plan_shards(const Pipeline& pipeline, int count, const History& history) {
    ShardPlan plan;
    auto n = static_cast<std::size_t>(std::max(count, 1));
    plan.tests.resize(n);
    plan.load.assign(n, 0.0);
    std::vector<std::set<std::size_t>> members(n);
    for (const auto& unit : test_units(pipeline, history)) {
        // The least-loaded shard; the lowest index on a tie.
        auto target =
            static_cast<std::size_t>(std::ranges::min_element(plan.load) - plan.load.begin());
        plan.load[target] += unit.weight;
        members[target].insert(unit.steps.begin(), unit.steps.end());
    }
    for (std::size_t k = 0; k < n; ++k) {
        for (auto i : members[k]) { // std::set: file order
            plan.tests[k].push_back(pipeline.steps[i].name);
        }
    }
    return plan;
}

namespace {

// The pipeline without the steps `drop` selects and whatever needs one of those, transitively.
Pipeline drop_with_dependents(const Pipeline& pipeline, const std::vector<bool>& drop) {
    const auto index = name_index(pipeline);
    const auto& steps = pipeline.steps;
    std::vector<std::vector<std::size_t>> dependents(steps.size());
    for (std::size_t i = 0; i < steps.size(); ++i) {
        for (const auto& need : steps[i].needs) {
            if (auto it = index.find(need); it != index.end()) {
                dependents[it->second].push_back(i);
            }
        }
    }
    std::vector<bool> dropped = drop;
    std::vector<std::size_t> work;
    for (std::size_t i = 0; i < steps.size(); ++i) {
        if (dropped[i]) {
            work.push_back(i);
        }
    }
    while (!work.empty()) {
        const std::size_t j = work.back();
        work.pop_back();
        for (std::size_t d : dependents[j]) {
            if (!dropped[d]) {
                dropped[d] = true;
                work.push_back(d);
            }
        }
    }
    Pipeline out = pipeline;
    out.steps.clear();
    for (std::size_t i = 0; i < steps.size(); ++i) {
        if (!dropped[i]) {
            out.steps.push_back(steps[i]);
        }
    }
    return out;
}

} // namespace

Pipeline select_shard(const Pipeline& pipeline, Shard shard, const History& history) {
    ShardPlan plan = plan_shards(pipeline, shard.count, history);
    const auto& tests = plan.tests[static_cast<std::size_t>(shard.index - 1)];
    const std::set<std::string_view> mine(tests.begin(), tests.end());
    // Other shards' tests go, and so does whatever needs one: a non-test step that needs a test
    // step of another shard runs in that shard only.
    std::vector<bool> drop(pipeline.steps.size(), false);
    for (std::size_t i = 0; i < pipeline.steps.size(); ++i) {
        const Step& s = pipeline.steps[i];
        drop[i] = s.kind == StepKind::test && !mine.contains(s.name);
    }
    return drop_with_dependents(pipeline, drop);
}

Pipeline select_build(const Pipeline& pipeline) {
    std::vector<bool> drop(pipeline.steps.size(), false);
    for (std::size_t i = 0; i < pipeline.steps.size(); ++i) {
        drop[i] = pipeline.steps[i].kind == StepKind::test;
    }
    return drop_with_dependents(pipeline, drop);
}

Result<std::string> ci_matrix_json(const Pipeline& pipeline, int count, const History& history) {
    auto tests = std::ranges::count(pipeline.steps, StepKind::test, &Step::kind);
    const std::string what = "matrix of " + std::to_string(count) + " shards";
    if (count < 1 || count > std::max<std::ptrdiff_t>(tests, 1)) {
        return fail(what,
                    "expected 1 to " + std::to_string(std::max<std::ptrdiff_t>(tests, 1)) +
                        " shards (the pipeline has " + std::to_string(tests) + " test steps)",
                    "every shard must get a test step");
    }
    ShardPlan plan = plan_shards(pipeline, count, history);
    auto filled = std::ranges::count_if(plan.tests, [](const auto& t) { return !t.empty(); });
    if (count > 1 && filled < count) {
        return fail(what,
                    "only " + std::to_string(filled) +
                        " would get test steps (test steps linked by needs stay together)",
                    "use at most " + std::to_string(filled) + " shards");
    }
    nlohmann::json include = nlohmann::json::array();
    for (std::size_t k = 0; k < plan.tests.size(); ++k) {
        include.push_back({{"shard", std::to_string(k + 1) + "/" + std::to_string(count)},
                           {"index", k + 1},
                           {"count", count},
                           {"steps", plan.tests[k]},
                           {"expected_seconds", plan.load[k]}});
    }
    return json_text(nlohmann::json{{"include", include}}, -1);
}

} // namespace emurun
