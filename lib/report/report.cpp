// The report model, its JSON form (schema_version 1) and atomic writes.
#include "util/json.hpp"

#include <emurun/report.hpp>

#include <algorithm>
#include <cerrno>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace emurun {
namespace {

using detail::Json;
using detail::Place;

constexpr StepStatus k_statuses[] = {StepStatus::passed,      StepStatus::failed,
                                     StepStatus::timed_out,   StepStatus::skipped,
                                     StepStatus::interrupted, StepStatus::not_run};

Json flags_json(const std::vector<Flag>& flags) {
    Json out = Json::array();
    for (const auto& f : flags) {
        out.push_back({{"rule", f.rule}, {"message", f.message}});
    }
    return out;
}

Json step_json(const StepResult& s) {
    Json j{{"name", s.name},
           {"kind", to_string(s.kind)},
           {"arch", s.arch},
           {"emulation", to_string(s.emulation)},
           {"status", to_string(s.status)},
           {"wall", s.wall},
           {"user", s.user},
           {"sys", s.sys},
           {"max_rss_kib", s.max_rss_kib},
           {"log", s.log.string()},
           {"message", s.message},
           {"flags", flags_json(s.flags)}};
    auto put = [&](const char* key, const auto& opt) { j[key] = opt ? Json(*opt) : Json(nullptr); };
    put("exit_code", s.exit_code);
    put("signal", s.signal);
    put("budget", s.budget);
    put("baseline_wall", s.baseline_wall);
    return j;
}

// An optional member: absent or null gives nullopt.
template <class T, class Get>
Result<std::optional<T>> optional_field(const Json& obj, const char* key, const Place& at,
                                        Get get) {
    if (!obj.contains(key) || obj[key].is_null()) {
        return std::optional<T>{};
    }
    EMURUN_TRY(v, get(obj[key], at.key(key)));
    return std::optional<T>(static_cast<T>(*v));
}

Result<int> get_int(const Json& v, const Place& at) {
    if (!v.is_number_integer()) {
        return at.fail("expected an integer, got " + detail::describe(v));
    }
    return v.get<int>();
}

Result<std::vector<Flag>> flags_from(const Json& obj, const Place& at) {
    std::vector<Flag> out;
    if (!obj.contains("flags")) {
        return out;
    }
    const Json& list = obj["flags"];
    if (!list.is_array()) {
        return at.key("flags").fail("expected an array, got " + detail::describe(list));
    }
    for (std::size_t i = 0; i < list.size(); ++i) {
        Place f = at.key("flags").index(i);
        if (!list[i].is_object() || !list[i].contains("rule") || !list[i].contains("message")) {
            return f.fail("expected {\"rule\": ..., \"message\": ...}");
        }
        EMURUN_TRY(rule, detail::get_string(list[i]["rule"], f.key("rule")));
        EMURUN_TRY(message, detail::get_string(list[i]["message"], f.key("message")));
        out.push_back({*rule, *message});
    }
    return out;
}

Result<void> step_enums_from(const Json& j, const Place& at, StepResult& s) {
    EMURUN_TRY(status, detail::get_string(j.value("status", Json()), at.key("status")));
    auto st = step_status_from(*status);
    if (!st) {
        return at.key("status").fail("unknown status \"" + *status + "\"");
    }
    s.status = *st;
    if (j.contains("kind")) {
        EMURUN_TRY(kind, detail::get_string(j["kind"], at.key("kind")));
        s.kind = step_kind_from(*kind).value_or(StepKind::other);
    }
    if (j.contains("emulation")) {
        EMURUN_TRY(mode, detail::get_string(j["emulation"], at.key("emulation")));
        s.emulation = emulation_from(*mode).value_or(Emulation::native);
    }
    return {};
}

Result<void> step_numbers_from(const Json& j, const Place& at, StepResult& s) {
    for (auto [key, into] :
         {std::pair{"wall", &s.wall}, std::pair{"user", &s.user}, std::pair{"sys", &s.sys}}) {
        EMURUN_TRY(v, detail::get_number(j.value(key, Json()), at.key(key)));
        *into = *v;
    }
    EMURUN_TRY(rss, detail::get_number(j.value("max_rss_kib", Json(0)), at.key("max_rss_kib")));
    s.max_rss_kib = static_cast<std::int64_t>(*rss);
    EMURUN_TRY(code, optional_field<int>(j, "exit_code", at, get_int));
    EMURUN_TRY(sig, optional_field<int>(j, "signal", at, get_int));
    EMURUN_TRY(budget, optional_field<double>(j, "budget", at, detail::get_number));
    EMURUN_TRY(base, optional_field<double>(j, "baseline_wall", at, detail::get_number));
    s.exit_code = *code;
    s.signal = *sig;
    s.budget = *budget;
    s.baseline_wall = *base;
    return {};
}

Result<StepResult> step_from(const Json& j, const Place& at) {
    if (!j.is_object()) {
        return at.fail("expected an object, got " + detail::describe(j));
    }
    StepResult s;
    EMURUN_TRY(name, detail::get_string(j.value("name", Json()), at.key("name")));
    s.name = *name;
    EMURUN_TRY(enums, step_enums_from(j, at, s));
    EMURUN_TRY(numbers, step_numbers_from(j, at, s));
    for (auto [key, into] : {std::pair{"arch", &s.arch}, std::pair{"message", &s.message}}) {
        EMURUN_TRY(v, detail::get_string(j.value(key, Json("")), at.key(key)));
        *into = *v;
    }
    EMURUN_TRY(log, detail::get_string(j.value("log", Json("")), at.key("log")));
    s.log = *log;
    EMURUN_TRY(flags, flags_from(j, at));
    s.flags = *flags;
    return s;
}

Result<void> header_from(const Json& j, const Place& at, Report& r) {
    EMURUN_TRY(name, detail::get_string(j.value("pipeline", Json()), at.key("pipeline")));
    r.pipeline = *name;
    EMURUN_TRY(started, detail::get_string(j.value("started", Json("")), at.key("started")));
    r.started = *started;
    EMURUN_TRY(host, detail::get_string(j.value("host_arch", Json("")), at.key("host_arch")));
    r.host_arch = *host;
    EMURUN_TRY(wall, detail::get_number(j.value("wall", Json(0)), at.key("wall")));
    r.wall = *wall;
    Json shard = j.value("shard", Json{{"index", 1}, {"count", 1}});
    EMURUN_TRY(k, get_int(shard.value("index", Json()), at.key("shard").key("index")));
    EMURUN_TRY(n, get_int(shard.value("count", Json()), at.key("shard").key("count")));
    if (*k < 1 || *n < *k) {
        return at.key("shard").fail("expected 1 <= index <= count");
    }
    r.shard_index = *k;
    r.shard_count = *n;
    EMURUN_TRY(limit, optional_field<double>(j, "job_limit", at, detail::get_number));
    EMURUN_TRY(sig, optional_field<int>(j, "interrupted_by", at, get_int));
    r.job_limit = *limit;
    r.interrupted_by = *sig;
    EMURUN_TRY(flags, flags_from(j, at));
    r.flags = *flags;
    return {};
}

} // namespace

