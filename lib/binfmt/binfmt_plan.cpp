// Pure parts of binfmt: plans (wanted vs current), the arch table's entries, and the two
// persistence formats (systemd binfmt.d, Debian update-binfmts).
#include "binfmt/binfmt_text.hpp"
#include "util/file.hpp"

#include <emurun/binfmt.hpp>
#include <emurun/binfmt_files.hpp>

#include <algorithm>

namespace emurun {
namespace {

const BinfmtEntry* find_by_name(const std::vector<BinfmtEntry>& table, std::string_view name) {
    auto it = std::ranges::find(table, name, &BinfmtEntry::name);
    return it == table.end() ? nullptr : &*it;
}

using detail::escape_binfmt_bytes;
using detail::show;

// Which fields differ, in words: "flags OCF here, P wanted; interpreter ...".
std::string differences(const BinfmtEntry& cur, const BinfmtEntry& want) {
    std::string d;
    auto add = [&d](const std::string& difference) { d += (d.empty() ? "" : "; ") + difference; };
    if (cur.type != want.type) {
        add("type differs");
    }
    if (cur.offset != want.offset) {
        add("offset " + std::to_string(cur.offset) + " registered, " + std::to_string(want.offset) +
            " wanted");
    }
    if (cur.magic != want.magic || cur.mask != want.mask) {
        add("magic/mask differ");
    }
    if (cur.interpreter != want.interpreter) {
        add("interpreter " + cur.interpreter + " registered, " + want.interpreter + " wanted");
    }
    if (!(cur.flags == want.flags)) {
        add("flags '" + cur.flags.to_string() + "' registered, '" + want.flags.to_string() +
            "' wanted");
    }
    return d;
}

// An enabled entry (this name first, then any other) whose emulator already serves the wanted
// arch: keep it rather than conflict with it or register a twin.
void keep_if_provided(BinfmtPlanItem& item, const std::vector<BinfmtEntry>& current) {
    const Arch* arch = binfmt_entry_arch(item.wanted);
    if (arch == nullptr) {
        return;
    }
    std::vector<const BinfmtEntry*> order;
    if (item.current) {
        order.push_back(&*item.current);
    }
    for (const auto& c : current) {
        if (c.name != item.wanted.name) {
            order.push_back(&c);
        }
    }
    for (const BinfmtEntry* c : order) {
        if (auto p = binfmt_entry_provider(*c); p && p->arch == arch) {
            item.action = BinfmtAction::keep;
            item.current = *c;
            item.detail = "kept: provided by " + p->owner + " (entry " + show(c->name) + ", " +
                          c->interpreter + " -> " + p->emulator.string() + ", flags '" +
                          c->flags.to_string() + "')";
            return;
        }
    }
}

std::unexpected<Error> bad_file(std::string_view what, std::size_t line, std::string why,
                                std::string hint = {}) {
    return fail(std::string(what) + ", line " + std::to_string(line), std::move(why),
                std::move(hint));
}

} // namespace

std::string_view to_string(BinfmtAction action) {
    switch (action) {
    case BinfmtAction::add:
        return "add";
    case BinfmtAction::keep:
        return "keep";
    case BinfmtAction::enable:
        return "enable";
    case BinfmtAction::replace:
        return "replace";
    case BinfmtAction::conflict:
        return "conflict";
    case BinfmtAction::remove:
        return "remove";
    case BinfmtAction::absent:
        return "absent";
    }
    return "?";
}

bool BinfmtPlan::has_conflict() const {
    return std::ranges::any_of(items,
                               [](const auto& i) { return i.action == BinfmtAction::conflict; });
}

bool BinfmtPlan::changes_anything() const {
    return std::ranges::any_of(items, [](const auto& i) {
        return i.action != BinfmtAction::keep && i.action != BinfmtAction::absent &&
               i.action != BinfmtAction::conflict;
    });
}

std::string BinfmtPlan::describe() const {
    std::string out;
    for (const auto& i : items) {
        std::string action(to_string(i.action));
        action.resize(std::max<std::size_t>(action.size(), 8), ' '); // a column of 8
        out += action + " " + show(i.wanted.name);
        if (i.action == BinfmtAction::add || i.action == BinfmtAction::replace) {
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
        BinfmtPlanItem item{BinfmtAction::add, w, std::nullopt, {}};
        if (const auto* cur = find_by_name(current, w.name)) {
            item.current = *cur;
            if (cur->same_registration(w)) {
                item.action = cur->enabled ? BinfmtAction::keep : BinfmtAction::enable;
            } else {
                item.action = replace ? BinfmtAction::replace : BinfmtAction::conflict;
                item.detail = differences(*cur, w);
                if (!cur->enabled) { // e.g. a distro's entry an admin switched off
                    item.detail = "disabled: 'emurun binfmt enable " + cur->name +
                                  "' if it should serve; " + item.detail;
                }
            }
        }
        if (!replace && item.action != BinfmtAction::keep) {
            keep_if_provided(item, current);
        }
        plan.items.push_back(std::move(item));
    }
    return plan;
}

BinfmtPlan plan_binfmt_unregister(const std::vector<std::string>& names,
                                  const std::vector<BinfmtEntry>& current) {
    BinfmtPlan plan;
    for (const auto& n : names) {
        BinfmtPlanItem item{BinfmtAction::absent, BinfmtEntry{}, std::nullopt, {}};
        item.wanted.name = n;
        if (const auto* cur = find_by_name(current, n)) {
            item.action = BinfmtAction::remove;
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
    if (entry.type != BinfmtType::magic || entry.offset != 0) {
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
        return fail("export '" + show(e.name) + "' for update-binfmts",
                    "update-binfmts has no field for the O flag without C",
                    "export to binfmt.d instead, or drop O");
    }
    std::string out = "package " + std::string(package) + "\ninterpreter " + e.interpreter + "\n";
    if (e.type == BinfmtType::magic) {
        out += "magic " + escape_binfmt_bytes(e.magic, ':') + "\noffset " +
               std::to_string(e.offset) + "\n";
        if (!e.mask.empty()) {
            out += "mask " + escape_binfmt_bytes(e.mask, ':') + "\n";
        }
    } else {
        out += "extension " + e.magic + "\n";
    }
    auto yes = [](bool b) { return std::string(b ? "yes" : "no"); };
    out += "credentials " + yes(e.flags.credentials) + "\nfix_binary " + yes(e.flags.fix_binary) +
           "\npreserve " + yes(e.flags.preserve_argv0) + "\n";
    return out;
}

Result<BinfmtEntry> parse_update_binfmts(std::string_view name, std::string_view text) {
    // Build the equivalent kernel line and let the kernel-exact parser judge it.
    std::string magic, mask, offset, ext, interp, flags;
    std::string what = "update-binfmts file '" + show(name) + "'";
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
            return bad_file(what, number, "unknown line '" + show(line) + "'",
                            "expected package, interpreter, magic, offset, mask, extension, "
                            "detector, credentials, fix_binary or preserve");
        }
        if (value == "yes") {
            flags += flag;
        }
    }
    const std::string n(name);
    std::string line = magic.empty() && !ext.empty()
                           ? ":" + n + ":E::" + ext + "::" + interp + ":" + flags
                           : ":" + n + ":M:" + (offset == "0" ? "" : offset) + ":" + magic + ":" +
                                 mask + ":" + interp + ":" + flags;
    auto e = parse_binfmt_line(line);
    if (!e) {
        return fail(what, e.error().why, e.error().hint);
    }
    return e;
}

Result<std::vector<BinfmtEntry>> read_binfmt_file(const std::filesystem::path& file) {
    constexpr std::size_t k_max_bytes = 1 << 20; // a binfmt.d file is a few lines
    const auto text = EMURUN_TRY(util::read_file(file, k_max_bytes));
    auto named = [&](const Error& e) { return fail(file.string() + ": " + e.what, e.why, e.hint); };
    if (file.extension() == ".conf") {
        auto entries = parse_binfmt_d(text);
        if (!entries) {
            return named(entries.error());
        }
        if (entries->empty()) { // importing it would register nothing and say nothing
            return fail(file.string(), "the file holds no entry",
                        "give binfmt.d files (.conf, lines :name:type:offset:magic:mask:"
                        "interpreter:flags) or update-binfmts files");
        }
        return entries;
    }
    auto entry = parse_update_binfmts(file.filename().string(), text);
    if (!entry) {
        return named(entry.error());
    }
    return std::vector{std::move(*entry)};
}

Result<std::filesystem::path> export_binfmt_file(const BinfmtEntry& entry, BinfmtFileFormat format,
                                                 const std::filesystem::path& dir) {
    const bool conf = format == BinfmtFileFormat::binfmt_d;
    const auto text = EMURUN_TRY(conf ? format_binfmt_d({entry}) : format_update_binfmts(entry));
    const auto file = dir / (conf ? entry.name + ".conf" : entry.name);
    EMURUN_TRY(util::write_file_atomic(file, text));
    return file;
}

} // namespace emurun
