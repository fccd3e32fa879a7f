// Per-arch steps: templates with ${arch}, ${triplet}, ${debian_arch}, their instances, needs
// between them, and the native baseline's variant of each step.
#include "pipeline/pipeline_arches.hpp"

#include <algorithm>
#include <map>

namespace emurun::detail {
namespace {

using util::Json;
using util::Place;

constexpr std::string_view k_known[] = {"arch", "triplet", "debian_arch"};
constexpr const char* k_escape_hint = "the placeholders are ${arch}, ${triplet} and "
                                      "${debian_arch}; write $${NAME} for a literal ${NAME} "
                                      "(a shell variable)";

bool is_known(std::string_view name) {
    return std::ranges::find(k_known, name) != std::end(k_known);
}

Result<std::string> value_of(std::string_view name, const Arch& arch, const Place& at) {
    if (name == "arch") {
        return arch.name;
    }
    if (name == "triplet") {
        return arch.triplet;
    }
    if (arch.debian.empty()) {
        return at.fail("${debian_arch}: " + arch.name + " has no Debian architecture",
                       "use ${arch} or ${triplet} for this arch");
    }
    return arch.debian;
}

// `text` with its placeholders replaced by `arch`'s values (arch null: checked, left as they
// are); `used` is set when it holds one. "$${" is a literal "${": with `final`, it becomes one.
Result<std::string> substitute(std::string_view text, const Arch* arch, const Place& at, bool& used,
                               bool final) {
    std::string out;
    for (std::size_t i = 0; i < text.size(); ++i) {
        if (text.compare(i, 3, "$${") == 0) {
            out += final ? "${" : "$${";
            i += 2;
            continue;
        }
        if (text.compare(i, 2, "${") != 0) {
            out += text[i];
            continue;
        }
        auto end = text.find('}', i);
        if (end == std::string_view::npos) {
            return at.fail("unclosed placeholder in \"" + std::string(text) + "\"", k_escape_hint);
        }
        auto name = text.substr(i + 2, end - i - 2);
        if (!is_known(name)) {
            return at.fail("unknown placeholder ${" + std::string(name) + "}", k_escape_hint);
        }
        used = true;
        out +=
            arch ? EMURUN_TRY(value_of(name, *arch, at)) : std::string(text.substr(i, end - i + 1));
        i = end;
    }
    return out;
}

// Every string value below `v` substituted in place (object keys stay as written).
Result<void> substitute_all(Json& v, const Arch* arch, const Place& at, bool& used,
                            bool final = true) {
    if (v.is_string()) {
        v = EMURUN_TRY(substitute(v.get_ref<const std::string&>(), arch, at, used, final));
    } else if (v.is_object()) {
        for (auto& [k, item] : v.items()) {
            EMURUN_TRY(substitute_all(item, arch, at.key(k), used, final));
        }
    } else if (v.is_array()) {
        for (std::size_t i = 0; i < v.size(); ++i) {
            EMURUN_TRY(substitute_all(v[i], arch, at.index(i), used, final));
        }
    }
    return {};
}

// A step that runs once in a pipeline with "arches": its "$${" become "${".
Result<Json> unescaped(Json obj, const Place& at, const ArchPlan& plan) {
    bool used = false;
    if (plan.active) {
        EMURUN_TRY(substitute_all(obj, nullptr, at, used));
    }
    return obj;
}

// Without "arches" only the three known names are placeholders (a shell's ${HOME} stays).
std::optional<std::string> known_placeholder_in(const Json& v) {
    if (v.is_string()) {
        const auto& s = v.get_ref<const std::string&>();
        for (auto name : k_known) {
            if (s.find("${" + std::string(name) + "}") != std::string::npos) {
                return std::string(name);
            }
        }
    } else if (v.is_structured()) {
        for (const auto& item : v) {
            if (auto found = known_placeholder_in(item)) {
                return found;
            }
        }
    }
    return std::nullopt;
}

Result<const Arch*> arch_named(const std::string& name, const Place& at) {
    auto arch = find_arch(name);
    if (!arch) {
        return at.fail("unknown architecture \"" + name + "\"", arch.error().hint);
    }
    return *arch;
}

std::string join(const std::vector<const Arch*>& arches) {
    std::string s;
    for (const Arch* a : arches) {
        s += (s.empty() ? "" : ", ") + a->name;
    }
    return s;
}

Result<std::vector<const Arch*>> read_arch_list(const Json& value, const Place& at) {
    auto names = EMURUN_TRY(util::get_string_list(value, at));
    if (names.empty()) {
        return at.fail("expected a non-empty list of arches",
                       "\"arches\": [\"aarch64\", \"s390x\"]");
    }
    std::vector<const Arch*> out;
    for (std::size_t i = 0; i < names.size(); ++i) {
        const Arch* a = EMURUN_TRY(arch_named(names[i], at.index(i)));
        if (std::ranges::find(out, a) != out.end()) {
            return at.index(i).fail("\"" + names[i] + "\" is " + a->name + ", listed twice",
                                    "list each arch once");
        }
        out.push_back(a);
    }
    return out;
}

Result<std::vector<const Arch*>> select(const std::vector<const Arch*>& all,
                                        const std::vector<std::string>& wanted) {
    std::vector<const Arch*> out;
    for (const auto& name : wanted) {
        const Arch* a = EMURUN_TRY(arch_named(name, Place("arch selection")));
        if (std::ranges::find(all, a) == all.end()) {
            return fail(ErrorKind::bad_input, "arch " + name,
                        "is not in the pipeline's arches (" + join(all) + ")", "pick some of those",
                        "arches");
        }
        if (std::ranges::find(out, a) == out.end()) {
            out.push_back(a);
        }
    }
    // The pipeline's order, so that the same selection always gives the same steps.
    std::vector<const Arch*> ordered;
    std::ranges::copy_if(all, std::back_inserter(ordered),
                         [&](const Arch* a) { return std::ranges::find(out, a) != out.end(); });
    return ordered;
}

} // namespace

Result<ArchPlan> plan_arches(const Json& root, const Place& at, const ArchSelection& selection) {
    ArchPlan plan;
    plan.defaults_have_arch = root.contains("defaults") && root["defaults"].is_object() &&
                              root["defaults"].contains("arch");
    if (root.contains("arches")) {
        plan.active = true;
        plan.arches = EMURUN_TRY(read_arch_list(root["arches"], at.key("arches")));
    }
    if (selection.native && !selection.arches.empty()) {
        return fail(ErrorKind::bad_input, "native baseline",
                    "takes no arch selection: it runs each step once, natively",
                    "run the baseline and each arch selection separately", "arches");
    }
    if (!selection.arches.empty()) {
        if (!plan.active) {
            return at.fail("has no \"arches\" to pick from",
                           "add \"arches\": [...] to the pipeline, or run it without a selection");
        }
        plan.arches = EMURUN_TRY(select(plan.arches, selection.arches));
    }
    if (selection.native) {
        if (selection.native_arch.empty()) {
            return fail("native baseline", "this machine's architecture is not in emurun's table",
                        "run the baseline on a machine emurun knows");
        }
        plan.native = EMURUN_TRY(arch_named(selection.native_arch, Place("native arch")));
        plan.arches = {plan.native};
    }
    return plan;
}

Result<void> check_defaults_placeholders(const Json& defaults, const Place& at) {
    if (auto name = known_placeholder_in(defaults)) {
        return at.fail("uses ${" + *name + "}",
                       "placeholders belong to the steps: move the key into each step that needs "
                       "it (those steps then run once per arch)");
    }
    return {};
}

namespace {

// The step as the native baseline runs it: "native": {...} overlaid (env merged), emulation
// native, the arch the host's when it had one.
Json native_variant(Json obj, const ArchPlan& plan, bool per_arch) {
    if (obj.contains("native")) {
        const Json& over = obj["native"];
        for (const auto& [k, v] : over.items()) {
            if (k == "env" && obj.contains("env") && obj["env"].is_object() && v.is_object()) {
                obj["env"].update(v);
            } else {
                obj[k] = v;
            }
        }
        obj.erase("native");
    }
    obj["emulation"] = "native";
    for (const char* k : {"cpu", "qemu", "root", "accelerate"}) {
        obj.erase(k);
    }
    if (per_arch || obj.contains("arch") || plan.defaults_have_arch) {
        obj["arch"] = plan.native->name;
    }
    return obj;
}

// The step's "name" as written, or "" when it is none (get_step names that problem).
std::string name_of(const Json& obj) {
    auto it = obj.find("name");
    return it != obj.end() && it->is_string() ? it->get<std::string>() : std::string{};
}

// The name of `arch`'s instance: the name with its placeholders substituted, else "name[arch]".
std::string instance_name(const std::string& raw, const std::string& substituted,
                          const Arch& arch) {
    return raw != substituted ? substituted : raw + "[" + arch.name + "]";
}

Result<StepSource> instance(const Json& obj, const Place& at, std::size_t index, const Arch& arch) {
    StepSource src{obj, index, {}, arch.name};
    bool used = false;
    EMURUN_TRY(substitute_all(src.obj, &arch, at, used));
    const std::string raw = name_of(obj);
    src.template_name = raw;
    if (!raw.empty()) { // else get_step says what is wrong with the name
        src.obj["name"] = instance_name(raw, name_of(src.obj), arch);
    }
    if (src.obj.contains("arch")) {
        auto own = EMURUN_TRY(util::get_string(src.obj["arch"], at.key("arch")));
        const Arch* a = EMURUN_TRY(arch_named(own, at.key("arch")));
        if (a != &arch) {
            return at.key("arch").fail(
                "is " + a->name + " in the " + arch.name + " instance of a per-arch step",
                "leave \"arch\" out of per-arch steps, or write \"${arch}\"");
        }
    }
    src.obj["arch"] = arch.name;
    return src;
}

// "per_arch" and "native" read and taken off the object (get_step does not know them).
Result<std::pair<bool, bool>> take_arch_keys(Json& obj, const Place& at) {
    bool per_arch = false;
    bool in_native = true;
    if (obj.contains("per_arch")) {
        per_arch = EMURUN_TRY(util::get_bool(obj["per_arch"], at.key("per_arch")));
        obj.erase("per_arch");
    }
    if (obj.contains("native") && obj["native"].is_boolean()) {
        in_native = obj["native"].get<bool>();
        obj.erase("native");
    } else if (obj.contains("native") && !obj["native"].is_object()) {
        return at.key("native").fail("expected false or an object of what differs natively, got " +
                                         util::describe(obj["native"]),
                                     "\"native\": {\"argv\": [\"make\"]} or \"native\": false");
    } else if (obj.contains("native")) {
        EMURUN_TRY(util::check_object(obj["native"], at.key("native"),
                                      {"argv", "shell", "env", "cwd", "junit", "outputs", "timeout",
                                       "budget", "sysroots", "kind"}));
    }
    return std::pair{per_arch, in_native};
}

// The native baseline's one step for `obj` (`how`: per arch, run natively at all).
Result<void> expand_native(Json obj, const Place& at, std::size_t index, const ArchPlan& plan,
                           std::pair<bool, bool> how, std::set<std::string>& dropped,
                           std::vector<StepSource>& out) {
    const auto [per_arch, in_native] = how;
    const std::string raw = name_of(obj);
    Json variant = native_variant(std::move(obj), plan, per_arch);
    StepSource src{std::move(variant), index, {}, {}};
    if (per_arch) {
        src = EMURUN_TRY(instance(src.obj, at, index, *plan.native));
    } else {
        src.obj = EMURUN_TRY(unescaped(std::move(src.obj), at, plan));
    }
    if (!in_native) {
        dropped.insert(raw);
        dropped.insert(name_of(src.obj)); // the instance's name
        return {};
    }
    out.push_back(std::move(src));
    return {};
}

Result<void> expand_one(Json obj, const Place& at, std::size_t index, const ArchPlan& plan,
                        std::set<std::string>& dropped, std::vector<StepSource>& out) {
    if (!obj.is_object()) {
        out.push_back({std::move(obj), index, {}, {}}); // get_step names the problem
        return {};
    }
    auto [per_arch, in_native] = EMURUN_TRY(take_arch_keys(obj, at));
    bool used = false;
    if (plan.active) {
        EMURUN_TRY(substitute_all(obj, nullptr, at, used, false));
    } else if (auto name = known_placeholder_in(obj)) {
        return at.fail("uses ${" + *name + "}, but the pipeline has no \"arches\"",
                       "add \"arches\": [\"aarch64\", ...] at the top of the pipeline");
    }
    if (per_arch && !plan.active) {
        return at.key("per_arch")
            .fail("is true, but the pipeline has no \"arches\"",
                  "add \"arches\": [\"aarch64\", ...] at the top");
    }
    per_arch = per_arch || used;
    if (plan.native) {
        return expand_native(std::move(obj), at, index, plan, {per_arch, in_native}, dropped, out);
    }
    obj.erase("native");
    if (!per_arch) {
        out.push_back({EMURUN_TRY(unescaped(std::move(obj), at, plan)), index, {}, {}});
        return {};
    }
    for (const Arch* arch : plan.arches) {
        auto src = EMURUN_TRY(instance(obj, at, index, *arch));
        out.push_back(std::move(src));
    }
    return {};
}

} // namespace

Result<std::vector<StepSource>> expand_steps(const Json& steps, const Place& at,
                                             const ArchPlan& plan, std::set<std::string>& dropped) {
    std::vector<StepSource> out;
    out.reserve(steps.size());
    for (std::size_t i = 0; i < steps.size(); ++i) {
        EMURUN_TRY(expand_one(steps[i], at.index(i), i, plan, dropped, out));
    }
    return out;
}

void rewire_needs(std::vector<Step>& steps, const std::set<std::string>& dropped) {
    std::map<std::string, std::vector<const Step*>, std::less<>> instances;
    for (const auto& s : steps) {
        if (!s.template_name.empty()) {
            instances[s.template_name].push_back(&s);
        }
    }
    std::vector<std::vector<std::string>> rewired(steps.size());
    for (std::size_t i = 0; i < steps.size(); ++i) {
        for (const auto& need : steps[i].needs) {
            auto it = instances.find(need);
            if (dropped.contains(need)) {
                continue;
            }
            if (it == instances.end()) {
                rewired[i].push_back(need);
                continue;
            }
            for (const Step* s : it->second) {
                if (steps[i].template_name.empty() || s->arch == steps[i].arch) {
                    rewired[i].push_back(s->name);
                }
            }
        }
    }
    for (std::size_t i = 0; i < steps.size(); ++i) {
        steps[i].needs = std::move(rewired[i]);
    }
}

} // namespace emurun::detail