std::string_view to_string(StepStatus status) {
    switch (status) {
    case StepStatus::passed:
        return "passed";
    case StepStatus::failed:
        return "failed";
    case StepStatus::timed_out:
        return "timed_out";
    case StepStatus::skipped:
        return "skipped";
    case StepStatus::interrupted:
        return "interrupted";
    case StepStatus::not_run:
        break;
    }
    return "not_run";
}

std::optional<StepStatus> step_status_from(std::string_view text) {
    for (auto s : k_statuses) {
        if (to_string(s) == text) {
            return s;
        }
    }
    return std::nullopt;
}

std::optional<double> StepResult::baseline_factor() const {
    if (!baseline_wall || *baseline_wall <= 0) {
        return std::nullopt;
    }
    return wall / *baseline_wall;
}

const StepResult* Report::find(std::string_view step) const {
    auto it = std::ranges::find(steps, step, &StepResult::name);
    return it == steps.end() ? nullptr : &*it;
}

bool Report::succeeded() const {
    return !interrupted_by && std::ranges::all_of(steps, [](const StepResult& s) {
        return s.status == StepStatus::passed;
    });
}

bool Report::flagged() const {
    return !flags.empty() ||
           std::ranges::any_of(steps, [](const StepResult& s) { return !s.flags.empty(); });
}

