// Fuzz target for the launch record reader (lib/launch/launch_record.h, elr_parse): the one
// reader of the records the launcher replays (bin/emurun and every shim), which may find a
// truncated, corrupt or hostile file in its place. No input may crash it or make it read past
// the input; what it accepts must keep its promises (every string inside the record, the exe
// and key paths absolute, every variable named); a record the library encodes is accepted and
// reads back as written.
#include "launch/launch_record.h"

#include <emurun/launch.hpp>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

namespace {

[[noreturn]] void broken(const char* promise) {
    std::fprintf(stderr, "fuzz_launch_record: broken promise: %s\n", promise);
    std::abort();
}

bool inside(const char* s, const unsigned char* buf, std::size_t size) {
    const auto* p = reinterpret_cast<const unsigned char*>(s);
    return p >= buf && p < buf + size && std::memchr(p, '\0', size - (p - buf)) != nullptr;
}

void check_view(const elr_view& v, const unsigned char* buf, std::size_t size) {
    if (!inside(v.exe, buf, size) || v.exe[0] != '/') {
        broken("an accepted record's exe is absolute and inside it");
    }
    if (v.argv0_at == ELR_NO_ARGV0 ? v.n_argv == 0 : v.argv0_at > v.n_argv) {
        broken("an accepted record has an argv[0]");
    }
    for (std::uint32_t i = 0; i < v.n_argv; ++i) {
        if (!inside(v.argv[i], buf, size)) {
            broken("argv inside the record");
        }
    }
    for (std::uint32_t i = 0; i < v.n_env; ++i) {
        if (!inside(v.env[i], buf, size) || v.env[i][0] == '=' ||
            std::strchr(v.env[i], '=') == nullptr) {
            broken("variables named, inside the record");
        }
    }
    for (std::uint32_t i = 0; i < v.n_ids; ++i) {
        elr_id id{};
        elr_id_at(&v, i, &id);
        if (!inside(v.paths[i], buf, size) || v.paths[i][0] != '/') {
            broken("key paths absolute, inside the record");
        }
    }
}

} // namespace

namespace {

void parse_one(const unsigned char* buf, std::size_t size) {
    auto view = std::make_unique<elr_view>();
    const char* why = elr_parse(buf, size, view.get());
    if (why == nullptr) {
        check_view(*view, buf, size);
    } else if (why[0] == '\0') {
        broken("a refusal without a reason");
    }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    // An exact copy: a read past the input's end is an ASan report.
    auto buf = std::make_unique<unsigned char[]>(size == 0 ? 1 : size);
    std::memcpy(buf.get(), data, size);
    parse_one(buf.get(), size);
    // The same input with its checksum made right: the checks behind the checksum (counts,
    // strings, paths) see every mutation too, through the one elr_parse.
    if (size >= sizeof(elr_header)) {
        const std::uint64_t sum =
            elr_hash(ELR_HASH_INIT, buf.get() + sizeof(elr_header), size - sizeof(elr_header));
        std::memcpy(buf.get() + offsetof(elr_header, checksum), &sum, sizeof sum);
        parse_one(buf.get(), size);
    }
    return 0;
}

std::vector<std::vector<unsigned char>> emurun_fuzz_seeds() {
    std::vector<emurun::LaunchRecord> records(3);
    records[0] = {.exe = "/usr/bin/qemu-aarch64-static",
                  .argv = {"/usr/bin/qemu-aarch64-static", "-0", "prog", "/abs/prog"},
                  .env = {{"QEMU_LD_PREFIX", "/usr/aarch64-linux-gnu"}},
                  .key = {"/", "/bin/sh", "/nonexistent/qemu-aarch64-static"},
                  .request = 0x0123456789abcdefull};
    records[1] = {.exe = "/usr/bin/qemu-ppc64le",
                  .argv = {"/usr/bin/qemu-ppc64le", "-cpu", "max", "-0", "-L", "/p", "/t"},
                  .argv0_at = 4,
                  .env = {{"A", "1"}, {"B", "x=y"}},
                  .key = {"/bin"}};
    records[2] = {.exe = "/bin/true",
                  .argv = {},
                  .argv0_at = 0,
                  .key = {"/bin/true"},
                  .request = elr_shim_request("/s/true")};
    std::vector<std::vector<unsigned char>> out;
    for (const auto& r : records) {
        auto bytes = emurun::encode_launch_record(r);
        if (!bytes) {
            broken("the seeds encode");
        }
        auto view = std::make_unique<elr_view>();
        const auto* p = reinterpret_cast<const unsigned char*>(bytes->data());
        if (elr_parse(p, bytes->size(), view.get()) != nullptr || view->n_argv != r.argv.size() ||
            view->n_env != r.env.size() || std::string(view->exe) != r.exe.string()) {
            broken("an encoded record reads back as written");
        }
        out.emplace_back(bytes->begin(), bytes->end());
    }
    return out;
}
