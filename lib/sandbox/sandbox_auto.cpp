// The `auto` emulation mode: a private binfmt_misc where the kernel allows it, else the host's
// own binfmt_misc handlers when they are sane for every arch, else an error naming the fixes.
#include <emurun/binfmt.hpp>
#include <emurun/sandbox.hpp>

#include <fmt/format.h>

#include <cstdlib>
#include <mutex>
#include <string_view>

namespace emurun {
namespace {

// probe_sandbox() forks: once per process is enough.
const Result<void>& kernel_probe() {
    static std::once_flag once;
    static Result<void> result;
    std::call_once(once, [] { result = probe_sandbox(); });
    return result;
}

bool host_serves(const BinfmtTable& table, const Arch& arch) {
    for (const auto& e : table.entries) {
        if (auto p = binfmt_entry_provider(e); p && p->arch == &arch && p->sane()) {
            return true;
        }
    }
    return false;
}

} // namespace

std::string_view to_string(AutoMode mode) {
    return mode == AutoMode::sandbox ? "sandbox" : "host";
}

Result<void> host_binfmt_covers(const std::vector<const Arch*>& arches,
                                const std::filesystem::path& mount) {
    auto table = read_binfmt_table(mount);
    std::string missing;
    for (const Arch* a : arches) {
        if (!table || !table->enabled || !host_serves(*table, *a)) {
            missing += (missing.empty() ? "" : ", ") + a->name;
        }
    }
    if (missing.empty()) {
        return {};
    }
    std::string names;
    for (const Arch* a : arches) {
        names += " " + a->name;
    }
    return fail(fmt::format("the host's binfmt_misc ({})", mount.string()),
                fmt::format("no usable handler for {} (wanted: an enabled entry with QEMU's "
                            "magic/mask, a qemu of that arch, and F or a static emulator){}",
                            missing, table ? "" : ": " + table.error().message()),
                fmt::format("as root: emurun binfmt register{} (or apt-get install "
                            "qemu-user-static, whose handlers emurun uses as they are)",
                            names));
}

std::optional<std::filesystem::path> host_handler_emulator(const Arch& arch,
                                                           const std::filesystem::path& mount) {
    auto table = read_binfmt_table(mount);
    if (!table || !table->enabled) {
        return std::nullopt;
    }
    for (const auto& e : table->entries) {
        if (auto p = binfmt_entry_provider(e); p && p->arch == &arch && p->sane()) {
            return p->emulator;
        }
    }
    return std::nullopt;
}

Result<AutoMode> choose_auto_mode(const std::vector<const Arch*>& arches,
                                  const std::filesystem::path& mount, const SandboxProbe& ask) {
    const Result<void> probe = ask ? ask() : kernel_probe();
    if (probe) {
        return AutoMode::sandbox;
    }
    auto host = host_binfmt_covers(arches, mount);
    if (host) {
        return AutoMode::host;
    }
    return fail("emulation \"auto\"",
                fmt::format("no private binfmt_misc here ({}), and {}: {}", probe.error().message(),
                            host.error().what, host.error().why),
                host.error().hint + "; or run on a Linux >= 6.7 kernel with unprivileged user "
                                    "namespaces, where emurun needs neither; or set "
                                    "\"emulation\": \"exec\" on the step");
}

} // namespace emurun