History Report::history() const {
    History h;
    for (const auto& s : steps) {
        if (s.status == StepStatus::passed || s.status == StepStatus::failed ||
            s.status == StepStatus::timed_out) {
            h[s.name] = s.wall;
        }
    }
    return h;
}

nlohmann::json Report::to_json() const {
    Json steps_json = Json::array();
    for (const auto& s : steps) {
        steps_json.push_back(step_json(s));
    }
    return Json{{"schema_version", k_schema_version},
                {"pipeline", pipeline},
                {"started", started},
                {"wall", wall},
                {"host_arch", host_arch},
                {"shard", {{"index", shard_index}, {"count", shard_count}}},
                {"job_limit", job_limit ? Json(*job_limit) : Json(nullptr)},
                {"interrupted_by", interrupted_by ? Json(*interrupted_by) : Json(nullptr)},
                {"flags", flags_json(flags)},
                {"steps", steps_json}};
}

Result<Report> Report::from_json(const nlohmann::json& j, const std::string& source) {
    Place at(source);
    if (!j.is_object()) {
        return at.fail("expected an emurun report (a JSON object), got " + detail::describe(j));
    }
    EMURUN_TRY(version, get_int(j.value("schema_version", Json()), at.key("schema_version")));
    if (*version != k_schema_version) {
        return at.key("schema_version")
            .fail("unsupported version " + std::to_string(*version) + " (this emurun reads " +
                      std::to_string(k_schema_version) + ")",
                  "use the emurun version that wrote the report");
    }
    Report r;
    EMURUN_TRY(header, header_from(j, at, r));
    const Json& list = j.value("steps", Json());
    if (!list.is_array()) {
        return at.key("steps").fail("expected an array, got " + detail::describe(list));
    }
    for (std::size_t i = 0; i < list.size(); ++i) {
        EMURUN_TRY(step, step_from(list[i], at.key("steps").index(i)));
        r.steps.push_back(std::move(*step));
    }
    return r;
}

Result<Report> Report::parse(std::string_view text, const std::string& source) {
    EMURUN_TRY(j, detail::parse_json_text(text, source));
    return from_json(*j, source);
}

Result<Report> Report::load(const std::filesystem::path& file) {
    EMURUN_TRY(text, detail::read_text_file(file));
    return parse(*text, file.string());
}

Result<void> Report::save(const std::filesystem::path& file) const {
    return write_file_atomic(file, to_json().dump(2) + "\n");
}

Result<void> write_file_atomic(const std::filesystem::path& file, std::string_view content) {
    std::filesystem::path dir = file.parent_path().empty() ? "." : file.parent_path();
    std::string tmp = (dir / ("." + file.filename().string() + ".XXXXXX")).string();
    int fd = ::mkstemp(tmp.data());
    if (fd < 0) {
        return std::unexpected(system_error("mkstemp " + tmp, errno, "is the directory writable?"));
    }
    auto fail_with = [&](const char* call) {
        int err = errno;
        ::close(fd);
        ::unlink(tmp.c_str());
        return std::unexpected(system_error(std::string(call) + " " + tmp, err));
    };
    for (std::size_t done = 0; done < content.size();) {
        ssize_t n = ::write(fd, content.data() + done, content.size() - done);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n < 0) {
            return fail_with("write");
        }
        done += static_cast<std::size_t>(n);
    }
    // Reports are readable by the CI job's other steps; mkstemp creates 0600.
    if (::fchmod(fd, 0644) != 0 || ::fsync(fd) != 0) {
        return fail_with("fsync");
    }
    if (::close(fd) != 0) {
        int err = errno;
        ::unlink(tmp.c_str());
        return std::unexpected(system_error("close " + tmp, err));
    }
    if (::rename(tmp.c_str(), file.c_str()) != 0) {
        int err = errno;
        ::unlink(tmp.c_str());
        return std::unexpected(system_error("rename " + tmp + " to " + file.string(), err));
    }
    return {};
}

} // namespace emurun
