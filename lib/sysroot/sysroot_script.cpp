// The emurun-sysroot script (apt and dpkg do the work of making a sysroot): where it is;
// sysroot_tool.cpp builds the argument vector that asks it for one request.
#include "util/path.hpp"
#include "util/self.hpp"

#include <emurun/sysroot.hpp>

namespace emurun {

namespace fs = std::filesystem;

fs::path sysroot_script() {
    constexpr const char* k_name = "emurun-sysroot";
    if (auto self = util::self_exe()) {
        // Beside emurun (a build tree), or in the bindir of an install whose CLI is in
        // libexec/emurun/ (beside the launcher bin/emurun).
        for (const fs::path& dir :
             {self->parent_path(), self->parent_path().parent_path().parent_path() / "bin"}) {
            if (util::is_executable_file(dir / k_name)) {
                return dir / k_name;
            }
        }
    }
    return k_name;
}

} // namespace emurun
