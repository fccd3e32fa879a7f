// Loading a pipeline from JSON: every error names the file, the place and the problem.
#include "pipeline/pipeline_arches.hpp"
#include "util/file.hpp"
#include "util/hash.hpp"
#include "util/json.hpp"

#include <emurun/arch.hpp>
#include <emurun/json.hpp>
#include <emurun/pipeline.hpp>

#include <algorithm>
#include <cstdio>
#include <set>
#include <string_view>
#include <unordered_map>

namespace emurun {
namespace {

using util::Json;
using util::Place;
namespace fs = std::filesystem;

// The longest duration a pipeline may give (about 31,700 years): what parse_duration allows.
constexpr double k_max_seconds = 1e12;

Result<Duration> get_duration(const Json& value, const Place& at) {
    Duration d{};
    if (value.is_number()) {
        double s = value.get<double>();
        if (s > k_max_seconds) {
            return at.fail("too long: " + util::describe(value) +
                           " seconds (at most 1e12 seconds)");
        }
        d = Duration(s > 0 ? static_cast<Duration::rep>(s * 1000) : 0); // seconds
    } else if (value.is_string()) {
        auto parsed = parse_duration(value.get<std::string>());
        if (!parsed) {
            return at.fail(parsed.error().why, parsed.error().hint);
        }
        d = *parsed;
    } else {
        return at.fail("expected a duration like \"90s\", got " + util::describe(value));
    }
    if (d.count() <= 0) {
        return at.fail("must be longer than 0, got " + util::describe(value));
    }
    return d;
}

// The first code point of `text` at byte `i` (the text is UTF-8: the JSON parser checked it),
// and its length in bytes.
std::pair<char32_t, std::size_t> code_point(std::string_view text, std::size_t i) {
    auto c = static_cast<unsigned char>(text[i]);
    std::size_t n = c < 0x80 ? 1 : c < 0xe0 ? 2 : c < 0xf0 ? 3 : 4;
    n = std::min(n, text.size() - i);
    auto cp = static_cast<char32_t>(n == 1 ? c : c & (0x7f >> n));
    for (std::size_t k = 1; k < n; ++k) {
        cp = static_cast<char32_t>((cp << 6) | (static_cast<unsigned char>(text[i + k]) & 0x3fU));
    }
    return {cp, n};
}

bool is_bidi_control(char32_t cp) {
    return cp == 0x061c || cp == 0x200e || cp == 0x200f || (cp >= 0x202a && cp <= 0x202e) ||
           (cp >= 0x2066 && cp <= 0x2069);
}

// Step and pipeline names end up in logs, tables, file names and CI annotations: no control
// characters (a newline forges a line), no bidi overrides (text that reads differently than it
// is), a length every file system takes.
Result<void> check_name(const std::string& name, const Place& at) {
    constexpr std::size_t k_max = 200;
    const char* hint = "step names appear in logs, tables and file names: use letters, digits, "
                       "spaces and punctuation";
    if (name.size() > k_max) {
        return at.fail("too long: " + std::to_string(name.size()) + " bytes (at most " +
                       std::to_string(k_max) + ")");
    }
    for (std::size_t i = 0; i < name.size();) {
        auto [cp, n] = code_point(name, i);
        char u[16];
        std::snprintf(u, sizeof u, "U+%04X", static_cast<unsigned>(cp));
        if (cp < 0x20 || (cp >= 0x7f && cp < 0xa0)) {
            return at.fail("contains a control character (" + std::string(u) + ")", hint);
        }
        if (is_bidi_control(cp)) {
            return at.fail("contains a bidirectional control character (" + std::string(u) + ")",
                           hint);
        }
        i += n;
    }
    return {};
}

Result<std::vector<fs::path>> get_paths(const Json& value, const Place& at, const fs::path& base) {
    auto list = EMURUN_TRY(util::get_string_list(value, at));
    std::vector<fs::path> out;
    for (const auto& s : list) {
        out.push_back((base / s).lexically_normal());
    }
    return out;
}

Result<void> get_env(const Json& value, const Place& at, EnvMap& into) {
    if (!value.is_object()) {
        return at.fail("expected an object of strings, got " + util::describe(value));
    }
    for (const auto& [k, v] : value.items()) {
        if (k.empty() || k.find('=') != std::string::npos || k.find('\0') != std::string::npos) {
            return at.fail("invalid variable name " + util::describe(Json(k)),
                           "a name is not empty and holds neither '=' nor NUL");
        }
        auto s = EMURUN_TRY(util::get_string(v, at.key(k)));
        into[k] = s;
    }
    return {};
}

Result<void> get_arch_and_mode(const Json& obj, const Place& at, StepDefaults& into) {
    if (obj.contains("arch")) {
        auto name = EMURUN_TRY(util::get_string(obj["arch"], at.key("arch")));
        auto arch = find_arch(name);
        if (!arch) {
            return at.key("arch").fail("unknown architecture \"" + name + "\"", arch.error().hint);
        }
        into.arch = (*arch)->name;
    }
    if (obj.contains("emulation")) {
        auto mode = EMURUN_TRY(util::get_string(obj["emulation"], at.key("emulation")));
        auto m = emulation_from(mode);
        if (!m) {
            return at.key("emulation")
                .fail("expected native, exec, sandbox, host, auto or root, got \"" + mode + "\"");
        }
        into.emulation = *m;
    }
    return {};
}

Result<int> get_retry_count(const Json& value, const Place& at) {
    if (!value.is_number_integer() || value.get<long long>() < 0 ||
        value.get<long long>() > Retries::k_max_count) {
        return at.fail("expected a whole number from 0 to " + std::to_string(Retries::k_max_count) +
                           ", got " + util::describe(value),
                       "count is the attempts after the first: \"retries\": {\"count\": 2}");
    }
    return static_cast<int>(value.get<long long>());
}

// "retries": {"count": N, "on": ["emulator_crash", "timed_out", "failed"]}.
Result<Retries> get_retries(const Json& obj, const Place& at) {
    EMURUN_TRY(util::check_object(obj, at, {"count", "on"}));
    if (!obj.contains("count")) {
        return at.fail("missing required key \"count\"", "\"retries\": {\"count\": 2}");
    }
    Retries r;
    auto count = EMURUN_TRY(get_retry_count(obj["count"], at.key("count")));
    r.count = count;
    if (!obj.contains("on")) {
        return r;
    }
    auto on = EMURUN_TRY(util::get_string_list(obj["on"], at.key("on")));
    r.on_emulator_crash = false;
    for (std::size_t i = 0; i < on.size(); ++i) {
        bool* flag = on[i] == "emulator_crash" ? &r.on_emulator_crash
                     : on[i] == "timed_out"    ? &r.on_timed_out
                     : on[i] == "failed"       ? &r.on_failed
                                               : nullptr;
        if (!flag) {
            return at.key("on").index(i).fail(
                "expected emulator_crash, timed_out or failed, got \"" + on[i] + "\"");
        }
        *flag = true;
    }
    return r;
}

Result<void> get_accelerate(const Json& value, const Place& at, StepDefaults& into);

/// "accelerate": {"tools": true | "LIST" (default true), "allow_revision_mismatch": bool}.
Result<void> get_accelerate_object(const Json& value, const Place& at, StepDefaults& into) {
    for (const auto& [k, v] : value.items()) {
        if (k != "tools" && k != "allow_revision_mismatch") {
            return at.key(k).fail("is not a key of \"accelerate\"",
                                  "use \"tools\" (true, false or a list such as "
                                  "\"toolchain,shell\") and \"allow_revision_mismatch\" (true "
                                  "or false)");
        }
    }
    if (value.contains("tools") && value["tools"].is_object()) {
        return at.key("tools").fail("expected true, false or a string of tools, got an object");
    }
    EMURUN_TRY(get_accelerate(value.contains("tools") ? value["tools"] : Json(true),
                              at.key("tools"), into));
    if (value.contains("allow_revision_mismatch")) {
        const Json& allow = value["allow_revision_mismatch"];
        if (!allow.is_boolean()) {
            return at.key("allow_revision_mismatch")
                .fail("expected true or false, got " + util::describe(allow));
        }
        into.allow_revision_mismatch = allow.get<bool>();
        if (*into.allow_revision_mismatch && !into.accelerate.value_or(true)) {
            return at.key("allow_revision_mismatch")
                .fail("is true but \"tools\" accelerates none: it allows nothing",
                      "name the tools to accelerate (\"tools\": true or a list such as "
                      "\"toolchain,shell\"), or drop allow_revision_mismatch");
        }
    }
    return {};
}

/// "accelerate": true, false, or a non-empty list of host tools or groups ("toolchain,shell"),
/// checked against the root module's names before the run (check_root_steps); or an object
/// with "tools" (those) and "allow_revision_mismatch".
Result<void> get_accelerate(const Json& value, const Place& at, StepDefaults& into) {
    if (value.is_object()) {
        return get_accelerate_object(value, at, into);
    }
    if (value.is_boolean()) {
        into.accelerate = value.get<bool>();
        into.accelerate_tools = "";
        return {};
    }
    if (!value.is_string()) {
        return at.fail(
            "expected true, false, a string of tools or an object, got " + util::describe(value),
            "true (the compilers, binutils and native tools), false (or \"none\"), a "
            "comma-separated list such as \"toolchain,shell\" or \"gcc,g++,ld,ar,nm,ranlib\", "
            "or {\"tools\": ..., \"allow_revision_mismatch\": true}");
    }
    const std::string list = EMURUN_TRY(util::get_string(value, at));
    if (list.empty()) {
        return at.fail(
            "is an empty string",
            "use true (the compilers, binutils and native tools), false, or a list such as "
            "\"toolchain,shell\"");
    }
    into.accelerate = list != "none";
    into.accelerate_tools = list == "none" ? "" : list;
    return {};
}

/// "root": DIR or IMAGE, or IMAGE#PLATFORM (relative to the file): the last '#' splits, unless
/// the whole text names a path that exists (a root directory "roots/build#2"). The platform is
/// checked against the root module's names before the run (check_root_steps).
Result<void> get_root_path(const Json& value, const Place& at, const fs::path& base,
                           StepDefaults& into) {
    const std::string text = EMURUN_TRY(util::get_string(value, at));
    std::error_code ec;
    const auto hash = fs::exists(base / text, ec) ? std::string::npos : text.rfind('#');
    const std::string dir = text.substr(0, hash);
    into.root_platform = hash == std::string::npos ? "" : text.substr(hash + 1);
    if (dir.empty() || (hash != std::string::npos && into.root_platform->empty())) {
        return at.fail("expected a root directory or an image, got \"" + text + "\"",
                       "a directory made by emurun root create, an image such as \"app.tar\", or "
                       "one platform of it: \"app.tar#arm64\"");
    }
    into.root = (base / dir).lexically_normal();
    return {};
}

/// "root" and "accelerate", for emulation "root".
Result<void> get_root(const Json& obj, const Place& at, const fs::path& base, StepDefaults& into) {
    if (obj.contains("root")) {
        EMURUN_TRY(get_root_path(obj["root"], at.key("root"), base, into));
    }
    if (obj.contains("accelerate")) {
        EMURUN_TRY(get_accelerate(obj["accelerate"], at.key("accelerate"), into));
    }
    return {};
}

// "cpu": a QEMU CPU model with its options ("cortex-a72", "max,sve=off"), as -cpu takes it.
Result<std::string> get_cpu(const Json& value, const Place& at) {
    auto cpu = EMURUN_TRY(util::get_string(value, at));
    auto bad = std::ranges::find_if(cpu, [](unsigned char c) { return c <= ' ' || c == 0x7f; });
    if (cpu.empty() || bad != cpu.end()) {
        return at.fail("expected a QEMU CPU model, got \"" + cpu + "\"",
                       "a name qemu-<arch> -cpu help lists, e.g. \"cpu\": \"cortex-a72\"");
    }
    return cpu;
}

// "memory": bytes (at least 1 MiB), or "512M", "2G", "1.5GiB" (binary units K, M, G, T).
Result<std::uint64_t> get_memory(const Json& value, const Place& at) {
    constexpr double k_min = 1 << 20;
    constexpr double k_max = 1ULL << 60;
    const std::string hint = "bytes, or a size such as \"512M\" or \"2G\" (at least 1M)";
    double bytes = -1;
    if (value.is_number()) {
        bytes = value.get<double>();
    } else if (value.is_string()) {
        const std::string text = value.get<std::string>();
        std::size_t used = 0;
        double n = -1;
        try {
            n = text.empty() || text[0] < '0' || text[0] > '9' ? -1 : std::stod(text, &used);
        } catch (const std::exception&) {
            n = -1;
        }
        std::string unit = text.substr(used);
        static const std::pair<const char*, double> units[] = {
            {"", 1}, {"K", 1024.0}, {"M", 1048576.0}, {"G", 1073741824.0}, {"T", 1099511627776.0}};
        for (const auto& [name, factor] : units) {
            for (const char* tail : {"", "B", "iB"}) {
                if (n >= 0 && unit == std::string(name) + (*name ? tail : "")) {
                    bytes = n * factor;
                }
            }
        }
    }
    if (!(bytes >= k_min && bytes <= k_max)) {
        return at.fail("expected a memory size, got " + util::describe(value), hint);
    }
    return static_cast<std::uint64_t>(bytes);
}

// "qemu": which QEMU (a version, a fetched suite or a path); which one exists is checked when
// the step runs, where the emulators are.
Result<std::string> get_qemu(const Json& value, const Place& at) {
    auto qemu = EMURUN_TRY(util::get_string(value, at));
    if (qemu.empty() || qemu.find_first_of(std::string(" \t\n\0", 4)) != std::string::npos) {
        return at.fail("expected a QEMU version, Debian suite or path, got \"" + qemu + "\"",
                       "\"qemu\": \"10.0\", \"qemu\": \"trixie\" (emurun qemu fetch) or a path");
    }
    return qemu;
}

// "limits": {"pids": N, "memory": SIZE, "cpu": CPUS}, each key overlaying `into`'s.
Result<void> get_limits(const Json& obj, const Place& at, StepLimits& into) {
    EMURUN_TRY(util::check_object(obj, at, {"pids", "memory", "cpu"}));
    if (obj.contains("pids")) {
        const Json& v = obj["pids"];
        if (!v.is_number_integer() || v.get<long long>() < 1 || v.get<long long>() > 4194304) {
            return at.key("pids").fail("expected a whole number from 1 to 4194304, got " +
                                           util::describe(v),
                                       "the processes and threads the step may have at once: "
                                       "\"limits\": {\"pids\": 512}");
        }
        into.pids = static_cast<std::uint64_t>(v.get<long long>());
    }
    if (obj.contains("memory")) {
        into.memory_bytes = EMURUN_TRY(get_memory(obj["memory"], at.key("memory")));
    }
    if (obj.contains("cpu")) {
        const Json& v = obj["cpu"];
        if (!v.is_number() || !(v.get<double>() > 0 && v.get<double>() <= 4096)) {
            return at.key("cpu").fail("expected a number of CPUs above 0, got " + util::describe(v),
                                      "\"limits\": {\"cpu\": 1.5} (one and a half CPUs)");
        }
        into.cpus = v.get<double>();
    }
    return {};
}

// "junit_missing": "flag" (the default), "fail" or "ignore".
Result<JunitMissing> get_junit_missing(const Json& value, const Place& at) {
    auto text = EMURUN_TRY(util::get_string(value, at));
    for (auto mode : {JunitMissing::flag, JunitMissing::fail, JunitMissing::ignore}) {
        if (text == to_string(mode)) {
            return mode;
        }
    }
    return at.fail("expected flag, fail or ignore, got \"" + text + "\"",
                   "what a junit pattern that gave no test results does: \"junit_missing\": "
                   "\"fail\" fails a step that passed");
}

// Keys shared by "defaults" and steps; a step's values overlay the defaults it starts from.
Result<void> get_common(const Json& obj, const Place& at, const fs::path& base,
                        StepDefaults& into) {
    EMURUN_TRY(get_arch_and_mode(obj, at, into));
    if (obj.contains("sysroots")) {
        auto p = EMURUN_TRY(get_paths(obj["sysroots"], at.key("sysroots"), base));
        into.sysroots = p;
    }
    if (obj.contains("shim_dirs")) {
        auto p = EMURUN_TRY(get_paths(obj["shim_dirs"], at.key("shim_dirs"), base));
        into.shim_dirs = p;
    }
    if (obj.contains("env")) {
        EMURUN_TRY(get_env(obj["env"], at.key("env"), into.env));
    }
    if (obj.contains("cwd")) {
        auto cwd = EMURUN_TRY(util::get_string(obj["cwd"], at.key("cwd")));
        into.cwd = (base / cwd).lexically_normal();
    }
    if (obj.contains("timeout")) {
        auto t = EMURUN_TRY(get_duration(obj["timeout"], at.key("timeout")));
        into.timeout = t;
    }
    if (obj.contains("retries")) {
        auto r = EMURUN_TRY(get_retries(obj["retries"], at.key("retries")));
        into.retries = r;
    }
    if (obj.contains("idle_timeout")) {
        auto t = EMURUN_TRY(get_duration(obj["idle_timeout"], at.key("idle_timeout")));
        if (t.count() <= 0) {
            return at.key("idle_timeout").fail("must be above 0", "\"idle_timeout\": \"10m\"");
        }
        into.idle_timeout = t;
    }
    if (obj.contains("cpu")) {
        auto cpu = EMURUN_TRY(get_cpu(obj["cpu"], at.key("cpu")));
        into.cpu = cpu;
    }
    if (obj.contains("qemu")) {
        auto qemu = EMURUN_TRY(get_qemu(obj["qemu"], at.key("qemu")));
        into.qemu = qemu;
    }
    if (obj.contains("limits")) {
        EMURUN_TRY(get_limits(obj["limits"], at.key("limits"), into.limits));
    }
    if (obj.contains("junit_missing")) {
        auto m = EMURUN_TRY(get_junit_missing(obj["junit_missing"], at.key("junit_missing")));
        into.junit_missing = m;
    }
    return get_root(obj, at, base, into);
}

Result<std::vector<std::string>> get_argv(const Json& obj, const Place& at, bool shell) {
    if (!obj.contains("argv")) {
        return at.fail("missing required key \"argv\"");
    }
    const Json& argv = obj["argv"];
    if (shell) {
        auto script = EMURUN_TRY(util::get_string(argv, at.key("argv")));
        return std::vector<std::string>{"/bin/sh", "-c", script};
    }
    if (argv.is_string()) {
        return at.key("argv").fail("expected an array of strings, got a string",
                                   "split it into arguments, or set \"shell\": true");
    }
    auto list = EMURUN_TRY(util::get_string_list(argv, at.key("argv")));
    if (list.empty() || list.front().empty()) {
        return at.key("argv").fail("expected a non-empty command, got " + util::describe(argv));
    }
    return list;
}

// "junit": ["Testing/*.xml", "meson-logs/testlog.junit.xml"]: files or glob patterns.
Result<std::vector<std::string>> get_junit(const Json& value, const Place& at) {
    auto list = EMURUN_TRY(util::get_string_list(value, at));
    for (std::size_t i = 0; i < list.size(); ++i) {
        if (list[i].empty()) {
            return at.index(i).fail("must not be empty",
                                    "name the JUnit file the step writes, relative to its cwd: "
                                    "\"junit\": [\"Testing/junit.xml\"]");
        }
    }
    return list;
}

Result<void> get_step_fields(const Json& obj, const Place& at, Step& step) {
    auto name = EMURUN_TRY(obj.contains("name") ? util::get_string(obj["name"], at.key("name"))
                                                : at.fail("missing required key \"name\""));
    if (name.empty()) {
        return at.key("name").fail("must not be empty");
    }
    EMURUN_TRY(check_name(name, at.key("name")));
    step.name = name;
    if (obj.contains("kind")) {
        auto kind = EMURUN_TRY(util::get_string(obj["kind"], at.key("kind")));
        auto k = step_kind_from(kind);
        if (!k) {
            return at.key("kind").fail("expected configure, build, test or other, got \"" + kind +
                                       "\"");
        }
        step.kind = *k;
    }
    if (obj.contains("shell")) {
        auto shell = EMURUN_TRY(util::get_bool(obj["shell"], at.key("shell")));
        step.shell = shell;
    }
    auto argv = EMURUN_TRY(get_argv(obj, at, step.shell));
    step.argv = argv;
    if (obj.contains("budget")) {
        auto b = EMURUN_TRY(get_duration(obj["budget"], at.key("budget")));
        step.budget = b;
    }
    for (auto [key, list] : {std::pair{"needs", &step.needs}, std::pair{"tags", &step.tags}}) {
        if (obj.contains(key)) {
            auto l = EMURUN_TRY(util::get_string_list(obj[key], at.key(key)));
            *list = l;
        }
    }
    if (obj.contains("junit")) {
        auto junit = EMURUN_TRY(get_junit(obj["junit"], at.key("junit")));
        step.junit = junit;
    }
    return {};
}

// True when `path` (lexically normal) lies strictly below `dir`.
bool is_below(const fs::path& path, const fs::path& dir) {
    auto rel = path.lexically_relative(dir);
    return !rel.empty() && rel != "." && *rel.begin() != "..";
}

// One of "outputs": relative to the step's cwd, staying inside it and inside the pipeline's
// directory (archives hold paths relative to that), printable (tar lists names one a line).
Result<std::string> get_output(const Json& value, const Place& at, const Step& step,
                               const fs::path& base) {
    auto text = EMURUN_TRY(util::get_string(value, at));
    const char* hint = "an output is a file, directory or glob below the step's cwd, e.g. "
                       "\"bin/tool\" or \"lib/*.so\"";
    if (text.empty() || text.front() == '/') {
        return at.fail(text.empty() ? "is empty" : "is absolute: \"" + text + "\"", hint);
    }
    if (std::ranges::any_of(text, [](unsigned char c) { return c < 0x20 || c == 0x7f; })) {
        return at.fail("contains a control character", hint);
    }
    const fs::path full = (step.cwd / text).lexically_normal();
    if (!is_below(full, step.cwd)) {
        return at.fail("\"" + text + "\" is not below the step's cwd " + step.cwd.string(), hint);
    }
    if (!is_below(full, base)) {
        return at.fail("\"" + text + "\" (" + full.string() +
                           ") is not below the pipeline's directory " + base.string(),
                       "archives hold outputs relative to the pipeline's directory: set the "
                       "step's cwd inside it");
    }
    return text;
}

Result<void> get_outputs(const Json& obj, const Place& at, const fs::path& base, Step& step) {
    if (!obj.contains("outputs")) {
        return {};
    }
    const Json& list = obj["outputs"];
    EMURUN_TRY(util::get_string_list(list, at.key("outputs")));
    for (std::size_t i = 0; i < list.size(); ++i) {
        auto out = EMURUN_TRY(get_output(list[i], at.key("outputs").index(i), step, base));
        step.outputs.push_back(std::move(out));
    }
    return {};
}

Result<Step> get_step(const Json& obj, const Place& at, const StepDefaults& defaults,
                      const fs::path& base) {
    EMURUN_TRY(util::check_object(
        obj, at,
        {"name",         "kind",      "argv",     "shell",     "cwd",        "env",
         "arch",         "emulation", "sysroots", "shim_dirs", "timeout",    "budget",
         "needs",        "tags",      "retries",  "root",      "accelerate", "cpu",
         "idle_timeout", "junit",     "outputs",  "limits",    "qemu",       "junit_missing"}));
    Step step;
    EMURUN_TRY(get_step_fields(obj, at, step));
    StepDefaults merged = defaults;
    EMURUN_TRY(get_common(obj, at, base, merged));
    step.arch = merged.arch;
    step.sysroots = merged.sysroots;
    step.shim_dirs = merged.shim_dirs;
    step.env = merged.env;
    step.cwd = merged.cwd;
    step.timeout = merged.timeout;
    step.retries = merged.retries.value_or(Retries{});
    step.root = merged.root;
    if (merged.root_platform && !merged.root_platform->empty()) {
        step.root_platform = merged.root_platform;
    }
    step.accelerate = merged.accelerate.value_or(false);
    step.cpu = merged.cpu;
    step.qemu = merged.qemu;
    step.accelerate_tools = merged.accelerate_tools.value_or("");
    step.allow_revision_mismatch = merged.allow_revision_mismatch.value_or(false);
    step.idle_timeout = merged.idle_timeout;
    step.junit_missing = merged.junit_missing.value_or(JunitMissing::flag);
    step.limits = merged.limits;
    const Arch* arch = step.arch ? *find_arch(*step.arch) : nullptr;
    // Without an explicit mode, a foreign arch runs in the private-binfmt sandbox where the
    // kernel allows it, else through the host's handlers (auto; docs/guides/pipelines.md).
    step.emulation = merged.emulation.value_or(arch && !runs_natively(*arch) ? Emulation::automatic
                                                                             : Emulation::native);
    if (!arch && (step.emulation == Emulation::exec || step.emulation == Emulation::sandbox ||
                  step.emulation == Emulation::automatic)) {
        return at.fail("emulation \"" + std::string(to_string(step.emulation)) + "\" needs an arch",
                       "set \"arch\" on the step or in \"defaults\"");
    }
    if (step.emulation == Emulation::root && !step.root) {
        return at.fail("emulation \"root\" needs a root", "set \"root\": DIR (emurun root create)");
    }
    EMURUN_TRY(get_outputs(obj, at, base, step));
    return step;
}

// " (in its aarch64 instance)" for a per-arch step's errors, else "".
std::string in_instance(const Step& s) {
    return s.template_name.empty() ? std::string{} : " (in its " + *s.arch + " instance)";
}

// `origin[i]`: the index in the file of step i (per-arch templates make several steps).
Result<void> check_names(const Pipeline& p, const Place& steps_at,
                         const std::vector<std::size_t>& origin) {
    std::map<std::string, std::size_t, std::less<>> seen;
    for (std::size_t i = 0; i < p.steps.size(); ++i) {
        auto [it, fresh] = seen.emplace(p.steps[i].name, i);
        if (!fresh) {
            return steps_at.index(origin[i]).key("name").fail(
                "duplicate step name \"" + p.steps[i].name + "\" (first used by steps[" +
                std::to_string(origin[it->second]) + "])");
        }
    }
    std::vector<std::string> names;
    for (const auto& s : p.steps) {
        names.push_back(s.name);
    }
    for (std::size_t i = 0; i < p.steps.size(); ++i) {
        const auto& needs = p.steps[i].needs;
        for (std::size_t j = 0; j < needs.size(); ++j) {
            const auto& need = needs[j];
            if (std::find(needs.begin(), needs.begin() + static_cast<std::ptrdiff_t>(j), need) !=
                needs.begin() + static_cast<std::ptrdiff_t>(j)) {
                return steps_at.index(origin[i]).key("needs").index(j).fail(
                    "\"" + need + "\" is listed twice", "list each need once");
            }
            if (!seen.contains(need)) {
                auto near = util::closest_match(need, names);
                return steps_at.index(origin[i]).key("needs").index(j).fail(
                    "unknown step \"" + need + "\"" + in_instance(p.steps[i]),
                    near ? "did you mean \"" + *near + "\"?" : std::string{});
            }
        }
    }
    return {};
}

// Depth-first search without recursion (a 100,000-step chain must not overflow the stack); a
// back edge closes a cycle, which is named in full: a -> b -> a. Linear in steps + needs.
std::optional<std::vector<std::size_t>>
find_cycle(const std::vector<std::vector<std::size_t>>& needs) {
    std::vector<int> state(needs.size(), 0);               // 0 new, 1 on the path, 2 done
    std::vector<std::pair<std::size_t, std::size_t>> path; // (step, next need to follow)
    for (std::size_t root = 0; root < needs.size(); ++root) {
        if (state[root] != 0) {
            continue;
        }
        state[root] = 1;
        path.emplace_back(root, 0);
        while (!path.empty()) {
            auto [i, k] = path.back();
            if (k == needs[i].size()) {
                state[i] = 2;
                path.pop_back();
                continue;
            }
            ++path.back().second;
            const std::size_t j = needs[i][k];
            if (state[j] == 1) {
                auto from = std::ranges::find(path, j, &std::pair<std::size_t, std::size_t>::first);
                std::vector<std::size_t> cycle;
                for (auto it = from; it != path.end(); ++it) {
                    cycle.push_back(it->first);
                }
                cycle.push_back(j);
                return cycle;
            }
            if (state[j] == 0) {
                state[j] = 1;
                path.emplace_back(j, 0);
            }
        }
    }
    return std::nullopt;
}

Result<void> check_cycles(const Pipeline& p, const Place& steps_at,
                          const std::vector<std::size_t>& origin) {
    std::unordered_map<std::string_view, std::size_t> index;
    index.reserve(p.steps.size());
    for (std::size_t i = 0; i < p.steps.size(); ++i) {
        index.emplace(p.steps[i].name, i);
    }
    std::vector<std::vector<std::size_t>> needs(p.steps.size());
    for (std::size_t i = 0; i < p.steps.size(); ++i) {
        for (const auto& need : p.steps[i].needs) {
            needs[i].push_back(index.at(need)); // check_names ran first
        }
    }
    auto cycle = find_cycle(needs);
    if (!cycle) {
        return {};
    }
    // A long cycle is named by its ends: a 100,000-step one made a megabyte of message.
    constexpr std::size_t k_shown = 5;
    std::string text;
    for (std::size_t k = 0; k < cycle->size(); ++k) {
        if (cycle->size() > 2 * k_shown + 1 && k == k_shown) {
            text += " -> ... (" + std::to_string(cycle->size() - 2 * k_shown) + " more)";
            k = cycle->size() - k_shown - 1;
            continue;
        }
        text += (text.empty() ? "" : " -> ") + p.steps[(*cycle)[k]].name;
    }
    return steps_at.index(origin[cycle->front()])
        .key("needs")
        .fail("cycle in needs: " + text, "remove one of these needs");
}

Result<StepDefaults> get_defaults(const Json& root, const Place& at, const fs::path& base) {
    StepDefaults d;
    d.cwd = base;
    if (!root.contains("defaults")) {
        return d;
    }
    const Json& obj = root["defaults"];
    EMURUN_TRY(util::check_object(obj, at.key("defaults"),
                                  {"arch", "emulation", "sysroots", "shim_dirs", "env", "cwd",
                                   "timeout", "retries", "root", "accelerate", "cpu",
                                   "idle_timeout", "limits", "qemu", "junit_missing"}));
    EMURUN_TRY(detail::check_defaults_placeholders(obj, at.key("defaults")));
    EMURUN_TRY(get_common(obj, at.key("defaults"), base, d));
    return d;
}

// A per-arch instance's error says which instance: its place is the template's.
Result<Step> get_instance(const detail::StepSource& src, const Place& at,
                          const StepDefaults& defaults, const fs::path& base) {
    auto step = get_step(src.obj, at, defaults, base);
    if (!step && !src.arch.empty()) {
        step.error().why += " (in its " + src.arch + " instance)";
    }
    return step;
}

// The steps, per-arch templates expanded for `plan`, needs rewired and checked.
Result<void> load_steps(const Json& steps, const Place& at, const detail::ArchPlan& plan,
                        Pipeline& p) {
    std::set<std::string> dropped;
    auto sources = EMURUN_TRY(detail::expand_steps(steps, at, plan, dropped));
    std::vector<std::size_t> origin;
    for (const auto& src : sources) {
        auto step = EMURUN_TRY(get_instance(src, at.index(src.index), p.defaults, p.dir));
        step.template_name = src.template_name;
        p.steps.push_back(std::move(step));
        origin.push_back(src.index);
    }
    if (p.steps.empty()) {
        return at.fail("no step is left to run natively (each has \"native\": false)",
                       "let at least one step run in the native baseline");
    }
    detail::rewire_needs(p.steps, dropped);
    for (const Arch* a : plan.arches) {
        p.arches.push_back(a->name);
    }
    p.native = plan.native != nullptr;
    EMURUN_TRY(check_names(p, at, origin));
    return check_cycles(p, at, origin);
}

} // namespace

Result<Pipeline> Pipeline::parse(std::string_view text, std::string source,
                                 const std::filesystem::path& base_dir,
                                 const ArchSelection& arches) {
    auto root = EMURUN_TRY(util::parse_json_text(text, source));
    Place at(source);
    EMURUN_TRY(
        util::check_object(root, at, {"name", "description", "arches", "defaults", "steps"}));
    Pipeline p;
    p.source = source;
    p.dir = base_dir.lexically_normal();
    if (!p.dir.has_filename() && p.dir.has_relative_path()) {
        p.dir = p.dir.parent_path(); // "/src/" -> "/src": one spelling for comparisons
    }
    p.digest = util::fnv1a64_hex(json_text(root, -1));
    auto name = EMURUN_TRY(root.contains("name") ? util::get_string(root["name"], at.key("name"))
                                                 : at.fail("missing required key \"name\""));
    if (name.empty()) {
        return at.key("name").fail("must not be empty");
    }
    EMURUN_TRY(check_name(name, at.key("name")));
    p.name = name;
    auto defaults = EMURUN_TRY(get_defaults(root, at, p.dir));
    p.defaults = defaults;
    if (!root.contains("steps")) {
        return at.fail("missing required key \"steps\"");
    }
    const Json& steps = root["steps"];
    if (!steps.is_array() || steps.empty()) {
        return at.key("steps").fail("expected a non-empty array of steps, got " +
                                    util::describe(steps));
    }
    if (arches.native) { // the baseline's pipeline is one the emulated runs take: checked as one
        Pipeline emulated = p;
        const auto all = EMURUN_TRY(detail::plan_arches(root, at, ArchSelection{}));
        EMURUN_TRY(load_steps(steps, at.key("steps"), all, emulated));
    }
    const auto plan = EMURUN_TRY(detail::plan_arches(root, at, arches));
    EMURUN_TRY(load_steps(steps, at.key("steps"), plan, p));
    return p;
}

Result<Pipeline> Pipeline::load(const std::filesystem::path& file, const ArchSelection& arches) {
    auto text = EMURUN_TRY(util::read_file(file, k_pipeline_max_bytes));
    std::error_code ec;
    fs::path abs = fs::absolute(file, ec);
    return parse(text, file.string(), ec ? fs::current_path() : abs.parent_path(), arches);
}

} // namespace emurun
