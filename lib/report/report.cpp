// The report model, its JSON form (schema_version 1) and atomic writes.
#include "report/report_emulator.hpp"
#include "report/report_processes.hpp"
#include "report/report_schema.hpp"
#include "report/report_tests.hpp"
#include "util/file.hpp"
#include "util/json.hpp"

#include <emurun/json.hpp>
#include <emurun/report.hpp>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <fcntl.h>
#include <limits>
#include <sys/stat.h>
#include <unistd.h>
#include <unordered_set>

namespace emurun {
namespace {

using util::Json;
using util::Place;

constexpr StepStatus k_statuses[] = {
    StepStatus::passed,    StepStatus::failed,  StepStatus::emulator_crash,
    StepStatus::timed_out, StepStatus::skipped, StepStatus::interrupted,
    StepStatus::not_run,   StepStatus::reused,  StepStatus::resource_limit};

/// A mismatch's tool: a program's file name, the schema's pattern (toolchain groups, native tools).
bool is_tool_name(std::string_view name) {
    return !name.empty() && name.size() <= 64 && name.find_first_not_of('.') != name.npos &&
           std::ranges::all_of(name, [](char c) {
               return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                      c == '.' || c == '_' || c == '+' || c == '-';
           });
}

/// Every key the schema requires of `obj` is there (it may be null where the schema allows).
Result<void> check_required(const Json& obj, std::span<const std::string_view> keys,
                            const Place& at) {
    for (const std::string_view key : keys) {
        if (!obj.contains(key)) {
            return at.key(key).fail("missing", "use the report as emurun wrote it");
        }
    }
    return {};
}

Json flags_json(const std::vector<Flag>& flags) {
    Json out = Json::array();
    for (const auto& f : flags) {
        out.push_back({{"rule", f.rule}, {"message", f.message}});
    }
    return out;
}

Json attempts_json(const std::vector<Attempt>& attempts) {
    Json out = Json::array();
    for (const auto& a : attempts) {
        Json j{{"status", to_string(a.status)},
               {"wall", a.wall},
               {"message", a.message},
               {"log", a.log.string()}};
        auto put = [&](const char* key, const auto& opt) {
            j[key] = opt ? Json(*opt) : Json(nullptr);
        };
        put("exit_code", a.exit_code);
        put("signal", a.signal);
        put("evidence", a.evidence);
        out.push_back(std::move(j));
    }
    return out;
}

Json tests_json(const std::vector<TestResult>& tests) {
    Json out = Json::array();
    for (const auto& t : tests) {
        out.push_back({{"name", t.name},
                       {"classname", t.classname},
                       {"time", t.time},
                       {"status", to_string(t.status)},
                       {"message", t.message},
                       {"baseline_time", t.baseline_time ? Json(*t.baseline_time) : Json(nullptr)},
                       {"flags", flags_json(t.flags)}});
    }
    return out;
}

Json mismatches_json(const std::vector<ToolchainMismatch>& list) {
    Json out = Json::array();
    for (const auto& m : list) {
        out.push_back({{"tool", m.tool},
                       {"root_package", m.root_package},
                       {"root_source", m.root_source},
                       {"host_package", m.host_package},
                       {"host_source", m.host_source},
                       {"accelerated", m.accelerated},
                       {"message", m.message},
                       {"probe", m.probe ? Json(*m.probe) : Json(nullptr)}});
    }
    return out;
}

Result<std::vector<ToolchainMismatch>> mismatches_from(const Json& j, const Place& at) {
    std::vector<ToolchainMismatch> out;
    if (!j.contains("toolchain_mismatches")) {
        return out;
    }
    const Place list_at = at.key("toolchain_mismatches");
    const Json& list = j["toolchain_mismatches"];
    if (!list.is_array()) {
        return list_at.fail("expected an array, got " + util::describe(list));
    }
    for (std::size_t i = 0; i < list.size(); ++i) {
        const Place e = list_at.index(i);
        EMURUN_TRY(util::check_object(list[i], e,
                                      {"tool", "root_package", "root_source", "host_package",
                                       "host_source", "accelerated", "message", "probe"}));
        ToolchainMismatch m;
        for (auto [key, into] :
             {std::pair{"tool", &m.tool}, std::pair{"root_package", &m.root_package},
              std::pair{"root_source", &m.root_source}, std::pair{"host_package", &m.host_package},
              std::pair{"host_source", &m.host_source}, std::pair{"message", &m.message}}) {
            if (!list[i].contains(key)) {
                return e.key(key).fail("missing", "use the report as emurun wrote it");
            }
            auto v = EMURUN_TRY(util::get_string(list[i][key], e.key(key)));
            *into = v;
        }
        if (!is_tool_name(m.tool)) {
            return e.key("tool").fail("expected a program's name (gcc, g++, cpp, binutils or a "
                                      "native tool such as xz), got \"" +
                                      m.tool + "\"");
        }
        const Json probe = list[i].value("probe", Json(nullptr));
        if (!probe.is_null()) { // "" in reports of older versions: it did not run
            auto v = EMURUN_TRY(util::get_string(probe, e.key("probe")));
            m.probe = v.empty() ? std::nullopt : std::optional<std::string>(v);
        }
        if (!list[i].contains("accelerated")) {
            return e.key("accelerated").fail("missing", "use the report as emurun wrote it");
        }
        m.accelerated = EMURUN_TRY(util::get_bool(list[i]["accelerated"], e.key("accelerated")));
        out.push_back(std::move(m));
    }
    return out;
}

Json step_json(const StepResult& s) {
    Json j{{"name", s.name},
           {"kind", to_string(s.kind)},
           {"arch", s.arch},
           {"template", s.template_name},
           {"emulation", to_string(s.emulation)},
           {"accelerated", s.accelerated},
           {"accelerated_tools", s.accelerated_tools},
           {"status", to_string(s.status)},
           {"wall", s.wall},
           {"user", s.user},
           {"sys", s.sys},
           {"max_rss_kib", s.max_rss_kib},
           {"log", s.log.string()},
           {"message", s.message},
           {"flags", flags_json(s.flags)},
           {"attempts", attempts_json(s.attempts)},
           {"tests", tests_json(s.tests)},
           {"emulator", detail::emulator_json(s.emulator)},
           {"image", detail::image_json(s.image)},
           {"processes", detail::processes_json(s.processes)},
           {"toolchain_mismatches", mismatches_json(s.toolchain_mismatches)}};
    auto put = [&](const char* key, const auto& opt) { j[key] = opt ? Json(*opt) : Json(nullptr); };
    put("acceleration", s.acceleration);
    put("exit_code", s.exit_code);
    put("signal", s.signal);
    put("budget", s.budget);
    put("baseline_wall", s.baseline_wall);
    put("baseline_cpu", s.baseline_cpu);
    put("evidence", s.evidence);
    put("timeout_reason", s.timeout_reason);
    put("limit_gap", s.limit_gap);
    return j;
}

// An optional member: absent or null gives nullopt.
template <class T, class Get>
Result<std::optional<T>> optional_field(const Json& obj, const char* key, const Place& at,
                                        Get get) {
    if (!obj.contains(key) || obj[key].is_null()) {
        return std::optional<T>{};
    }
    auto v = EMURUN_TRY(get(obj[key], at.key(key)));
    return std::optional<T>(static_cast<T>(v));
}

Result<int> get_int(const Json& v, const Place& at, int min = 1, int max = 1'000'000) {
    auto i = EMURUN_TRY(util::get_integer(v, at, min, max));
    return static_cast<int>(i);
}

Result<int> get_exit_code(const Json& v, const Place& at) {
    return get_int(v, at, 0, 255);
}

Result<int> get_signal(const Json& v, const Place& at) {
    return get_int(v, at, 1, 64);
}

// Seconds: finite, not negative ("-0" is refused too: a time is never signed) and at most
// detail::k_max_seconds.
using detail::k_max_seconds;
Result<double> get_seconds(const Json& v, const Place& at) {
    auto s = EMURUN_TRY(util::get_number_at_least(v, at, 0));
    if (std::signbit(s)) {
        return at.fail("expected a number >= 0, got " + util::describe(v));
    }
    if (!std::isfinite(s) || s > k_max_seconds) {
        return at.fail("expected a number of seconds from 0 to 1e9, got " + util::describe(v),
                       "use the report as emurun wrote it");
    }
    return s;
}

// "2026-01-31T12:00:00Z", as the runner writes it (empty in reports that never started): the
// shape, and a time that exists (no February 30th, no 25:61:61; a leap second's :60 is one).
bool is_utc_time(std::string_view t) {
    constexpr std::string_view k_shape = "dddd-dd-ddTdd:dd:ddZ";
    if (t.size() != k_shape.size()) {
        return false;
    }
    for (std::size_t i = 0; i < t.size(); ++i) {
        bool digit = t[i] >= '0' && t[i] <= '9';
        if (k_shape[i] == 'd' ? !digit : t[i] != k_shape[i]) {
            return false;
        }
    }
    auto num = [&](std::size_t at, std::size_t n) {
        int v = 0;
        for (std::size_t i = at; i < at + n; ++i) {
            v = v * 10 + (t[i] - '0');
        }
        return v;
    };
    const int year = num(0, 4), month = num(5, 2), day = num(8, 2);
    if (year < 1970) { // before the epoch: no run started then
        return false;
    }
    const bool leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
    constexpr int k_days[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    return month >= 1 && month <= 12 && day >= 1 &&
           day <= k_days[month - 1] + (month == 2 && leap ? 1 : 0) && num(11, 2) <= 23 &&
           num(14, 2) <= 59 && num(17, 2) <= 60;
}

// A name from a report (pipeline, step, template, arch, test): a string of at most `max` bytes.
Result<std::string> get_name(const Json& v, const Place& at, std::size_t max = k_report_name_max) {
    auto name = EMURUN_TRY(util::get_string(v, at));
    if (name.size() > max) {
        return at.fail("too long: " + std::to_string(name.size()) + " bytes (at most " +
                           std::to_string(max) + ")",
                       "use the report as emurun wrote it: its names are a pipeline's");
    }
    return name;
}

std::string known_rules() {
    std::string out;
    for (const std::string_view r : detail::flag_rules()) {
        out += (out.empty() ? "" : ", ") + std::string(r);
    }
    return out;
}

Result<std::vector<Flag>> flags_from(const Json& obj, const Place& at) {
    std::vector<Flag> out;
    if (!obj.contains("flags")) {
        return out;
    }
    const Json& list = obj["flags"];
    if (!list.is_array()) {
        return at.key("flags").fail("expected an array, got " + util::describe(list));
    }
    for (std::size_t i = 0; i < list.size(); ++i) {
        Place f = at.key("flags").index(i);
        if (!list[i].is_object() || !list[i].contains("rule") || !list[i].contains("message")) {
            return f.fail("expected {\"rule\": ..., \"message\": ...}");
        }
        auto rule = EMURUN_TRY(util::get_string(list[i]["rule"], f.key("rule")));
        if (std::ranges::find(detail::flag_rules(), rule) == detail::flag_rules().end()) {
            return f.key("rule").fail("unknown rule \"" + rule + "\" (expected " + known_rules() +
                                          ")",
                                      "use the report as emurun wrote it");
        }
        auto message = EMURUN_TRY(util::get_string(list[i]["message"], f.key("message")));
        out.push_back({rule, message});
    }
    return out;
}

Result<StepStatus> status_from(const Json& j, const Place& at) {
    auto status = EMURUN_TRY(util::get_string(j.value("status", Json()), at.key("status")));
    auto st = step_status_from(status);
    if (!st) {
        return at.key("status").fail("unknown status \"" + status + "\"");
    }
    return *st;
}

Result<Attempt> attempt_from(const Json& j, const Place& at) {
    if (!j.is_object()) {
        return at.fail("expected an object, got " + util::describe(j));
    }
    Attempt a;
    auto status = EMURUN_TRY(status_from(j, at));
    auto wall = EMURUN_TRY(get_seconds(j.value("wall", Json(0)), at.key("wall")));
    auto code = EMURUN_TRY(optional_field<int>(j, "exit_code", at, get_exit_code));
    auto sig = EMURUN_TRY(optional_field<int>(j, "signal", at, get_signal));
    auto evidence = EMURUN_TRY(optional_field<std::string>(j, "evidence", at, util::get_string));
    auto message = EMURUN_TRY(util::get_string(j.value("message", Json("")), at.key("message")));
    auto log = EMURUN_TRY(util::get_string(j.value("log", Json("")), at.key("log")));
    a.status = status;
    a.wall = wall;
    a.exit_code = code;
    a.signal = sig;
    a.evidence = evidence;
    a.message = message;
    a.log = log;
    return a;
}

Result<std::vector<Attempt>> attempts_from(const Json& obj, const Place& at) {
    std::vector<Attempt> out;
    if (!obj.contains("attempts")) {
        return out;
    }
    const Json& list = obj["attempts"];
    if (!list.is_array()) {
        return at.key("attempts").fail("expected an array, got " + util::describe(list));
    }
    for (std::size_t i = 0; i < list.size(); ++i) {
        auto a = EMURUN_TRY(attempt_from(list[i], at.key("attempts").index(i)));
        out.push_back(std::move(a));
    }
    return out;
}

Result<TestResult> test_from(const Json& j, const Place& at) {
    EMURUN_TRY(util::check_object(
        j, at, {"name", "classname", "time", "status", "message", "baseline_time", "flags"}));
    TestResult t;
    auto name = EMURUN_TRY(get_name(j.value("name", Json()), at.key("name"), k_test_name_stored));
    if (name.empty()) {
        return at.key("name").fail("must not be empty");
    }
    auto classname = EMURUN_TRY(
        get_name(j.value("classname", Json("")), at.key("classname"), k_test_name_stored));
    auto time = EMURUN_TRY(get_seconds(j.value("time", Json()), at.key("time")));
    auto status = EMURUN_TRY(util::get_string(j.value("status", Json()), at.key("status")));
    auto st = test_status_from(status);
    if (!st) {
        return at.key("status").fail("expected passed, failed, error or skipped, got \"" + status +
                                     "\"");
    }
    auto message = EMURUN_TRY(util::get_string(j.value("message", Json("")), at.key("message")));
    auto base = EMURUN_TRY(optional_field<double>(j, "baseline_time", at, get_seconds));
    auto flags = EMURUN_TRY(flags_from(j, at));
    t.name = name;
    t.classname = classname;
    t.time = time;
    t.status = *st;
    t.message = message;
    t.baseline_time = base;
    t.flags = flags;
    return t;
}

Result<std::vector<TestResult>> tests_from(const Json& obj, const Place& at) {
    std::vector<TestResult> out;
    if (!obj.contains("tests")) {
        return out;
    }
    const Json& list = obj["tests"];
    if (!list.is_array()) {
        return at.key("tests").fail("expected an array, got " + util::describe(list));
    }
    for (std::size_t i = 0; i < list.size(); ++i) {
        auto t = EMURUN_TRY(test_from(list[i], at.key("tests").index(i)));
        out.push_back(std::move(t));
    }
    return out;
}

// A step's name: a name (get_name), not empty, without control characters (a newline would
// forge a line in every text output that names the step).
Result<std::string> get_step_name(const Json& v, const Place& at) {
    auto name = EMURUN_TRY(get_name(v, at));
    if (name.empty()) {
        return at.fail("must not be empty", "use the report as emurun wrote it");
    }
    for (const unsigned char c : name) {
        if (c < 0x20 || c == 0x7f) {
            char code[8];
            std::snprintf(code, sizeof code, "0x%02x", c);
            return at.fail("holds a control character (" + std::string(code) + ")",
                           "use the report as emurun wrote it: its names are a pipeline's");
        }
    }
    return name;
}

Result<void> step_enums_from(const Json& j, const Place& at, StepResult& s) {
    auto status = EMURUN_TRY(status_from(j, at));
    s.status = status;
    if (j.contains("kind")) {
        auto kind = EMURUN_TRY(util::get_string(j["kind"], at.key("kind")));
        auto k = step_kind_from(kind);
        if (!k) {
            return at.key("kind").fail("expected configure, build, test or other, got " +
                                       util::describe(j["kind"]));
        }
        s.kind = *k;
    }
    if (j.contains("emulation")) {
        auto mode = EMURUN_TRY(util::get_string(j["emulation"], at.key("emulation")));
        const auto e = emulation_from(mode);
        if (!e) {
            return at.key("emulation")
                .fail("expected native, exec, sandbox, host, auto or root, got \"" + mode + "\"");
        }
        s.emulation = *e;
    }
    if (j.contains("accelerated")) {
        s.accelerated = EMURUN_TRY(util::get_bool(j["accelerated"], at.key("accelerated")));
    }
    if (j.contains("acceleration") && !j["acceleration"].is_null()) {
        s.acceleration = EMURUN_TRY(util::get_string(j["acceleration"], at.key("acceleration")));
        if (s.acceleration->empty()) {
            return at.key("acceleration")
                .fail("is empty", "null when the step asked for no acceleration, else "
                                  "\"toolchain\" or the tools listed");
        }
    }
    if (j.contains("accelerated_tools")) {
        s.accelerated_tools =
            EMURUN_TRY(util::get_string_list(j["accelerated_tools"], at.key("accelerated_tools")));
    }
    if (s.accelerated == s.accelerated_tools.empty()) { // accelerated: some tool ran in its place
        return at.key("accelerated")
            .fail(std::string(s.accelerated ? "is true but accelerated_tools is empty or missing"
                                            : "is false but accelerated_tools names tools") +
                      " (accelerated: some host tool ran in the root's place)",
                  "use the report as emurun wrote it");
    }
    return {};
}

Result<void> step_numbers_from(const Json& j, const Place& at, StepResult& s) {
    for (auto [key, into] :
         {std::pair{"wall", &s.wall}, std::pair{"user", &s.user}, std::pair{"sys", &s.sys}}) {
        auto v = EMURUN_TRY(get_seconds(j.value(key, Json()), at.key(key)));
        *into = v;
    }
    auto rss = EMURUN_TRY(util::get_integer(j.value("max_rss_kib", Json(0)), at.key("max_rss_kib"),
                                            0, std::numeric_limits<std::int64_t>::max()));
    s.max_rss_kib = rss;
    auto code = EMURUN_TRY(optional_field<int>(j, "exit_code", at, get_exit_code));
    auto sig = EMURUN_TRY(optional_field<int>(j, "signal", at, get_signal));
    if (code && sig) {
        return at.fail("has both exit_code and signal (a process either exits or is killed)");
    }
    auto budget = EMURUN_TRY(optional_field<double>(j, "budget", at, get_seconds));
    auto base = EMURUN_TRY(optional_field<double>(j, "baseline_wall", at, get_seconds));
    auto base_cpu = EMURUN_TRY(optional_field<double>(j, "baseline_cpu", at, get_seconds));
    s.exit_code = code;
    s.signal = sig;
    s.budget = budget;
    s.baseline_wall = base;
    s.baseline_cpu = base_cpu;
    return {};
}

Result<StepResult> step_from(const Json& j, const Place& at) {
    if (!j.is_object()) {
        return at.fail("expected an object, got " + util::describe(j));
    }
    EMURUN_TRY(check_required(j, detail::step_required_keys(), at));
    StepResult s;
    auto name = EMURUN_TRY(get_step_name(j.value("name", Json()), at.key("name")));
    s.name = name;
    EMURUN_TRY(step_enums_from(j, at, s));
    EMURUN_TRY(step_numbers_from(j, at, s));
    if (s.status == StepStatus::passed && (s.signal || s.exit_code.value_or(0) != 0)) {
        return at.fail("is passed with " +
                           (s.signal ? "signal " + std::to_string(*s.signal)
                                     : "exit_code " + std::to_string(*s.exit_code)) +
                           " (a passed step exited 0)",
                       "use the report as emurun wrote it");
    }
    for (auto [key, into] : {std::pair{"arch", &s.arch}, std::pair{"template", &s.template_name}}) {
        auto v = EMURUN_TRY(get_name(j.value(key, Json("")), at.key(key)));
        *into = v;
    }
    auto message = EMURUN_TRY(util::get_string(j.value("message", Json("")), at.key("message")));
    s.message = message;
    auto log = EMURUN_TRY(util::get_string(j.value("log", Json("")), at.key("log")));
    s.log = log;
    auto evidence = EMURUN_TRY(optional_field<std::string>(j, "evidence", at, util::get_string));
    s.evidence = evidence;
    auto flags = EMURUN_TRY(flags_from(j, at));
    s.flags = flags;
    auto attempts = EMURUN_TRY(attempts_from(j, at));
    s.attempts = attempts;
    auto tests = EMURUN_TRY(tests_from(j, at));
    s.tests = tests;
    auto emulator = EMURUN_TRY(detail::emulator_from(j, at));
    s.emulator = emulator;
    auto image = EMURUN_TRY(detail::image_from(j, at));
    s.image = image;
    auto processes = EMURUN_TRY(detail::processes_from(j, at));
    s.processes = processes;
    auto mismatches = EMURUN_TRY(mismatches_from(j, at));
    s.toolchain_mismatches = mismatches;
    auto reason =
        EMURUN_TRY(optional_field<std::string>(j, "timeout_reason", at, util::get_string));
    if (reason && *reason != "timeout" && *reason != "idle") {
        return at.key("timeout_reason")
            .fail("expected timeout, idle or null, got \"" + *reason + "\"");
    }
    s.timeout_reason = reason;
    auto gap = EMURUN_TRY(optional_field<std::string>(j, "limit_gap", at, util::get_string));
    s.limit_gap = gap;
    return s;
}

// "artifacts": {"id": "<16 hex digits>", "packed": bool}, or null / absent.
Result<std::optional<ArtifactLink>> artifacts_from(const Json& j, const Place& at) {
    if (!j.contains("artifacts") || j["artifacts"].is_null()) {
        return std::optional<ArtifactLink>{};
    }
    const Place a = at.key("artifacts");
    EMURUN_TRY(util::check_object(j["artifacts"], a, {"id", "packed"}));
    ArtifactLink link;
    auto id = EMURUN_TRY(util::get_string(j["artifacts"].value("id", Json()), a.key("id")));
    auto packed =
        EMURUN_TRY(util::get_bool(j["artifacts"].value("packed", Json()), a.key("packed")));
    if (id.size() != 16 || id.find_first_not_of("0123456789abcdef") != std::string::npos) {
        return a.key("id").fail("expected 16 hex digits, got " + util::describe(Json(id)));
    }
    link.id = id;
    link.packed = packed;
    return std::optional<ArtifactLink>(link);
}

Result<void> header_from(const Json& j, const Place& at, Report& r) {
    auto name = EMURUN_TRY(get_name(j.value("pipeline", Json()), at.key("pipeline")));
    r.pipeline = name;
    const Json digest = j.value("pipeline_digest", Json());
    if (!digest.is_null()) {
        auto d = EMURUN_TRY(util::get_string(digest, at.key("pipeline_digest")));
        if (d.size() != 16 || d.find_first_not_of("0123456789abcdef") != std::string::npos) {
            return at.key("pipeline_digest")
                .fail("expected 16 hex digits, got " + util::describe(digest));
        }
        r.pipeline_digest = d;
    }
    auto started = EMURUN_TRY(util::get_string(j.value("started", Json("")), at.key("started")));
    if (!started.empty() && !is_utc_time(started)) {
        return at.key("started").fail("expected a UTC time like \"2026-01-31T12:00:00Z\", got " +
                                      util::describe(Json(started)));
    }
    r.started = started;
    auto host = EMURUN_TRY(util::get_string(j.value("host_arch", Json("")), at.key("host_arch")));
    r.host_arch = host;
    auto wall = EMURUN_TRY(get_seconds(j.value("wall", Json(0)), at.key("wall")));
    r.wall = wall;
    Json shard = j.value("shard", Json{{"index", 1}, {"count", 1}});
    if (!shard.is_object()) {
        return at.key("shard").fail("expected {\"index\": K, \"count\": N}, got " +
                                    util::describe(shard));
    }
    auto k = EMURUN_TRY(get_int(shard.value("index", Json()), at.key("shard").key("index")));
    auto n = EMURUN_TRY(get_int(shard.value("count", Json()), at.key("shard").key("count")));
    if (k < 1 || n < k) {
        return at.key("shard").fail("expected 1 <= index <= count");
    }
    r.shard_index = k;
    r.shard_count = n;
    auto limit = EMURUN_TRY(optional_field<double>(j, "job_limit", at, get_seconds));
    auto sig = EMURUN_TRY(optional_field<int>(j, "interrupted_by", at, get_signal));
    r.job_limit = limit;
    r.interrupted_by = sig;
    auto flags = EMURUN_TRY(flags_from(j, at));
    r.flags = flags;
    auto link = EMURUN_TRY(artifacts_from(j, at));
    r.artifacts = link;
    auto basis =
        EMURUN_TRY(util::get_string(j.value("factor_basis", Json("wall")), at.key("factor_basis")));
    auto b = factor_basis_from(basis);
    if (!b) {
        return at.key("factor_basis").fail("expected \"wall\" or \"cpu\", got \"" + basis + "\"");
    }
    r.factor_basis = *b;
    auto threshold =
        EMURUN_TRY(util::get_number(j.value("threshold", Json(10)), at.key("threshold")));
    if (!(threshold > 0 && threshold <= 1e9)) { // check_rules' range: NaN fails too
        return at.key("threshold")
            .fail("expected a number > 0 (and at most 1e9), got " + std::to_string(threshold));
    }
    r.threshold = threshold;
    auto native = EMURUN_TRY(
        util::get_bool(j.value("native_baseline", Json(false)), at.key("native_baseline")));
    r.native_baseline = native;
    return {};
}

} // namespace

std::string_view to_string(StepStatus status) {
    switch (status) {
    case StepStatus::passed:
        return "passed";
    case StepStatus::failed:
        return "failed";
    case StepStatus::emulator_crash:
        return "emulator_crash";
    case StepStatus::timed_out:
        return "timed_out";
    case StepStatus::skipped:
        return "skipped";
    case StepStatus::interrupted:
        return "interrupted";
    case StepStatus::reused:
        return "reused";
    case StepStatus::resource_limit:
        return "resource_limit";
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

std::string_view to_string(FactorBasis basis) {
    return basis == FactorBasis::cpu ? "cpu" : "wall";
}

std::optional<FactorBasis> factor_basis_from(std::string_view text) {
    for (auto b : {FactorBasis::wall, FactorBasis::cpu}) {
        if (to_string(b) == text) {
            return b;
        }
    }
    return std::nullopt;
}

std::optional<double> StepResult::factor(FactorBasis basis) const {
    if (basis == FactorBasis::wall) {
        return baseline_factor();
    }
    if (!baseline_cpu || *baseline_cpu <= 0) {
        return std::nullopt;
    }
    return cpu() / *baseline_cpu;
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

const StepResult* Report::find_like(const StepResult& step) const {
    const StepResult* first = nullptr;
    for (const auto& s : steps) {
        if (step.template_name.empty() || s.template_name != step.template_name) {
            continue;
        }
        if (s.arch == step.arch) {
            return &s; // a report of several arches: the same arch's instance
        }
        first = first ? first : &s;
    }
    return first ? first : find(step.name);
}

std::vector<std::string> Report::arches() const {
    std::vector<std::string> out;
    for (const auto& s : steps) {
        if (!s.template_name.empty() && std::ranges::find(out, s.arch) == out.end()) {
            out.push_back(s.arch);
        }
    }
    return out;
}

bool Report::succeeded() const {
    return !interrupted_by && std::ranges::all_of(steps, [](const StepResult& s) {
        return counts_as_passed(s.status);
    });
}

bool Report::flagged() const {
    auto test_flagged = [](const TestResult& t) { return !t.flags.empty(); };
    return !flags.empty() || std::ranges::any_of(steps, [&](const StepResult& s) {
        return !s.flags.empty() || std::ranges::any_of(s.tests, test_flagged);
    });
}

History Report::history() const {
    History h;
    for (const auto& s : steps) {
        if (s.status == StepStatus::passed || s.status == StepStatus::failed ||
            s.status == StepStatus::timed_out || s.status == StepStatus::reused) {
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
    return Json{
        {"schema_version", k_schema_version},
        {"pipeline", pipeline},
        {"pipeline_digest", pipeline_digest.empty() ? Json(nullptr) : Json(pipeline_digest)},
        {"started", started},
        {"wall", wall},
        {"host_arch", host_arch},
        {"shard", {{"index", shard_index}, {"count", shard_count}}},
        {"job_limit", job_limit ? Json(*job_limit) : Json(nullptr)},
        {"factor_basis", to_string(factor_basis)},
        {"threshold", threshold},
        {"interrupted_by", interrupted_by ? Json(*interrupted_by) : Json(nullptr)},
        {"artifacts",
         artifacts ? Json{{"id", artifacts->id}, {"packed", artifacts->packed}} : Json(nullptr)},
        {"native_baseline", native_baseline},
        {"flags", flags_json(flags)},
        {"steps", steps_json}};
}

Result<Report> Report::from_json(const nlohmann::json& j, const std::string& source) {
    Place at(source);
    if (!j.is_object()) {
        return at.fail("expected an emurun report (a JSON object), got " + util::describe(j));
    }
    if (!j.contains("schema_version")) {
        return at.fail("not an emurun report: it has no schema_version",
                       "give a report written by 'emurun run'");
    }
    auto version = EMURUN_TRY(
        get_int(j.value("schema_version", Json()), at.key("schema_version"), 0, 1'000'000));
    if (version != k_schema_version) {
        return at.key("schema_version")
            .fail("unsupported version " + std::to_string(version) + " (this emurun reads " +
                      std::to_string(k_schema_version) + ")",
                  "use the emurun version that wrote the report");
    }
    EMURUN_TRY(check_required(j, detail::report_required_keys(), at));
    Report r;
    EMURUN_TRY(header_from(j, at, r));
    const Json& list = j.value("steps", Json());
    if (!list.is_array()) {
        return at.key("steps").fail("expected an array, got " + util::describe(list));
    }
    std::unordered_set<std::string> names;
    for (std::size_t i = 0; i < list.size(); ++i) {
        auto step = EMURUN_TRY(step_from(list[i], at.key("steps").index(i)));
        if (!names.insert(step.name).second) {
            return at.key("steps").index(i).key("name").fail(
                "\"" + step.name +
                    "\" is the name of an earlier step too (each step is there once)",
                "use the report as emurun wrote it");
        }
        r.steps.push_back(std::move(step));
    }
    return r;
}

Result<Report> Report::parse(std::string_view text, const std::string& source) {
    auto j = EMURUN_TRY(util::parse_json_text(text, source));
    return from_json(j, source);
}

Result<Report> Report::load(const std::filesystem::path& file) {
    auto text = EMURUN_TRY(util::read_file(file, k_report_max_bytes));
    return parse(text, file.string());
}

Result<void> Report::save(const std::filesystem::path& file) const {
    return util::write_file_atomic(file, json_text(to_json()) + "\n");
}

Result<void> save_junit(const Report& report, const std::filesystem::path& file,
                        const JunitLogs& logs) {
    return util::write_file_atomic(file, to_junit(report, logs));
}

namespace {

// `markdown` cut at a line so that a file of `used` bytes stays within cap.max_bytes, with
// cap.note after it (nothing when not even the note fits).
std::string within(std::string markdown, std::uintmax_t used, const MarkdownCap& cap) {
    const std::size_t room =
        used >= cap.max_bytes ? 0 : cap.max_bytes - static_cast<std::size_t>(used);
    if (markdown.size() <= room) {
        return markdown;
    }
    if (room <= cap.note.size()) {
        return {};
    }
    const auto cut = markdown.rfind('\n', room - cap.note.size() - 1);
    markdown.resize(cut == std::string::npos ? 0 : cut + 1);
    return markdown + cap.note;
}

} // namespace

Result<void> append_markdown(const Report& report, const std::filesystem::path& file,
                             const std::optional<MarkdownCap>& cap) {
    std::string text = to_markdown(report);
    if (cap) {
        std::error_code ec;
        const auto size = std::filesystem::file_size(file, ec); // what is there already
        text = within(std::move(text), ec ? 0 : size, *cap);
    }
    return util::append_file(file, text);
}

Result<void> save_markdown(const Report& report, const std::filesystem::path& file) {
    return util::write_file_atomic(file, to_markdown(report));
}

} // namespace emurun
