#include "util/json.hpp"

#include <emurun/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>

namespace emurun::util {

namespace {

// 1-based "line:column" of byte `offset` in `text`, which is what editors jump to.
std::string line_col(std::string_view text, std::size_t offset) {
    offset = std::min(offset, text.size());
    auto before = text.substr(0, offset);
    std::size_t line = 1 + static_cast<std::size_t>(std::ranges::count(before, '\n'));
    std::size_t last_nl = before.rfind('\n');
    std::size_t col = last_nl == std::string_view::npos ? offset + 1 : offset - last_nl;
    return std::to_string(line) + ":" + std::to_string(col);
}

// Builds the document from the parser's SAX events and names the place of the first duplicate
// key: nlohmann keeps the last value silently, so "timeout" given twice would lose one without a
// word. (nlohmann's callback parser rescans the parent container after every object, quadratic in
// a 100,000-step pipeline; this builder does constant work per event.)
class CheckedBuilder {
  public:
    using string_t = Json::string_t;
    static constexpr std::size_t k_max_depth = 64;

    explicit CheckedBuilder(std::string source) : m_source(std::move(source)) {}

    bool null() { return value(nullptr); }
    bool boolean(bool v) { return value(v); }
    bool number_integer(Json::number_integer_t v) { return value(v); }
    bool number_unsigned(Json::number_unsigned_t v) { return value(v); }
    bool number_float(Json::number_float_t v, const string_t& /*text*/) { return value(v); }
    bool string(string_t& v) { return value(std::move(v)); }
    bool binary(Json::binary_t& v) { return value(std::move(v)); }
    bool start_object(std::size_t /*size*/) { return open(Json::value_t::object, false); }
    bool start_array(std::size_t /*size*/) { return open(Json::value_t::array, true); }
    bool end_object() { return close(); }
    bool end_array() { return close(); }
    bool key(string_t& k) {
        Frame& top = m_stack.back();
        top.key = k;
        if (!top.keys.insert(k).second && !m_duplicate) {
            m_duplicate = place();
        }
        m_slot = &(*top.node)[k];
        return true;
    }
    template <class Exception>
    bool parse_error(std::size_t /*at*/, const std::string& /*token*/, const Exception& e) {
        throw e;
    }

    [[nodiscard]] Json& root() { return m_root; }
    [[nodiscard]] const std::optional<Place>& duplicate() const { return m_duplicate; }
    [[nodiscard]] bool too_deep() const { return m_too_deep; }

