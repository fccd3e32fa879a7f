// A supervised child's resource limits. Why cgroups: a step's fork bomb or memory leak must
// not take the machine down, and rlimits cannot say that for a tree (RLIMIT_NPROC counts all
// processes of the user and binds no root; RLIMIT_AS is one process's virtual size). Each
// child with limits gets a cgroup of its own below "emurun-<pid>" in this process's cgroup:
// in cgroup v2 where the parent cgroup can enable the controller for its children (pids
// always can: a threaded controller; memory and cpu only where this process's cgroup holds
// no processes, or is the root), else for pids the cgroup v1 pids hierarchy of a hybrid
// layout. The command joins its cgroups itself before its exec (the slot's child writes "0"
// into each cgroup.procs opened here), so everything it starts is counted. What could not be
// enforced falls back to the rlimit, if any, and is said in the result.
#include "process/process_limits.hpp"

#include "util/file.hpp"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <optional>
#include <sstream>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>

namespace emurun::detail {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> words(const std::string& text) {
    std::istringstream in(text);
    std::vector<std::string> out;
    for (std::string w; in >> w;) {
        out.push_back(w);
    }
    return out;
}

/// The mount point of cgroup v2 and of the v1 hierarchy holding `controller`, from
/// /proc/self/mounts.
struct Mounts {
    std::optional<fs::path> v2;
    std::optional<fs::path> v1_pids;
};

Mounts cgroup_mounts() {
    Mounts m;
    auto text = util::read_file("/proc/self/mounts", 1 << 20);
    std::istringstream in(text ? *text : "");
    for (std::string line; std::getline(in, line);) {
        auto w = words(line);
        if (w.size() < 4) {
            continue;
        }
        if (w[2] == "cgroup2" && !m.v2) {
            m.v2 = w[1];
        } else if (w[2] == "cgroup" && ("," + w[3] + ",").find(",pids,") != std::string::npos) {
            m.v1_pids = w[1];
        }
    }
    return m;
}

/// This process's cgroup path in v2 ("0::/x") and in the v1 pids hierarchy ("N:pids:/x").
std::pair<std::optional<std::string>, std::optional<std::string>> own_cgroups() {
    std::optional<std::string> v2;
    std::optional<std::string> pids;
    auto text = util::read_file("/proc/self/cgroup", 1 << 20);
    std::istringstream in(text ? *text : "");
    for (std::string line; std::getline(in, line);) {
        auto a = line.find(':');
        auto b = a == std::string::npos ? a : line.find(':', a + 1);
        if (b == std::string::npos) {
            continue;
        }
        const std::string controllers = line.substr(a + 1, b - a - 1);
        if (line.compare(0, a, "0") == 0 && controllers.empty()) {
            v2 = line.substr(b + 1);
        } else if (("," + controllers + ",").find(",pids,") != std::string::npos) {
            pids = line.substr(b + 1);
        }
    }
    return {v2, pids};
}

bool write_text(const fs::path& file, const std::string& text) {
    util::UniqueFd fd(::open(file.c_str(), O_WRONLY | O_CLOEXEC));
    return fd.valid() &&
           ::write(fd.get(), text.data(), text.size()) == static_cast<ssize_t>(text.size());
}

std::set<std::string> read_words(const fs::path& file) {
    auto text = util::read_file(file, 1 << 16);
    auto w = text ? words(*text) : std::vector<std::string>{};
    return {w.begin(), w.end()};
}

/// The counter `key` of a flat-keyed cgroup file ("max 3", "oom_kill 1"); 0 when absent.
long long counter(const fs::path& file, const std::string& key) {
    auto text = util::read_file(file, 1 << 16);
    auto w = text ? words(*text) : std::vector<std::string>{};
    for (std::size_t i = 0; i + 1 < w.size(); i += 2) {
        if (w[i] == key) {
            return std::atoll(w[i + 1].c_str());
        }
    }
    return 0;
}

/// A child cgroup `dir` (made here) with `settings` written; its cgroup.procs opened.
Result<util::UniqueFd>
make_cgroup(const fs::path& dir, const std::vector<std::pair<std::string, std::string>>& settings) {
    if (::mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) {
        return std::unexpected(system_error("create the step's cgroup " + dir.string(), errno));
    }
    for (const auto& [file, value] : settings) {
        if (!write_text(dir / file, value)) {
            int err = errno;
            ::rmdir(dir.c_str());
            return std::unexpected(system_error("set " + (dir / file).string() + " to " + value,
                                                err, "check the step's \"limits\""));
        }
    }
    util::UniqueFd procs(::open((dir / "cgroup.procs").c_str(), O_WRONLY | O_CLOEXEC));
    if (!procs.valid()) {
        int err = errno;
        ::rmdir(dir.c_str());
        return std::unexpected(system_error("open " + (dir / "cgroup.procs").string(), err));
    }
    return procs;
}

/// Every process in cgroup `dir` killed: cgroup.kill at once where the kernel has it (v2, 5.14+),
/// else round after round of SIGKILL to what cgroup.procs lists, until it lists nothing, since
/// a fork bomb adds members between a read and the kills. Each round kills every member it
/// read, so only what forked during the round is left for the next; bounded at 5 s. Returns
/// how many it killed (cgroup.kill: those listed just before).
int kill_members(const fs::path& dir, bool v2) {
    auto listed = [&dir] {
        auto pids = util::read_file(dir / "cgroup.procs", 16 << 20);
        return pids ? words(*pids) : std::vector<std::string>{};
    };
    if (v2) {
        const auto before = listed().size();
        if (write_text(dir / "cgroup.kill", "1")) {
            return static_cast<int>(before);
        }
    }
    int killed = 0;
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (std::chrono::steady_clock::now() < until) {
        const auto pids = listed();
        if (pids.empty()) {
            break;
        }
        for (const auto& pid : pids) {
            killed += ::kill(static_cast<pid_t>(std::atoll(pid.c_str())), SIGKILL) == 0 ? 1 : 0;
        }
    }
    return killed;
}

void remove_cgroup(const fs::path& dir, bool v2) {
    if (v2) {
        write_text(dir / "cgroup.kill", "1"); // leftovers, if any (kernel 5.14+)
    }
    // A process just reaped may still be leaving its cgroup: a few tries.
    for (int i = 0; i < 200 && ::rmdir(dir.c_str()) != 0 && errno == EBUSY; ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
}

/// When process `pid` started, in seconds since the epoch: the boot time (/proc/stat btime)
/// plus its start in clock ticks after boot (field 22 of /proc/PID/stat).
std::optional<long long> process_start(pid_t pid) {
    const auto stat = util::read_file("/proc/" + std::to_string(pid) + "/stat", 4096);
    const auto boot = util::read_file("/proc/stat", 1 << 16);
    const auto paren = stat ? stat->rfind(')') : std::string::npos;
    const auto btime = boot ? boot->find("\nbtime ") : std::string::npos;
    if (paren == std::string::npos || btime == std::string::npos) {
        return std::nullopt;
    }
    const auto fields = words(stat->substr(paren + 1)); // state is field 3: index 0 here
    if (fields.size() < 20) {
        return std::nullopt;
    }
    const long long ticks = std::atoll(fields[19].c_str()); // field 22
    return std::atoll(boot->c_str() + btime + 7) + ticks / std::max(1L, ::sysconf(_SC_CLK_TCK));
}

/// Whether "emurun-<pid>" in a parent cgroup is another emurun's that died without removing
/// it (SIGKILLed): no process `pid`, or one that started after the directory last changed (its
/// pid reused). A live owner's is kept, as is anything not named emurun-<digits>.
bool stale_run_dir(const fs::path& dir) {
    const std::string name = dir.filename().string();
    const std::string digits = name.substr(std::min<std::size_t>(name.size(), 7));
    if (!name.starts_with("emurun-") || digits.empty() ||
        digits.find_first_not_of("0123456789") != std::string::npos || digits.size() > 9) {
        return false;
    }
    const auto pid = static_cast<pid_t>(std::atol(digits.c_str()));
    if (pid == ::getpid()) {
        return false;
    }
    if (::kill(pid, 0) != 0 && errno == ESRCH) {
        return true;
    }
    struct stat dir_st {};
    const auto started = process_start(pid);
    return ::stat(dir.c_str(), &dir_st) == 0 && started && *started > dir_st.st_mtim.tv_sec + 1;
}

/// A dead emurun's cgroup tree: every process in it killed, then the step cgroups and the
/// run's own removed.
void remove_stale_tree(const fs::path& run, bool v2) {
    std::error_code ec;
    std::vector<fs::path> dirs;
    for (const auto& e : fs::directory_iterator(run, ec)) {
        if (e.is_directory(ec)) {
            dirs.push_back(e.path());
        }
    }
    dirs.push_back(run);
    for (const auto& dir : dirs) {
        kill_members(dir, v2);
        remove_cgroup(dir, v2);
    }
}

/// Every stale "emurun-<pid>" below `parent` removed with what still runs in it: an emurun
/// that was SIGKILLed could not stop its steps, and they would run on unbounded by anyone.
void sweep_stale(const fs::path& parent, bool v2) {
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(parent, ec)) {
        if (e.is_directory(ec) && stale_run_dir(e.path())) {
            remove_stale_tree(e.path(), v2);
        }
    }
}

std::string join(const std::vector<std::string>& parts) {
    std::string out;
    for (const auto& p : parts) {
        out += (out.empty() ? "" : "; ") + p;
    }
    return out;
}

} // namespace

