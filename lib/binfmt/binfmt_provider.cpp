// Entries that other tools registered and that already do emurun's job: Debian's
// qemu-user-static (/usr/libexec/qemu-binfmt/<cpu>-binfmt-P -> qemu-<cpu>-static) and
// tonistiigi/binfmt, which docker/setup-qemu-action runs (/usr/bin/qemu-<cpu>, flags POCF).
// Also: which files restore an entry at boot.
#include "util/file.hpp"

#include <emurun/binfmt.hpp>
#include <emurun/elf.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <sstream>

namespace emurun {
namespace fs = std::filesystem;
namespace {

// qemu-user-static emulators are 5-20 MiB (a 1 MiB cap read them as "not static").
constexpr std::size_t k_max_emulator_size = std::size_t{256} << 20;

unsigned char byte_at(std::string_view s, std::size_t i) {
    return i < s.size() ? static_cast<unsigned char>(s[i]) : 0;
}

// The mask byte the kernel applies at i: no mask means 0xff over the magic's length.
unsigned char mask_at(const BinfmtEntry& e, std::size_t i) {
    if (i >= e.magic.size()) {
        return 0;
    }
    return e.mask.empty() ? 0xff : byte_at(e.mask, i);
}

// "qemu-aarch64-static" or "qemu-aarch64" -> "aarch64"; anything else -> "".
std::string qemu_cpu_of(const std::string& file_name) {
    constexpr std::string_view prefix = "qemu-";
    constexpr std::string_view suffix = "-static";
    if (!file_name.starts_with(prefix)) {
        return {};
    }
    std::string cpu = file_name.substr(prefix.size());
    if (cpu.ends_with(suffix)) {
        cpu.resize(cpu.size() - suffix.size());
    }
    return cpu;
}

const Arch* equivalent_arch(const BinfmtEntry& e, const std::string& cpu) {
    for (const auto& a : all_arches()) {
        BinfmtEntry table;
        table.magic = a.magic;
        table.mask = a.mask;
        if (a.qemu == cpu && binfmt_magic_equivalent(e, table)) {
            return &a;
        }
    }
    return nullptr;
}

// Debian's /usr/libexec/qemu-binfmt/<cpu>-binfmt-P links point at qemu-<cpu>-static
// (qemu-user-static) or, from qemu-user-binfmt, at the dynamic qemu-<cpu>.
std::string owner_of(const BinfmtEntry& e, const fs::path& resolved) {
    const bool static_name = resolved.filename().string().ends_with("-static");
    if (e.interpreter.find("/qemu-binfmt/") != std::string::npos) {
        return static_name ? "qemu-user-static" : "qemu-user-binfmt";
    }
    if (static_name) {
        return "qemu-user-static";
    }
    return "another tool (tonistiigi/binfmt or docker/setup-qemu-action)";
}

// Whether the systemd binfmt.d file at `file` has a line registering `name` (util's reader:
// a FIFO or device dropped into binfmt.d is passed over, never blocked on).
bool conf_names(const fs::path& file, std::string_view name) {
    auto text = util::read_file(file, 1 << 20);
    if (!text) {
        return false;
    }
    std::istringstream in(*text);
    std::string line;
    while (std::getline(in, line)) {
        if (line.size() > 1 && line[0] != '#' && line[0] != ';') {
            const char delim = line[0];
            auto end = line.find(delim, 1);
            if (end != std::string::npos && std::string_view(line).substr(1, end - 1) == name) {
                return true;
            }
        }
    }
    return false;
}

void scan_binfmt_d(const fs::path& dir, std::string_view name, std::vector<fs::path>& out) {
    std::error_code ec;
    for (const auto& f : fs::directory_iterator(dir, ec)) {
        if (f.path().extension() == ".conf" && conf_names(f.path(), name)) {
            out.push_back(f.path());
        }
    }
}

} // namespace

bool binfmt_magic_equivalent(const BinfmtEntry& a, const BinfmtEntry& b) {
    if (a.type != BinfmtType::magic || b.type != BinfmtType::magic || a.offset != b.offset) {
        return false;
    }
    const std::size_t n = std::max(a.magic.size(), b.magic.size());
    for (std::size_t i = 0; i < n; ++i) {
        const unsigned char m = mask_at(a, i);
        if (m != mask_at(b, i) || ((byte_at(a.magic, i) ^ byte_at(b.magic, i)) & m) != 0) {
            return false;
        }
    }
    return true;
}

std::optional<BinfmtProvider> binfmt_entry_provider(const BinfmtEntry& entry) {
    if (!entry.enabled || !fs::path(entry.interpreter).is_absolute()) {
        return std::nullopt;
    }
    std::error_code ec;
    fs::path resolved = fs::canonical(entry.interpreter, ec);
    // With F the kernel holds the file open: a tool running in a container (tonistiigi/binfmt)
    // registers a path that need not exist on the host.
    if (ec && !entry.flags.fix_binary) {
        return std::nullopt;
    }
    if (ec) {
        resolved = entry.interpreter;
    }
    const Arch* arch = equivalent_arch(entry, qemu_cpu_of(resolved.filename().string()));
    if (arch == nullptr) {
        return std::nullopt;
    }
    BinfmtProvider p{arch, owner_of(entry, resolved), resolved, false, entry.flags.fix_binary};
    if (!ec) {
        auto elf = read_elf(resolved, k_max_emulator_size);
        p.static_emulator = elf && elf->is_static();
    }
    return p;
}

std::string binfmt_interpreter_qemu_cpu(const BinfmtEntry& entry) {
    std::error_code ec;
    fs::path resolved = fs::canonical(entry.interpreter, ec);
    if (ec) {
        resolved = entry.interpreter;
    }
    return qemu_cpu_of(resolved.filename().string());
}

BinfmtFlags default_binfmt_flags(const fs::path& interpreter) {
    BinfmtFlags f;
    f.preserve_argv0 = true;
    auto elf = read_elf(interpreter, k_max_emulator_size);
    f.fix_binary = elf && elf->is_static();
    return f;
}

bool BinfmtProvider::sane() const {
    return arch != nullptr && (static_emulator || fix_binary);
}

std::vector<fs::path> binfmt_restore_files(std::string_view name, const fs::path& root) {
    std::vector<fs::path> out;
    for (const char* d : {"etc/binfmt.d", "run/binfmt.d", "usr/lib/binfmt.d"}) {
        scan_binfmt_d(root / d, name, out);
    }
    std::error_code ec;
    const fs::path debian = root / "usr/share/binfmts" / std::string(name);
    if (fs::is_regular_file(debian, ec)) {
        out.push_back(debian);
    }
    return out;
}

} // namespace emurun