  private:
    struct Frame {
        Json* node;
        bool array;
        std::size_t index;
        std::set<std::string, std::less<>> keys;
        std::string key;
    };
    // Where the next value goes: the root, the end of the open array, or the slot of the last key.
    template <class V> Json* place_value(V&& v) {
        if (m_stack.empty()) {
            m_root = Json(std::forward<V>(v));
            return &m_root;
        }
        Frame& top = m_stack.back();
        if (top.array) {
            top.node->push_back(Json(std::forward<V>(v)));
            return &top.node->back();
        }
        *m_slot = Json(std::forward<V>(v));
        return m_slot;
    }
    template <class V> bool value(V&& v) {
        place_value(std::forward<V>(v));
        return advance();
    }
    // Deeper than any emurun document: such a value stops the parse (copying and destroying it
    // recurse once per level, a stack overflow at 100,000) and is refused afterwards.
    bool open(Json::value_t kind, bool array) {
        if (m_stack.size() >= k_max_depth) {
            m_too_deep = true;
            return false;
        }
        Json* node = place_value(kind);
        m_stack.push_back(Frame{node, array, 0, {}, {}});
        return true;
    }
    bool close() {
        m_stack.pop_back();
        return advance();
    }
    bool advance() {
        if (!m_stack.empty() && m_stack.back().array) {
            ++m_stack.back().index;
        }
        return true;
    }
    [[nodiscard]] Place place() const {
        Place at(m_source);
        for (const auto& f : m_stack) {
            at = f.array ? at.index(f.index) : at.key(f.key);
        }
        return at;
    }
    std::string m_source;
    Json m_root;
    std::vector<Frame> m_stack;
    Json* m_slot = nullptr;
    std::optional<Place> m_duplicate;
    bool m_too_deep = false;
};

// The quoted token of nlohmann's "number overflow parsing '1e400'".
std::string quoted_token(std::string_view what) {
    auto open = what.find('\'');
    auto close = what.rfind('\'');
    return open == std::string_view::npos || close <= open
               ? std::string()
               : std::string(what.substr(open + 1, close - open - 1));
}

} // namespace

Result<Json> parse_json_text(std::string_view text, const std::string& source) {
    // nlohmann takes a NUL byte for the end of the input: what follows it would go unread.
    if (const auto nul = text.find('\0'); nul != std::string_view::npos) {
        return fail(ErrorKind::bad_input, source + ":" + line_col(text, nul),
                    "invalid JSON: a NUL byte",
                    "a JSON document is text: write a NUL inside a string as \\u0000");
    }
    CheckedBuilder keys(source);
    try {
        Json::sax_parse(text.begin(), text.end(), &keys);
        if (keys.too_deep()) {
            return fail(ErrorKind::bad_input, source,
                        "invalid JSON: nested deeper than " +
                            std::to_string(CheckedBuilder::k_max_depth) + " levels",
                        "emurun's documents nest a few levels; this is not one of them");
        }
        if (keys.duplicate()) {
            return keys.duplicate()->fail("duplicate key (each key may appear once)");
        }
        return std::move(keys.root());
    } catch (const Json::parse_error& e) {
        std::string why = e.what();
        if (auto p = why.find("syntax error"); p != std::string::npos) {
            why = why.substr(p);
        }
        return fail(ErrorKind::bad_input,
                    source + ":" + line_col(text, e.byte == 0 ? 0 : e.byte - 1),
                    "invalid JSON: " + why);
    } catch (const Json::out_of_range& e) {
        // A number past the range of a double (1e400): nlohmann gives no offset, find the token.
        std::string token = quoted_token(e.what());
        std::size_t at = token.empty() ? std::string_view::npos : text.find(token);
        return fail(ErrorKind::bad_input,
                    source + (at == std::string_view::npos ? "" : ":" + line_col(text, at)),
                    "invalid JSON: number " + token + " is too large for a double",
                    "numbers must lie within about +-1.8e308");
    } catch (const Json::exception& e) {
        return fail(ErrorKind::bad_input, source, std::string("invalid JSON: ") + e.what());
    }
}

std::size_t edit_distance(std::string_view a, std::string_view b) {
    std::vector<std::size_t> row(b.size() + 1);
    for (std::size_t j = 0; j <= b.size(); ++j) {
        row[j] = j;
    }
    for (std::size_t i = 1; i <= a.size(); ++i) {
        std::size_t diag = row[0];
        row[0] = i;
        for (std::size_t j = 1; j <= b.size(); ++j) {
            std::size_t up = row[j];
            row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
            diag = up;
        }
    }
    return row[b.size()];
}

std::optional<std::string> closest_match(std::string_view word,
                                         const std::vector<std::string>& candidates) {
    std::optional<std::string> best;
    // About one edit per three letters, at most three; one- and two-letter words get no guess.
    std::size_t best_distance =
        word.size() < 3 ? 0 : std::min<std::size_t>(3, (word.size() + 1) / 3);
    for (const auto& c : candidates) {
        std::size_t d = edit_distance(word, c);
        if (d <= best_distance && (!best || d < edit_distance(word, *best))) {
            best = c;
            best_distance = d;
        }
    }
    return best;
}

std::string describe(const Json& value) {
    switch (value.type()) {
    case Json::value_t::object:
        return "an object";
    case Json::value_t::array:
        return "an array";
    case Json::value_t::null:
        return "null";
    default: {
        std::string text = value.dump();
        return text.size() > 60 ? text.substr(0, 57) + "..." : text;
    }
    }
}

Place Place::key(std::string_view k) const {
    return Place(m_source, m_path.empty() ? std::string(k) : m_path + "." + std::string(k));
}

Place Place::index(std::size_t i) const {
    return Place(m_source, m_path + "[" + std::to_string(i) + "]");
}

Error Place::error(std::string why, std::string hint) const {
    return Error{m_path.empty() ? m_source : m_source + ": " + m_path, std::move(why),
                 std::move(hint), ErrorKind::bad_input};
}

Result<void> check_object(const Json& value, const Place& at,
                          std::initializer_list<std::string_view> allowed) {
    if (!value.is_object()) {
        return at.fail("expected an object, got " + describe(value));
    }
    std::vector<std::string> names(allowed.begin(), allowed.end());
    for (const auto& [k, v] : value.items()) {
        if (std::ranges::find(names, k) != names.end()) {
            continue;
        }
        std::string hint;
        if (auto near = closest_match(k, names)) {
            hint = "did you mean \"" + *near + "\"?";
        } else {
            std::string list;
            for (const auto& n : names) {
                list += (list.empty() ? "" : ", ") + n;
            }
            hint = "known keys: " + list;
        }
        return at.key(k).fail("unknown key", hint);
    }
    return {};
}

Result<std::string> get_string(const Json& value, const Place& at) {
    if (!value.is_string()) {
        return at.fail("expected a string, got " + describe(value));
    }
    const auto& text = value.get_ref<const std::string&>();
    if (text.find('\0') != std::string::npos) {
        return at.fail("contains a NUL character (\\u0000), which no command line or file name "
                       "can hold");
    }
    return text;
}

Result<std::vector<std::string>> get_string_list(const Json& value, const Place& at) {
    if (!value.is_array()) {
        return at.fail("expected an array of strings, got " + describe(value));
    }
    std::vector<std::string> out;
    for (std::size_t i = 0; i < value.size(); ++i) {
        out.push_back(EMURUN_TRY(get_string(value[i], at.index(i))));
    }
    return out;
}

Result<double> get_number(const Json& value, const Place& at) {
    if (!value.is_number()) {
        return at.fail("expected a number, got " + describe(value));
    }
    return value.get<double>();
}

Result<double> get_number_at_least(const Json& value, const Place& at, double min) {
    auto v = EMURUN_TRY(get_number(value, at));
    if (!(v >= min)) {
        char text[32];
        std::snprintf(text, sizeof text, "%g", min);
        return at.fail("expected a number >= " + std::string(text) + ", got " + describe(value));
    }
    return v;
}

Result<std::int64_t> get_integer(const Json& value, const Place& at, std::int64_t min,
                                 std::int64_t max) {
    auto bad = [&] {
        return at.fail("expected an integer from " + std::to_string(min) + " to " +
                       std::to_string(max) + ", got " + describe(value));
    };
    if (value.is_number_unsigned()) {
        // A JSON text's non-negative numbers parse as unsigned: the lower bound holds for them
        // too (a signal of 0 in a report, a shard index of 0).
        auto u = value.get<std::uint64_t>();
        if (max < 0 || u > static_cast<std::uint64_t>(max) || static_cast<std::int64_t>(u) < min) {
            return bad();
        }
        return static_cast<std::int64_t>(u);
    }
    if (value.is_number_integer()) {
        auto i = value.get<std::int64_t>();
        return i < min || i > max ? bad() : Result<std::int64_t>(i);
    }
    if (value.is_number_float()) {
        // 2e3 is an integer written as a float; 1e300 is out of any range.
        double d = value.get<double>();
        if (d == std::floor(d) && d >= static_cast<double>(min) && d <= static_cast<double>(max) &&
            d < 9.2e18) {
            return static_cast<std::int64_t>(d);
        }
        return bad();
    }
    return at.fail("expected an integer, got " + describe(value));
}

Result<bool> get_bool(const Json& value, const Place& at) {
    if (!value.is_boolean()) {
        return at.fail("expected true or false, got " + describe(value));
    }
    return value.get<bool>();
}

} // namespace emurun::util

