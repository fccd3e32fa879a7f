// Launch records (launch_record.h): a plan made once in C++, replayed by the small launcher
// (tools/emurun-shim/launcher.c) while its key holds. This file is the only writer.
#include "launch/launch_record.h"
#include "util/cache.hpp"
#include "util/file.hpp"

#include <emurun/launch.hpp>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <sys/stat.h>

namespace emurun {
namespace fs = std::filesystem;

static_assert(sizeof(elr_header) == 48 && sizeof(elr_id) == 64,
              "the layout launch_record.h states");

namespace {

void put_string(std::string& out, const std::string& s) {
    out += s;
    out += '\0';
}

Result<void> check_string(const std::string& s, const std::string& what) {
    if (s.find('\0') != std::string::npos) {
        return fail("launch record", what + " holds a NUL byte", "name it without one");
    }
    return {};
}

Result<elr_id> identity_of(const fs::path& p) {
    struct stat st {};
    elr_id id{};
    if (::stat(p.c_str(), &st) != 0) {
        if (elr_unseen(errno)) {
            id.absent = 1;
            return id;
        }
        return std::unexpected(system_error("launch record: stat " + p.string(), errno));
    }
    id.dev = static_cast<std::uint64_t>(st.st_dev);
    id.ino = static_cast<std::uint64_t>(st.st_ino);
    id.size = static_cast<std::uint64_t>(st.st_size);
    id.mtime_sec = static_cast<std::int64_t>(st.st_mtim.tv_sec);
    id.mtime_nsec = static_cast<std::int64_t>(st.st_mtim.tv_nsec);
    id.ctime_sec = static_cast<std::int64_t>(st.st_ctim.tv_sec);
    id.ctime_nsec = static_cast<std::int64_t>(st.st_ctim.tv_nsec);
    return id;
}

/// The strings in record order: exe, argv, env, key paths (absolute).
Result<std::vector<std::string>> record_strings(const LaunchRecord& r) {
    std::vector<std::string> all{r.exe.string()};
    all.insert(all.end(), r.argv.begin(), r.argv.end());
    for (const auto& [k, v] : r.env) {
        if (k.empty() || k.find('=') != std::string::npos) {
            return fail("launch record", "variable name '" + k + "' is empty or holds '='",
                        "name variables NAME=VALUE");
        }
        all.push_back(k + "=" + v);
    }
    for (const auto& p : r.key) {
        std::error_code ec;
        all.push_back(fs::absolute(p, ec).lexically_normal().string());
    }
    for (const auto& s : all) {
        EMURUN_TRY(check_string(s, "'" + s.substr(0, s.find('\0')) + "'"));
    }
    return all;
}

/// A record name the launcher makes: 16 lowercase hex digits and ".rec".
bool is_record_name(const std::string& name) {
    return name.size() == 20 && name.ends_with(".rec") &&
           std::all_of(name.begin(), name.begin() + 16,
                       [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

/// The request hash a record name holds (the launcher names a record by it).
std::uint64_t request_of_name(const std::string& name) {
    return std::stoull(name.substr(0, 16), nullptr, 16);
}

/// Records not rewritten for k_record_max_age are removed, at most once a day (the stamp
/// file's mtime): a request still in use is planned once more and written again.
constexpr auto k_record_max_age = std::chrono::hours(24 * 30);
constexpr auto k_prune_every = std::chrono::hours(24);

void prune_records(const fs::path& dir) {
    const fs::path stamp = dir / ".pruned";
    std::error_code ec;
    const auto now = fs::file_time_type::clock::now();
    const auto last = fs::last_write_time(stamp, ec);
    if (!ec && now - last < k_prune_every) {
        return;
    }
    (void)util::write_file_atomic(stamp, "", 0600, util::Durability::cache);
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
        std::error_code e2;
        const auto name = it->path().filename().string();
        if (is_record_name(name) && now - it->last_write_time(e2) > k_record_max_age && !e2) {
            fs::remove(it->path(), e2);
        }
    }
}

/// When take_record_request() handed out the request: `emurun exec` plans after it, so a key
/// path changed since may have been read before it changed, and its identity now would key a
/// plan of what it was. The fine clock: no file changed before it has a later ctime (a kernel
/// that stamps files with the coarse clock may miss a change in the tick after it).
std::optional<timespec> g_requested_at;

} // namespace

std::optional<LaunchRecord> exec_record(const LaunchPlan& plan) {
    if (plan.mode != Emulation::exec || !plan.emulator) {
        return std::nullopt;
    }
    LaunchRecord r;
    r.exe = plan.exe;
    r.argv.assign(plan.argv.begin(), plan.argv.begin() + static_cast<std::ptrdiff_t>(plan.args_at));
    r.env = plan.env_set;
    r.key = plan.inputs;
    return r;
}

Result<std::string> encode_launch_record(const LaunchRecord& r) {
    if (!r.exe.is_absolute()) {
        return fail("launch record", "the exe " + r.exe.string() + " is not absolute",
                    "give the emulator's absolute path");
    }
    if (r.argv.size() > elr_max_argv || r.env.size() > elr_max_env || r.key.size() > elr_max_ids ||
        (r.argv0_at && *r.argv0_at > r.argv.size()) || (!r.argv0_at && r.argv.empty())) {
        return fail("launch record", "too many arguments, variables or key paths, or no argv[0]",
                    "this plan is run by the CLI each time");
    }
    const auto strings = EMURUN_TRY(record_strings(r));
    elr_header h{};
    std::memcpy(h.magic, ELR_MAGIC, sizeof h.magic);
    h.version = elr_version;
    h.n_ids = static_cast<std::uint32_t>(r.key.size());
    h.n_argv = static_cast<std::uint32_t>(r.argv.size());
    h.n_env = static_cast<std::uint32_t>(r.env.size());
    h.argv0_at = r.argv0_at ? static_cast<std::uint32_t>(*r.argv0_at) : ELR_NO_ARGV0;
    h.request = r.request;
    std::string body;
    for (const auto& p : r.key) {
        const elr_id id = EMURUN_TRY(identity_of(p));
        body.append(reinterpret_cast<const char*>(&id), sizeof id);
    }
    for (const auto& s : strings) {
        put_string(body, s);
    }
    if (sizeof h + body.size() > elr_max_size) {
        return fail("launch record", "over " + std::to_string(elr_max_size) + " bytes",
                    "this plan is run by the CLI each time");
    }
    h.size = static_cast<std::uint32_t>(sizeof h + body.size());
    h.checksum = elr_hash(ELR_HASH_INIT, body.data(), body.size());
    return std::string(reinterpret_cast<const char*>(&h), sizeof h) + body;
}

std::optional<fs::path> take_record_request() {
    const char* value = std::getenv(ELR_RECORD_ENV);
    if (value == nullptr) {
        return std::nullopt;
    }
    fs::path file(value);
    ::unsetenv(ELR_RECORD_ENV);
    g_requested_at = util::realtime_now();
    return file;
}

bool launcher_reads_alike(const std::vector<std::string>& words,
                          const std::vector<std::string>& command) {
    const auto dashdash = std::ranges::find(words, "--");
    return dashdash != words.end() &&
           std::ranges::equal(dashdash + 1, words.end(), command.begin(), command.end());
}

Result<fs::path> launch_record_dir() {
    const fs::path cache = EMURUN_TRY(util::checked_cache_dir());
    return util::own_cache_subdir(cache, "launch");
}

Result<bool> save_exec_record(const LaunchPlan& plan, const fs::path& file) {
    auto record = exec_record(plan);
    if (!record || !is_record_name(file.filename().string())) {
        return false;
    }
    record->request = request_of_name(file.filename().string());
    const fs::path dir = EMURUN_TRY(launch_record_dir());
    std::error_code ec;
    if (fs::absolute(file.parent_path(), ec).lexically_normal() != dir.lexically_normal()) {
        return false; // the launcher looked in another cache dir (one emurun does not use)
    }
    const std::string bytes = EMURUN_TRY(encode_launch_record(*record));
    // After the identities were taken: a key path changed since the request may have been read
    // by the plan before it changed.
    if (const auto changed =
            g_requested_at ? util::changed_since(record->key, *g_requested_at, dir.parent_path())
                           : std::nullopt) {
        return fail("launch record", changed->string() + " changed while the plan was made",
                    "the next run plans again");
    }
    EMURUN_TRY(
        util::write_file_atomic(dir / file.filename(), bytes, 0600, util::Durability::cache));
    prune_records(dir);
    return true;
}

} // namespace emurun
