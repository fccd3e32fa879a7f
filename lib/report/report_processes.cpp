// A stopped step's process tree: its JSON form and the line each process gets in the log.
#include "report/report_processes.hpp"

#include <cstdio>
#include <limits>

namespace emurun {

std::string ProcessRecord::describe() const {
    char head[80];
    std::snprintf(head, sizeof head, "%7d %7d %-2s %-20.20s %8.2f ", pid, ppid, state.c_str(),
                  wchan.empty() ? "-" : wchan.c_str(), cpu);
    return head + cmdline;
}

namespace detail {

util::Json processes_json(const std::vector<ProcessRecord>& processes) {
    util::Json out = util::Json::array();
    for (const auto& p : processes) {
        out.push_back({{"pid", p.pid},
                       {"ppid", p.ppid},
                       {"state", p.state},
                       {"wchan", p.wchan},
                       {"cpu", p.cpu},
                       {"cmdline", p.cmdline}});
    }
    return out;
}

namespace {

Result<ProcessRecord> process_from(const util::Json& j, const util::Place& at) {
    if (!j.is_object()) {
        return at.fail("expected an object, got " + util::describe(j));
    }
    ProcessRecord p;
    constexpr std::int64_t k_max_pid = std::numeric_limits<int>::max();
    auto pid =
        EMURUN_TRY(util::get_integer(j.value("pid", util::Json()), at.key("pid"), 0, k_max_pid));
    auto ppid =
        EMURUN_TRY(util::get_integer(j.value("ppid", util::Json(0)), at.key("ppid"), 0, k_max_pid));
    p.pid = static_cast<int>(pid);
    p.ppid = static_cast<int>(ppid);
    for (auto [key, into] : {std::pair{"state", &p.state}, std::pair{"wchan", &p.wchan},
                             std::pair{"cmdline", &p.cmdline}}) {
        auto v = EMURUN_TRY(util::get_string(j.value(key, util::Json("")), at.key(key)));
        *into = v;
    }
    auto cpu = EMURUN_TRY(util::get_number(j.value("cpu", util::Json(0)), at.key("cpu")));
    p.cpu = cpu;
    return p;
}

} // namespace

Result<std::vector<ProcessRecord>> processes_from(const util::Json& step, const util::Place& at) {
    std::vector<ProcessRecord> out;
    if (!step.contains("processes")) {
        return out;
    }
    const util::Json& list = step["processes"];
    if (!list.is_array()) {
        return at.key("processes").fail("expected an array, got " + util::describe(list));
    }
    for (std::size_t i = 0; i < list.size(); ++i) {
        auto p = EMURUN_TRY(process_from(list[i], at.key("processes").index(i)));
        out.push_back(std::move(p));
    }
    return out;
}

} // namespace detail
} // namespace emurun
