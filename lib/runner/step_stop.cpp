// A step that was stopped: why (its timeout or idle timeout) and what its process tree looked
// like just before, in the report and at the end of its log; the limits it runs with.
#include "runner/runner_internal.hpp"
#include "util/file.hpp"

#include <unistd.h>

namespace emurun::detail {

ResourceLimits spawn_limits(const StepLimits& limits) {
    ResourceLimits out{limits.pids, limits.memory_bytes, limits.cpus};
    if (!out.pids && ::geteuid() == 0) {
        out.pids = k_root_default_pids;
    }
    return out;
}

void note_timeout(const Step& step, const ChildResult& c, StepResult& result) {
    result.status = StepStatus::timed_out;
    result.timeout_reason = c.idle ? "idle" : "timeout";
    if (c.idle && step.idle_timeout) {
        result.message = "no output for " + format_duration(*step.idle_timeout) +
                         " (idle_timeout, before the multiplier): process tree stopped";
    } else {
        result.message = "timed out, process group stopped";
    }
}

void record_processes(const std::vector<ProcessSnapshot>& snapshot, StepResult& result) {
    if (snapshot.empty()) {
        return;
    }
    std::string table = "\nemurun: the step's processes when it was stopped:\n"
                        "    PID    PPID S  WCHAN                     CPU COMMAND\n";
    for (const auto& p : snapshot) {
        ProcessRecord record{p.pid, p.ppid, std::string(1, p.state), p.wchan, p.cpu, p.cmdline};
        table += record.describe() + "\n";
        result.processes.push_back(std::move(record));
    }
    if (auto appended = util::append_file(result.log, table); !appended) {
        result.message += "; its process tree is in the report only: " + appended.error().message();
    }
}

} // namespace emurun::detail
