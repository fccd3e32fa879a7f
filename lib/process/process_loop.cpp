// The Supervisor's poll loop in emurun: one ppoll over every child's stdout, stderr and report
// pipes, with timers for timeouts and grace periods, on the caller's thread (ninja's model).
// Why our own loop and not Boost.Process v2 on Asio: each child runs under a job slot (the
// helper emurun-supervisor, see process_supervisor.cpp), started with posix_spawn and
// reporting rusage of the step's whole tree itself; the loop then only needs pipes and timers,
// which ppoll serves with no threads, no SIGCHLD handler and no reactor to own.
// Output is read non-blocking from every ready pipe in turn, so a child filling stderr while
// emurun reads stdout never deadlocks.
#include "process/process_limits.hpp"
#include "process/process_orphans.hpp"
#include "process/process_supervisor.hpp"
#include "process/process_versions.hpp"
#include "process/spawn.hpp"
#include "util/fd.hpp"
#include "util/self.hpp"

#include <emurun/process.hpp>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <poll.h>
#include <set>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#include <utility>

namespace emurun {
namespace {

using util::UniqueFd;

using Clock = std::chrono::steady_clock;

/// How often a running step's pids cgroup is checked for a fork that failed on its limit.
constexpr std::chrono::milliseconds k_limits_tick{100};

// The last stage is for a supervisor that did not act on 'K' within a grace (a step stopped it
// with SIGSTOP, say): emurun SIGKILLs it, and the orphans come to emurun's sweep.
enum class Stage { running, term_sent, kill_sent, supervisor_killed };

struct Child {
    pid_t supervisor = -1; ///< the slot's pid
    std::optional<detail::SupervisorSlot> slot;
    std::unique_ptr<detail::PreparedExec> exec;
    UniqueFd out, err, report, control;
    std::shared_ptr<UniqueFd> out_log, err_log;
    std::function<void(Stream, std::string_view)> on_output;
    Stage stage = Stage::running;
    std::optional<Clock::time_point> deadline;
    std::optional<std::chrono::milliseconds> idle_limit;
    Clock::time_point last_output; ///< or the start: when the idle limit counts from
    std::chrono::milliseconds grace{0};
    Clock::time_point start;
    std::string report_buf;
    bool finished_record = false;
    bool supervisor_lost = false; ///< it died without reporting: its orphans are ours now
    bool slot_idle = false;       ///< its slot sent its last line for the step (F or E)
    bool started_record = false;  ///< its slot sent S
    ChildResult result;
    ResourceLimits asked;       ///< SpawnOptions::limits
    detail::ChildLimits limits; ///< how they are enforced: its cgroups, rlimits

    [[nodiscard]] bool done() const { return !out.valid() && !err.valid() && !report.valid(); }
    /// When the idle limit fires, while the command runs and has one.
    [[nodiscard]] std::optional<Clock::time_point> idle_deadline() const {
        if (!idle_limit || stage != Stage::running || finished_record) {
            return std::nullopt;
        }
        return last_output + *idle_limit;
    }
    /// The earlier of the deadline and the idle deadline.
    [[nodiscard]] std::optional<Clock::time_point> next_timer() const {
        auto idle = idle_deadline();
        return idle && (!deadline || *idle < *deadline) ? idle : deadline;
    }
};

Result<std::pair<UniqueFd, UniqueFd>> make_pipe(bool socket) {
    return socket ? util::make_socket_pair() : util::make_pipe();
}

Result<std::shared_ptr<UniqueFd>> open_log(const std::filesystem::path& path) {
    int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd < 0) {
        return std::unexpected(system_error("open " + path.string(), errno,
                                            "check that the log directory exists and is writable"));
    }
    return std::make_shared<UniqueFd>(fd);
}

/// Opens the logs of `options` into `child` (one descriptor when both name the same file).
Result<void> open_logs(const SpawnOptions& options, Child& child) {
    if (options.stdout_log) {
        child.out_log = EMURUN_TRY(open_log(*options.stdout_log));
    }
    if (options.stderr_log) {
        if (options.stdout_log && *options.stdout_log == *options.stderr_log) {
            child.err_log = child.out_log;
        } else {
            child.err_log = EMURUN_TRY(open_log(*options.stderr_log));
        }
    }
    return {};
}

std::chrono::microseconds to_micros(const timeval& tv) {
    return std::chrono::seconds(tv.tv_sec) + std::chrono::microseconds(tv.tv_usec);
}

void send_control(Child& child, char request) {
    if (child.control.valid()) {
        ::send(child.control.get(), &request, 1, MSG_NOSIGNAL | MSG_DONTWAIT);
        // A step may have stopped its supervisor (kill -STOP $PPID): it must read the request.
        ::kill(child.supervisor, SIGCONT);
    }
}

} // namespace

