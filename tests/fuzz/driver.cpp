// A standalone driver for the fuzz targets where libFuzzer is not available (GCC builds).
//   fuzz_X FILE...                 feed each file once (reproduce a crash)
//   fuzz_X --mutate N [FILE...]    feed N mutations of the target's built-in seeds and of the
//                                  files (missing files are skipped with a note), fixed PRNG seed
//   fuzz_X --write-seeds DIR       write the built-in seeds as DIR/seed-<n> (a seed corpus)
// Each fuzz_*.cpp defines LLVMFuzzerTestOneInput and may define emurun_fuzz_seeds().
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

/// Seeds a target offers for --mutate; a target without any keeps this empty default.
[[gnu::weak]] std::vector<std::vector<unsigned char>> emurun_fuzz_seeds() {
    return {};
}

namespace {

bool read_file(const char* path, std::vector<unsigned char>& out) {
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        return false;
    }
    out.assign(std::istreambuf_iterator<char>(in), {});
    return true;
}

constexpr unsigned char k_interesting[] = {0x00, 0x01, 0x02, 0x7f, 0x80, 0xfe, 0xff};

// One mutation applied in place to `buf`; the bytes it changed are restored afterwards, so that
// large seeds are never copied. Returns the length to feed (a truncation shortens it).
struct Mutator {
    std::mt19937_64 rng{0x656d7572756eULL}; // fixed: every run feeds the same inputs

    std::size_t pick(std::size_t size) {
        // Headers live at the start: aim there most of the time.
        const std::size_t hot = size < 512 ? size : 512;
        return rng() % 4 != 0 ? rng() % hot : rng() % size;
    }

    std::size_t mutate(std::vector<unsigned char>& buf,
                       std::vector<std::pair<std::size_t, unsigned char>>& undo) {
        const std::size_t edits = 1 + rng() % 8;
        for (std::size_t e = 0; e < edits && !buf.empty(); ++e) {
            const std::size_t at = pick(buf.size());
            const std::size_t width = std::size_t{1} << (rng() % 4); // 1, 2, 4 or 8 bytes
            const unsigned choice = rng() % 4;
            for (std::size_t i = 0; i < width && at + i < buf.size(); ++i) {
                undo.emplace_back(at + i, buf[at + i]);
                unsigned char& b = buf[at + i];
                b = choice == 0   ? static_cast<unsigned char>(b ^ (1u << (rng() % 8)))
                    : choice == 1 ? static_cast<unsigned char>(rng())
                    : choice == 2 ? k_interesting[rng() % sizeof k_interesting]
                                  : static_cast<unsigned char>(i == 0 ? 0xff : 0x7f);
            }
        }
        return rng() % 16 == 0 && !buf.empty() ? rng() % buf.size() : buf.size();
    }
};

int run_mutations(long runs, std::vector<std::vector<unsigned char>> seeds) {
    if (seeds.empty()) {
        std::fprintf(stderr, "fuzz driver: no seeds to mutate\n");
        return 2;
    }
    Mutator m;
    std::vector<std::pair<std::size_t, unsigned char>> undo;
    for (long r = 0; r < runs; ++r) {
        auto& buf = seeds[static_cast<std::size_t>(r) % seeds.size()];
        undo.clear();
        const std::size_t len = m.mutate(buf, undo);
        LLVMFuzzerTestOneInput(buf.data(), len);
        for (auto it = undo.rbegin(); it != undo.rend(); ++it) {
            buf[it->first] = it->second;
        }
    }
    std::printf("fuzz driver: %ld mutated inputs from %zu seeds, no crash\n", runs, seeds.size());
    return 0;
}

int write_seeds(const std::string& dir) {
    const auto seeds = emurun_fuzz_seeds();
    for (std::size_t i = 0; i < seeds.size(); ++i) {
        const std::string path = dir + "/seed-" + std::to_string(i + 1);
        std::ofstream out(path, std::ios::binary);
        out.write(reinterpret_cast<const char*>(seeds[i].data()),
                  static_cast<std::streamsize>(seeds[i].size()));
        if (!out.flush()) {
            std::fprintf(stderr, "fuzz driver: %s: cannot write\n", path.c_str());
            return 1;
        }
    }
    std::printf("fuzz driver: %zu seeds written to %s\n", seeds.size(), dir.c_str());
    return 0;
}

} // namespace

int main(int argc, char** argv) {
    if (argc == 3 && std::string(argv[1]) == "--write-seeds") {
        return write_seeds(argv[2]);
    }
    long runs = -1;
    int first = 1;
    if (argc >= 3 && std::string(argv[1]) == "--mutate") {
        runs = std::strtol(argv[2], nullptr, 10);
        first = 3;
    }
    std::vector<std::vector<unsigned char>> inputs;
    for (int i = first; i < argc; ++i) {
        std::vector<unsigned char> bytes;
        if (!read_file(argv[i], bytes)) {
            std::fprintf(stderr, "fuzz driver: %s: cannot read, skipped\n", argv[i]);
            continue;
        }
        inputs.push_back(std::move(bytes));
    }
    if (runs < 0) {
        for (const auto& in : inputs) {
            LLVMFuzzerTestOneInput(in.data(), in.size());
        }
        std::printf("fuzz driver: %zu inputs, no crash\n", inputs.size());
        return inputs.empty() && first < argc ? 1 : 0;
    }
    auto seeds = emurun_fuzz_seeds();
    seeds.insert(seeds.end(), inputs.begin(), inputs.end());
    return run_mutations(runs, std::move(seeds));
}
