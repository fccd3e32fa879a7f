// A picture of a process tree from /proc, taken before a stuck step is stopped: who is there,
// in which state, waiting where. Runs in emurun (not in a forked child), so util's reader serves.
#include "util/file.hpp"

#include <emurun/process.hpp>

#include <dirent.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <map>
#include <sstream>

namespace emurun {
namespace {

struct Stat {
    int ppid = 0;
    char state = '?';
    double cpu = 0;
    std::string comm;
};

// /proc/PID/stat: "pid (comm) state ppid pgrp session tty tpgid flags minflt cminflt majflt
// cmajflt utime stime ..."; comm may hold spaces and parentheses, so it ends at the last ')'.
std::optional<Stat> read_stat(int pid) {
    auto text = util::read_file("/proc/" + std::to_string(pid) + "/stat", 4096);
    if (!text) {
        return std::nullopt;
    }
    auto open = text->find('(');
    auto close = text->rfind(')');
    if (open == std::string::npos || close == std::string::npos || close < open) {
        return std::nullopt;
    }
    Stat s;
    s.comm = text->substr(open + 1, close - open - 1);
    std::istringstream in(text->substr(close + 1));
    std::string skip;
    long long utime = 0, stime = 0;
    in >> s.state >> s.ppid;
    for (int i = 0; i < 9; ++i) {
        in >> skip;
    }
    in >> utime >> stime;
    static const long k_ticks = ::sysconf(_SC_CLK_TCK);
    s.cpu = static_cast<double>(utime + stime) / static_cast<double>(k_ticks > 0 ? k_ticks : 100);
    return s;
}

std::string read_cmdline(int pid, const std::string& comm) {
    auto text = util::read_file("/proc/" + std::to_string(pid) + "/cmdline", 64 * 1024);
    if (!text || text->empty()) {
        return "[" + comm + "]"; // a zombie or kernel thread, as ps shows it
    }
    while (!text->empty() && text->back() == '\0') {
        text->pop_back();
    }
    std::ranges::replace(*text, '\0', ' ');
    return *text;
}

std::string read_wchan(int pid) {
    auto text = util::read_file("/proc/" + std::to_string(pid) + "/wchan", 256);
    return text && *text != "0" ? *text : "";
}

std::map<int, std::vector<int>> children_by_parent(std::map<int, Stat>& stats) {
    std::map<int, std::vector<int>> children;
    DIR* dir = ::opendir("/proc");
    if (dir == nullptr) {
        return children;
    }
    while (const dirent* e = ::readdir(dir)) {
        int pid = 0;
        std::string_view name(e->d_name);
        auto [end, ec] = std::from_chars(name.data(), name.data() + name.size(), pid);
        if (ec != std::errc{} || end != name.data() + name.size()) {
            continue;
        }
        if (auto s = read_stat(pid)) {
            children[s->ppid].push_back(pid);
            stats.emplace(pid, std::move(*s));
        }
    }
    ::closedir(dir);
    return children;
}

} // namespace

std::vector<ProcessSnapshot> snapshot_process_tree(int root, bool include_root) {
    std::map<int, Stat> stats;
    auto children = children_by_parent(stats);
    std::vector<int> order;
    if (include_root && stats.contains(root)) {
        order.push_back(root);
    }
    std::vector<int> queue{root};
    for (std::size_t i = 0; i < queue.size() && queue.size() < 100'000; ++i) {
        for (int child : children[queue[i]]) { // parents first, each level in pid order
            queue.push_back(child);
            order.push_back(child);
        }
    }
    std::vector<ProcessSnapshot> out;
    for (int pid : order) {
        const Stat& s = stats.at(pid);
        out.push_back({pid, s.ppid, s.state, read_wchan(pid), s.cpu, read_cmdline(pid, s.comm)});
    }
    return out;
}

} // namespace emurun