/// The loop's state behind Supervisor's interface.
class SupervisorImpl {
  public:
    Result<ChildId> spawn(const Command& cmd, const SpawnOptions& options);
    Result<std::vector<ChildResult>> wait_any(std::optional<std::chrono::milliseconds> timeout);
    void stop_all();
    void kill_all();
    std::optional<sigset_t> m_mask;
    std::vector<std::unique_ptr<Child>> m_children;

  private:
    Result<void> start_supervisor(Child& child, const SpawnOptions& options);
    Result<detail::SupervisorSlot> hand_to_slot(const detail::PreparedExec& exec,
                                                const detail::SupervisorFds& fds);
    void release_slot(Child& child);
    void fire_timers(Clock::time_point now);
    void continue_stopped_slots();
    std::vector<ChildResult> collect_done();
    void read_output(Child& child, Stream stream);
    void read_report(Child& child);
    void handle_line(Child& child, std::string_view line);
    void handle_record(Child& child, const detail::SupervisorReport& record);
    void distrust_report(Child& child, const std::string& why);
    std::optional<Clock::time_point> next_deadline() const;
    void check_limits(Clock::time_point now);
    Result<bool> poll_once(std::optional<Clock::time_point> until);
    int sweep_orphans();

    ChildId m_next_id = 1;
    std::optional<std::filesystem::path> m_helper; ///< emurun-supervisor, found at first spawn
    detail::OrphanCatcher m_orphans;
    detail::LimitsHome m_limits; ///< declared before the slots: removed after they ended
    Clock::time_point m_limits_checked{};
    std::vector<detail::SupervisorSlot> m_idle; ///< slots between steps, the last used last
    std::vector<char> m_buffer = std::vector<char>(64 * 1024);
};

Result<std::filesystem::path> find_supervisor_helper() {
    return util::find_helper(detail::k_supervisor_name);
}

Result<ChildId> SupervisorImpl::spawn(const Command& cmd, const SpawnOptions& options) {
    auto exec = EMURUN_TRY(detail::prepare_exec(cmd));
    if (!m_helper) {
        m_helper = EMURUN_TRY(find_supervisor_helper());
    }
    auto child = std::make_unique<Child>();
    child->exec = std::move(exec);
    EMURUN_TRY(open_logs(options, *child));
    child->on_output = options.on_output;
    child->grace = options.grace;
    child->asked = options.limits;
    child->result.id = m_next_id;
    child->limits = EMURUN_TRY(m_limits.prepare(options.limits, m_next_id));
    child->result.limit_gap = child->limits.gap;
    // The clock starts before the launch: a short step may end before the server has answered.
    child->start = child->last_output = Clock::now();
    if (auto started = start_supervisor(*child, options); !started) {
        detail::LimitsHome::remove(child->limits);
        return std::unexpected(started.error());
    }
    child->idle_limit = options.idle_timeout;
    if (options.timeout) {
        child->deadline = child->start + *options.timeout;
    }
    child->result.id = m_next_id++;
    m_children.push_back(std::move(child));
    return m_children.back()->result.id;
}

Result<void> SupervisorImpl::start_supervisor(Child& child, const SpawnOptions& options) {
    UniqueFd null_in;
    if (options.stdin_null) {
        null_in.reset(::open("/dev/null", O_RDONLY | O_CLOEXEC));
        if (!null_in.valid()) {
            return std::unexpected(
                system_error("open /dev/null", errno,
                             errno == EMFILE ? "too many open files? (ulimit -n)" : ""));
        }
    }
    auto out = make_pipe(false);
    auto err = make_pipe(false);
    auto report = make_pipe(true); // a socket: no /proc/PID/fd/N open reaches it
    auto control = make_pipe(true);
    for (auto* p : {&out, &err, &report, &control}) {
        if (!*p) {
            return std::unexpected(p->error());
        }
    }
    detail::SupervisorFds fds;
    fds.stdin_fd = null_in.get();
    fds.stdout_fd = out->second.get();
    fds.stderr_fd = err->second.get();
    fds.report_fd = report->second.get();
    fds.control_fd = control->second.get();
    for (const auto& fd : child.limits.procs) {
        fds.cgroup_procs.push_back(fd.get());
    }
    fds.nproc = child.limits.nproc;
    fds.address_space = child.limits.address_space;
    child.slot.emplace(EMURUN_TRY(hand_to_slot(*child.exec, fds)));
    child.supervisor = child.slot->pid();
    child.out = std::move(out->first);
    child.err = std::move(err->first);
    child.report = std::move(report->first);
    child.control = std::move(control->first);
    for (int fd : {child.out.get(), child.err.get(), child.report.get()}) {
        ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
    }
    return {};
}