void LimitsHome::probe() {
    m_probed = true;
    const Mounts mounts = cgroup_mounts();
    const auto [own_v2, own_pids] = own_cgroups();
    const std::string name = "emurun-" + std::to_string(::getpid());
    if (mounts.v2 && own_v2) {
        const fs::path own = *mounts.v2 / fs::path(*own_v2).relative_path();
        const auto available = read_words(own / "cgroup.controllers");
        for (const char* c : {"pids", "memory", "cpu"}) {
            if (available.contains(c)) {
                write_text(own / "cgroup.subtree_control", std::string("+") + c);
            }
        }
        const auto enabled = read_words(own / "cgroup.subtree_control");
        sweep_stale(own, true);
        const fs::path run = own / name;
        if (!enabled.empty() && (::mkdir(run.c_str(), 0755) == 0 || errno == EEXIST)) {
            for (const auto& c : enabled) {
                if (c == "pids" || c == "memory" || c == "cpu") {
                    write_text(run / "cgroup.subtree_control", "+" + c);
                }
            }
            m_v2_controllers = read_words(run / "cgroup.subtree_control");
            m_v2 = run;
        }
    }
    if (!m_v2_controllers.contains("pids") && mounts.v1_pids && own_pids) {
        const fs::path parent = *mounts.v1_pids / fs::path(*own_pids).relative_path();
        sweep_stale(parent, false);
        const fs::path run = parent / name;
        if (::mkdir(run.c_str(), 0755) == 0 || errno == EEXIST) {
            m_v1_pids = run;
        }
    }
    m_why = !mounts.v2 && !mounts.v1_pids
                ? "no cgroup filesystem is mounted"
                : "this process cannot make a child cgroup with that controller (not root, "
                  "or its cgroup has processes and does not delegate it)";
}

