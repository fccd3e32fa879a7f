#include "qemu/qemu_internal.hpp"
#include "util/env.hpp"
#include "util/file.hpp"
#include "util/path.hpp"

#include <emurun/elf.hpp>
#include <emurun/qemu.hpp>

namespace emurun {
namespace fs = std::filesystem;

namespace {

/// Every file find_emulator tries, in order. A static emulator anywhere beats a dynamic one
/// earlier in PATH: it starts faster and works inside chroots. Within one kind, search order
/// decides.
std::vector<fs::path> emulator_candidates(const Arch& arch, const EmulatorSearch& search) {
    const auto dirs = detail::search_dirs(search);
    std::vector<fs::path> out;
    for (const auto& name : detail::candidate_names(arch, search.prefer_static)) {
        for (const auto& dir : dirs) {
            out.push_back(dir / name);
        }
    }
    return out;
}

} // namespace

Result<Emulator> find_emulator(const Arch& arch, const EmulatorSearch& search) {
    for (const auto& candidate : emulator_candidates(arch, search)) {
        if (util::is_executable_file(candidate)) {
            return detail::make_emulator(arch, candidate);
        }
    }
    return fail(ErrorKind::no_emulator, "no emulator for " + arch.name,
                "qemu-" + arch.qemu + " not found in $EMURUN_QEMU_DIR, PATH or /usr/bin",
                "apt-get install qemu-user-static, or set EMURUN_QEMU_DIR");
}

std::vector<fs::path> emulator_inputs(const Emulator& found, const EmulatorSearch& search) {
    return util::search_inputs(emulator_candidates(*found.arch, search), found.path);
}

std::vector<Emulator> find_all_emulators(const EmulatorSearch& search) {
    std::vector<Emulator> out;
    for (const auto& arch : all_arches()) {
        if (auto e = find_emulator(arch, search)) {
            out.push_back(*e);
        }
    }
    return out;
}

Result<std::vector<const Arch*>> select_arches(const std::vector<std::string>& names,
                                               const EmulatorSearch& search) {
    std::vector<const Arch*> out;
    for (const auto& n : names) {
        if (n == "all") {
            for (const auto& e : find_all_emulators(search)) {
                if (!runs_natively(*e.arch)) {
                    out.push_back(e.arch);
                }
            }
            continue;
        }
        out.push_back(EMURUN_TRY(find_arch(n)));
    }
    if (out.empty()) {
        return fail("architecture selection",
                    names.empty() ? "no architecture named"
                                  : "'all' found no emulator for a foreign architecture",
                    "name arches (aarch64, arm64, ...) or 'all' (apt-get install "
                    "qemu-user-static)");
    }
    return out;
}

std::optional<std::string> detail::read_emulator_version(const Emulator& emu) {
    // qemu-user embeds its banner "qemu-<cpu> version X.Y.Z (...)"; reading it avoids running
    // a process (this module spawns nothing).
    // (A static qemu-user is 3-10 MiB; anything far larger is not one.)
    constexpr std::size_t k_max_emulator_bytes = std::size_t{256} << 20;
    if (emu.arch == nullptr) {
        return std::nullopt;
    }
    const auto image = util::read_file(emu.path, k_max_emulator_bytes);
    if (!image) {
        return std::nullopt;
    }
    const std::string needle = "qemu-" + emu.arch->qemu + " version ";
    const auto pos = image->find(needle);
    if (pos == std::string::npos) {
        return std::nullopt;
    }
    const auto start = pos + needle.size();
    const auto end = image->find_first_of(std::string(" \n\0", 3), start);
    if (end == std::string::npos) {
        return std::nullopt;
    }
    return image->substr(start, end - start);
}

std::vector<std::string> qemu_command(const Emulator& emu, const fs::path& program,
                                      const std::vector<std::string>& args,
                                      const QemuOptions& options) {
    std::vector<std::string> argv{emu.path.string()};
    if (options.cpu) {
        argv.insert(argv.end(), {"-cpu", *options.cpu});
    }
    if (options.argv0) {
        argv.insert(argv.end(), {"-0", *options.argv0});
    }
    if (options.ld_prefix) {
        argv.insert(argv.end(), {"-L", options.ld_prefix->string()});
    }
    argv.push_back(program.string());
    argv.insert(argv.end(), args.begin(), args.end());
    return argv;
}

} // namespace emurun