/// An idle slot takes the step, else a new one. An idle slot that cannot take it (killed, its
/// socket full) is ended and the next one tried: a step is never handed over twice, as a slot
/// that has not taken a request never runs it. (A stopped idle slot is sent SIGCONT by run().)
Result<detail::SupervisorSlot> SupervisorImpl::hand_to_slot(const detail::PreparedExec& exec,
                                                            const detail::SupervisorFds& fds) {
    for (;;) {
        const bool fresh = m_idle.empty();
        auto slot =
            fresh ? EMURUN_TRY(detail::SupervisorSlot::start(*m_helper)) : std::move(m_idle.back());
        if (!fresh) {
            m_idle.pop_back();
        }
        auto sent = slot.run(exec, fds);
        if (sent) {
            return slot;
        }
        if (!slot.slot_gone()) { // the request could not be made: the slot is fine
            m_idle.push_back(std::move(slot));
            return std::unexpected(sent.error());
        }
        slot.finish(true); // it never took the request: nothing of a step is below it,
        sweep_orphans();   // but be sure
        if (fresh) {
            return std::unexpected(sent.error());
        }
    }
}

/// After a step: its slot goes back to the idle ones when it ended the step itself; one that
/// died, was killed by us or sent no last line is ended (and what it left swept).
void SupervisorImpl::release_slot(Child& child) {
    if (!child.slot) {
        return;
    }
    if (child.slot_idle && !child.supervisor_lost && child.stage != Stage::supervisor_killed) {
        m_idle.push_back(std::move(*child.slot));
    } else {
        child.slot->finish(true);
    }
    child.slot.reset();
}

void SupervisorImpl::read_output(Child& child, Stream stream) {
    UniqueFd& fd = stream == Stream::out ? child.out : child.err;
    auto& log = stream == Stream::out ? child.out_log : child.err_log;
    auto& count = stream == Stream::out ? child.result.stdout_bytes : child.result.stderr_bytes;
    for (int round = 0; round < 16 && fd.valid(); ++round) { // bounded: be fair to others
        ssize_t n = ::read(fd.get(), m_buffer.data(), m_buffer.size());
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n < 0 && errno == EAGAIN) {
            return;
        }
        if (n <= 0) {
            fd.reset();
            return;
        }
        count += static_cast<std::uint64_t>(n);
        child.last_output = Clock::now();
        if (log && !detail::write_all(log->get(), m_buffer.data(), static_cast<std::size_t>(n)) &&
            !child.result.log_error) {
            // A full disk must not pass for a quiet step: the result says the log is short.
            child.result.log_error = system_error("write the log", errno ? errno : ENOSPC,
                                                  "free space where the logs are written");
        }
        if (child.on_output) {
            child.on_output(stream, std::string_view(m_buffer.data(), static_cast<std::size_t>(n)));
        }
    }
}

void SupervisorImpl::read_report(Child& child) {
    for (;;) {
        ssize_t n = ::read(child.report.get(), m_buffer.data(), m_buffer.size());
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n < 0 && errno == EAGAIN) {
            return;
        }
        if (n <= 0) {
            break;
        }
        child.report_buf.append(m_buffer.data(), static_cast<std::size_t>(n));
        for (auto eol = child.report_buf.find('\n'); eol != std::string::npos;
             eol = child.report_buf.find('\n')) {
            handle_line(child, std::string_view(child.report_buf).substr(0, eol));
            child.report_buf.erase(0, eol + 1);
        }
    }
    child.report.reset(); // EOF: the supervisor has exited or is exiting
    if (child.slot_idle && child.slot && !child.slot->alive()) {
        distrust_report(child, "its supervisor process died after the step's end was reported: "
                               "a result from a dead supervisor is not trusted");
    } else if (!child.finished_record && child.stage == Stage::supervisor_killed) {
        child.supervisor_lost = true; // by us: the step is stopped, its orphans swept
        child.result.status = ExitStatus::killed(SIGKILL);
        child.out.reset();
        child.err.reset();
    } else if (!child.finished_record && !child.result.start_error) {
        child.supervisor_lost = true;
        child.result.start_error =
            Error{"supervise " + child.exec->path,
                  "its supervisor process was killed before reporting (by the step itself?)",
                  "do not signal the step's parent process"};
        child.out.reset(); // a survivor may hold them open forever
        child.err.reset();
    }
}

