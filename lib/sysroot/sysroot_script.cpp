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
        const fs::path beside = self->parent_path() / k_name;
        if (util::is_executable_file(beside)) {
            return beside;
        }
    }
    return k_name;
}

} // namespace emurun
