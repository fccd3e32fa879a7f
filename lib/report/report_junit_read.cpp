// Reading the JUnit XML files a test step writes (ctest --output-junit, meson test, pytest
// --junitxml, doctest -r=junit): a small XML scanner for what those tools write — elements,
// attributes, text, CDATA, comments, the XML declaration and character references — with no DTD
// and no entity of its own, bounded in depth; and the JUnit meaning of its elements.
#include "report/report_tests.hpp"
#include "util/file.hpp"

#include <emurun/json.hpp>
#include <emurun/report.hpp>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace emurun {
namespace {

constexpr std::size_t k_max_depth = 64;
constexpr std::size_t k_output_message_lines = 3; // of <system-out>, for a failure without message
constexpr std::string_view k_space = " \t\r\n";

struct Attribute {
    std::string_view name;
    std::string value;
};
using Attributes = std::vector<Attribute>;

std::string attribute(const Attributes& attrs, std::string_view name) {
    auto it = std::ranges::find(attrs, name, &Attribute::name);
    return it == attrs.end() ? std::string() : it->value;
}

// Whether XML 1.0 allows the character `cp` in a document (&#1; and &#xD800; are errors).
bool xml_char(std::uint32_t cp) {
    return cp == 0x9 || cp == 0xa || cp == 0xd || (cp >= 0x20 && cp <= 0xd7ff) ||
           (cp >= 0xe000 && cp <= 0xfffd) || (cp >= 0x10000 && cp <= 0x10ffff);
}

void append_utf8(std::string& out, std::uint32_t cp) {
    if (cp < 0x80) {
        out += static_cast<char>(cp);
    } else if (cp < 0x800) {
        out += static_cast<char>(0xc0 | (cp >> 6));
        out += static_cast<char>(0x80 | (cp & 0x3f));
    } else if (cp < 0x10000) {
        out += static_cast<char>(0xe0 | (cp >> 12));
        out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
        out += static_cast<char>(0x80 | (cp & 0x3f));
    } else {
        out += static_cast<char>(0xf0 | (cp >> 18));
        out += static_cast<char>(0x80 | ((cp >> 12) & 0x3f));
        out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
        out += static_cast<char>(0x80 | (cp & 0x3f));
    }
}

// At most `max` bytes of `text`, cut before a UTF-8 sequence that would not fit whole.
std::string utf8_prefix(std::string_view text, std::size_t max) {
    if (text.size() <= max) {
        return std::string(text);
    }
    std::size_t n = max;
    while (n > 0 && (static_cast<unsigned char>(text[n]) & 0xc0) == 0x80) {
        --n;
    }
    return std::string(text.substr(0, n));
}

// `text` whole, or its first `max` bytes (a whole UTF-8 sequence) and "…".
std::string capped(std::string_view text, std::size_t max) {
    return text.size() <= max ? std::string(text) : utf8_prefix(text, max) + "…";
}

// The first `count` lines of `text` with text, trimmed, joined with " | ", shortened to
// k_test_message_max bytes.
std::string first_lines(std::string_view text, std::size_t count = 1) {
    std::string out;
    for (std::size_t n = 0; !text.empty() && n < count;) {
        auto end = text.find('\n');
        std::string_view line = text.substr(0, end);
        auto b = line.find_first_not_of(k_space);
        if (b != std::string_view::npos) {
            out += (n++ == 0 ? "" : " | ");
            out += line.substr(b, line.find_last_not_of(k_space) - b + 1);
        }
        text = end == std::string_view::npos ? std::string_view() : text.substr(end + 1);
    }
    return capped(out, k_test_message_max);
}

int rank(TestStatus s) {
    switch (s) {
    case TestStatus::passed:
        return 0;
    case TestStatus::skipped:
        return 1;
    case TestStatus::failed:
        return 2;
    case TestStatus::error:
        break;
    }
    return 3;
}

// The JUnit meaning of the elements: test cases, their outcome and its message.
class JunitBuilder {
  public:
    // Error text (without the place) or empty.
    std::string open(std::string_view name, const Attributes& attrs, std::size_t depth);
    void close(std::string_view name, std::size_t depth);
    void text(std::string_view text) {
        if (m_capture && m_captured.size() < 4 * k_test_message_max) {
            m_captured += text.substr(0, 4 * k_test_message_max);
        }
    }
    std::vector<TestResult> take() { return std::move(m_tests); }

