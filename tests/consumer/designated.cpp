// The core's request structs written as the API main page says (docs/api/mainpage.md): designated
// initializers naming only the fields a caller sets, struct_size left alone. Built with -Wall
// -Wextra -Werror, so a member without a default member initializer (GCC's
// -Wmissing-field-initializers) fails the consumer's build.
#include <emurun/arch.hpp>
#include <emurun/binfmt.hpp>
#include <emurun/launch.hpp>
#include <emurun/process.hpp>
#include <emurun/qemu.hpp>
#include <emurun/sandbox.hpp>
#include <emurun/shim.hpp>
#include <emurun/sysroot.hpp>

#include <chrono>

namespace designated {

inline const emurun::Arch* const no_arch = nullptr;

inline const emurun::LaunchRequest launch{.program = "hello", .args = {"a"}};
inline const emurun::ShimSpec shim{.name = "protoc", .target = "/opt/protoc"};
inline const emurun::SandboxSpec sandbox{.arches = {no_arch}, .cpu = "max"};
inline const emurun::SandboxSysroot sandbox_sysroot{.dir = "/srv/sysroot"};
inline const emurun::SpawnOptions spawn{
    .stdout_log = "out.log", .timeout = std::chrono::seconds(5), .limits = {.pids = 64}};
inline const emurun::BinfmtOptions binfmt{.mount = "/tmp/binfmt_misc", .dry_run = true};
inline const emurun::BinfmtEntry entry{.name = "qemu-aarch64",
                                       .interpreter = "/usr/bin/qemu-aarch64"};
inline const emurun::SysrootRequest sysroot{
    .arch = "arm64", .dir = "sysroot", .packages = {"zlib1g"}};
inline const emurun::ArchSysroots arch_sysroots{.arch = no_arch};
inline const emurun::EmulatorSearch search{.system = false};
inline const emurun::ResourceLimits limits{.memory_bytes = 1 << 30};

} // namespace designated