void SupervisorImpl::handle_line(Child& child, std::string_view line) {
    if (auto record = detail::parse_report(line)) {
        handle_record(child, *record);
    } else if (child.started_record && !child.supervisor_lost) {
        // Arrived while the step ran: the step could have written it, as any other forgery.
        distrust_report(child,
                        "an unreadable line came on its report channel after the step started: '" +
                            std::string(line.substr(0, 80)) + "'");
    } else if (!child.result.start_error) {
        child.result.start_error =
            Error{"supervise " + child.exec->path,
                  std::string(detail::k_supervisor_name) + " sent an unreadable report: '" +
                      std::string(line.substr(0, 80)) + "'",
                  "reinstall emurun: its emurun-supervisor must be the one built with it"};
    }
}

/// The step's result is not its supervisor's (a step that wrote to the report channel itself):
/// the step fails with `why`, and its slot is ended, what it left swept.
void SupervisorImpl::distrust_report(Child& child, const std::string& why) {
    child.supervisor_lost = true;
    child.finished_record = false;
    child.result.start_error =
        Error{"supervise " + child.exec->path, why + " (did the step write to its report?)",
              "do not signal or trace the step's parent process"};
    child.out.reset(); // a survivor may hold them open forever
    child.err.reset();
}

void SupervisorImpl::handle_record(Child& child, const detail::SupervisorReport& record) {
    if (child.supervisor_lost) {
        return; // already distrusted, or its slot is gone: nothing more from it counts
    }
    // One S then one F, or one E alone: anything else was not written by the slot alone.
    const bool in_order = !child.slot_idle && !child.supervisor_lost &&
                          (record.kind == detail::ReportKind::finished) == child.started_record;
    if (!in_order) {
        distrust_report(child, "its report came out of order (a second end, or an end without "
                               "a start)");
        return;
    }
    switch (record.kind) {
    case detail::ReportKind::started:
        child.started_record = true;
        break;
    case detail::ReportKind::exec_failed:
        child.result.start_error = detail::exec_failure_error(*child.exec, record.failure);
        child.slot_idle = true;
        break;
    case detail::ReportKind::finished:
        child.finished_record = true;
        child.slot_idle = true;
        child.result.status = ExitStatus::from_wait_status(record.wait_status);
        child.result.user = to_micros(record.user);
        child.result.sys = to_micros(record.sys);
        child.result.max_rss_kib = record.max_rss_kib;
        child.result.leftovers_killed = record.leftovers;
        // A stop that came after the command had ended on its own stopped nothing.
        child.result.stopped = child.result.stopped && record.signalled;
        child.deadline.reset();
        break;
    }
}

void SupervisorImpl::fire_timers(Clock::time_point now) {
    for (auto& child : m_children) {
        auto timer = child->next_timer();
        if (!timer || *timer > now || child->finished_record) {
            continue; // a slot that reported the step's end has stopped its tree already
        }
        if (child->stage == Stage::running) {
            child->result.timed_out = !child->result.stopped;
            child->result.idle =
                child->result.timed_out && (!child->deadline || *child->deadline > now);
            // The picture is taken before the stop: what was stuck, and where.
            child->result.snapshot = snapshot_process_tree(child->supervisor, false);
            send_control(*child, detail::k_control_term);
            child->stage = Stage::term_sent;
            child->deadline = now + child->grace;
        } else if (child->stage == Stage::term_sent) {
            send_control(*child, detail::k_control_kill);
            child->stage = Stage::kill_sent;
            child->deadline = now + std::max(child->grace, std::chrono::milliseconds(1000));
        } else if (child->stage == Stage::kill_sent) {
            // Not reaped yet: our child, so its pid cannot have been reused.
            ::kill(child->supervisor, SIGKILL);
            child->stage = Stage::supervisor_killed;
            child->deadline.reset();
        }
    }
}