  private:
    std::string open_case(const Attributes& attrs, std::size_t depth);
    std::vector<TestResult> m_tests;
    std::vector<std::string> m_suites;
    std::optional<TestResult> m_case;
    std::size_t m_case_depth = 0;
    bool m_capture = false;
    std::size_t m_capture_lines = 1;
    std::string m_captured;
};

std::string JunitBuilder::open_case(const Attributes& attrs, std::size_t depth) {
    TestResult t;
    t.name = capped(attribute(attrs, "name"), k_test_name_max);
    if (t.name.empty()) {
        return "a <testcase> without a name";
    }
    t.classname = capped(attribute(attrs, "classname"), k_test_name_max);
    if (t.classname.empty() && !m_suites.empty()) {
        t.classname = capped(m_suites.back(), k_test_name_max);
    }
    if (std::string time = attribute(attrs, "time"); !time.empty()) {
        auto [end, ec] = std::from_chars(time.data(), time.data() + time.size(), t.time);
        if (ec != std::errc() || end != time.data() + time.size() || !std::isfinite(t.time) ||
            std::signbit(t.time) || t.time > detail::k_max_seconds) { // (-0 too: never signed)
            return "<testcase name=\"" + t.name + "\">: time \"" + time +
                   "\" is not a number of seconds from 0 to 1e9";
        }
    }
    // ctest and doctest also say it in a status attribute; a child element says more.
    std::string status = attribute(attrs, "status");
    if (status == "fail" || status == "failed") {
        t.status = TestStatus::failed;
    } else if (status == "notrun" || status == "disabled" || status == "skipped") {
        t.status = TestStatus::skipped;
    }
    m_case = std::move(t);
    m_case_depth = depth;
    return {};
}

std::string JunitBuilder::open(std::string_view name, const Attributes& attrs, std::size_t depth) {
    if (name == "testsuite") {
        m_suites.push_back(attribute(attrs, "name"));
    } else if (name == "testcase") {
        if (m_case) {
            return "a <testcase> inside <testcase name=\"" + m_case->name + "\">";
        }
        return open_case(attrs, depth);
    } else if (m_case && depth == m_case_depth + 1) {
        std::optional<TestStatus> s = name == "failure"   ? TestStatus::failed
                                      : name == "error"   ? TestStatus::error
                                      : name == "skipped" ? TestStatus::skipped
                                                          : std::optional<TestStatus>();
        if (s && rank(*s) >= rank(m_case->status)) {
            m_case->status = *s;
            m_case->message = first_lines(attribute(attrs, "message"));
            m_capture = m_case->message.empty();
            m_capture_lines = 1;
            m_captured.clear();
        } else if (name == "system-out" && m_case->failing() && m_case->message.empty()) {
            m_capture = true; // ctest: <failure message=""/>, the output in <system-out>
            m_capture_lines = k_output_message_lines;
            m_captured.clear();
        }
    }
    return {};
}

void JunitBuilder::close(std::string_view name, std::size_t depth) {
    if (name == "testsuite" && !m_suites.empty()) {
        m_suites.pop_back();
    } else if (m_case && depth == m_case_depth) {
        m_tests.push_back(std::move(*m_case));
        m_case.reset();
    } else if (m_capture && depth == m_case_depth + 1) {
        m_case->message = first_lines(m_captured, m_capture_lines);
        m_capture = false;
    }
}

// One document, front to back; the builder hears every element and text.
class XmlScanner {
  public:
    XmlScanner(std::string_view text, const std::string& source, JunitBuilder& out)
        : m_text(text), m_source(source), m_out(out) {}
    Result<void> run();

  private:
    Result<void> markup();
    Result<void> open_element();
    Result<void> close_element();
    Result<void> text_run();
    Result<void> skip_past(std::string_view end, const char* what);
    Result<Attribute> read_attribute();
    Result<std::string> decode(std::string_view raw, std::size_t at);
    std::string_view read_name();
    void skip_space();
    std::unexpected<Error> fail_at(std::size_t pos, std::string why) const;
    bool at(std::string_view s) const { return m_text.substr(m_pos).starts_with(s); }