LimitsHome::~LimitsHome() {
    if (m_v2) {
        remove_cgroup(*m_v2, true);
    }
    if (m_v1_pids) {
        remove_cgroup(*m_v1_pids, false);
    }
}

Result<ChildLimits> LimitsHome::prepare(const ResourceLimits& limits, std::uint64_t id) {
    ChildLimits step;
    if (!limits.any()) {
        return step;
    }
    if (!m_probed) {
        probe();
    }
    const std::string name = "step-" + std::to_string(id);
    std::vector<std::pair<std::string, std::string>> v2;
    std::vector<std::string> gaps;
    if (limits.pids) {
        const std::string max = std::to_string(*limits.pids);
        if (m_v2_controllers.contains("pids")) {
            v2.emplace_back("pids.max", max);
        } else if (m_v1_pids) {
            step.procs.push_back(EMURUN_TRY(make_cgroup(*m_v1_pids / name, {{"pids.max", max}})));
            step.v1_pids_dir = *m_v1_pids / name;
        } else {
            step.nproc = static_cast<long long>(*limits.pids);
            gaps.push_back(::geteuid() == 0
                               ? "pids: not enforced (" + m_why + "; RLIMIT_NPROC binds no root)"
                               : "pids: RLIMIT_NPROC, which counts every process of the user (" +
                                     m_why + ")");
        }
    }
    if (limits.memory_bytes) {
        if (m_v2_controllers.contains("memory")) {
            v2.emplace_back("memory.max", std::to_string(*limits.memory_bytes));
        } else {
            step.address_space = static_cast<long long>(*limits.memory_bytes);
            gaps.push_back("memory: RLIMIT_AS, the virtual size of each process, not the tree's "
                           "memory (" +
                           m_why + ")");
        }
    }
    if (limits.cpus) {
        if (m_v2_controllers.contains("cpu")) {
            const auto quota = static_cast<long long>(std::llround(*limits.cpus * 100000));
            v2.emplace_back("cpu.max", std::to_string(std::max(quota, 1000LL)) + " 100000");
        } else {
            gaps.push_back("cpu: not enforced (" + m_why + ")");
        }
    }
    if (!v2.empty()) {
        step.procs.push_back(EMURUN_TRY(make_cgroup(*m_v2 / name, v2)));
        step.v2_dir = *m_v2 / name;
        if (limits.memory_bytes) { // an OOM kill ends the whole step, not one random process
            write_text(*step.v2_dir / "memory.oom.group", "1");
            write_text(*step.v2_dir / "memory.swap.max", "0");
        }
    }
    step.gap = join(gaps);
    return step;
}

