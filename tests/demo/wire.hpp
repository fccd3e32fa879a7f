// wire: the demo's sample library, a minimal protocol-buffers wire-format encoder and decoder
// for one message (tests/demo/reading.proto), written by hand without libprotobuf.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace wire {

/// demo.Reading from reading.proto.
struct Reading {
    std::string sensor;
    std::int64_t delta = 0;
    std::vector<std::uint32_t> samples;
    double scale = 0;
    std::uint64_t id = 0;
    bool operator==(const Reading&) const = default;
};

/// The bytes protoc would write: fields in number order, proto3 defaults left out.
std::string encode(const Reading& reading);
/// Parse what encode() or protoc wrote; nullopt on malformed input.
std::optional<Reading> decode(std::string_view bytes);

} // namespace wire