    std::string_view m_text;
    const std::string& m_source;
    JunitBuilder& m_out;
    std::size_t m_pos = 0;
    std::vector<std::string_view> m_open;
    bool m_root_seen = false;
};

std::unexpected<Error> XmlScanner::fail_at(std::size_t pos, std::string why) const {
    auto line =
        1 + std::count(m_text.begin(),
                       m_text.begin() + static_cast<std::ptrdiff_t>(std::min(pos, m_text.size())),
                       '\n');
    return std::unexpected(
        Error{m_source + ": line " + std::to_string(line), std::move(why),
              "emurun reads JUnit XML as ctest's JUnit output, meson test and pytest write it; "
              "is the file complete and the one the step's \"junit\" names?",
              ErrorKind::bad_input});
}

void XmlScanner::skip_space() {
    auto next = m_text.find_first_not_of(k_space, m_pos);
    m_pos = next == std::string_view::npos ? m_text.size() : next;
}

std::string_view XmlScanner::read_name() {
    auto end = m_text.find_first_of(" \t\r\n/>=<\"'", m_pos);
    end = end == std::string_view::npos ? m_text.size() : end;
    std::string_view name = m_text.substr(m_pos, end - m_pos);
    m_pos = end;
    return name;
}

Result<void> XmlScanner::skip_past(std::string_view end, const char* what) {
    auto found = m_text.find(end, m_pos);
    if (found == std::string_view::npos) {
        return fail_at(m_pos, std::string(what) + " is not closed with \"" + std::string(end) +
                                  "\" (the file ends early)");
    }
    m_pos = found + end.size();
    return {};
}

Result<std::string> XmlScanner::decode(std::string_view raw, std::size_t pos) {
    std::string out;
    out.reserve(raw.size());
    for (std::size_t i = 0; i < raw.size(); ++i) {
        if (raw[i] != '&') {
            out += raw[i];
            continue;
        }
        auto semi = raw.find(';', i);
        if (semi == std::string_view::npos || semi - i > 12) {
            return fail_at(pos + i, "an '&' that starts no character reference (write &amp;)");
        }
        std::string_view ent = raw.substr(i + 1, semi - i - 1);
        constexpr std::pair<std::string_view, char> k_named[] = {
            {"lt", '<'}, {"gt", '>'}, {"amp", '&'}, {"quot", '"'}, {"apos", '\''}};
        auto named = std::ranges::find(k_named, ent, &std::pair<std::string_view, char>::first);
        if (named != std::end(k_named)) {
            out += named->second;
        } else if (ent.starts_with('#')) {
            bool hex = ent.starts_with("#x");
            std::uint32_t cp = 0;
            std::string_view digits = ent.substr(hex ? 2 : 1);
            auto [end, ec] =
                std::from_chars(digits.data(), digits.data() + digits.size(), cp, hex ? 16 : 10);
            if (digits.empty() || ec != std::errc() || end != digits.data() + digits.size() ||
                !xml_char(cp)) {
                return fail_at(pos + i, "&" + std::string(ent) + "; is not a character XML allows");
            }
            append_utf8(out, cp);
        } else {
            return fail_at(pos + i, "undefined entity &" + std::string(ent) +
                                        "; (only XML's own five are read, no DTD's)");
        }
        i = semi;
    }
    return out;
}

Result<Attribute> XmlScanner::read_attribute() {
    std::size_t start = m_pos;
    Attribute a;
    a.name = read_name();
    skip_space();
    if (a.name.empty() || !at("=")) {
        return fail_at(start, "expected an attribute name=\"value\"");
    }
    ++m_pos;
    skip_space();
    if (!at("\"") && !at("'")) {
        return fail_at(m_pos, "attribute " + std::string(a.name) + "'s value is not quoted");
    }
    char quote = m_text[m_pos++];
    auto end = m_text.find(quote, m_pos);
    if (end == std::string_view::npos) {
        return fail_at(start, "attribute " + std::string(a.name) + "'s value is not closed");
    }
    std::string_view raw = m_text.substr(m_pos, end - m_pos);
    if (raw.find('<') != std::string_view::npos) {
        return fail_at(m_pos, "a '<' inside attribute " + std::string(a.name) + "'s value");
    }
    a.value = EMURUN_TRY(decode(raw, m_pos));
    m_pos = end + 1;
    return a;
}

Result<void> XmlScanner::open_element() {
    const std::size_t start = m_pos++;
    std::string_view name = read_name();
    if (name.empty()) {
        return fail_at(start, "a '<' that starts no element (write &lt;)");
    }
    if (m_open.empty() && m_root_seen) {
        return fail_at(start, "a second root element <" + std::string(name) + ">");
    }
    if (m_open.size() >= k_max_depth) {
        return fail_at(start, "elements nested deeper than " + std::to_string(k_max_depth));
    }
    Attributes attrs;
    for (skip_space(); !at(">") && !at("/>"); skip_space()) {
        if (m_pos >= m_text.size()) {
            return fail_at(start, "<" + std::string(name) + " is not closed with '>'");
        }
        auto a = EMURUN_TRY(read_attribute());
        if (std::ranges::find(attrs, a.name, &Attribute::name) != attrs.end()) {
            return fail_at(start, "<" + std::string(name) + "> has attribute " +
                                      std::string(a.name) + " twice");
        }
        attrs.push_back(std::move(a));
    }
    const bool empty = at("/>");
    m_pos += empty ? 2 : 1;
    m_root_seen = true;
    if (std::string why = m_out.open(name, attrs, m_open.size()); !why.empty()) {
        return fail_at(start, why);
    }
    if (empty) {
        m_out.close(name, m_open.size());
    } else {
        m_open.push_back(name);
    }
    return {};
}

Result<void> XmlScanner::close_element() {
    const std::size_t start = m_pos;
    m_pos += 2;
    std::string_view name = read_name();
    skip_space();
    if (!at(">")) {
        return fail_at(start, "</" + std::string(name) + " is not closed with '>'");
    }
    ++m_pos;
    if (m_open.empty() || m_open.back() != name) {
        return fail_at(start, "</" + std::string(name) + "> " +
                                  (m_open.empty()
                                       ? std::string("closes no open element")
                                       : "does not close <" + std::string(m_open.back()) + ">"));
    }
    m_open.pop_back();
    m_out.close(name, m_open.size());
    return {};
}

Result<void> XmlScanner::text_run() {
    auto end = std::min(m_text.find('<', m_pos), m_text.size());
    std::string_view raw = m_text.substr(m_pos, end - m_pos);
    if (m_open.empty()) {
        if (raw.find_first_not_of(k_space) != std::string_view::npos) {
            return fail_at(m_pos, "text outside the root element");
        }
    } else {
        auto decoded = EMURUN_TRY(decode(raw, m_pos));
        m_out.text(decoded);
    }
    m_pos = end;
    return {};
}

Result<void> XmlScanner::markup() {
    if (at("<?")) {
        return skip_past("?>", "a processing instruction <?");
    }
    if (at("<!--")) {
        return skip_past("-->", "a comment <!--");
    }
    if (at("<![CDATA[")) {
        if (m_open.empty()) {
            return fail_at(m_pos, "CDATA outside the root element");
        }
        std::size_t from = m_pos + 9;
        EMURUN_TRY(skip_past("]]>", "a <![CDATA[ section"));
        m_out.text(m_text.substr(from, m_pos - 3 - from));
        return {};
    }
    if (at("<!DOCTYPE")) {
        auto end = m_text.find('>', m_pos);
        if (m_text.substr(m_pos, end - m_pos).find('[') != std::string_view::npos) {
            return fail_at(m_pos, "a DTD with declarations of its own (its entities are not "
                                  "read: they could expand without bound)");
        }
        return skip_past(">", "<!DOCTYPE");
    }
    if (at("</")) {
        return close_element();
    }
    return open_element();
}

Result<void> XmlScanner::run() {
    // Other control characters are tolerated (meson copies test output as it is), NUL is not:
    // no XML text, name or message holds it.
    if (auto nul = m_text.find('\0'); nul != std::string_view::npos) {
        return fail_at(nul, "a NUL byte, which XML text cannot hold");
    }
    if (at("\xef\xbb\xbf")) {
        m_pos = 3; // a UTF-8 byte order mark
    }
    while (m_pos < m_text.size()) {
        EMURUN_TRY(m_text[m_pos] == '<' ? markup() : text_run());
    }
    if (!m_open.empty()) {
        return fail_at(m_text.size(), "<" + std::string(m_open.back()) +
                                          "> is not closed (the file ends early: was the "
                                          "test run stopped while writing it?)");
    }
    if (!m_root_seen) {
        return fail_at(m_text.size(), "no XML element in it (an empty file?)");
    }
    return {};
}

} // namespace

