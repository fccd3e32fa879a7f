// The sample project's test suite: the library must agree byte for byte with the golden message
// protoc encoded during the build, and round-trip many generated messages (a CPU-bound part,
// so that the emulated run's slowdown shows in the timing table).
//   wire_tests GOLDEN.bin [ROUNDS]
#include "wire.hpp"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>

namespace {

int failures = 0;

void check(bool ok, const char* what) {
    std::printf("%s - %s\n", ok ? "ok" : "not ok", what);
    failures += ok ? 0 : 1;
}

wire::Reading golden_reading() {
    return {.sensor = "thermo-7",
            .delta = -123456789,
            .samples = {1, 258, 4294967295u, 305419896},
            .scale = 0.125,
            .id = 1311768467463790320u};
}

// A deterministic generator, so every arch checks the same messages.
wire::Reading generated(std::uint64_t& state) {
    auto next = [&state] {
        state = state * 6364136223846793005u + 1442695040888963407u;
        return state >> 11;
    };
    wire::Reading r;
    r.sensor = "s" + std::to_string(next() % 100000);
    r.delta = static_cast<std::int64_t>(next()) - (std::int64_t{1} << 52);
    for (auto n = next() % 8; n > 0; --n) {
        r.samples.push_back(static_cast<std::uint32_t>(next()));
    }
    r.scale = static_cast<double>(next() % 1000) / 8.0;
    r.id = next();
    return r;
}

} // namespace

int main(int argc, char** argv) {
    if (argc < 2) {
        std::fprintf(stderr, "usage: wire_tests GOLDEN.bin [ROUNDS]\n");
        return 2;
    }
    std::ifstream in(argv[1], std::ios::binary);
    std::string golden{std::istreambuf_iterator<char>(in), {}};
    check(in.good() || in.eof(), "golden message read (encoded by protoc during the build)");
    check(wire::encode(golden_reading()) == golden, "encode() matches protoc byte for byte");
    check(wire::decode(golden) == golden_reading(), "decode() reads protoc's bytes");
    check(!wire::decode(golden.substr(0, golden.size() - 1)), "a truncated message is refused");

    long rounds = argc > 2 ? std::atol(argv[2]) : 300000;
    std::uint64_t state = 42, checksum = 0;
    bool all = true;
    for (long i = 0; i < rounds; ++i) {
        auto r = generated(state);
        auto bytes = wire::encode(r);
        checksum = checksum * 31 + bytes.size();
        all = all && wire::decode(bytes) == r;
    }
    check(all, "generated messages round-trip");
    std::printf("%ld round trips, checksum %016llx\n", rounds,
                static_cast<unsigned long long>(checksum));
    std::printf("%s\n", failures == 0 ? "all passed" : "FAILED");
    return failures == 0 ? 0 : 1;
}