/// A step whose tree hit its pids limit (a fork bomb) is killed at once, every process of its
/// cgroup; checked every k_limits_tick while such steps run. (A memory limit's OOM kill ends
/// the tree by itself.)
void SupervisorImpl::check_limits(Clock::time_point now) {
    if (now - m_limits_checked < k_limits_tick) {
        return;
    }
    m_limits_checked = now;
    for (auto& child : m_children) {
        if (child->stage != Stage::running || child->finished_record || !child->asked.pids ||
            child->limits.procs.empty()) {
            continue;
        }
        child->result.limit_hit = detail::LimitsHome::hit(child->limits, child->asked);
        if (child->result.limit_hit) {
            detail::LimitsHome::kill_tree(child->limits); // may take a while: the deadline after
            send_control(*child, detail::k_control_kill);
            child->stage = Stage::kill_sent;
            child->deadline =
                Clock::now() + std::max(child->grace, std::chrono::milliseconds(1000));
        }
    }
}

void SupervisorImpl::stop_all() {
    auto now = Clock::now();
    for (auto& child : m_children) {
        if (child->stage == Stage::running && !child->finished_record) {
            child->result.stopped = true;
            child->deadline = now; // the next fire_timers sends SIGTERM and starts the grace
        }
    }
    fire_timers(now);
}

/// A step may stop its own slot (`kill -STOP $PPID`): the slot then never reports the step's
/// end, and the run would wait for the step's timeout, or forever. Our child: its stop is seen
/// with waitid (WSTOPPED only, so nothing is reaped) and undone.
void SupervisorImpl::continue_stopped_slots() {
    for (const auto& child : m_children) {
        siginfo_t info{};
        if (child->slot &&
            ::waitid(P_PID, static_cast<id_t>(child->supervisor), &info,
                     WSTOPPED | WNOHANG | WNOWAIT) == 0 &&
            info.si_pid == child->supervisor) {
            ::kill(child->supervisor, SIGCONT);
        }
    }
}

/// The next timer; while steps run at least once a second, for continue_stopped_slots, and
/// every k_limits_tick while a step with a pids cgroup runs, for check_limits.
std::optional<Clock::time_point> SupervisorImpl::next_deadline() const {
    std::optional<Clock::time_point> next;
    if (!m_children.empty()) {
        const bool limited = std::ranges::any_of(m_children, [](const auto& c) {
            return c->asked.pids && !c->limits.procs.empty() && !c->finished_record;
        });
        next = Clock::now() + (limited ? std::chrono::milliseconds(k_limits_tick)
                                       : std::chrono::milliseconds(1000));
    }
    for (const auto& child : m_children) {
        auto timer = child->next_timer();
        if (timer && (!next || *timer < *next)) {
            next = timer;
        }
    }
    return next;
}

/// Kill what dead slots left behind: every child of emurun but the live slots.
int SupervisorImpl::sweep_orphans() {
    std::set<pid_t> keep;
    for (const auto& child : m_children) {
        if (child->slot) {
            keep.insert(child->slot->pid());
        }
    }
    for (const auto& slot : m_idle) {
        keep.insert(slot.pid());
    }
    return m_orphans.sweep(keep);
}

std::vector<ChildResult> SupervisorImpl::collect_done() {
    std::vector<ChildResult> done;
    auto now = Clock::now();
    std::optional<std::size_t> lost; // index in `done` of a step whose supervisor was killed
    std::vector<detail::ChildLimits> cgroups; // removed once their processes are gone
    std::erase_if(m_children, [&](const std::unique_ptr<Child>& child) {
        if (!child->done()) {
            return false;
        }
        release_slot(*child);
        if (!child->result.limit_hit) {
            child->result.limit_hit = detail::LimitsHome::hit(child->limits, child->asked);
        }
        cgroups.push_back(std::move(child->limits));
        child->result.wall = now - child->start;
        if (child->supervisor_lost) {
            lost = done.size();
        }
        done.push_back(std::move(child->result));
        return true;
    });
    for (std::size_t i = 0; i < cgroups.size(); ++i) { // a lost slot's tree, still forking, dies
        // at once here: a sweep alone takes it one generation a round
        done[i].leftovers_killed += detail::LimitsHome::kill_tree(cgroups[i]);
    }
    if (lost) { // reaped above, so its orphans have been re-parented here
        done[*lost].leftovers_killed += sweep_orphans(); // orphans do not say whose they were
    }
    for (auto& cgroup : cgroups) { // after the sweep has reaped what was killed in them
        detail::LimitsHome::remove(cgroup);
    }
    return done;
}

