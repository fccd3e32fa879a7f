// What an emulator is: its version (read from the binary, remembered per file) and the CPU
// model it emulates when none is asked for.
#include "qemu/qemu_internal.hpp"

#include <sys/stat.h>

#include <array>
#include <cctype>
#include <map>
#include <mutex>
#include <string>
#include <tuple>

namespace emurun {
namespace {

struct Default {
    std::string_view qemu; ///< Arch::qemu
    std::string_view cpu;
};

// Measured with Debian's qemu-user-static 7.2: the model whose ID registers (MIDR, PVR) or
// hwcaps a guest sees without -cpu.
constexpr std::array<Default, 8> k_defaults_7 = {{
    {"aarch64", "max"},
    {"aarch64_be", "max"},
    {"arm", "max"},
    {"armeb", "max"},
    {"ppc64le", "POWER9"},
    {"ppc64", "POWER9"},
    {"riscv64", "rv64"},
    {"s390x", "qemu"},
}};

} // namespace

std::optional<std::string> qemu_default_cpu(const Arch& arch, std::string_view version) {
    if (!version.starts_with("7.")) {
        return std::nullopt;
    }
    for (const auto& d : k_defaults_7) {
        if (d.qemu == arch.qemu) {
            return std::string(d.cpu);
        }
    }
    return std::nullopt;
}

std::optional<std::string> emulator_version(const Emulator& emu) {
    struct stat st {};
    if (::stat(emu.path.c_str(), &st) != 0) {
        return std::nullopt;
    }
    using Key = std::tuple<std::string, std::string, off_t, std::int64_t, long>;
    static std::mutex mutex;
    static std::map<Key, std::optional<std::string>> cache;
    Key key{emu.path.string(), emu.arch ? emu.arch->qemu : "", st.st_size,
            static_cast<std::int64_t>(st.st_mtim.tv_sec), st.st_mtim.tv_nsec};
    std::lock_guard lock(mutex);
    if (auto it = cache.find(key); it != cache.end()) {
        return it->second;
    }
    return cache[key] = detail::read_emulator_version(emu);
}

} // namespace emurun

namespace emurun {

bool qemu_reads_preserve_argv0(const Emulator& emu) {
    const auto version = emulator_version(emu);
    if (!version || version->empty() ||
        !std::isdigit(static_cast<unsigned char>(version->front()))) {
        return true;
    }
    return std::stoi(*version) >= 6;
}

} // namespace emurun
