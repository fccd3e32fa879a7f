// Fuzz target for the JSON writers: json_text and the documents emurun prints or saves (the run
// report, compare, inspect --json, shim list --json, doctor --json) filled with arbitrary
// bytes — file names, ELF strings and step output are not UTF-8 by any promise. Every output
// must be valid UTF-8 that parses back as JSON; a string that was UTF-8 comes back unchanged.
#include <emurun/doctor.hpp>
#include <emurun/json.hpp>
#include <emurun/report.hpp>
#include <emurun/shim.hpp>
#include <emurun/sysroot.hpp>

#include <nlohmann/json.hpp>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

namespace {

using nlohmann::json;

[[noreturn]] void broken(const char* promise) {
    std::fprintf(stderr, "fuzz_json: broken promise: %s\n", promise);
    std::abort();
}

// The input as 12 strings, split at 0x1f (missing ones are empty), and a double from the bytes
// after the last split: any bit pattern, NaN and infinities included.
struct Pieces {
    std::vector<std::string> s;
    double number = 0;
};

Pieces split(std::string_view in) {
    Pieces p;
    std::size_t at = 0;
    while (p.s.size() < 12) {
        auto end = in.find('\x1f', at);
        p.s.emplace_back(in.substr(at, end == std::string_view::npos ? in.npos : end - at));
        at = end == std::string_view::npos ? in.size() : end + 1;
    }
    if (auto rest = in.substr(at); rest.size() >= sizeof p.number) {
        std::memcpy(&p.number, rest.data(), sizeof p.number);
    }
    return p;
}

// Writes `doc` compact and pretty; each output must be UTF-8 and parse. Returns the compact one
// parsed back.
json written(const json& doc) {
    json back;
    for (int indent : {-1, 2}) {
        const std::string text = emurun::json_text(doc, indent);
        if (!emurun::is_utf8(text)) {
            broken("json_text wrote bytes that are not UTF-8");
        }
        back = json::parse(text, nullptr, false);
        if (back.is_discarded()) {
            broken("json_text wrote text that does not parse as JSON");
        }
    }
    return back;
}

// A document the library wrote as text (inspection_json, shim_list_json): UTF-8 that parses;
// then written() as any other.
json read_back(const std::string& text) {
    if (!emurun::is_utf8(text)) {
        broken("the library wrote JSON text that is not UTF-8");
    }
    const json doc = json::parse(text, nullptr, false);
    if (doc.is_discarded()) {
        broken("the library wrote JSON text that does not parse");
    }
    return written(doc);
}

void check_strings(const Pieces& p) {
    json doc = json::object();
    json list = json::array();
    for (std::size_t i = 0; i < p.s.size(); ++i) {
        doc["k" + std::to_string(i)] = p.s[i];
        list.push_back(p.s[i]);
    }
    doc["list"] = list;
    doc[p.s[0]] = p.number;
    const json back = written(doc);
    for (std::size_t i = 0; i < p.s.size(); ++i) {
        const auto& got = back.at("list").at(i).get_ref<const std::string&>();
        if (emurun::is_utf8(p.s[i]) ? got != p.s[i] : !emurun::is_utf8(got)) {
            broken("a string did not come back (UTF-8) or is not UTF-8 (other bytes)");
        }
    }
    if (emurun::is_utf8(p.s[0]) && !back.contains(p.s[0])) {
        broken("a UTF-8 key did not come back");
    }
}

emurun::Report report_of(const Pieces& p) {
    emurun::Report r;
    r.pipeline = p.s[9];
    r.started = p.s[10];
    r.host_arch = p.s[11];
    r.wall = p.number;
    emurun::StepResult step;
    step.name = p.s[0];
    step.message = p.s[1];
    step.log = p.s[2];
    step.evidence = p.s[3];
    step.arch = p.s[8];
    step.status = emurun::StepStatus::emulator_crash;
    step.wall = p.number;
    step.flags.push_back({p.s[4], p.s[5]});
    step.attempts.push_back(
        {emurun::StepStatus::failed, 1, std::nullopt, p.number, p.s[3], p.s[6], p.s[7]});
    r.steps.push_back(step);
    r.flags.push_back({p.s[5], p.s[4]});
    return r;
}

emurun::Inspection inspection_of(const Pieces& p) {
    emurun::Inspection in;
    in.file = p.s[0];
    in.elf.elf_class = 2;
    in.elf.elf_data = 1;
    in.elf.interpreter = p.s[1];
    in.elf.needed = {p.s[2], p.s[3]};
    in.elf.runpath = {p.s[4]};
    in.elf.rpath = {p.s[5]};
    in.elf.soname = p.s[6];
    in.links.interpreter =
        emurun::LibraryLookup{p.s[1], p.s[0], std::filesystem::path(p.s[7]), p.s[8]};
    in.links.libraries.push_back({p.s[2], p.s[6], std::nullopt, p.s[9]});
    in.links.sysroots = {p.s[10]};
    return in;
}

emurun::ShimInfo shim_of(const Pieces& p) {
    emurun::ShimInfo s;
    s.name = p.s[0];
    s.path = p.s[1];
    s.target = p.s[2];
    s.arch = p.s[3];
    s.emulator = p.s[4];
    s.ld_prefix = p.s[5];
    s.env[p.s[6]] = p.s[7];
    s.cpu = p.s[8];
    return s;
}

emurun::DoctorReport doctor_of(const Pieces& p) {
    emurun::DoctorReport d;
    d.checks.push_back({p.s[0], emurun::CheckStatus::fail, p.s[1], p.s[2]});
    d.checks.push_back({p.s[3], emurun::CheckStatus::warn, p.s[4], p.s[5]});
    return d;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const Pieces p = split(std::string_view(reinterpret_cast<const char*>(data), size));
    check_strings(p);
    const emurun::Report r = report_of(p);
    (void)written(r.to_json());
    (void)written(emurun::compare_json(r, r));
    const emurun::Inspection inspection = inspection_of(p);
    (void)read_back(emurun::inspection_json({&inspection, 1}, -1));
    (void)read_back(emurun::shim_list_json({shim_of(p)}, -1));
    (void)written(emurun::doctor_json(doctor_of(p)));
    return 0;
}

std::vector<std::vector<unsigned char>> emurun_fuzz_seeds() {
    const std::string seeds[] = {
        std::string(
            "step\x1fmessage \xff\xfe\x1flogs/a_b.log\x1fqemu: uncaught target signal 11\x1f"
            "budget\x1f\xc3\xa9t\xc3\xa9\x1f\xed\xa0\x80\x1f\x80\x1f"
            "aarch64\x1fpipe\x1f"
            "2026-01-01T00:00:00Z\x1fx86_64\x1f") +
            std::string("\x00\x00\x00\x00\x00\x00\xf8\x7f", 8),
        std::string("\x1b[31m<&>\"\\\x1f\xf0\x9f\x98\x80\x1f\xf4\x90\x80\x80\x1f\xc0\xaf"),
    };
    std::vector<std::vector<unsigned char>> out;
    for (const auto& s : seeds) {
        out.emplace_back(s.begin(), s.end());
    }
    return out;
}