namespace {

struct PollEntry {
    Child* child;
    int which; // 0 = stdout, 1 = stderr, 2 = report
};

timespec to_timespec(Clock::duration d) {
    auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(std::max(d, Clock::duration(0)));
    return timespec{static_cast<time_t>(ns.count() / 1'000'000'000),
                    static_cast<long>(ns.count() % 1'000'000'000)};
}

} // namespace

/// One ppoll over every open pipe, woken at `until` or the next timer, then read what is
/// ready. False when a signal interrupted the wait.
Result<bool> SupervisorImpl::poll_once(std::optional<Clock::time_point> until) {
    std::vector<pollfd> fds;
    std::vector<PollEntry> entries;
    for (auto& child : m_children) {
        const UniqueFd* slots[3] = {&child->out, &child->err, &child->report};
        for (int i = 0; i < 3; ++i) {
            if (slots[i]->valid()) {
                fds.push_back(pollfd{slots[i]->get(), POLLIN, 0});
                entries.push_back(PollEntry{child.get(), i});
            }
        }
    }
    auto wake = next_deadline();
    if (until && (!wake || *until < *wake)) {
        wake = until;
    }
    timespec ts = wake ? to_timespec(*wake - Clock::now()) : timespec{};
    int n = ::ppoll(fds.data(), fds.size(), wake ? &ts : nullptr, m_mask ? &*m_mask : nullptr);
    if (n < 0) {
        return errno == EINTR ? Result<bool>(false) : std::unexpected(system_error("ppoll", errno));
    }
    for (std::size_t i = 0; i < fds.size(); ++i) {
        if (fds[i].revents == 0) {
            continue;
        }
        Child& child = *entries[i].child;
        if (entries[i].which == 2) {
            read_report(child);
        } else {
            read_output(child, entries[i].which == 0 ? Stream::out : Stream::err);
        }
    }
    return true;
}

Result<std::vector<ChildResult>>
SupervisorImpl::wait_any(std::optional<std::chrono::milliseconds> timeout) {
    std::optional<Clock::time_point> until;
    if (timeout) {
        until = Clock::now() + *timeout;
    }
    for (;;) {
        check_limits(Clock::now());
        fire_timers(Clock::now());
        auto done = collect_done();
        if (!done.empty() || m_children.empty() || (until && Clock::now() >= *until)) {
            return done;
        }
        auto polled = EMURUN_TRY(poll_once(until));
        continue_stopped_slots();
        if (!polled) {
            return collect_done(); // the caller's signal handler wants attention
        }
    }
}

void SupervisorImpl::kill_all() {
    for (auto& child : m_children) {
        send_control(*child, detail::k_control_kill);
        child->control.reset(); // EOF also means SIGKILL to the supervisor
        child->out.reset();
        child->err.reset();
        child->report.reset();
    }
    // A slot exits 0 at its socket's EOF, a busy one once its step is killed; one killed by
    // its step (not collected yet) leaves orphans.
    bool lost = false;
    for (auto& child : m_children) {
        if (child->slot) {
            lost = WIFSIGNALED(child->slot->finish(false)) || lost;
        }
        lost = lost || child->supervisor_lost;
    }
    for (auto& slot : m_idle) {
        lost = WIFSIGNALED(slot.finish(false)) || lost;
    }
    if (lost) {
        sweep_orphans();
    }
    for (auto& child : m_children) {
        detail::LimitsHome::remove(child->limits);
    }
    m_children.clear();
    m_idle.clear();
}

Supervisor::Supervisor() : m_impl(std::make_unique<SupervisorImpl>()) {}

Supervisor::~Supervisor() {
    m_impl->kill_all();
}

Result<ChildId> Supervisor::spawn(const Command& cmd, const SpawnOptions& given) {
    std::optional<SpawnOptions> upgraded;
    const SpawnOptions* ours = EMURUN_TRY(util::caller_form(given, upgraded));
    const SpawnOptions& options = *ours;
    return m_impl->spawn(cmd, options);
}

Result<std::vector<ChildResult>>
Supervisor::wait_any(std::optional<std::chrono::milliseconds> poll_timeout) {
    return m_impl->wait_any(poll_timeout);
}

void Supervisor::stop_all() {
    m_impl->stop_all();
}

void Supervisor::set_wait_sigmask(const sigset_t& mask) {
    m_impl->m_mask = mask;
}

std::size_t Supervisor::running() const {
    return m_impl->m_children.size();
}

} // namespace emurun