std::optional<std::string> LimitsHome::hit(const ChildLimits& step, const ResourceLimits& limits) {
    const std::string pids = limits.pids ? std::to_string(*limits.pids) : "";
    if (step.v2_dir) {
        if (limits.pids && (counter(*step.v2_dir / "pids.events", "max") > 0 ||
                            counter(*step.v2_dir / "pids.events.local", "max") > 0)) {
            return "pids limit " + pids + " reached (a fork failed)";
        }
        if (limits.memory_bytes && counter(*step.v2_dir / "memory.events", "oom_kill") > 0) {
            return "memory limit " + std::to_string(*limits.memory_bytes) +
                   " bytes reached (out-of-memory kill)";
        }
    }
    if (step.v1_pids_dir && counter(*step.v1_pids_dir / "pids.events", "max") > 0) {
        return "pids limit " + pids + " reached (a fork failed)";
    }
    return std::nullopt;
}

int LimitsHome::kill_tree(const ChildLimits& step) {
    return (step.v2_dir ? kill_members(*step.v2_dir, true) : 0) +
           (step.v1_pids_dir ? kill_members(*step.v1_pids_dir, false) : 0);
}

void LimitsHome::remove(ChildLimits& step) {
    step.procs.clear();
    if (step.v2_dir) {
        remove_cgroup(*step.v2_dir, true);
        step.v2_dir.reset();
    }
    if (step.v1_pids_dir) {
        remove_cgroup(*step.v1_pids_dir, false);
        step.v1_pids_dir.reset();
    }
}

} // namespace emurun::detail