namespace emurun {

std::string json_text(const nlohmann::json& j, int indent) {
    return j.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

namespace {

// The length of the UTF-8 sequence starting at text[i], or 0 when it is not well-formed.
std::size_t utf8_sequence(std::string_view text, std::size_t i) {
    auto byte = [&](std::size_t k) { return static_cast<unsigned char>(text[k]); };
    unsigned char c = byte(i);
    if (c < 0x80) {
        return 1;
    }
    std::size_t n = c >= 0xc2 && c <= 0xdf   ? 2
                    : c >= 0xe0 && c <= 0xef ? 3
                    : c >= 0xf0 && c <= 0xf4 ? 4
                                             : 0;
    if (n == 0 || i + n > text.size()) {
        return 0;
    }
    // The second byte's range excludes overlong forms, surrogates and code points past U+10FFFF.
    unsigned char lo = c == 0xe0 ? 0xa0 : c == 0xf0 ? 0x90 : 0x80;
    unsigned char hi = c == 0xed ? 0x9f : c == 0xf4 ? 0x8f : 0xbf;
    if (byte(i + 1) < lo || byte(i + 1) > hi) {
        return 0;
    }
    for (std::size_t k = 2; k < n; ++k) {
        if ((byte(i + k) & 0xc0) != 0x80) {
            return 0;
        }
    }
    return n;
}

} // namespace

bool is_utf8(std::string_view text) {
    for (std::size_t i = 0; i < text.size();) {
        std::size_t n = utf8_sequence(text, i);
        if (n == 0) {
            return false;
        }
        i += n;
    }
    return true;
}

} // namespace emurun
