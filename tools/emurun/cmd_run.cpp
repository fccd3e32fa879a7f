// emurun run PIPELINE.json: parse options, call Runner, print progress and write the reports.
#include "cli.hpp"
#include "cli_common.hpp"
#include "cli_output.hpp"

#include <emurun/artifacts.hpp>
#include <emurun/calibrate.hpp>
#include <emurun/runner.hpp>
#include <emurun_ci.hpp>
#include <emurun_term.hpp>

#include <spdlog/spdlog.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <iostream>
#include <map>
#include <set>
#include <unistd.h>
#include <utility>
#include <vector>

namespace emurun::cli {
namespace {

struct RunArgs {
    std::string pipeline;
    int jobs = 1;
    std::string shard, baseline, previous, job_limit, multiplier = "1", calibration;
    std::string report = "emurun-report.json", junit, markdown, log_dir = "emurun-logs";
    std::string grace = "10s", heartbeat;
    std::string matrix, pack, unpack;
    std::string history;             ///< --history DIR ("": the cache dir's run-history/)
    bool no_history = false;         ///< --no-history
    std::vector<std::string> arches; ///< --arch A[,B]: some of the pipeline's "arches"
    bool native = false;             ///< --native: the native baseline run
    double threshold = 10, share = 80;
    std::string factor_basis = "wall";
    bool matrix_given = false, fail_on_flag = false, quiet = false, build_once = false;
};

// Step output, live: a step's stdout to emurun's stdout and its stderr to emurun's stderr, each
// chunk in one write. With parallel steps every line is prefixed by its step's name. On CI
// (GitHub Actions, GitLab CI) each step's output is folded into a collapsed group: live when one
// step runs at a time, else kept and written as one group (streams still apart) when it ends.
class OutputPrinter {
  public:
    OutputPrinter(bool prefix, CiLog ci) : m_prefix(prefix), m_ci(ci) {}
    OutputSink& out() { return m_out; }
    OutputSink& err() { return m_err; }
    void print(const std::string& step, Stream stream, std::string_view chunk) {
        if (m_ci != CiLog::plain && m_prefix) {
            m_kept[step].emplace_back(stream, std::string(chunk));
            return;
        }
        write_chunk(step, stream, chunk);
    }
    void started(const std::string& step) {
        if (m_ci != CiLog::plain && !m_prefix) {
            m_out.write(fold_start(m_ci, step, "emurun: step " + step, now()));
            m_open_groups.insert(step);
        }
    }
    void finished(const std::string& step) {
        // A step that never started (its command could not be made, or its needs failed) has
        // no live group to close: a lone end marker would close someone else's.
        if (m_ci == CiLog::plain || (!m_prefix && m_open_groups.erase(step) == 0)) {
            return;
        }
        if (m_prefix) {
            m_out.write(fold_start(m_ci, step, "emurun: step " + step, now()));
            for (const auto& [stream, chunk] : m_kept[step]) {
                write_chunk(step, stream, chunk);
            }
            m_kept.erase(step);
        }
        // A step whose output ends mid-line: the marker needs a line of its own.
        const bool open_line = m_open_line[step];
        m_open_line.erase(step);
        m_out.write((open_line ? "\n" : "") + fold_end(m_ci, step, now()));
    }

  private:
    static std::int64_t now() { return static_cast<std::int64_t>(std::time(nullptr)); }
    void write_chunk(const std::string& step, Stream stream, std::string_view chunk) {
        OutputSink& sink = stream == Stream::err ? m_err : m_out;
        if (stream == Stream::out && !chunk.empty()) {
            m_open_line[step] = chunk.back() != '\n';
        }
        if (!m_prefix) {
            sink.write_step_output(chunk);
            return;
        }
        bool& at_start = m_at_start.try_emplace({step, stream}, true).first->second;
        m_buffer.clear();
        while (!chunk.empty()) {
            if (at_start) {
                m_buffer.append("[").append(step).append("] ");
            }
            const auto eol = chunk.find('\n');
            const std::size_t n = eol == std::string_view::npos ? chunk.size() : eol + 1;
            m_buffer.append(chunk.substr(0, n));
            at_start = eol != std::string_view::npos;
            chunk.remove_prefix(n);
        }
        sink.write_step_output(m_buffer);
    }

