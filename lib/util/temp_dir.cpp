// A fresh private directory (mkdtemp), removed with its content.
#include "util/temp_dir.hpp"

#include <cerrno>
#include <cstring>
#include <stdlib.h>
#include <sys/stat.h>
#include <utility>

namespace emurun::util {

namespace fs = std::filesystem;

Result<TempDir> TempDir::make(const fs::path& prefix) {
    std::error_code ec;
    auto absolute = fs::absolute(prefix, ec);
    std::string tmpl = (ec ? prefix : absolute).string() + "XXXXXX";
    if (::mkdtemp(tmpl.data()) == nullptr) {
        return fail("create a temporary directory " + tmpl, std::strerror(errno),
                    "check that its parent exists and is writable (TMPDIR)");
    }
    return TempDir(tmpl);
}

TempDir::TempDir(TempDir&& o) noexcept : m_path(std::exchange(o.m_path, {})) {}

namespace {

// `dir` and every directory below it (symlinks not followed) opened to their owner: a
// directory without write permission keeps its entries from a user that is not root.
void open_up(const fs::path& dir) {
    ::chmod(dir.c_str(), S_IRWXU);
    std::error_code ec;
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
        if (it->symlink_status(ec).type() == fs::file_type::directory) {
            open_up(it->path());
        }
    }
}

} // namespace

TempDir::~TempDir() {
    std::error_code ec;
    if (!m_path.empty() && (fs::remove_all(m_path, ec), ec)) {
        open_up(m_path);
        fs::remove_all(m_path, ec);
    }
}

} // namespace emurun::util
