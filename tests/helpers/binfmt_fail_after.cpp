// binfmt_fail_after N ARCH...: register ARCH... in the binfmt_misc at /proc/sys/fs/binfmt_misc
// as `emurun binfmt register ARCH...` does (each arch's emulator found in PATH, default flags),
// through a writer that passes the first N writes to the kernel and fails the next one, as a
// full kernel table or a revoked permission would. Proves, against a real binfmt_misc (the
// integration test runs it in a user namespace with a private one), that a failure part-way
// rolls back every change of the run. Prints the error on stderr; exit 1 when the registration
// failed (expected), 0 when it did not, 2 for bad arguments.
#include <emurun/arch.hpp>
#include <emurun/binfmt.hpp>
#include <emurun/qemu.hpp>

#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

int main(int argc, char** argv) {
    if (argc < 3) {
        std::cerr << "usage: binfmt_fail_after N ARCH...\n";
        return 2;
    }
    const unsigned long passes = std::strtoul(argv[1], nullptr, 10);
    std::vector<emurun::BinfmtEntry> wanted;
    for (int i = 2; i < argc; ++i) {
        auto arch = emurun::find_arch(argv[i]);
        if (!arch) {
            std::cerr << "binfmt_fail_after: " << arch.error().message() << '\n';
            return 2;
        }
        auto emulator = emurun::find_emulator(**arch);
        if (!emulator) {
            std::cerr << "binfmt_fail_after: " << emulator.error().message() << '\n';
            return 2;
        }
        wanted.push_back(emurun::binfmt_entry_for(**arch, emulator->path,
                                                  emurun::default_binfmt_flags(emulator->path)));
    }
    emurun::BinfmtOptions options;
    unsigned long writes = 0;
    bool failed = false; // one failure only: the rollback's own writes reach the kernel
    options.writer = [&](const std::filesystem::path& file,
                         std::string_view text) -> emurun::Result<void> {
        if (!failed && writes == passes) {
            failed = true;
            return emurun::fail("write " + file.string(), "failed by binfmt_fail_after after " +
                                                              std::to_string(passes) + " writes");
        }
        ++writes;
        return emurun::write_binfmt_control(file, text);
    };
    auto applied = emurun::register_binfmt(wanted, options);
    if (!applied) {
        std::cerr << "binfmt_fail_after: " << applied.error().message() << '\n';
        return 1;
    }
    return 0;
}
