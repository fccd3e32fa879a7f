#include "wire.hpp"

#include <bit>
#include <cstring>

namespace wire {
namespace {

enum WireType : std::uint32_t { k_varint = 0, k_fixed64 = 1, k_length = 2, k_fixed32 = 5 };

void put_varint(std::string& out, std::uint64_t v) {
    while (v >= 0x80) {
        out += static_cast<char>((v & 0x7f) | 0x80);
        v >>= 7;
    }
    out += static_cast<char>(v);
}

// Fixed-width fields are little-endian on the wire whatever the host's byte order.
void put_fixed(std::string& out, std::uint64_t v, int bytes) {
    for (int i = 0; i < bytes; ++i) {
        out += static_cast<char>((v >> (8 * i)) & 0xff);
    }
}

void put_tag(std::string& out, std::uint32_t field, WireType type) {
    put_varint(out, (field << 3) | type);
}

class Reader {
  public:
    explicit Reader(std::string_view bytes) : m_in(bytes) {}
    bool done() const { return m_in.empty(); }
    std::optional<std::uint64_t> varint() {
        std::uint64_t v = 0;
        for (int shift = 0; shift < 64 && !m_in.empty(); shift += 7) {
            auto byte = static_cast<unsigned char>(m_in.front());
            m_in.remove_prefix(1);
            v |= std::uint64_t{byte & 0x7fu} << shift;
            if ((byte & 0x80) == 0) {
                return v;
            }
        }
        return std::nullopt;
    }
    std::optional<std::uint64_t> fixed(int bytes) {
        if (m_in.size() < static_cast<std::size_t>(bytes)) {
            return std::nullopt;
        }
        std::uint64_t v = 0;
        for (int i = 0; i < bytes; ++i) {
            v |= std::uint64_t{static_cast<unsigned char>(m_in[i])} << (8 * i);
        }
        m_in.remove_prefix(bytes);
        return v;
    }
    std::optional<std::string_view> bytes() {
        auto n = varint();
        if (!n || *n > m_in.size()) {
            return std::nullopt;
        }
        auto out = m_in.substr(0, *n);
        m_in.remove_prefix(*n);
        return out;
    }

  private:
    std::string_view m_in;
};

bool read_field(Reader& in, std::uint64_t tag, Reading& r) {
    switch (tag) {
    case (1 << 3) | k_length: {
        auto s = in.bytes();
        return s && (r.sensor.assign(*s), true);
    }
    case (2 << 3) | k_varint: {
        auto v = in.varint();
        return v && (r.delta = static_cast<std::int64_t>((*v >> 1) ^ (~(*v & 1) + 1)), true);
    }
    case (3 << 3) | k_length: {
        auto packed = in.bytes();
        for (Reader p(packed.value_or("")); packed && !p.done();) {
            auto v = p.fixed(4);
            if (!v) {
                return false;
            }
            r.samples.push_back(static_cast<std::uint32_t>(*v));
        }
        return packed.has_value();
    }
    case (4 << 3) | k_fixed64: {
        auto v = in.fixed(8);
        return v && (r.scale = std::bit_cast<double>(*v), true);
    }
    case (5 << 3) | k_varint: {
        auto v = in.varint();
        return v && (r.id = *v, true);
    }
    default:
        return false;
    }
}

} // namespace

std::string encode(const Reading& r) {
    std::string out;
    if (!r.sensor.empty()) {
        put_tag(out, 1, k_length);
        put_varint(out, r.sensor.size());
        out += r.sensor;
    }
    if (r.delta != 0) {
        put_tag(out, 2, k_varint);
        auto u = static_cast<std::uint64_t>(r.delta);
        put_varint(out, (u << 1) ^ (r.delta < 0 ? ~std::uint64_t{0} : 0));
    }
    if (!r.samples.empty()) {
        put_tag(out, 3, k_length);
        put_varint(out, 4 * r.samples.size());
        for (auto s : r.samples) {
            put_fixed(out, s, 4);
        }
    }
    if (r.scale != 0) {
        put_tag(out, 4, k_fixed64);
        put_fixed(out, std::bit_cast<std::uint64_t>(r.scale), 8);
    }
    if (r.id != 0) {
        put_tag(out, 5, k_varint);
        put_varint(out, r.id);
    }
    return out;
}

std::optional<Reading> decode(std::string_view bytes) {
    Reading r;
    Reader in(bytes);
    while (!in.done()) {
        auto tag = in.varint();
        if (!tag || !read_field(in, *tag, r)) {
            return std::nullopt;
        }
    }
    return r;
}

} // namespace wire
