// Creating a root: mmdebstrap --mode=root run inside emurun's own namespaces (64Ki ids mapped,
// a private binfmt_misc where the arch's emulator is registered), writing a spec-keyed tarball
// into the cache; a second create of the same spec only unpacks it. Adding packages later.
#include "process/namespaces.hpp"
#include "root/root_internal.hpp"
#include "util/cache.hpp"
#include "util/env.hpp"
#include "util/fd.hpp"
#include "util/file.hpp"

#include <emurun/sysroot.hpp>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <iterator>
#include <map>
#include <regex>
#include <sys/stat.h>
#include <unistd.h>

namespace emurun {
namespace fs = std::filesystem;
using namespace root_detail;

namespace {

std::map<std::string, std::string> tool_environment(const fs::path& tmp) {
    std::map<std::string, std::string> env{{"PATH", "/usr/sbin:/usr/bin:/sbin:/bin"},
                                           {"HOME", "/root"},
                                           {"LANG", "C.UTF-8"},
                                           {"TMPDIR", tmp.string()}};
    for (const char* k : {"http_proxy", "https_proxy", "no_proxy", "TERM"}) {
        if (auto v = util::get_env(k)) {
            env[k] = *v;
        }
    }
    return env;
}

/// Run an x86-64 tool as root of our namespaces (the root's owners are mapped there).
Result<ExitStatus> run_mapped(const BinfmtEntry& entry, std::vector<std::string> argv,
                              const fs::path& tmp) {
    return run_with_binfmt(entry, Command{.argv = std::move(argv), .env = tool_environment(tmp)});
}

/// Remove what a failed create made (files may belong to the root's users: done inside our
/// namespaces); `keep_dir` keeps the directory itself and removes its contents.
void remove_mapped(const BinfmtEntry& entry, const fs::path& path, bool keep_dir,
                   const DiagnosticSink& diagnostics) {
    std::error_code ec;
    if (!fs::exists(path, ec)) {
        return;
    }
    std::vector<std::string> argv{"rm", "-rf", "--one-file-system", path.string()};
    if (keep_dir) {
        argv = {"find", path.string(), "-xdev", "-mindepth", "1", "-delete"};
    }
    if (!keep_dir && ::rmdir(path.c_str()) == 0) {
        return; // empty: nothing to do as the root's owners
    }
    auto st = run_mapped(entry, argv, "/tmp");
    if (st && st->success()) {
        return;
    }
    // Not removed as the root's owners (e.g. no process could be started): what is left may
    // be ours to remove; warn only about what is really still there.
    if (keep_dir) {
        for (const auto& e : list_dir(path)) {
            fs::remove_all(e, ec);
        }
    } else {
        fs::remove_all(path, ec);
    }
    if (fs::exists(path, ec) && (!keep_dir || !fs::is_empty(path, ec))) {
        emit(diagnostics, Severity::warning,
             "could not remove " + std::string(keep_dir ? "the contents of " : "") + path.string() +
                 ": remove it by hand");
    }
}

std::vector<std::string> packages_of(const RootCreateSpec& spec) {
    std::vector<std::string> p = root_default_packages();
    p.insert(p.end(), spec.include.begin(), spec.include.end());
    std::ranges::sort(p);
    // std::unique, not ranges::unique: clang-15 (the fuzz build) rejects the latter with libstdc++
    // 12
    p.erase(std::unique(p.begin(), p.end()), p.end());
    return p;
}

std::string join(const std::vector<std::string>& items, const char* sep) {
    std::string out;
    for (const auto& i : items) {
        out += (out.empty() ? "" : sep) + i;
    }
    return out;
}

std::vector<std::string> sources(const std::string& mirror, const std::string& suite) {
    std::vector<std::string> s{"deb " + mirror + " " + suite + " main"};
    if (suite != "sid" && suite != "unstable") {
        std::string security = mirror;
        if (security.ends_with("/debian")) {
            security.resize(security.size() - 7);
        }
        s.push_back("deb " + mirror + " " + suite + "-updates main");
        s.push_back("deb " + security + "/debian-security " + suite + "-security main");
    }
    return s;
}

/// apt-get update with mmdebstrap's apt configuration; a failure is tolerated (with a warning)
/// when the suite's main index arrived, so only -updates or -security is missing.
std::string tolerant_update(const std::string& suite) {
    return "APT_CONFIG=\"$MMDEBSTRAP_APT_CONFIG\" apt-get update || { ls \"$1\"/var/lib/apt/lists/"
           "*_dists_" +
           suite +
           "_main_binary-*_Packages* >/dev/null 2>&1 && echo 'W: emurun: going on without the "
           "index files that failed (a mirror mid-sync?); the root may lack the latest updates' "
           ">&2; }";
}

using Pins = std::vector<std::pair<std::string, std::string>>;

/// `word` as the hooks' shell reads it back: in single quotes.
std::string sh_quote(const std::string& word) {
    std::string out = "'";
    for (const char c : word) {
        out += c == '\'' ? std::string("'\\''") : std::string(1, c);
    }
    return out + "'";
}

/// The hooks that pin the root's toolchain sources (apt preferences, kept in the root) and,
/// after the install, check that every package of those sources has the pinned version (a pin
/// of a version the mirror lacks is ignored by apt: preflight_hook refuses it before, this
/// makes sure). Their refusals are "E: emurun: pin: ..." lines (request_failure).
std::vector<std::string> pin_hooks(const Pins& pins) {
    if (pins.empty()) {
        return {};
    }
    std::vector<std::string> hooks{
        "--setup-hook=mkdir -p \"$1\"/etc/apt/preferences.d && printf '%s' '" +
        toolchain_preferences(pins) + "' > \"$1\"/etc/apt/preferences.d/emurun-toolchain"};
    for (const auto& [source, version] : pins) {
        hooks.push_back(
            "--customize-hook=set -u; installed=$(chroot \"$1\" dpkg-query -W -f "
            "'${source:Package} ${source:Version} ${Package}\\n') || { echo 'E: emurun: pin: "
            "the root'\\''s packages could not be listed to check the pin' >&2; exit 1; }; "
            "bad=$(printf '%s\\n' \"$installed\" | awk -v s=" +
            sh_quote(source) + " -v v=" + sh_quote(version) +
            " '$1 == s && $2 != v { print $3 \" \" $2; exit }'); [ -z \"$bad\" ] || { echo "
            "\"E: emurun: pin: the root got $bad, not " +
            source + " " + version +
            " (the revision the host's cross toolchain is built from): apt ignores a pin to a "
            "version the mirror does not have\" >&2; exit 1; }");
    }
    return hooks;
}

/// The setup hook that checks the request against the archive's indexes as soon as apt-get
/// update has fetched them, before the minutes of emulated dpkg: every package asked for can
/// be installed (a simulated apt-get install: apt's errors name a misspelt one), and every
/// pinned source version is in the archive (apt would ignore a pin to a version it does not
/// have and install another one). Its refusals are "E: emurun: include: ..." and "E: emurun:
/// pin: ..." lines (request_failure); a pin that holds back newer revisions is said ("W:").
std::string preflight_hook(const std::vector<std::string>& packages, const std::string& suite,
                           const std::string& arch, const Pins& pins) {
    std::string names;
    for (const auto& p : packages) {
        if (!p.starts_with("/") && !p.starts_with("./") && !p.ends_with(".deb")) {
            names += " " + sh_quote(p); // local .deb files are mmdebstrap's own business
        }
    }
    std::string script =
        "--setup-hook=export APT_CONFIG=\"$MMDEBSTRAP_APT_CONFIG\"; "
        "out=$(apt-get install --simulate -q" +
        names +
        " 2>&1) || { printf '%s\\n' \"$out\" >&2; echo \"E: emurun: include: apt cannot install "
        "the packages asked for from " +
        suite + " for " + arch +
        ": $(printf '%s\\n' \"$out\" | grep '^E:' | head -n3 | tr '\\n' ' ')\" >&2; exit 1; }";
    for (const auto& [source, version] : pins) {
        script +=
            "; have=$(apt-cache madison " + sh_quote(source) +
            " | awk -F'|' '{ gsub(/ /, \"\", $2); print $2 }' | sort -u | paste -sd ' '); "
            "case \" $have \" in *\" " +
            version + " \"*) [ \"$have\" = " + sh_quote(version) +
            " ] || echo \"W: emurun: pinning " + source + " to " + version +
            " leaves out what the archive also has ($have): the root lacks the fixes of "
            "later revisions\" >&2 ;; *) echo \"E: emurun: pin: " +
            suite + " has no " + source + " " + version + " for " + arch +
            ", the revision the host's cross toolchain is built from (it has: ${have:-none}); "
            "apt would ignore the pin and install another revision\" >&2; exit 1 ;; esac";
    }
    return script;
}

std::vector<std::string> mmdebstrap_argv(const RootCreateSpec& spec, const std::string& mirror,
                                         const fs::path& debs, const fs::path& out,
                                         const Pins& pins) {
    std::vector<std::string> a{
        "mmdebstrap", "--mode=root", "--arch=" + spec.arch->debian, "--variant=apt", "--format=tar",
        "--include=" + join(packages_of(spec), ","), "--skip=essential/unlink",
        // Our own apt-get update (last setup hook) goes on when only a
        // secondary suite's index fails (a mirror mid-sync); mmdebstrap's
        // would stop at any error.
        "--skip=update", "--aptopt=APT::Install-Recommends \"0\"",
        "--setup-hook=mkdir -p \"$1\"/var/cache/apt/archives/",
        "--setup-hook=sync-in " + debs.string() + " /var/cache/apt/archives/",
        "--setup-hook=" + tolerant_update(spec.suite),
        // The essential set, downloaded before the extract phase, is kept right away: an
        // interrupt in the minutes of emulated dpkg after it makes mmdebstrap remove its
        // temp root, archives and all.
        "--extract-hook=sync-out /var/cache/apt/archives " + debs.string(),
        "--customize-hook=sync-out /var/cache/apt/archives " + debs.string()};
    for (auto& h : pin_hooks(pins)) {
        a.push_back(std::move(h));
    }
    a.push_back(preflight_hook(packages_of(spec), spec.suite, spec.arch->debian, pins));
    a.push_back(spec.suite);
    a.push_back(out.string());
    for (auto& s : sources(mirror, spec.suite)) {
        a.push_back(std::move(s));
    }
    return a;
}

/// mmdebstrap's known-harmless lines (an extended regular expression, grep -E's and
/// harmless_create_noise's): it tries to mount sysfs, which a user namespace may not, and
/// mount(8) adds its dmesg line.
constexpr std::string_view k_create_noise =
    "^mount: .*/sys: permission denied\\.?$|^ +dmesg\\(1\\) may have more information after "
    "failed mount system call\\.?$";

/// mmdebstrap's progress lines ("I: ...") on stderr with where the create stands: the stage
/// of the six that take time, the time so far and, when a create of this arch took `$2`
/// seconds before, about how long is left: "I: extracting archives... [stage 3/6, 0:41;
/// about 2 min left]". The line itself starts as mmdebstrap wrote it.
constexpr std::string_view k_create_stages =
    "stage=0; while IFS= read -r l; do case $l in\n"
    "'I: '*'apt-get update'*) stage=1 ;; 'I: downloading packages'*) stage=2 ;;\n"
    "'I: extracting archives'*) stage=3 ;; 'I: installing essential packages'*) stage=4 ;;\n"
    "'I: installing remaining packages'*) stage=5 ;; 'I: creating tarball'*) stage=6 ;; esac\n"
    "case $l in 'I: '*) left=''; if [ \"$2\" -gt \"$SECONDS\" ]; then\n"
    "left=\"; about $(( ($2 - SECONDS + 59) / 60 )) min left\"; fi\n"
    "printf '%s [stage %d/6, %d:%02d%s]\\n' \"$l\" \"$stage\" $((SECONDS / 60)) $((SECONDS % 60)) "
    "\"$left\" ;;\n"
    "*) printf '%s\\n' \"$l\" ;; esac; done";

/// mmdebstrap with its output appended to `log` and shown on stderr, without the lines that
/// are known to be harmless (harmless_create_noise; they stay in the log) and with its stages
/// (k_create_stages; `previous`: seconds a create of this arch took before, 0 if unknown); its
/// exit status.
std::vector<std::string> logged(std::vector<std::string> argv, const fs::path& log,
                                long long previous) {
    std::vector<std::string> out{
        "bash",
        "-c",
        "set -o pipefail; stages() { " + std::string(k_create_stages) +
            "; }; \"${@:3}\" 2>&1 | tee -a \"$1\" | "
            "{ grep -v --line-buffered -E \"$0\" || true; } | stages \"$1\" \"$2\" >&2",
        std::string(k_create_noise),
        log.string(),
        std::to_string(previous)};
    out.insert(out.end(), std::make_move_iterator(argv.begin()),
               std::make_move_iterator(argv.end()));
    return out;
}

/// The seconds the last create of this arch took (its `.create-seconds-ARCH` file beside the
/// cached roots), for the stages' estimate; 0 when unknown.
long long previous_seconds(const fs::path& timing) {
    const auto text = util::read_file(timing, 64);
    const long long v = text ? std::atoll(text->c_str()) : 0;
    return v > 0 && v < 24 * 3600 ? v : 0;
}

/// A failure within this long is apt-get update's (a mirror mid-sync): worth one retry. A
/// later one (a package, a full disk) would only fail again after as long.
constexpr std::chrono::seconds k_retry_window{180};

int g_interrupted_by = 0; // the signal of the last create or install's interruption

Error interrupted(const std::string& what, int sig) {
    g_interrupted_by = sig;
    return Error{what,
                 std::string("interrupted by ") + (sig == SIGINT    ? "SIGINT"
                                                   : sig == SIGTERM ? "SIGTERM"
                                                                    : "SIGHUP"),
                 "no root was made (the packages downloaded so far stay in the cache); run it "
                 "again to create the root",
                 ErrorKind::interrupted};
}

/// Move the packages a failed or interrupted mmdebstrap had downloaded (complete files only:
/// apt moves a .deb into archives/ once its hash matched) from its temp root into `debs`, so the
/// next create syncs them in instead of downloading them again. mmdebstrap removes its temp
/// root itself when it fails or is signalled: this keeps what a mmdebstrap killed outright (the
/// SIGKILL 10 s after a stop) left behind.
void keep_downloaded_debs(const BinfmtEntry& entry, const fs::path& tmp, const fs::path& debs,
                          const DiagnosticSink& diagnostics) {
    // TMP/mmdebstrap.XXXX/var/cache/apt/archives/NAME.deb: depth 6.
    auto st = run_mapped(entry,
                         {"find", tmp.string(), "-mindepth", "6", "-maxdepth", "6", "-type", "f",
                          "-path", "*/var/cache/apt/archives/*.deb", "-exec", "mv", "-n", "-t",
                          debs.string(), "{}", "+"},
                         "/tmp");
    if (!st || !st->success()) {
        emit(diagnostics, Severity::warning,
             "could not keep the downloaded packages of " + tmp.string() + " in " + debs.string());
    }
}

/// mmdebstrap into `out`, retried once when it failed early (a mirror in mid-sync fails
/// apt-get update); never after an interrupt.
Result<void> build_tarball(const RootCreateSpec& spec, const BinfmtEntry& entry,
                           const std::string& mirror, const fs::path& cache, const fs::path& out,
                           const Pins& pins) {
    const fs::path debs =
        EMURUN_TRY(util::own_cache_subdir(cache, fs::path("debs") / spec.arch->debian));
    const fs::path creates = EMURUN_TRY(util::own_cache_subdir(cache, "tmp"));
    const fs::path tmp = creates / ("create-" + std::to_string(::getpid()));
    for (const auto& stale : stale_pid_dirs(creates, "create-", root_detail::pid_alive)) {
        remove_mapped(entry, stale, false,
                      spec.diagnostics); // a create killed outright (SIGKILL) left it
    }
    if (auto r = make_dirs(tmp); !r) {
        return r;
    }
    const fs::path log = out.parent_path() / (out.stem().string() + ".log"); // NAME.partial
    const fs::path timing = out.parent_path() / (".create-seconds-" + spec.arch->debian);
    const auto began = std::chrono::steady_clock::now();
    std::error_code ec;
    fs::remove(log, ec);
    Result<ExitStatus> st;
    int sig = 0;
    std::string resources;
    std::optional<Error> refused; // the request itself: not retried
    for (int attempt = 1; attempt <= 2; ++attempt) {
        const auto start = std::chrono::steady_clock::now();
        st = run_mapped(
            entry,
            logged(mmdebstrap_argv(spec, mirror, debs, out, pins), log, previous_seconds(timing)),
            tmp);
        sig = process::interrupted_by();
        const bool done = st && st->success() && sig == 0;
        if (!done) {
            keep_downloaded_debs(entry, tmp, debs, spec.diagnostics);
        }
        remove_mapped(entry, tmp, true,
                      spec.diagnostics); // mmdebstrap's temp dirs of a failed attempt
        if (done) {
            break;
        }
        fs::remove(out, ec);
        const std::string text = util::read_file(log).value_or(std::string{});
        resources = resource_failure_line(text);
        refused = request_failure(text, spec.suite);
        if (sig != 0 || !st || attempt == 2 || !resources.empty() || refused ||
            std::chrono::steady_clock::now() - start > k_retry_window) {
            break;
        }
        emit(spec.diagnostics, Severity::warning,
             "mmdebstrap failed early; retrying once (the mirror may be mid-sync)");
    }
    remove_mapped(entry, tmp, false, spec.diagnostics);
    if (sig != 0) {
        fs::remove(log, ec); // an interrupted create leaves nothing but the downloaded .debs
        return std::unexpected(interrupted("create the " + spec.arch->debian + " root", sig));
    }
    if (!st) {
        return std::unexpected(st.error());
    }
    if (st->success()) {
        fs::remove(log, ec); // kept only when it explains a failure
        const auto took = std::chrono::duration_cast<std::chrono::seconds>(
            std::chrono::steady_clock::now() - began);
        (void)util::write_file_atomic(timing, std::to_string(took.count()) + "\n");
        return {};
    }
    if (!resources.empty()) {
        return fail("mmdebstrap the " + spec.arch->debian + " " + spec.suite + " root",
                    "this machine ran out of resources, not the mirror: " + resources +
                        " (whole output: " + log.string() + ")",
                    "free memory, processes (a pids limit?) or disk space, then run it again");
    }
    if (refused) {
        return fail("create the " + spec.arch->debian + " " + spec.suite + " root from " + mirror,
                    refused->why + " (whole output: " + log.string() + ")", refused->hint);
    }
    return fail(ErrorKind::command_failed,
                "mmdebstrap the " + spec.arch->debian + " " + spec.suite + " root from " + mirror,
                st->describe() + " (its messages are above; all of them in " + log.string() + ")",
                "check that " + spec.suite + " has " + spec.arch->debian +
                    " packages (riscv64: trixie or later), the packages asked for, the space "
                    "left in " +
                    cache.string() + " and that the mirror is reachable",
                "mirror");
}

Result<void> check_tools() {
    if (::access("/usr/bin/mmdebstrap", X_OK) != 0) {
        return fail("create a root", "mmdebstrap is not installed",
                    "apt-get install --no-install-recommends mmdebstrap arch-test");
    }
    return {};
}

/// mkdir `dir` and the parents it lacks, then remove what was made: `dir` can be created.
Result<void> probe_create(const fs::path& dir) {
    std::vector<fs::path> missing;
    struct stat st {};
    for (fs::path p = dir; ::lstat(p.c_str(), &st) != 0 && errno == ENOENT; p = p.parent_path()) {
        missing.push_back(p);
        if (p == p.parent_path()) {
            break;
        }
    }
    std::vector<fs::path> made;
    int err = 0;
    fs::path failed;
    for (auto it = missing.rbegin(); it != missing.rend() && err == 0; ++it) {
        if (::mkdir(it->c_str(), 0755) == 0) {
            made.push_back(*it);
        } else {
            err = errno;
            failed = *it;
        }
    }
    for (auto it = made.rbegin(); it != made.rend(); ++it) {
        ::rmdir(it->c_str());
    }
    if (err != 0) {
        return fail("create the root's directory " + dir.string(),
                    "mkdir " + failed.string() + ": " + std::strerror(err),
                    "choose a directory in a place you can write to");
    }
    return {};
}

/// The new root's directory, checked before anything is downloaded: a path, absent (and
/// creatable) or an empty directory that can be written.
Result<void> check_dir(const fs::path& dir) {
    if (dir.empty()) {
        return fail("create a root", "no directory given (an empty path)",
                    "name the new root's directory, e.g. roots/arm64");
    }
    std::error_code ec;
    const fs::path abs = fs::absolute(dir, ec);
    if (ec) {
        return fail("create a root in " + dir.string(), ec.message());
    }
    struct stat st {};
    if (::lstat(abs.c_str(), &st) != 0) {
        const int err = errno;
        if (err == ENOENT) {
            return probe_create(abs);
        }
        return std::unexpected(
            system_error("create a root in " + dir.string(), err, "choose another directory"));
    }
    if (!S_ISDIR(st.st_mode) || !fs::is_empty(abs, ec) || ec) {
        return fail("create a root in " + dir.string(), "it exists and is not an empty directory",
                    "choose a new directory, or remove this one");
    }
    return probe_create(abs / (".emurun-probe-" + std::to_string(::getpid())));
}

/// The tarball for the spec: from the cache, else built (under a lock: one build per spec).
Result<fs::path> cached_tarball(const RootCreateSpec& spec, const BinfmtEntry& entry,
                                bool& from_cache, Pins& pins) {
    const std::string mirror = spec.mirror.value_or(host_mirror());
    if (spec.pin_toolchain) {
        pins = toolchain_pins(util::read_file("/var/lib/dpkg/status").value_or(std::string{}),
                              spec.arch->triplet);
        if (pins.empty()) {
            return fail("pin the " + spec.arch->debian + " root's toolchain",
                        "the host has no cross toolchain for " + spec.arch->triplet +
                            " to pin it to",
                        "apt-get install g++-" + spec.arch->triplet);
        }
    }
    const fs::path cache = EMURUN_TRY(util::own_cache_dir(spec.cache_dir.value_or(cache_dir())));
    const fs::path roots = EMURUN_TRY(util::own_cache_subdir(cache, "roots"));
    const std::string key = pins.empty()
                                ? root_cache_key(spec, mirror)
                                : root_cache_key(spec, mirror + "\n" + toolchain_preferences(pins));
    const std::string name = spec.arch->debian + "-" + spec.suite + "-" + key;
    const fs::path tarball = roots / (name + ".tar");
    const auto lock = EMURUN_TRY(util::FileLock::acquire(roots / (name + ".lock"), false));
    std::error_code ec;
    from_cache = fs::exists(tarball, ec);
    if (from_cache) {
        return tarball;
    }
    if (auto r = check_tools(); !r) {
        return std::unexpected(r.error());
    }
    if (auto r = check_mirror(mirror); !r) {
        return std::unexpected(r.error());
    }
    const fs::path partial = roots / (name + ".partial");
    if (auto r = build_tarball(spec, entry, mirror, cache, partial, pins); !r) {
        return std::unexpected(r.error());
    }
    fs::rename(partial, tarball, ec);
    if (ec) {
        return fail("rename " + partial.string(), ec.message());
    }
    return tarball;
}

} // namespace

bool root_detail::harmless_create_noise(std::string_view line) {
    static const std::regex noise(std::string(k_create_noise), std::regex::extended);
    return std::regex_search(line.begin(), line.end(), noise);
}

std::string root_detail::resource_failure_line(std::string_view log) {
    static constexpr std::string_view k_signs[] = {"Resource temporarily unavailable",
                                                   "Cannot allocate memory",
                                                   "Cannot fork",
                                                   "No space left on device",
                                                   "Too many open files",
                                                   "Disk quota exceeded",
                                                   "fork: "};
    std::size_t pos = 0;
    while (pos < log.size()) {
        std::size_t nl = log.find('\n', pos);
        nl = nl == std::string_view::npos ? log.size() : nl;
        const std::string_view line = log.substr(pos, nl - pos);
        for (const auto sign : k_signs) {
            if (line.find(sign) != std::string_view::npos) {
                return std::string(line);
            }
        }
        pos = nl + 1;
    }
    return {};
}

std::optional<Error> root_detail::request_failure(std::string_view log, const std::string& suite) {
    const std::string missing_suite = " " + suite + " Release' does not have a Release file";
    std::size_t pos = 0;
    while (pos < log.size()) {
        std::size_t nl = log.find('\n', pos);
        nl = nl == std::string_view::npos ? log.size() : nl;
        const std::string_view line = log.substr(pos, nl - pos);
        pos = nl + 1;
        if (line.starts_with("E: emurun: include: ")) {
            return Error{"", std::string(line.substr(20)),
                         "check the names of the packages asked for: apt-cache search WORD lists "
                         "what there is",
                         ErrorKind::bad_input, "include"};
        }
        if (line.starts_with("E: emurun: pin: ")) {
            return Error{"", std::string(line.substr(16)),
                         "create the root without pinning: the identity rule then keeps the "
                         "compilers emulated unless a revision mismatch is allowed; or use a "
                         "mirror that still has that revision, e.g. a snapshot.debian.org date",
                         ErrorKind::bad_input, "pin_toolchain"};
        }
        if (line.starts_with("E: The repository '") && line.find(missing_suite) != line.npos) {
            return Error{
                "", "the mirror has no suite " + suite + " (" + std::string(line.substr(3)) + ")",
                "check the mirror's URL, or name a suite the mirror has, e.g. bookworm, trixie "
                "or sid",
                ErrorKind::bad_input, "suite"};
        }
    }
    return std::nullopt;
}

std::vector<fs::path> root_detail::stale_pid_dirs(const fs::path& tmp, std::string_view prefix,
                                                  const std::function<bool(long)>& alive) {
    std::vector<fs::path> out;
    for (const auto& e : list_dir(tmp)) {
        const std::string name = e.filename().string();
        if (!name.starts_with(prefix) || name.size() == prefix.size() ||
            name.size() > prefix.size() + 9 ||
            !std::all_of(name.begin() + static_cast<std::ptrdiff_t>(prefix.size()), name.end(),
                         [](char c) { return c >= '0' && c <= '9'; })) {
            continue;
        }
        const long pid = std::stol(name.substr(prefix.size()));
        if (pid != ::getpid() && !alive(pid)) {
            out.push_back(e);
        }
    }
    std::ranges::sort(out);
    return out;
}

bool root_detail::pid_alive(long pid) {
    return ::kill(static_cast<pid_t>(pid), 0) == 0 || errno != ESRCH;
}

std::vector<std::string> root_default_packages() {
    return {"gcc", "g++", "libc6-dev", "make"};
}

std::string root_cache_key(const RootCreateSpec& spec, const std::string& mirror) {
    const std::string text = spec.arch->debian + "\n" + spec.suite + "\napt\n" +
                             join(packages_of(spec), ",") + "\n" + mirror + "\n";
    std::uint64_t h = 14695981039346656037ULL; // FNV-1a 64
    for (const unsigned char c : text) {
        h = (h ^ c) * 1099511628211ULL;
    }
    char buf[17];
    std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
    return buf;
}

namespace {

/// The spec's arch, suite and target directory, before anything starts.
Result<void> check_create_spec(const RootCreateSpec& spec) {
    if (spec.arch == nullptr || spec.arch->debian.empty()) {
        return fail(ErrorKind::bad_input, "create a root",
                    spec.arch == nullptr ? "no arch given"
                                         : spec.arch->name + " has no Debian port",
                    "give aarch64, ppc64le or s390x, any arch with a Debian name", "arch");
    }
    if (spec.suite.empty() || !std::ranges::all_of(spec.suite, [](char c) {
            return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-';
        })) {
        return fail(ErrorKind::bad_input, "create a root",
                    "'" + spec.suite + "' is not a Debian suite name",
                    "e.g. bookworm, trixie or sid", "suite");
    }
    if (runs_natively(*spec.arch)) {
        return std::unexpected(
            native_root_error("create " + with_article(spec.arch->name) + " root", *spec.arch));
    }
    if (auto r = check_dir(spec.dir); !r) {
        return r;
    }
    return {};
}

/// Room for the unpacked root (about the tarball's size) on the file system that will hold
/// `dir`: checked up front rather than met as thousands of tar errors.
Result<void> check_space(const fs::path& dir, const fs::path& tarball) {
    std::error_code ec;
    fs::path existing = dir;
    while (!fs::exists(existing, ec) && existing.has_relative_path()) {
        existing = existing.parent_path();
    }
    const auto need = fs::file_size(tarball, ec);
    const auto room = fs::space(existing, ec);
    if (ec || room.available >= need) {
        return {};
    }
    constexpr std::uintmax_t k_mib = 1024 * 1024;
    return fail("unpack the root into " + dir.string(),
                "it needs about " + std::to_string(need / k_mib) + " MiB, and " +
                    existing.string() + " has " + std::to_string(room.available / k_mib) +
                    " MiB free",
                "free some space, or choose a directory on a larger file system");
}

/// Unpack the tarball beside `dir` and rename it into place: all or nothing, so no half root
/// (an unpack killed outright, a full disk) is ever found at `dir` and taken for a root.
Result<void> unpack_root(const BinfmtEntry& entry, const fs::path& tarball, const fs::path& dir,
                         const DiagnosticSink& diagnostics) {
    const fs::path partial = dir.parent_path() / ("." + dir.filename().string() +
                                                  ".emurun-partial-" + std::to_string(::getpid()));
    if (auto r = make_dirs(partial); !r) {
        return r;
    }
    auto st =
        run_mapped(entry,
                   {"tar", "-C", partial.string(), "--numeric-owner", "--exclude=./dev/*", "-xpf",
                    tarball.string()},
                   "/tmp"); // no device nodes in a user namespace: the host's /dev is bound anyway
    const int sig = process::interrupted_by();
    std::error_code ec;
    if (st && st->success() && sig == 0) {
        fs::rename(partial, dir, ec); // onto a missing or empty directory (check_dir said so)
        if (!ec) {
            return {};
        }
    }
    remove_mapped(entry, partial, false, diagnostics);
    if (sig != 0) {
        return std::unexpected(interrupted("unpack the root into " + dir.string(), sig));
    }
    if (ec) {
        return fail("rename " + partial.string() + " to " + dir.string(), ec.message());
    }
    return fail("unpack " + tarball.string() + " into " + dir.string(),
                st ? st->describe() : st.error().message(),
                "is there space left in " + dir.string() + "? (df " + dir.string() + ")");
}

} // namespace

Result<void> root_detail::check_new_root_dir(const fs::path& dir) {
    return check_dir(dir);
}

void root_detail::note_interrupted(int sig) {
    g_interrupted_by = sig;
}

int root_interrupted_by() {
    return g_interrupted_by;
}

Result<RootCreated> create_root(const RootCreateSpec& spec) {
    g_interrupted_by = 0;
    if (auto r = check_create_spec(spec); !r) {
        return std::unexpected(r.error());
    }
    auto entry = private_binfmt_entry(*spec.arch, spec.emulators);
    if (!entry) {
        return std::unexpected(entry.error());
    }
    if (auto r = process::check_id_maps(); !r) {
        return std::unexpected(r.error());
    }
    RootCreated made;
    auto tarball = cached_tarball(spec, *entry, made.from_cache, made.pinned);
    if (!tarball) {
        return std::unexpected(tarball.error());
    }
    made.tarball = *tarball;
    std::error_code ec;
    const fs::path dir = fs::absolute(spec.dir, ec); // check_dir made sure it can be
    if (auto r = check_space(dir, *tarball); !r) {
        return std::unexpected(r.error());
    }
    if (auto r = unpack_root(*entry, *tarball, dir, spec.diagnostics); !r) {
        return std::unexpected(r.error());
    }
    return made;
}

Result<void> install_in_root(const RootSpec& spec, const std::vector<std::string>& packages) {
    g_interrupted_by = 0;
    if (packages.empty()) {
        return fail("emurun root install", "no package named", "emurun root install DIR PKG...");
    }
    RootSpec s = spec;
    s.env.emplace_back("DEBIAN_FRONTEND", "noninteractive");
    // A failed update (one suite's index mid-sync) is not fatal: apt-get install says whether
    // what it needs is there.
    auto updated = exec_in_root(s, {"apt-get", "update"});
    if (!updated) {
        return std::unexpected(updated.error());
    }
    if (process::interrupted_by() != 0) {
        return std::unexpected(
            interrupted("apt-get update in " + spec.dir.string(), process::interrupted_by()));
    }
    if (!updated->success()) {
        emit(spec.diagnostics, Severity::warning,
             "apt-get update in " + spec.dir.string() + " " + updated->describe() +
                 "; installing from the lists it has");
    }
    std::vector<std::string> install{"apt-get", "install", "-y", "--no-install-recommends"};
    install.insert(install.end(), packages.begin(), packages.end());
    auto st = exec_in_root(s, install);
    if (!st) {
        return std::unexpected(st.error());
    }
    if (process::interrupted_by() != 0) {
        return std::unexpected(interrupted(join(install, " ") + " in " + spec.dir.string(),
                                           process::interrupted_by()));
    }
    if (!st->success()) {
        return fail(join(install, " ") + " in " + spec.dir.string(), st->describe(),
                    "its messages are above; are the package names right, is the mirror "
                    "reachable?");
    }
    return {};
}

} // namespace emurun
