#include "util/file.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace emurun::util {
namespace fs = std::filesystem;

namespace {

std::string_view file_kind(mode_t mode) {
    switch (mode & S_IFMT) {
    case S_IFDIR:
        return "a directory";
    case S_IFIFO:
        return "a FIFO";
    case S_IFCHR:
        return "a character device";
    case S_IFBLK:
        return "a block device";
    case S_IFSOCK:
        return "a socket";
    default:
        return "not a file";
    }
}

/// One read(2) of up to `size` bytes, retried on EINTR: the count, 0 at EOF.
Result<std::size_t> read_some(int fd, char* buf, std::size_t size, const std::string& name) {
    while (true) {
        const ssize_t n = ::read(fd, buf, size);
        if (n >= 0) {
            return static_cast<std::size_t>(n);
        }
        if (errno != EINTR) {
            return std::unexpected(system_error("read " + name, errno));
        }
    }
}

/// Read until EOF or `max_bytes` + 1 bytes (which proves the file is over the limit).
Result<std::string> read_to_end(int fd, const std::string& name, std::size_t max_bytes,
                                std::size_t size_hint) {
    // Read straight into the string (a 64 KiB buffer on the stack would be a quarter of a
    // small stack limit's worth).
    constexpr std::size_t k_chunk = 65536;
    std::string out;
    out.reserve(std::min(size_hint, max_bytes));
    while (out.size() <= max_bytes) {
        const std::size_t had = out.size();
        const std::size_t left = max_bytes - had; // one byte more proves the file too large
        const std::size_t chunk = left >= k_chunk ? k_chunk : left + 1;
        out.resize(had + chunk);
        const std::size_t n = EMURUN_TRY(read_some(fd, out.data() + had, chunk, name));
        out.resize(had + n);
        if (n == 0) {
            return out;
        }
    }
    return fail("read " + name,
                "file is more than the limit of " + std::to_string(max_bytes) + " bytes");
}

} // namespace

Result<UniqueFd> open_read(const fs::path& path) {
    if (path.empty()) { // open("") says ENOENT: "open  failed: No such file or directory"
        return fail(ErrorKind::bad_input, "open ''", "an empty path, not a file name",
                    "name the file");
    }
    UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK));
    if (!fd) {
        return std::unexpected(system_error("open " + path.string(), errno));
    }
    return fd;
}

Result<std::string> read_fd(int fd, const std::string& name, std::size_t max_bytes) {
    struct stat st {};
    if (::fstat(fd, &st) != 0) {
        return std::unexpected(system_error("fstat " + name, errno));
    }
    if (!S_ISREG(st.st_mode)) {
        return fail("read " + name, "not a regular file",
                    std::string("it is ") + std::string(file_kind(st.st_mode)) +
                        "; give the path of a regular file");
    }
    const auto size = static_cast<std::uint64_t>(st.st_size);
    if (size > max_bytes) {
        return fail("read " + name, "file is " + std::to_string(size) +
                                        " bytes, more than the limit of " +
                                        std::to_string(max_bytes));
    }
    return read_to_end(fd, name, max_bytes, static_cast<std::size_t>(size));
}

Result<std::string> read_file(const fs::path& path, std::size_t max_bytes) {
    auto fd = EMURUN_TRY(open_read(path));
    return read_fd(fd.get(), path.string(), max_bytes);
}

namespace {

/// `path` opened for reading if it is a regular file (its size in `size`), else nothing.
std::optional<UniqueFd> open_regular(const fs::path& path, std::uint64_t& size) {
    auto fd = open_read(path);
    struct stat st {};
    if (!fd || ::fstat(fd->get(), &st) != 0 || !S_ISREG(st.st_mode)) {
        return std::nullopt;
    }
    size = static_cast<std::uint64_t>(st.st_size);
    return std::move(*fd);
}

/// Up to `n` bytes from the descriptor's offset (fewer at the end of the file or on an error).
std::string read_up_to(int fd, std::size_t n) {
    std::string out(n, '\0');
    std::size_t got = 0;
    while (got < n) {
        const ssize_t r = ::read(fd, out.data() + got, n - got);
        if (r < 0 && errno == EINTR) {
            continue;
        }
        if (r <= 0) {
            break;
        }
        got += static_cast<std::size_t>(r);
    }
    out.resize(got);
    return out;
}

} // namespace

std::string read_head(const fs::path& path, std::size_t n) {
    std::uint64_t size = 0;
    auto fd = open_regular(path, size);
    return fd ? read_up_to(fd->get(), n) : std::string();
}

std::string read_tail(const fs::path& path, std::size_t n, std::uint64_t* file_size) {
    auto fd = open_read(path);
    if (!fd) {
        if (file_size != nullptr) {
            *file_size = 0;
        }
        return {};
    }
    return read_tail_fd(fd->get(), n, file_size);
}

std::string read_tail_fd(int fd, std::size_t n, std::uint64_t* skipped) {
    struct stat st {};
    const bool regular = ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
    const auto size = regular ? static_cast<std::uint64_t>(st.st_size) : 0;
    const std::uint64_t start = size > n ? size - n : 0;
    if (skipped != nullptr) {
        *skipped = start;
    }
    if (!regular || ::lseek(fd, static_cast<off_t>(start), SEEK_SET) < 0) {
        return {};
    }
    return read_up_to(fd, n);
}

Result<void> write_all(int fd, std::string_view content, const std::string& name) {
    while (!content.empty()) {
        const ssize_t n = ::write(fd, content.data(), content.size());
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n < 0) {
            return std::unexpected(system_error("write " + name, errno));
        }
        content.remove_prefix(static_cast<std::size_t>(n));
    }
    return {};
}

