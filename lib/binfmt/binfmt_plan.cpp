// Pure parts of binfmt: plans (wanted vs current), the arch table's entries, and the two
// persistence formats (systemd binfmt.d, Debian update-binfmts).
#include <emurun/binfmt.hpp>

#include <fmt/format.h>

#include <algorithm>

namespace emurun {
namespace {

const BinfmtEntry* find_by_name(const std::vector<BinfmtEntry>& table, std::string_view name) {
    auto it = std::ranges::find(table, name, &BinfmtEntry::name);
    return it == table.end() ? nullptr : &*it;
}

std::string show(std::string_view s) {
    return escape_binfmt_bytes(s, '\0');
}

// Which fields differ, in words: "flags OCF here, P wanted; interpreter ...".
std::string differences(const BinfmtEntry& cur, const BinfmtEntry& want) {
    std::vector<std::string> d;
    if (cur.type != want.type) {
        d.emplace_back("type differs");
    }
    if (cur.offset != want.offset) {
        d.push_back(fmt::format("offset {} registered, {} wanted", cur.offset, want.offset));
    }
    if (cur.magic != want.magic || cur.mask != want.mask) {
        d.emplace_back("magic/mask differ");
    }
    if (cur.interpreter != want.interpreter) {
        d.push_back(
            fmt::format("interpreter {} registered, {} wanted", cur.interpreter, want.interpreter));
    }
    if (!(cur.flags == want.flags)) {
        d.push_back(fmt::format("flags '{}' registered, '{}' wanted", cur.flags.to_string(),
                                want.flags.to_string()));
    }
    return fmt::format("{}", fmt::join(d, "; "));
}

std::unexpected<Error> bad_file(std::string_view what, std::size_t line, std::string why,
                                std::string hint = {}) {
    return fail(fmt::format("{}, line {}", what, line), std::move(why), std::move(hint));
}

} // namespace

std::string_view to_string(BinfmtAction action) {
    switch (action) {
    case BinfmtAction::Add:
        return "add";
    case BinfmtAction::Keep:
        return "keep";
    case BinfmtAction::Enable:
        return "enable";
    case BinfmtAction::Replace:
        return "replace";
    case BinfmtAction::Conflict:
        return "conflict";
    case BinfmtAction::Remove:
        return "remove";
    case BinfmtAction::Absent:
        return "absent";
    }
    return "?";
}

bool BinfmtPlan::has_conflict() const {
    return std::ranges::any_of(items,
                               [](const auto& i) { return i.action == BinfmtAction::Conflict; });
}

bool BinfmtPlan::changes_anything() const {
    return std::ranges::any_of(items, [](const auto& i) {
        return i.action != BinfmtAction::Keep && i.action != BinfmtAction::Absent &&
               i.action != BinfmtAction::Conflict;
    });
}

std::string BinfmtPlan::describe() const {
    std::string out;
    for (const auto& i : items) {
        out += fmt::format("{:<8} {}", to_string(i.action), show(i.wanted.name));
        if (i.action == BinfmtAction::Add || i.action == BinfmtAction::Replace) {
            auto line = format_binfmt_line(i.wanted);
            out += " " + (line ? *line : line.error().message());
        }
        if (!i.detail.empty()) {
            out += " (" + i.detail + ")";
        }
        out += '\n';
    }
    return out;
}

BinfmtPlan plan_binfmt_register(const std::vector<BinfmtEntry>& wanted,
                                const std::vector<BinfmtEntry>& current, bool replace) {
    BinfmtPlan plan;
    for (const auto& w : wanted) {
        BinfmtPlanItem item{BinfmtAction::Add, w, std::nullopt, {}};
        if (const auto* cur = find_by_name(current, w.name)) {
            item.current = *cur;
            if (cur->same_registration(w)) {
                item.action = cur->enabled ? BinfmtAction::Keep : BinfmtAction::Enable;
            } else {
                item.action = replace ? BinfmtAction::Replace : BinfmtAction::Conflict;
                item.detail = differences(*cur, w);
            }
        }
        plan.items.push_back(std::move(item));
    }
    return plan;
}

BinfmtPlan plan_binfmt_unregister(const std::vector<std::string>& names,
                                  const std::vector<BinfmtEntry>& current) {
    BinfmtPlan plan;
    for (const auto& n : names) {
        BinfmtPlanItem item{BinfmtAction::Absent, BinfmtEntry{}, std::nullopt, {}};
        item.wanted.name = n;
        if (const auto* cur = find_by_name(current, n)) {
            item.action = BinfmtAction::Remove;
            item.current = *cur;
            item.wanted = *cur;
        }
        plan.items.push_back(std::move(item));
    }
    return plan;
}

BinfmtEntry binfmt_entry_for(const Arch& arch, const std::filesystem::path& interpreter,
                             BinfmtFlags flags) {
    BinfmtEntry e;
    e.name = "qemu-" + arch.qemu;
    e.magic = arch.magic;
    e.mask = arch.mask;
    e.interpreter = interpreter.string();
    e.flags = flags;
    return e;
}

const Arch* binfmt_entry_arch(const BinfmtEntry& entry) {
    if (entry.type != BinfmtType::Magic || entry.offset != 0) {
        return nullptr;
    }
    for (const auto& a : all_arches()) {
        if (a.magic == entry.magic && a.mask == entry.mask) {
            return &a;
        }
    }
    return nullptr;
}

Result<std::string> format_binfmt_d(const std::vector<BinfmtEntry>& entries) {
    std::string out = "# binfmt_misc entries written by emurun (systemd-binfmt reads this file at "
                      "boot)\n";
    for (const auto& e : entries) {
        auto line = EMURUN_TRY(format_binfmt_line(e));
        out += line + '\n';
    }
    return out;
}

Result<std::vector<BinfmtEntry>> parse_binfmt_d(std::string_view text) {
    std::vector<BinfmtEntry> out;
    std::size_t number = 0;
    while (!text.empty()) {
        ++number;
        auto nl = text.find('\n');
        auto line = text.substr(0, nl);
        text = nl == std::string_view::npos ? std::string_view{} : text.substr(nl + 1);
        if (line.empty() || line.front() == '#' || line.front() == ';') {
            continue;
        }
        auto e = parse_binfmt_line(line);
        if (!e) {
            return bad_file("binfmt.d file", number, e.error().why, e.error().hint);
        }
        out.push_back(std::move(*e));
    }
    return out;
}

Result<std::string> format_update_binfmts(const BinfmtEntry& e, std::string_view package) {
    EMURUN_TRY(validate_binfmt_entry(e));
    if (e.flags.open_binary && !e.flags.credentials) {
        return fail(fmt::format("export '{}' for update-binfmts", show(e.name)),
                    "update-binfmts has no field for the O flag without C",
                    "export to binfmt.d instead, or drop O");
    }
    std::string out = fmt::format("package {}\ninterpreter {}\n", package, e.interpreter);
    if (e.type == BinfmtType::Magic) {
        out += fmt::format("magic {}\noffset {}\n", escape_binfmt_bytes(e.magic, ':'), e.offset);
        if (!e.mask.empty()) {
            out += fmt::format("mask {}\n", escape_binfmt_bytes(e.mask, ':'));
        }
    } else {
        out += fmt::format("extension {}\n", e.magic);
    }
    auto yes = [](bool b) { return b ? "yes" : "no"; };
    out += fmt::format("credentials {}\nfix_binary {}\npreserve {}\n", yes(e.flags.credentials),
                       yes(e.flags.fix_binary), yes(e.flags.preserve_argv0));
    return out;
}

Result<BinfmtEntry> parse_update_binfmts(std::string_view name, std::string_view text) {
    // Build the equivalent kernel line and let the kernel-exact parser judge it.
    std::string magic, mask, offset, ext, interp, flags;
    std::string what = fmt::format("update-binfmts file '{}'", show(name));
    std::size_t number = 0;
    while (!text.empty()) {
        ++number;
        auto nl = text.find('\n');
        std::string_view line = text.substr(0, nl);
        text = nl == std::string_view::npos ? std::string_view{} : text.substr(nl + 1);
        if (line.empty()) {
            continue;
        }
        auto sp = line.find(' ');
        auto key = line.substr(0, sp);
        std::string value(sp == std::string_view::npos ? "" : line.substr(sp + 1));
        if (key == "package" || key == "detector") {
            continue;
        }
        std::string* slot = key == "magic"         ? &magic
                            : key == "mask"        ? &mask
                            : key == "offset"      ? &offset
                            : key == "extension"   ? &ext
                            : key == "interpreter" ? &interp
                                                   : nullptr;
        if (slot) {
            *slot = value;
            continue;
        }
        char flag = key == "credentials"  ? 'C'
                    : key == "fix_binary" ? 'F'
                    : key == "preserve"   ? 'P'
                                          : 0;
        if (!flag || (value != "yes" && value != "no")) {
            return bad_file(what, number, fmt::format("unknown line '{}'", show(line)),
                            "expected package, interpreter, magic, offset, mask, extension, "
                            "detector, credentials, fix_binary or preserve");
        }
        if (value == "yes") {
            flags += flag;
        }
    }
    std::string line = magic.empty() && !ext.empty()
                           ? fmt::format(":{}:E::{}::{}:{}", name, ext, interp, flags)
                           : fmt::format(":{}:M:{}:{}:{}:{}:{}", name, offset == "0" ? "" : offset,
                                         magic, mask, interp, flags);
    auto e = parse_binfmt_line(line);
    if (!e) {
        return fail(what, e.error().why, e.error().hint);
    }
    return e;
}

} // namespace emurun