std::string_view to_string(TestStatus status) {
    switch (status) {
    case TestStatus::passed:
        return "passed";
    case TestStatus::failed:
        return "failed";
    case TestStatus::error:
        return "error";
    case TestStatus::skipped:
        break;
    }
    return "skipped";
}

std::optional<TestStatus> test_status_from(std::string_view text) {
    for (auto s :
         {TestStatus::passed, TestStatus::failed, TestStatus::error, TestStatus::skipped}) {
        if (to_string(s) == text) {
            return s;
        }
    }
    return std::nullopt;
}

std::optional<double> TestResult::baseline_factor() const {
    if (!baseline_time || *baseline_time <= 0) {
        return std::nullopt;
    }
    return time / *baseline_time;
}

Result<std::vector<TestResult>> parse_junit(std::string_view xml, const std::string& source) {
    if (!is_utf8(xml)) {
        return fail(source, "is not UTF-8 text",
                    "emurun reads JUnit XML in UTF-8, as ctest, meson and pytest write it");
    }
    JunitBuilder builder;
    EMURUN_TRY(XmlScanner(xml, source, builder).run());
    return builder.take();
}

Result<std::vector<TestResult>> read_junit(const std::filesystem::path& file) {
    auto text = EMURUN_TRY(util::read_file(file, k_junit_max_bytes));
    return parse_junit(text, file.string());
}

} // namespace emurun
