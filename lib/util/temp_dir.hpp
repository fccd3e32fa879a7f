// Private: a fresh private directory removed with all it holds when its owner goes.
#pragma once

#include <emurun/error.hpp>

#include <filesystem>

namespace emurun::util {

/// mkdtemp("<prefix>XXXXXX"): a new directory, mode 0700, that no other user created or can
/// swap (no fixed name to plant a symlink at); removed recursively by the destructor, read-only
/// directories inside it included (an archive's, unpacked by a user that is not root).
class TempDir {
  public:
    [[nodiscard]] static Result<TempDir> make(const std::filesystem::path& prefix);
    /// An existing directory (a dead process's temporary one), removed like one made here.
    [[nodiscard]] static TempDir adopt(std::filesystem::path dir) {
        return TempDir(std::move(dir));
    }
    TempDir(TempDir&& o) noexcept;
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;
    TempDir& operator=(TempDir&&) = delete;
    ~TempDir();
    [[nodiscard]] const std::filesystem::path& path() const { return m_path; }

  private:
    explicit TempDir(std::filesystem::path p) : m_path(std::move(p)) {}
    std::filesystem::path m_path;
};

} // namespace emurun::util
