#include "util/json.hpp"

#include <algorithm>

namespace emurun::util {

Result<Json> parse_json_text(std::string_view text, const std::string& source) {
    try {
        return Json::parse(text.begin(), text.end());
    } catch (const Json::parse_error& e) {
        // Convert the byte offset into line:column, which is what editors jump to.
        std::size_t end = std::min<std::size_t>(e.byte == 0 ? 0 : e.byte - 1, text.size());
        std::size_t line =
            1 + static_cast<std::size_t>(std::count(
                    text.begin(), text.begin() + static_cast<std::ptrdiff_t>(end), '\n'));
        std::size_t last_nl = text.rfind('\n', end == 0 ? 0 : end - 1);
        std::size_t col = last_nl == std::string_view::npos || end == 0 ? end + 1 : end - last_nl;
        std::string why = e.what();
        if (auto p = why.find("syntax error"); p != std::string::npos) {
            why = why.substr(p);
        }
        return fail(source + ":" + std::to_string(line) + ":" + std::to_string(col),
                    "invalid JSON: " + why);
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
                 std::move(hint)};
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
    return value.get<std::string>();
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

Result<bool> get_bool(const Json& value, const Place& at) {
    if (!value.is_boolean()) {
        return at.fail("expected true or false, got " + describe(value));
    }
    return value.get<bool>();
}

} // namespace emurun::util