namespace {

/// A new temporary file ".NAME.XXXXXX" beside `path` (mkostemp: O_CREAT | O_EXCL) into `tmp`.
Result<UniqueFd> make_temporary(const fs::path& path, std::string& tmp) {
    const fs::path dir = path.parent_path().empty() ? fs::path(".") : path.parent_path();
    tmp = (dir / ("." + path.filename().string() + ".XXXXXX")).string();
    UniqueFd fd(::mkostemp(tmp.data(), O_CLOEXEC));
    if (!fd) {
        return std::unexpected(system_error("create a temporary file " + tmp, errno,
                                            "is " + dir.string() + " writable?"));
    }
    return fd;
}

/// Chmod, fsync (when durable) and close the temporary file; the caller removes it on failure.
Result<void> seal_temporary(UniqueFd fd, const std::string& tmp, mode_t mode,
                            Durability durability = Durability::synced) {
    // mkstemp creates 0600; reports and configs are read by the job's other steps.
    if (::fchmod(fd.get(), mode) != 0) {
        return std::unexpected(system_error("fchmod " + tmp, errno));
    }
    if (durability == Durability::synced && ::fsync(fd.get()) != 0) {
        return std::unexpected(system_error("fsync " + tmp, errno));
    }
    return fd.close(tmp);
}

/// Write, chmod, fsync and close the temporary file; the caller removes it on failure.
Result<void> fill_temporary(UniqueFd fd, const std::string& tmp, std::string_view content,
                            mode_t mode, Durability durability) {
    EMURUN_TRY(write_all(fd.get(), content, tmp));
    return seal_temporary(std::move(fd), tmp, mode, durability);
}

/// Copy all of `in` (named `from`) into the temporary file `out`, then seal it.
Result<void> copy_into_temporary(int in, const std::string& from, UniqueFd out,
                                 const std::string& tmp, mode_t mode) {
    char buf[65536];
    while (true) {
        const std::size_t n = EMURUN_TRY(read_some(in, buf, sizeof buf, from));
        if (n == 0) {
            return seal_temporary(std::move(out), tmp, mode);
        }
        EMURUN_TRY(write_all(out.get(), std::string_view(buf, n), tmp));
    }
}

} // namespace

Result<void> append_file(const fs::path& path, std::string_view content) {
    UniqueFd fd(::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NONBLOCK, 0644));
    if (!fd) {
        return std::unexpected(system_error("open " + path.string(), errno));
    }
    struct stat st {};
    if (::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode)) {
        return fail("append to " + path.string(), "not a regular file",
                    std::string("it is ") + std::string(file_kind(st.st_mode)));
    }
    while (!content.empty()) {
        const ssize_t n = ::write(fd.get(), content.data(), content.size());
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            return std::unexpected(system_error("write " + path.string(), n < 0 ? errno : EIO));
        }
        content.remove_prefix(static_cast<std::size_t>(n));
    }
    return {};
}

Result<void> check_replaceable(const fs::path& path) {
    if (path.empty() || !path.has_filename()) {
        return fail("write \"" + path.string() + "\"", "no file name given",
                    "name the file to write");
    }
    struct stat st {};
    if (::lstat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode) && !S_ISLNK(st.st_mode)) {
        return fail("write " + path.string(),
                    "it is " + std::string(file_kind(st.st_mode)) +
                        ", and emurun replaces what it writes whole (a new file renamed over it)",
                    "give the path of a regular file");
    }
    return {};
}

Result<void> write_file_atomic(const fs::path& path, std::string_view content, mode_t mode,
                               Durability durability) {
    EMURUN_TRY(check_replaceable(path));
    std::string tmp;
    auto fd = EMURUN_TRY(make_temporary(path, tmp));
    auto filled = fill_temporary(std::move(fd), tmp, content, mode, durability);
    if (filled && ::rename(tmp.c_str(), path.c_str()) != 0) {
        filled = std::unexpected(system_error("rename " + tmp + " to " + path.string(), errno));
    }
    if (!filled) {
        ::unlink(tmp.c_str());
        filled.error().hint = path.string() + " was left as it was" +
                              (filled.error().hint.empty() ? "" : "; " + filled.error().hint);
    }
    return filled;
}

Result<fs::path> copy_to_temporary(const fs::path& from, const fs::path& to, mode_t mode) {
    UniqueFd in(::open(from.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOFOLLOW));
    struct stat st {};
    if (!in || ::fstat(in.get(), &st) != 0) {
        return std::unexpected(system_error("open " + from.string(), errno));
    }
    if (!S_ISREG(st.st_mode)) {
        return fail("copy " + from.string(), "not a regular file",
                    std::string("it is ") + std::string(file_kind(st.st_mode)));
    }
    std::string tmp;
    auto out = EMURUN_TRY(make_temporary(to, tmp));
    if (auto copied = copy_into_temporary(in.get(), from.string(), std::move(out), tmp, mode);
        !copied) {
        ::unlink(tmp.c_str());
        return std::unexpected(copied.error());
    }
    return fs::path(tmp);
}

timespec realtime_now() {
    timespec now{};
    ::clock_gettime(CLOCK_REALTIME, &now);
    return now;
}

std::optional<fs::path> changed_since(const std::vector<fs::path>& paths, const timespec& since,
                                      const fs::path& except) {
    for (const auto& p : paths) {
        struct stat st {};
        const bool inside = !except.empty() && std::ranges::mismatch(except, p).in1 == except.end();
        if (!inside && ::stat(p.c_str(), &st) == 0 &&
            (st.st_ctim.tv_sec > since.tv_sec ||
             (st.st_ctim.tv_sec == since.tv_sec && st.st_ctim.tv_nsec >= since.tv_nsec))) {
            return p;
        }
    }
    return std::nullopt;
}

} // namespace emurun::util