    bool m_prefix;
    CiLog m_ci;
    OutputSink m_err{STDERR_FILENO, "stderr"};
    OutputSink m_out{STDOUT_FILENO, "stdout", &m_err};
    std::map<std::pair<std::string, Stream>, bool> m_at_start;
    std::map<std::string, std::vector<std::pair<Stream, std::string>>> m_kept;
    std::string m_buffer;
    std::map<std::string, bool> m_open_line; ///< stdout of the step ended mid-line
    std::set<std::string> m_open_groups;     ///< live groups started and not yet ended
};

// How a step that did not pass ended, for its finished line: " (exit 3)", " (signal 9)".
std::string exit_words(const StepResult& step) {
    if (step.status == StepStatus::passed) {
        return "";
    }
    if (step.signal) {
        return " (signal " + std::to_string(*step.signal) + ")";
    }
    return step.exit_code && *step.exit_code != 0
               ? " (exit " + std::to_string(*step.exit_code) + ")"
               : "";
}

// The progress line, or the lines one event prints on stderr.
std::string event_text(const RunEvent& e, bool tty) {
    using K = RunEvent::Kind;
    if (tty && e.kind == K::progress) {
        std::string running;
        for (const auto& r : e.running) {
            running += (running.empty() ? "" : ", ") + r;
        }
        return "\r\033[K[" + std::to_string(e.done) + "/" + std::to_string(e.total) + "] " +
               running + "  elapsed " + format_seconds(e.elapsed) +
               (e.eta ? "  ETA " + format_seconds(*e.eta) : "");
    }
    std::string text = tty ? "\r\033[K" : "";
    if (e.kind == K::started) {
        text += "emurun: start " + e.step->name + "\n";
    } else if (e.kind == K::finished) {
        text += "emurun: " + e.step->name + " " + std::string(to_string(e.step->status)) +
                exit_words(*e.step) + " in " + format_seconds(e.step->wall) +
                (e.step->message.empty() ? "" : " (" + e.step->message + ")") + "\n";
        if (e.step->status != StepStatus::passed && !e.step->log.empty()) {
            text += "emurun: " + e.step->name + ": its log is " + e.step->log.string() + "\n";
        }
        for (const auto& f : e.step->flags) {
            text += "emurun: flag " + f.rule + ": " + e.step->name + ": " + f.message + "\n";
        }
    } else if (e.kind == K::flagged) {
        text += "emurun: flag " + e.flag->rule + ": " + e.flag->message + "\n";
    } else if (e.kind == K::heartbeat) {
        text += "emurun: still running:";
        for (const auto& a : e.activity) {
            text += std::string(&a == e.activity.data() ? " " : "; ") + "step " + a.step + ", " +
                    format_seconds(a.running) + ", last output " + format_seconds(a.since_output) +
                    " ago";
        }
        text += "\n";
    }
    return text;
}

std::optional<Report> load_report(const std::string& path) {
    if (path.empty()) {
        return std::nullopt;
    }
    return unwrap(Report::load(path));
}

// --shard, else GitLab's parallel: variables (CI_NODE_INDEX is 1-based, as --shard's K).
std::optional<Shard> shard_of(const RunArgs& a) {
    if (!a.shard.empty()) {
        return unwrap(parse_shard(a.shard));
    }
    auto shard = ci_shard_from_env();
    if (!shard) {
        throw Failure(shard.error(), k_exit_usage);
    }
    if (*shard) {
        spdlog::info("shard {}/{} from CI_NODE_INDEX/CI_NODE_TOTAL", (*shard)->index,
                     (*shard)->count);
    }
    return *shard;
}

// A duration option's value; its error names the option ("--grace: expected a duration ...").
Duration option_duration(std::string_view option, const std::string& text) {
    auto parsed = parse_duration(text);
    if (!parsed) {
        Error e = parsed.error();
        e.what = std::string(option);
        throw Failure(e);
    }
    return *parsed;
}

// --timeout-multiplier: a number, ARCH=N,..., or auto: each emulated arch's factor from the
// history (--previous against --baseline), else from `emurun calibrate`; said on stderr.
TimeoutMultiplier timeout_multiplier(const RunArgs& a, const Pipeline& pipeline,
                                     const RunnerOptions& o) {
    if (a.multiplier != "auto") { // (the calibration file is read for "auto" only)
        return unwrap(parse_timeout_multiplier(a.multiplier, a.calibration));
    }
    const std::filesystem::path calibration = a.calibration.empty()
                                                  ? unwrap(default_calibration_file())
                                                  : std::filesystem::path(a.calibration);
    if (!a.calibration.empty()) {
        (void)unwrap(load_calibration(calibration)); // a file named on purpose must be good
    }
    std::vector<std::string> arches;
    for (const auto& step : pipeline.steps) {
        if (step.emulated() && step.arch) {
            arches.push_back(*step.arch);
        }
    }
    std::vector<std::string> notes;
    auto m = unwrap(auto_timeout_multiplier(
        arches,
        {o.previous ? &*o.previous : nullptr, o.baseline ? &*o.baseline : nullptr, calibration},
        &notes));
    for (const auto& note : notes) {
        std::cerr << "emurun: timeout multiplier auto: " << note << "\n";
    }
    return m;
}

// The file of this pipeline's own timing history (--history DIR, else the cache dir's
// run-history/); nullopt with --no-history, or when the cache dir cannot be used (said once).
std::optional<std::filesystem::path> history_file(const RunArgs& a, const Pipeline& pipeline) {
    if (a.no_history) {
        return std::nullopt;
    }
    std::filesystem::path dir = a.history;
    if (dir.empty()) {
        auto d = default_run_history_dir();
        if (!d) {
            spdlog::warn("no timing history kept: {}", error_text(d.error()));
            return std::nullopt;
        }
        dir = *d;
    }
    std::string variant = a.native ? "native" : "emulated";
    for (const auto& arch : a.arches) {
        variant += "," + arch;
    }
    return run_history_file(dir, a.pipeline, pipeline.name, variant);
}

RunnerOptions runner_options(const RunArgs& a, const Pipeline& pipeline) {
    RunnerOptions o;
    o.jobs = a.jobs;
    o.shard = shard_of(a);
    o.baseline = load_report(a.baseline);
    if (o.baseline) {
        unwrap(check_baseline(*o.baseline, a.baseline));
        if (auto note = other_pipeline_note(*o.baseline, a.baseline, pipeline.name)) {
            spdlog::warn("{}", *note);
        }
    }
    o.previous = load_report(a.previous);
    if (const auto file = history_file(a, pipeline)) {
        o.history = load_run_history(*file); // --previous, when given, wins (the runner)
    }
    if (!a.job_limit.empty()) {
        o.job_limit =
            static_cast<double>(option_duration("--job-limit", a.job_limit).count()) / 1e3;
    }
    o.rules.baseline_factor = a.threshold;
    o.rules.basis = a.factor_basis == "cpu" ? FactorBasis::cpu : FactorBasis::wall;
    o.rules.job_limit_share = a.share / 100;
    unwrap(check_rules(o.rules));
    o.timeout_multiplier = timeout_multiplier(a, pipeline, o);
    o.grace = option_duration("--grace", a.grace);
    if (!a.heartbeat.empty()) {
        // SECONDS as a plain number, or a duration ("5m").
        const bool digits = a.heartbeat.find_first_not_of("0123456789") == std::string::npos;
        auto every = parse_duration(digits ? a.heartbeat + "s" : a.heartbeat);
        if (!every || every->count() <= 0) {
            throw Failure(Error{"--heartbeat " + a.heartbeat,
                                every ? "the interval must be above 0" : every.error().why,
                                "give seconds or a duration, e.g. --heartbeat 60 or 5m"});
        }
        o.heartbeat = *every;
    }
    o.fail_on_flag = a.fail_on_flag;
    o.log_dir = a.log_dir;
    return o;
}

// What write_outputs() managed: whether the JSON report was written, and every output's error.
struct Written {
    bool report = false;
    std::vector<Error> errors;
};

// Every output is attempted even when one cannot be written (a disk that filled up during the
// run): the others still hold the run's results. Each write is atomic, so a failed one leaves no
// part of a file behind.
Written write_outputs(const Report& report, const RunArgs& a, OutputSink& out) {
    Written w;
    auto keep = [&w](Result<void> written) {
        if (!written) {
            w.errors.push_back(written.error());
        }
        return written.has_value();
    };
    w.report = keep(report.save(a.report));
    if (!a.junit.empty()) {
        keep(save_junit(report, a.junit, {a.log_dir})); // this run's logs, read beneath its dir
    }
    if (!a.markdown.empty()) {
        keep(save_markdown(report, a.markdown));
    }
    if (auto appended = append_step_summary(report); !appended) {
        spdlog::warn("GITHUB_STEP_SUMMARY: {}", appended.error().message());
    }
    for (const auto& line : ci_annotations(report, ci_log_from_env())) {
        out.write(line + '\n');
    }
    return w;
}

constexpr std::chrono::milliseconds k_stall_limit{5000};

// After the run: the outputs, the table, then emurun's exit code (125 when an output could not
// be written, else the run's).
int finish_run(const Report& report, const RunArgs& a, OutputPrinter& printer,
               const std::optional<Error>& packing = std::nullopt) {
    Written written = write_outputs(report, a, printer.out());
    if (packing) {
        written.errors.push_back(*packing); // the reports hold the run; the archive is missing
    }
    printer.out().write('\n' + to_table(report, table_style()) +
                        (written.report ? "report: " + a.report + '\n' : std::string()));
    // A reader that takes nothing for this long is not waited for: the report is written.
    printer.out().drain(k_stall_limit);
    printer.err().drain(k_stall_limit);
    if (const int err = printer.out().write_error(); err != 0) {
        // As every command: what stdout lost is an error, once the reports are written.
        written.errors.push_back(Error{"writing standard output", std::strerror(err), ""});
    }
    if (!written.errors.empty()) {
        // The run's results are in the table and the outputs that were written; each output that
        // was not is an error, and the last one ends emurun with 125.
        for (std::size_t i = 0; i + 1 < written.errors.size(); ++i) {
            spdlog::error("{}", error_text(written.errors[i]));
        }
        throw Failure(written.errors.back());
    }
    return Runner::exit_code(report, a.fail_on_flag);
}

// --matrix N, or --matrix auto: the fewest shards under the job limit's share, the projection
// on stderr.
int print_matrix(const Pipeline& pipeline, const RunnerOptions& o, const RunArgs& a) {
    if (a.matrix != "auto") {
        int count = 0;
        auto [end, ec] = std::from_chars(a.matrix.data(), a.matrix.data() + a.matrix.size(), count);
        if (ec != std::errc{} || end != a.matrix.data() + a.matrix.size()) {
            throw Failure(Error{"--matrix " + a.matrix, "expected a number of shards or auto",
                                "e.g. --matrix 4, or --matrix auto --job-limit 6h"});
        }
        History h = o.previous ? o.previous->history() : o.history;
        std::cout << unwrap(ci_matrix_json(pipeline, count, h)) << '\n';
        return 0;
    }
    if (!o.job_limit) {
        throw Failure(Error{"--matrix auto", "needs the CI job's limit",
                            "add --job-limit, e.g. --job-limit 6h"});
    }
    History h = projected_history(pipeline, o.previous ? &*o.previous : nullptr,
                                  o.baseline ? &*o.baseline : nullptr, o.timeout_multiplier);
    MatrixRequest r{*o.job_limit, o.rules.job_limit_share, o.jobs, a.build_once};
    MatrixChoice c = unwrap(choose_matrix(pipeline, h, r));
    std::string each;
    for (double p : c.projected) {
        each += (each.empty() ? "" : ", ") + format_seconds(p);
    }
    // The projection is emurun's own account: stderr, whatever the verbosity (stdout is the JSON).
    std::cerr << "emurun: matrix auto: " << c.count << " shard(s), projected " << each
              << " each (under " << 100 * r.share << "% of " << format_seconds(r.job_limit) << ")"
              << (a.build_once
                      ? "; the build job " + format_seconds(projected_total(0, c.common, r.jobs))
                      : std::string())
              << (c.unknown > 0 ? "; " + std::to_string(c.unknown) + " step(s) without history"
                                : std::string())
              << '\n';
    std::cout << unwrap(ci_matrix_json(pipeline, c.count, h)) << '\n';
    return 0;
}

// A stop signal pending (blocked since the start of the run).
bool stop_signal_pending() {
    sigset_t pending;
    sigemptyset(&pending);
    ::sigpending(&pending);
    return sigismember(&pending, SIGINT) == 1 || sigismember(&pending, SIGTERM) == 1 ||
           sigismember(&pending, SIGHUP) == 1;
}

// --unpack: the steps to reuse. Interrupted, it leaves the signal pending: the runner takes it
// before the first step, so the reports say the run was interrupted and nothing ran.
void unpack(const Pipeline& pipeline, const std::string& archive, RunnerOptions& o) {
    auto reused = unpack_artifacts(pipeline, archive, o.log_dir);
    if (!reused && stop_signal_pending()) {
        spdlog::warn("{}", error_text(reused.error()));
        return;
    }
    o.reused = unwrap(std::move(reused));
    spdlog::info("unpacked {} (artifacts {}): {} steps reused", archive, o.reused->artifacts_id,
                 o.reused->steps.size());
}

/// One line on stderr when a signal stopped the run: how many steps it stopped, how many never
/// ran (the reports say which).
void warn_interrupted(const Report& report) {
    const auto count = [&](StepStatus status) {
        return std::ranges::count(report.steps, status, &StepResult::status);
    };
    const char* name = ::sigabbrev_np(*report.interrupted_by);
    spdlog::warn("interrupted by SIG{}: {} step(s) stopped, {} not run; the reports list them",
                 name != nullptr ? name : "?", count(StepStatus::interrupted),
                 count(StepStatus::not_run));
}

int run_pipeline(const RunArgs& a) {
    // A closed stdout (`emurun run ... | head -1`) must not kill the run: writes fail with EPIPE
    // instead and the output sinks stop printing. Steps start with default dispositions.
    std::signal(SIGPIPE, SIG_IGN);
    if (a.jobs < 1) {
        // Checked here rather than by CLI11, whose range message named neither the option nor
        // a sensible range, and exited 2 instead of 125.
        throw Failure(Error{"--jobs " + std::to_string(a.jobs), "must be at least 1",
                            "the number of steps to run at once, e.g. -j 4"});
    }
    // SIGINT/SIGTERM/SIGHUP during loading (seconds for a big pipeline) stay pending, not fatal:
    // the runner takes them before it starts a step, and the report says every step was not run.
    sigset_t interrupts;
    sigemptyset(&interrupts);
    for (int sig : {SIGINT, SIGTERM, SIGHUP}) {
        sigaddset(&interrupts, sig);
    }
    ::sigprocmask(SIG_BLOCK, &interrupts, nullptr);
    if (!a.pack.empty() && (!a.shard.empty() || a.matrix_given)) {
        throw Failure(Error{"--pack", "runs the build job: it takes neither --shard nor --matrix",
                            "pack in one job, then run each shard with --unpack"});
    }
    ArchSelection selection{split_list(a.arches), a.native, {}};
    if (const Arch* host = host_arch(); host && a.native) {
        selection.native_arch = host->name;
    }
    Pipeline pipeline = unwrap(Pipeline::load(a.pipeline, selection));
    RunnerOptions o = runner_options(a, pipeline);
    if (a.matrix_given) {
        return print_matrix(pipeline, o, a);
    }
    if (!a.pack.empty()) {
        pipeline = select_build(pipeline); // the build job: every step but the tests
        o.shard.reset();                   // not a shard (CI_NODE_* of a parallel job)
    }
    // Every output checked before the first step runs: a report that would overwrite the
    // pipeline or a log, or a log dir the report cannot name, is refused with nothing written.
    std::vector<std::filesystem::path> outputs{a.report};
    for (const auto* extra : {&a.junit, &a.markdown}) {
        if (!extra->empty()) {
            outputs.emplace_back(*extra);
        }
    }
    unwrap(check_run_outputs(pipeline, o, outputs));
    unwrap(check_root_steps(pipeline));
    if (!a.unpack.empty()) {
        unpack(pipeline, a.unpack, o);
    }
    const Pipeline packed_pipeline = a.pack.empty() ? Pipeline{} : pipeline;
    // The progress line rewrites itself with \r and ESC [K: a terminal's, unless --color=never.
    const bool tty = ::isatty(STDERR_FILENO) != 0 && terminal_controls();
    auto printer = std::make_shared<OutputPrinter>(a.jobs > 1, ci_log_from_env());
    o.diagnostics = log_sink(); // an auto step's mode: debug with -v, a fallback as a warning
    // -q: nothing per step (no output, no start/finish lines); the table and reports have it.
    // The start and result lines stay outside a step's folded group, visible.
    o.on_event = [tty, printer, quiet = a.quiet](const RunEvent& e) {
        if (!quiet && e.kind == RunEvent::Kind::finished) {
            printer->finished(e.step->name);
        }
        // Heartbeats also under -q: they are for CIs that kill jobs that print nothing.
        if (!quiet || e.kind == RunEvent::Kind::flagged || e.kind == RunEvent::Kind::heartbeat) {
            printer->err().write(event_text(e, tty));
        }
        if (!quiet && e.kind == RunEvent::Kind::started) {
            printer->started(e.step->name);
        }
    };
    if (!a.quiet) {
        o.on_output = [printer](const std::string& s, Stream stream, std::string_view chunk) {
            printer->print(s, stream, chunk);
        };
    }
    const auto history = history_file(a, pipeline);
    Report report = unwrap(Runner(std::move(pipeline), o).run());
    if (history && !report.interrupted_by) {
        if (auto saved = save_run_history(*history, report); !saved) {
            spdlog::warn("timing history not kept: {}", error_text(saved.error()));
        }
    }
    if (tty) {
        printer->err().write("\r\033[K");
    }
    if (o.baseline) {
        warn_baseline_misses(baseline_misses(report, *o.baseline), a.baseline);
    }
    if (report.interrupted_by) { // said even with run -q: it is no per-step line
        warn_interrupted(report);
    }
    std::optional<Error> packing;
    if (!a.pack.empty() && !report.interrupted_by) {
        if (auto m = pack_artifacts(packed_pipeline, report, a.pack)) {
            spdlog::info("packed {} (artifacts {}): {} paths of {} steps", a.pack, m->id,
                         m->paths.size(), m->report.steps.size());
        } else if (report.interrupted_by) { // the reports say so, the exit code is 128+N
            spdlog::warn("{}", error_text(m.error()));
        } else {
            packing = m.error();
        }
    }
    return finish_run(report, a, *printer, packing);
}

} // namespace

void add_run(CLI::App& root, Action& action) {
    auto* sub = root.add_subcommand("run", "Run a pipeline's steps with timing, flags and reports");
    auto a = std::make_shared<RunArgs>();
    sub->add_option("pipeline", a->pipeline, "Pipeline JSON file")->required();
    sub->add_option("-j,--jobs", a->jobs, "Steps to run at once (at least 1)");
    sub->add_option("--shard", a->shard,
                    "Run shard K of N (K/N): test steps balanced by history (default: "
                    "CI_NODE_INDEX/CI_NODE_TOTAL when set)");
    sub->add_option("--matrix", a->matrix,
                    "Print a CI matrix (JSON) for N shards and exit; auto: the fewest shards "
                    "under --job-limit-share of --job-limit (history: --previous, else "
                    "--baseline x --timeout-multiplier)");
    sub->add_flag("--build-once", a->build_once,
                  "With --matrix auto: the shards --unpack a build job's archive, so they run "
                  "test steps only");
    auto* pack = sub->add_option("--pack", a->pack,
                                 "Build job: run every step but the tests, then pack the outputs "
                                 "of those that passed into this archive (.tar, .tar.gz, "
                                 ".tar.zst, .tar.xz)");
    auto* unpack = sub->add_option("--unpack", a->unpack,
                                   "Test job: check and unpack a --pack archive of this pipeline, "
                                   "reuse its steps, run what is left");
    pack->excludes(unpack);
    sub->add_option("--arch", a->arches,
                    "Run only these of the pipeline's arches (A[,B...]; repeatable)");
    sub->add_flag("--native", a->native,
                  "The native baseline: each per-arch step once, natively, with its \"native\" "
                  "overrides");
    sub->add_option("--baseline", a->baseline,
                    "Report of a native run: flag steps over --threshold");
    sub->add_option("--previous", a->previous, "Previous report: history, ETA, regressions");
    auto* history = sub->add_option("--history", a->history,
                                    "Keep this pipeline's timing history in DIR (default: the "
                                    "cache dir's run-history/); later runs schedule longest first "
                                    "from it");
    sub->add_flag("--no-history", a->no_history,
                  "Neither read nor keep the timing history (--previous still works)")
        ->excludes(history);
    sub->add_option("--threshold", a->threshold, "Emulated/native factor that flags (default 10)");
    sub->add_option("--factor-basis", a->factor_basis,
                    "What the factor against --baseline divides: wall (default) or cpu (user + "
                    "sys of the step's tree, steadier on a shared machine)")
        ->check(CLI::IsMember({"wall", "cpu"}));
    sub->add_option("--job-limit", a->job_limit, "CI job limit, e.g. 6h: flag a projected overrun");
    sub->add_option("--job-limit-share", a->share,
                    "Percent of --job-limit that flags (default 80)");
    sub->add_option("--timeout-multiplier", a->multiplier,
                    "N, ARCH=N,..., or auto (history, else calibrate)");
    sub->add_option("--calibration", a->calibration, "Calibration file for auto");
    sub->add_option("--grace", a->grace, "Time between SIGTERM and SIGKILL (default 10s)");
    sub->add_option("--heartbeat", a->heartbeat,
                    "Say which steps still run on stderr this often (seconds, or 5m)");
    sub->add_option("--report", a->report, "JSON report (default emurun-report.json)");
    sub->add_option("--junit", a->junit, "Also write JUnit XML here");
    sub->add_option("--markdown", a->markdown, "Also write a Markdown summary here");
    sub->add_option("--log-dir", a->log_dir, "Per-step logs (default emurun-logs)");
    sub->add_flag("--fail-on-flag", a->fail_on_flag, "Exit 3 when a step is flagged");
    sub->add_flag("-q,--quiet", a->quiet,
                  "Print nothing per step: no step output, no start/finish lines (the logs, "
                  "the table and the reports keep it all)");
    sub->callback([&action, a, sub, &root] {
        a->matrix_given = sub->count("--matrix") > 0;
        // `emurun -q run` means quiet too: the global -q before the subcommand.
        a->quiet = a->quiet || root.count("--quiet") > 0;
        action = [a] { return run_pipeline(*a); };
    });
}

} // namespace emurun::cli
