// Private: checked reading of JSON documents (pipelines, reports) with errors that name the file
// and the place inside it, e.g. `pipeline.json: steps[3].timeout: expected ...`.
#pragma once

#include <emurun/error.hpp>

#include <nlohmann/json.hpp>

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace emurun::util {

using Json = nlohmann::json;

/// Parse JSON text; a syntax error names the line and column, a number too large for a double
/// its line, column and text, a duplicate key its place ("steps[0].timeout"), a raw NUL byte
/// (which nlohmann would take for the end of the input) its line and column. Never throws.
Result<Json> parse_json_text(std::string_view text, const std::string& source);

/// Levenshtein distance, for "did you mean" hints.
std::size_t edit_distance(std::string_view a, std::string_view b);

/// The candidate closest to `word` if it is close enough to be a likely typo.
std::optional<std::string> closest_match(std::string_view word,
                                         const std::vector<std::string>& candidates);

/// A short rendering of a JSON value for messages: "abc" quoted, numbers as is, [...] / {...}.
std::string describe(const Json& value);

/// A place inside a document: the source name plus a JSON path like "steps[3].timeout".
class Place {
  public:
    Place(std::string source, std::string path = {})
        : m_source(std::move(source)), m_path(std::move(path)) {}
    [[nodiscard]] Place key(std::string_view k) const;
    [[nodiscard]] Place index(std::size_t i) const;
    /// An Error whose `what` is "source: path", of kind bad_input.
    [[nodiscard]] Error error(std::string why, std::string hint = {}) const;
    [[nodiscard]] std::unexpected<Error> fail(std::string why, std::string hint = {}) const {
        return std::unexpected<Error>(error(std::move(why), std::move(hint)));
    }

  private:
    std::string m_source;
    std::string m_path;
};

/// Error unless `value` is an object whose keys are all in `allowed` (typo safety).
Result<void> check_object(const Json& value, const Place& at,
                          std::initializer_list<std::string_view> allowed);

/// A string without NUL characters (no argv element, path, name or variable can hold one).
Result<std::string> get_string(const Json& value, const Place& at);
Result<std::vector<std::string>> get_string_list(const Json& value, const Place& at);
Result<double> get_number(const Json& value, const Place& at);
/// A number >= `min` (NaN never passes).
Result<double> get_number_at_least(const Json& value, const Place& at, double min);
/// An integer within [min, max]; 4294967296 or 1e300 for an int is an error, not a wrap.
Result<std::int64_t> get_integer(const Json& value, const Place& at, std::int64_t min,
                                 std::int64_t max);
Result<bool> get_bool(const Json& value, const Place& at);

} // namespace emurun::util
