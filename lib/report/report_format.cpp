// Report renderings: JUnit XML, Markdown, GitHub annotations, terminal tables.
#include <emurun/report.hpp>

#include <algorithm>
#include <cstdio>

namespace emurun {
namespace {

std::string xml_escape(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    for (char c : text) {
        auto u = static_cast<unsigned char>(c);
        switch (c) {
        case '&':
            out += "&amp;";
            break;
        case '<':
            out += "&lt;";
            break;
        case '>':
            out += "&gt;";
            break;
        case '"':
            out += "&quot;";
            break;
        case '\'':
            out += "&apos;";
            break;
        default:
            // XML 1.0 forbids most control characters even when escaped.
            if (u < 0x20 && c != '\t' && c != '\n' && c != '\r') {
                out += '?';
            } else {
                out += c;
            }
        }
    }
    return out;
}

std::string number(double v, const char* format = "%.3f") {
    char buf[64];
    std::snprintf(buf, sizeof buf, format, v);
    return buf;
}

std::string rss_text(std::int64_t kib) {
    if (kib <= 0) {
        return "-";
    }
    return kib >= 1024 * 1024 ? number(static_cast<double>(kib) / (1024 * 1024), "%.1f GiB")
                              : number(static_cast<double>(kib) / 1024, "%.1f MiB");
}

// "exit 1", "signal 9", "timed out", ... : why a step did not pass.
std::string outcome(const StepResult& s) {
    std::string text;
    if (s.status == StepStatus::timed_out) {
        text = "timed out";
    } else if (s.signal) {
        text = "killed by signal " + std::to_string(*s.signal);
    } else if (s.exit_code) {
        text = "exit code " + std::to_string(*s.exit_code);
    } else {
        text = std::string(to_string(s.status));
    }
    return s.message.empty() ? text : text + ": " + s.message;
}

std::string flags_text(const StepResult& s) {
    std::string out;
    for (const auto& f : s.flags) {
        out += (out.empty() ? "" : ", ") + f.rule;
    }
    return out;
}

std::string factor_text(const StepResult& s) {
    auto f = s.baseline_factor();
    return f ? number(*f, "%.1fx") : "-";
}

std::vector<std::string> row_of(const StepResult& s) {
    return {s.name,
            std::string(to_string(s.status)),
            format_seconds(s.wall),
            format_seconds(s.cpu()),
            rss_text(s.max_rss_kib),
            factor_text(s),
            flags_text(s)};
}

const std::vector<std::string> k_columns = {"step",    "status",     "wall", "CPU",
                                            "max RSS", "x baseline", "flags"};

std::string padded_table(const std::vector<std::vector<std::string>>& rows) {
    std::vector<std::size_t> width(rows.front().size(), 0);
    for (const auto& r : rows) {
        for (std::size_t i = 0; i < r.size(); ++i) {
            width[i] = std::max(width[i], r[i].size());
        }
    }
    std::string out;
    for (const auto& r : rows) {
        std::string line;
        for (std::size_t i = 0; i < r.size(); ++i) {
            line += r[i] + std::string(width[i] - r[i].size() + 2, ' ');
        }
        line.erase(line.find_last_not_of(' ') + 1);
        out += line + "\n";
    }
    return out;
}

std::string md_cell(std::string_view text) {
    std::string out;
    for (char c : text) {
        out += c == '|' ? std::string("\\|") : c == '\n' ? std::string(" ") : std::string(1, c);
    }
    return out;
}

// GitHub workflow-command escaping (data; properties also escape ':' and ',').
std::string gh_escape(std::string_view text, bool property) {
    std::string out;
    for (char c : text) {
        if (c == '%') {
            out += "%25";
        } else if (c == '\r') {
            out += "%0D";
        } else if (c == '\n') {
            out += "%0A";
        } else if (property && c == ':') {
            out += "%3A";
        } else if (property && c == ',') {
            out += "%2C";
        } else {
            out += c;
        }
    }
    return out;
}

std::size_t count_status(const Report& r, std::initializer_list<StepStatus> statuses) {
    return static_cast<std::size_t>(std::ranges::count_if(r.steps, [&](const StepResult& s) {
        return std::ranges::find(statuses, s.status) != statuses.end();
    }));
}

} // namespace

std::string to_junit(const Report& r) {
    auto failures =
        count_status(r, {StepStatus::failed, StepStatus::timed_out, StepStatus::interrupted});
    auto skipped = count_status(r, {StepStatus::skipped, StepStatus::not_run});
    std::string counts = " tests=\"" + std::to_string(r.steps.size()) + "\" failures=\"" +
                         std::to_string(failures) + "\" errors=\"0\" skipped=\"" +
                         std::to_string(skipped) + "\" time=\"" + number(r.wall) + "\"";
    std::string out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
    out += "<testsuites name=\"emurun\"" + counts + ">\n";
    out += "  <testsuite name=\"" + xml_escape(r.pipeline) + "\"" + counts + " timestamp=\"" +
           xml_escape(r.started) + "\">\n";
    for (const auto& s : r.steps) {
        out += "    <testcase name=\"" + xml_escape(s.name) + "\" classname=\"" +
               xml_escape(r.pipeline + "." + std::string(to_string(s.kind))) + "\" time=\"" +
               number(s.wall) + "\">\n";
        if ((s.status == StepStatus::failed || s.status == StepStatus::timed_out ||
             s.status == StepStatus::interrupted)) {
            out += "      <failure type=\"" + std::string(to_string(s.status)) + "\" message=\"" +
                   xml_escape(outcome(s)) + "\"/>\n";
        } else if (s.status == StepStatus::skipped || s.status == StepStatus::not_run) {
            out += "      <skipped message=\"" + xml_escape(outcome(s)) + "\"/>\n";
        }
        std::string system_out = "log: " + s.log.string();
        for (const auto& f : s.flags) {
            system_out += "\nflag " + f.rule + ": " + f.message;
        }
        out += "      <system-out>" + xml_escape(system_out) + "</system-out>\n";
        out += "    </testcase>\n";
    }
    out += "  </testsuite>\n</testsuites>\n";
    return out;
}

std::string to_markdown(const Report& r) {
    std::string out = "### emurun: " + md_cell(r.pipeline) + " " +
                      (r.succeeded() ? "passed" : "FAILED") + " in " + format_seconds(r.wall);
    if (r.shard_count > 1) {
        out +=
            " (shard " + std::to_string(r.shard_index) + "/" + std::to_string(r.shard_count) + ")";
    }
    out += "\n\n|";
    for (const auto& c : k_columns) {
        out += " " + c + " |";
    }
    out += "\n|";
    for (std::size_t i = 0; i < k_columns.size(); ++i) {
        out += "---|";
    }
    out += "\n";
    for (const auto& s : r.steps) {
        out += "|";
        for (const auto& cell : row_of(s)) {
            out += " " + md_cell(cell) + " |";
        }
        out += "\n";
    }
    for (const auto& f : r.flags) {
        out += "\n**" + md_cell(f.rule) + "**: " + md_cell(f.message) + "\n";
    }
    for (const auto& s : r.steps) {
        for (const auto& f : s.flags) {
            out += "\n- `" + md_cell(s.name) + "` " + f.rule + ": " + md_cell(f.message);
        }
    }
    return out + "\n";
}

std::vector<std::string> annotations(const Report& r) {
    std::vector<std::string> out;
    for (const auto& s : r.steps) {
        std::string title = gh_escape("emurun: " + s.name, true);
        if (s.status != StepStatus::passed && s.status != StepStatus::skipped) {
            out.push_back(
                "::error title=" + title + "::" +
                gh_escape("step " + s.name + " " + outcome(s) + " (log: " + s.log.string() + ")",
                          false));
        }
        for (const auto& f : s.flags) {
            out.push_back(
                "::warning title=" + title + "::" +
                gh_escape("step " + s.name + " flagged " + f.rule + ": " + f.message, false));
        }
    }
    for (const auto& f : r.flags) {
        out.push_back("::warning title=emurun%3A " + gh_escape(r.pipeline, true) +
                      "::" + gh_escape(f.message, false));
    }
    return out;
}

std::string to_table(const Report& r) {
    std::vector<std::vector<std::string>> rows{k_columns};
    for (const auto& s : r.steps) {
        rows.push_back(row_of(s));
    }
    std::string out = padded_table(rows);
    for (const auto& s : r.steps) {
        for (const auto& f : s.flags) {
            out += "flag " + f.rule + ": " + s.name + ": " + f.message + "\n";
        }
    }
    for (const auto& f : r.flags) {
        out += "flag " + f.rule + ": " + f.message + "\n";
    }
    return out;
}

std::string compare_table(const Report& before, const Report& after) {
    std::vector<std::vector<std::string>> rows{{"step", "before", "after", "change", "status"}};
    for (const auto& s : after.steps) {
        const StepResult* b = before.find(s.name);
        std::string change = "-";
        if (b && b->wall > 0) {
            change = number(100 * (s.wall - b->wall) / b->wall, "%+.0f%%");
        }
        rows.push_back({s.name, b ? format_seconds(b->wall) : "-", format_seconds(s.wall), change,
                        (b ? std::string(to_string(b->status)) + " -> " : std::string("new, ")) +
                            std::string(to_string(s.status))});
    }
    for (const auto& b : before.steps) {
        if (!after.find(b.name)) {
            rows.push_back({b.name, format_seconds(b.wall), "-", "-", "removed"});
        }
    }
    rows.push_back(
        {"total", format_seconds(before.wall), format_seconds(after.wall),
         before.wall > 0 ? number(100 * (after.wall - before.wall) / before.wall, "%+.0f%%") : "-",
         ""});
    return padded_table(rows);
}

} // namespace emurun
