// The probe corpus: the first time a root's compilers are accelerated with a given host cross
// toolchain (probe_key: the root's and the host's toolchain packages, source versions included),
// a few small C and C++ files are compiled in the root twice, by the root's own emulated
// compiler and by the accelerated one, with the root's hardening flags (dpkg-buildflags, else
// Debian's defaults) and Python's sysconfig CFLAGS; the objects without .comment must be the
// same bytes. The verdict is cached per key in emurun's cache dir (util::own_cache_dir), so
// later runs pay nothing. See docs/guides/foreign-roots.md.
#include "root/root_internal.hpp"
#include "util/cache.hpp"
#include "util/file.hpp"
#include "util/hash.hpp"
#include "util/temp_dir.hpp"

#include <emurun/sandbox.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdint>
#include <set>

namespace emurun::root_detail {
namespace fs = std::filesystem;

namespace {

/// Bumped whenever the corpus or the script changes: old verdicts are then not reused.
constexpr const char* k_corpus_version = "1";
constexpr const char* k_inside = "/tmp/emurun-probe";

struct CorpusFile {
    const char* name;
    const char* text;
};

// Each file exercises code the two compilers could emit differently under hardening flags.
constexpr CorpusFile k_corpus[] = {
    {"stack.c", // -fstack-protector-strong: local arrays, the aarch64 frame of CVE-2023-4039
     "#include <string.h>\n"
     "int use(char *, int *, unsigned long);\n"
     "int frame(const char *s, unsigned long n) {\n"
     "    char buf[64]; int v[n ? 8 : 4]; char *dyn = __builtin_alloca(n);\n"
     "    strcpy(buf, s); v[0] = buf[1]; memset(dyn, 0, n);\n"
     "    return use(buf, v, n) + use(dyn, v + 1, n);\n"
     "}\n"},
    {"fortify.c", // -D_FORTIFY_SOURCE=2: the *_chk calls and their sizes
     "#include <stdio.h>\n#include <string.h>\n#include <unistd.h>\n"
     "struct s { char name[16]; int n; };\n"
     "int fill(struct s *p, const char *src, int fd, int k) {\n"
     "    char tmp[32];\n"
     "    memcpy(p->name, src, strlen(src));\n"
     "    snprintf(tmp, sizeof tmp, \"%s-%d\", src, k);\n"
     "    if (read(fd, tmp, (size_t)k) < 0) return -1;\n"
     "    return sprintf(p->name, \"%.8s\", tmp);\n"
     "}\n"},
    {"pic.c", // -fPIC: GOT accesses, a local and a global function pointer, TLS
     "static int counter; int shared_total; __thread int per_thread;\n"
     "int (*hook)(int);\n"
     "static int twice(int x) { return 2 * x; }\n"
     "int step(int x) { counter += x; shared_total += counter; per_thread++;\n"
     "    int (*f)(int) = hook ? hook : twice; return f(x) + per_thread; }\n"},
    {"except.cpp", // C++: templates, exceptions, unwind tables, the standard library's headers
     "#include <stdexcept>\n#include <string>\n#include <vector>\n"
     "template <class T> T sum(const std::vector<T>& v) {\n"
     "    T s{}; for (const auto& x : v) { if (x < T{}) throw std::invalid_argument(\"neg\");\n"
     "    s += x; } return s; }\n"
     "int run(const std::vector<int>& v, std::string& err) {\n"
     "    try { return sum(v) + static_cast<int>(sum(std::vector<double>{1.5, 2.5})); }\n"
     "    catch (const std::exception& e) { err = e.what(); return -1; }\n"
     "}\n"},
};

// Run in the root as `sh probe.sh TAG`: the objects of every corpus file and flag set in out-TAG,
// .comment removed. The same script both ways; only the compiler behind gcc/g++ differs.
constexpr const char* k_script = R"SH(set -e
cd /tmp/emurun-probe
out=out-$1
mkdir -p "$out"
exec 3>&2 2>"$out.log" # the compilers' warnings are the probe's business; shown when it fails
trap 'status=$?; [ $status = 0 ] || cat "$out.log" >&3; exit $status' EXIT
if command -v dpkg-buildflags >/dev/null 2>&1; then
    cflags="$(dpkg-buildflags --get CPPFLAGS) $(dpkg-buildflags --get CFLAGS)"
    cxxflags="$(dpkg-buildflags --get CPPFLAGS) $(dpkg-buildflags --get CXXFLAGS)"
else # Debian's defaults (dpkg-dev is not installed)
    cflags="-Wdate-time -D_FORTIFY_SOURCE=2 -g -O2 -fstack-protector-strong -Wformat -Werror=format-security"
    cxxflags=$cflags
fi
pyflags=
if command -v python3 >/dev/null 2>&1; then
    pyflags=$(python3 -c 'import sysconfig; print(sysconfig.get_config_var("CFLAGS") or "")')
fi
for f in *.c; do
    gcc $cflags -fPIC -c "$f" -o "$out/$f.dpkg-buildflags.o"
    if [ -n "$pyflags" ]; then gcc $pyflags -fPIC -c "$f" -o "$out/$f.python-sysconfig.o"; fi
done
if command -v g++ >/dev/null 2>&1; then
    for f in *.cpp; do g++ $cxxflags -fPIC -c "$f" -o "$out/$f.dpkg-buildflags.o"; done
fi
for o in "$out"/*.o; do objcopy --remove-section .comment "$o"; done
)SH";

/// The packages whose versions decide what the probe would find.
std::vector<std::string> root_key_packages(const std::string& t, const std::string& major) {
    return {"gcc-" + major, "cpp-" + major, "g++-" + major,   "binutils-" + t,
            "libc6-dev",    "dpkg-dev",     "python3-minimal"};
}

std::vector<std::string> host_key_packages(const std::string& t, const std::string& major) {
    return {"gcc-" + major + "-" + t, "cpp-" + major + "-" + t, "g++-" + major + "-" + t,
            "binutils-" + t};
}

// ELF section headers, enough to name the sections two objects differ in (both endiannesses).
std::uint64_t read_uint(std::string_view b, std::size_t at, int size, bool big) {
    std::uint64_t v = 0;
    for (int i = 0; i < size; ++i) {
        const auto byte = static_cast<unsigned char>(b[at + (big ? i : size - 1 - i)]);
        v = v << 8 | byte;
    }
    return v;
}

/// name -> content of each section of a 64-bit ELF object; empty when it cannot be read.
std::map<std::string, std::string_view> sections(std::string_view b) {
    std::map<std::string, std::string_view> out;
    if (b.size() < 64 ||
        b.substr(0, 4) != "\x7f"
                          "ELF" ||
        b[4] != 2) {
        return out;
    }
    const bool big = b[5] == 2;
    const std::uint64_t shoff = read_uint(b, 0x28, 8, big);
    const std::uint64_t shentsize = read_uint(b, 0x3a, 2, big);
    const std::uint64_t shnum = read_uint(b, 0x3c, 2, big);
    const std::uint64_t shstrndx = read_uint(b, 0x3e, 2, big);
    if (shentsize < 64 || shstrndx >= shnum || shoff > b.size() ||
        shnum > (b.size() - shoff) / shentsize) {
        return out;
    }
    const auto field = [&](std::uint64_t i, int at, int size) {
        return read_uint(b, shoff + i * shentsize + at, size, big);
    };
    const auto bytes = [&](std::uint64_t i) -> std::string_view {
        const std::uint64_t off = field(i, 0x18, 8), size = field(i, 0x20, 8);
        const bool nobits = field(i, 4, 4) == 8;
        return nobits || off > b.size() || size > b.size() - off ? std::string_view{}
                                                                 : b.substr(off, size);
    };
    const std::string_view names = bytes(shstrndx);
    for (std::uint64_t i = 1; i < shnum; ++i) {
        const std::uint64_t n = field(i, 0, 4);
        if (n < names.size()) {
            const std::string_view rest = names.substr(n);
            out.emplace(std::string(rest.substr(0, rest.find('\0'))), bytes(i));
        }
    }
    return out;
}

/// "the sections .text, .rela.text differ" or the sizes when the objects cannot be read.
std::string difference(std::string_view emulated, std::string_view accelerated) {
    const auto a = sections(emulated), b = sections(accelerated);
    std::set<std::string> names;
    for (const auto* m : {&a, &b}) {
        for (const auto& [n, _] : *m) {
            names.insert(n);
        }
    }
    std::string list;
    for (const auto& n : names) {
        const auto x = a.find(n), y = b.find(n);
        if (x == a.end() || y == b.end() || x->second != y->second) {
            list += (list.empty() ? "" : ", ") + n;
        }
    }
    const std::string sizes =
        std::to_string(emulated.size()) + " vs " + std::to_string(accelerated.size()) + " bytes";
    return list.empty() ? "the objects differ (" + sizes + ")"
                        : "sections " + list + " differ (" + sizes + ")";
}

} // namespace

std::string probe_key(std::string_view root_status, std::string_view host_status,
                      const std::string& triplet, const std::string& gcc_major) {
    std::string text = std::string("corpus ") + k_corpus_version + "\ntriplet " + triplet + "\n";
    for (const auto& p : root_key_packages(triplet, gcc_major)) {
        const ToolSource s = dpkg_tool_source(root_status, p);
        text += "root " + p + " " + s.source + " " + dpkg_version_of(root_status, p) + "\n";
    }
    for (const auto& p : host_key_packages(triplet, gcc_major)) {
        const ToolSource s = dpkg_tool_source(host_status, p, "gcc-" + gcc_major);
        text += "host " + p + " " + s.source + " " + s.version + " " +
                dpkg_version_of(host_status, p) + "\n";
    }
    return util::fnv1a64_hex(text);
}

ProbeVerdict judge_probe(const std::vector<ProbeObject>& objects) {
    if (objects.empty()) {
        return {false, "", "the probe produced no objects"};
    }
    ProbeVerdict v{true, "", ""};
    for (const auto& o : objects) {
        std::string what;
        if (o.emulated.empty() || o.accelerated.empty()) {
            what = std::string(o.emulated.empty() ? "the emulated" : "the accelerated") +
                   " compiler made no object";
        } else if (o.emulated != o.accelerated) {
            what = difference(o.emulated, o.accelerated);
        } else {
            continue;
        }
        if (v.identical) {
            v = {false, o.name,
                 "the emulated and the accelerated compiler's objects differ "
                 "beyond .comment: "};
        } else {
            v.why += "; ";
        }
        v.why += o.name + ": " + what;
    }
    return v;
}

std::string probe_verdict_json(const ProbeVerdict& v) {
    return nlohmann::json{{"identical", v.identical}, {"file", v.file}, {"why", v.why}}.dump() +
           "\n";
}

std::optional<ProbeVerdict> probe_verdict_from_json(std::string_view text) {
    const auto j = nlohmann::json::parse(text, nullptr, false);
    if (!j.is_object() || !j.contains("identical") || !j["identical"].is_boolean() ||
        !j.contains("file") || !j["file"].is_string() || !j.contains("why") ||
        !j["why"].is_string()) {
        return std::nullopt;
    }
    return ProbeVerdict{j["identical"].get<bool>(), j["file"].get<std::string>(),
                        j["why"].get<std::string>()};
}

std::optional<ProbeVerdict> read_probe_cache(const fs::path& dir, const std::string& key) {
    auto text = util::read_file(dir / (key + ".json"));
    return text ? probe_verdict_from_json(*text) : std::nullopt;
}

Result<void> write_probe_cache(const fs::path& dir, const std::string& key, const ProbeVerdict& v) {
    return util::write_file_atomic(dir / (key + ".json"), probe_verdict_json(v));
}

namespace {

/// The probe's own root spec: the user's root and emulators, the probe dir bound at
/// k_inside; accelerated like the default list, identity not checked and no probe (it is one).
RootSpec probe_spec(const RootSpec& spec, const fs::path& dir, bool accelerated) {
    RootSpec s;
    s.dir = spec.dir;
    s.arch = spec.arch;
    s.emulators = spec.emulators;
    s.network_config = false;
    s.binds.push_back(RootBind{dir, k_inside, false});
    if (accelerated) {
        s.accelerate = Acceleration{Acceleration::Mode::defaults, {}, true};
        s.accelerate.probe = false;
    }
    return s;
}

Result<void> compile_in_root(const RootSpec& spec, const fs::path& dir, bool accelerated) {
    const fs::path exe = EMURUN_TRY(find_emurun_exe(SandboxSpec{}));
    const auto argv = EMURUN_TRY(root_argv(exe, probe_spec(spec, dir, accelerated),
                                           {"/bin/sh", std::string(k_inside) + "/probe.sh",
                                            accelerated ? "accelerated" : "emulated"}));
    auto out = capture_stdout(Command{.argv = argv});
    if (!out) {
        return std::unexpected(out.error());
    }
    return {};
}

std::vector<ProbeObject> read_objects(const fs::path& dir) {
    std::vector<ProbeObject> out;
    for (const auto& e : list_dir(dir / "out-emulated")) {
        const std::string name = e.filename().string();
        out.push_back(ProbeObject{name.substr(0, name.size() - 2), util::read_file(e).value_or(""),
                                  util::read_file(dir / "out-accelerated" / name).value_or("")});
    }
    const auto rank = [](const ProbeObject& o) { // the corpus' order: stack.c first
        const auto* f = std::ranges::find_if(k_corpus, [&](const CorpusFile& c) {
            return o.name.starts_with(std::string(c.name) + ".");
        });
        return std::pair{f - std::begin(k_corpus), o.name};
    };
    std::ranges::sort(out, {}, rank);
    return out;
}

/// Compile the corpus both ways in a fresh temporary dir below `cache`; the verdict.
Result<ProbeVerdict> run_probe(const RootSpec& spec, const fs::path& cache) {
    auto tmp = EMURUN_TRY(util::TempDir::make(cache / "run-"));
    for (const auto& f : k_corpus) {
        EMURUN_TRY(util::write_file_atomic(tmp.path() / f.name, f.text));
    }
    EMURUN_TRY(util::write_file_atomic(tmp.path() / "probe.sh", k_script));
    EMURUN_TRY(compile_in_root(spec, tmp.path(), false));
    EMURUN_TRY(compile_in_root(spec, tmp.path(), true));
    return judge_probe(read_objects(tmp.path()));
}

} // namespace

ProbeVerdict probe_toolchain(const RootSpec& spec, const RootPlan& plan,
                             std::string_view root_status, std::string_view host_status) {
    const std::string key = probe_key(root_status, host_status, plan.arch->triplet, plan.gcc_major);
    auto base = util::checked_cache_dir();
    auto cache = base ? util::own_cache_dir(*base / "toolchain-probe") : base;
    if (!cache) {
        return {false, "", "the probe's verdict cannot be cached: " + cache.error().message()};
    }
    if (auto cached = read_probe_cache(*cache, key)) {
        return *cached;
    }
    auto verdict = run_probe(spec, *cache);
    if (!verdict) { // not cached: the next run tries again
        return {false, "",
                "the probe corpus could not be compiled both ways: " + verdict.error().message()};
    }
    if (auto r = write_probe_cache(*cache, key, *verdict); !r) {
        verdict->why +=
            (verdict->why.empty() ? "" : "; ") + std::string("not cached: ") + r.error().message();
    }
    return *verdict;
}

} // namespace emurun::root_detail
