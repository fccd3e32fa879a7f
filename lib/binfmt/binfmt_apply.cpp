// Plan-then-apply under the lock, with read-back and rollback.
#include "binfmt/binfmt_io.hpp"
#include "binfmt/binfmt_text.hpp"
#include "binfmt/binfmt_versions.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace emurun {
namespace {

using detail::show;

// Applies steps one by one and remembers how to undo each, so a failure part-way leaves the
// table as it was before this run.
class Applier {
  public:
    explicit Applier(const BinfmtOptions& o)
        : m_opt(o), m_write(o.writer ? o.writer : BinfmtWriter(write_binfmt_control)) {}

    Result<void> add(const BinfmtEntry& e);
    Result<void> remove(const BinfmtEntry& current);
    Result<void> set_enabled(const BinfmtEntry& e, bool on);
    void rollback();

  private:
    Result<void> raw_register(const BinfmtEntry& e);
    Result<void> raw_remove(std::string_view name);
    Result<void> raw_enable(std::string_view name, bool on);

    const BinfmtOptions& m_opt;
    BinfmtWriter m_write;
    // Undo log, most recent last: which entry to remove or re-register.
    struct Undo {
        enum class Kind { remove_added, reregister, toggle } kind;
        BinfmtEntry entry;
    };
    std::vector<Undo> m_undo;
};

Result<void> Applier::raw_register(const BinfmtEntry& e) {
    auto line = EMURUN_TRY(format_binfmt_line(e));
    auto r = m_write(m_opt.mount / "register", line);
    if (r) {
        return r;
    }
    auto [major, minor] = detail::kernel_version();
    Error x = r.error();
    x.what = "register " + show(e.name) + " (" + line + ")";
    if (x.why == std::strerror(EEXIST)) {
        x.hint = "another tool registered it meanwhile; run again to see the conflict";
    } else if (x.why == std::strerror(EINVAL) && e.flags.fix_binary &&
               (major < 4 || (major == 4 && minor < 8))) {
        x.hint = "kernel " + std::to_string(major) + "." + std::to_string(minor) +
                 " predates the F flag (Linux 4.8); register without F";
        x.kind = ErrorKind::kernel_unsupported;
        x.field = "flags=P";
    } else if (x.why == std::strerror(ENOENT) && e.flags.fix_binary) {
        x.hint = "with F the kernel opens the interpreter now: it must exist at that path";
    }
    return std::unexpected(x);
}

Result<void> Applier::raw_remove(std::string_view name) {
    return m_write(m_opt.mount / std::string(name), "-1");
}

Result<void> Applier::raw_enable(std::string_view name, bool on) {
    return m_write(m_opt.mount / std::string(name), on ? "1" : "0");
}

Result<void> Applier::add(const BinfmtEntry& e) {
    EMURUN_TRY(raw_register(e));
    m_undo.push_back({Undo::Kind::remove_added, e});
    const auto back = EMURUN_TRY(read_binfmt_entry(m_opt.mount, e.name));
    if (!back.same_registration(e) || !back.enabled) {
        auto want = format_binfmt_line(e);
        auto got = format_binfmt_line(back);
        return fail("read back " + show(e.name), "the kernel shows another entry than was written",
                    "wrote " + (want ? *want : "?") + ", kernel shows " + (got ? *got : "?"));
    }
    return {};
}

Result<void> Applier::remove(const BinfmtEntry& current) {
    EMURUN_TRY(raw_remove(current.name));
    m_undo.push_back({Undo::Kind::reregister, current});
    return {};
}

Result<void> Applier::set_enabled(const BinfmtEntry& e, bool on) {
    EMURUN_TRY(raw_enable(e.name, on));
    BinfmtEntry prev = e;
    prev.enabled = !on;
    m_undo.push_back({Undo::Kind::toggle, prev});
    return {};
}

void Applier::rollback() {
    for (auto it = m_undo.rbegin(); it != m_undo.rend(); ++it) {
        switch (it->kind) {
        case Undo::Kind::remove_added:
            (void)raw_remove(it->entry.name);
            break;
        case Undo::Kind::reregister:
            if (raw_register(it->entry) && !it->entry.enabled) {
                (void)raw_enable(it->entry.name, false);
            }
            break;
        case Undo::Kind::toggle:
            (void)raw_enable(it->entry.name, it->entry.enabled);
            break;
        }
    }
    m_undo.clear();
}

Result<void> apply_item(Applier& a, const BinfmtPlanItem& item) {
    switch (item.action) {
    case BinfmtAction::add:
        return a.add(item.wanted);
    case BinfmtAction::replace:
        EMURUN_TRY(a.remove(*item.current));
        return a.add(item.wanted);
    case BinfmtAction::enable:
        return a.set_enabled(*item.current, true);
    case BinfmtAction::remove:
        return a.remove(*item.current);
    case BinfmtAction::keep:
    case BinfmtAction::absent:
    case BinfmtAction::conflict:
        return {};
    }
    return {};
}

Result<void> apply_plan(const BinfmtPlan& plan, const BinfmtOptions& options) {
    Applier a(options);
    for (const auto& item : plan.items) {
        if (auto r = apply_item(a, item); !r) {
            a.rollback();
            Error e = r.error();
            e.why += "; every change of this run was rolled back";
            return std::unexpected(e);
        }
    }
    return {};
}

Error conflict_error(const BinfmtPlan& plan) {
    std::string names;
    std::string details;
    for (const auto& i : plan.items) {
        if (i.action == BinfmtAction::conflict) {
            names += (names.empty() ? "" : ", ") + show(i.wanted.name);
            details += show(i.wanted.name) + ": " + i.detail + "; ";
        }
    }
    details.resize(details.size() - 2);
    return Error{"register " + names,
                 "another entry is registered under the same name (" + details + ")",
                 "it was left untouched and nothing was registered; unregister it first, or "
                 "replace it on purpose",
                 ErrorKind::conflict, "replace"};
}

// C and O only with their explicit opt-in: a library caller cannot register them by accident.
Result<void> opt_in_check(const BinfmtEntry& e, const BinfmtOptions& options) {
    const auto missing = missing_binfmt_opt_in(e.flags, options);
    if (!missing) {
        return {};
    }
    return fail("register " + show(e.name) + " with flags " + e.flags.to_string(),
                std::string(opt_in_reason(*missing)),
                *missing == BinfmtOptIn::credentials
                    ? "set BinfmtOptions::allow_credentials if that is really wanted"
                    : "set BinfmtOptions::allow_open_binary if that is really wanted");
}

// Lock, read the current table and plan with `make_plan`; apply unless dry run.
template <class MakePlan>
Result<BinfmtApplyResult> locked_apply(const BinfmtOptions& options, MakePlan make_plan) {
    EMURUN_TRY(ensure_binfmt_mount(options));
    auto lock = EMURUN_TRY(detail::lock_binfmt(options));
    auto table = EMURUN_TRY(read_binfmt_table(options.mount));
    BinfmtApplyResult result;
    result.plan = make_plan(table.entries);
    if (options.dry_run) {
        return result;
    }
    if (result.plan.has_conflict()) {
        return std::unexpected(conflict_error(result.plan));
    }
    EMURUN_TRY(apply_plan(result.plan, options));
    result.applied = true;
    return result;
}

// A replaced entry that a distro file registers again (boot, systemd-binfmt or binfmt-support
// restart) will come back and win over ours.
void restore_warnings(const BinfmtPlan& plan, BinfmtWarnings& warnings) {
    for (const auto& i : plan.items) {
        if (i.action != BinfmtAction::replace || !i.current) {
            continue;
        }
        for (const auto& f : binfmt_restore_files(i.current->name)) {
            warnings.push_back(show(i.current->name) + " is registered again by " + f.string() +
                               " at boot or when systemd-binfmt/binfmt-support restarts, which "
                               "undoes this replacement; remove that file, or keep the "
                               "existing entry (register without replacing)");
        }
    }
}

} // namespace

std::optional<BinfmtOptIn> missing_binfmt_opt_in(const BinfmtFlags& flags,
                                                 const BinfmtOptions& given) {
    std::optional<BinfmtOptions> upgraded;
    const auto ours = util::caller_form(given, upgraded);
    // Options of no size this library knows give no opt-in (register_binfmt says why).
    const BinfmtOptions none;
    const BinfmtOptions& options = ours ? **ours : none;
    if (flags.credentials && !options.allow_credentials) {
        return BinfmtOptIn::credentials;
    }
    if (flags.open_binary && !flags.credentials && !options.allow_open_binary) {
        return BinfmtOptIn::open_binary;
    }
    return std::nullopt;
}

std::string_view opt_in_reason(BinfmtOptIn opt_in) {
    switch (opt_in) {
    case BinfmtOptIn::credentials:
        return "C runs setuid binaries with raised privileges";
    case BinfmtOptIn::open_binary:
        break;
    }
    return "O hands the emulator binaries users cannot read";
}

Result<BinfmtApplyResult> register_binfmt(const std::vector<BinfmtEntry>& wanted,
                                          const BinfmtOptions& given) {
    std::optional<BinfmtOptions> upgraded;
    const BinfmtOptions* ours = EMURUN_TRY(util::caller_form(given, upgraded));
    const BinfmtOptions& options = *ours;
    BinfmtWarnings warnings;
    for (const auto& e : wanted) {
        EMURUN_TRY(opt_in_check(e, options));
        EMURUN_TRY(validate_binfmt_entry(e));
        EMURUN_TRY(check_binfmt_interpreter(e.interpreter, e.flags, warnings));
    }
    auto r = locked_apply(options, [&](const std::vector<BinfmtEntry>& current) {
        return plan_binfmt_register(wanted, current, options.replace);
    });
    if (r) {
        restore_warnings(r->plan, warnings);
        if (auto t = read_binfmt_table(options.mount); t && !t->enabled) {
            warnings.push_back("binfmt_misc at " + options.mount.string() +
                               " is disabled as a whole (status: disabled): the kernel uses no "
                               "entry, these included, until 'echo 1 > " +
                               (options.mount / "status").string() + "' as root");
        }
        r->warnings = std::move(warnings);
    }
    return r;
}

Result<BinfmtApplyResult> unregister_binfmt(const std::vector<std::string>& names,
                                            const BinfmtOptions& given) {
    std::optional<BinfmtOptions> upgraded;
    const BinfmtOptions* ours = EMURUN_TRY(util::caller_form(given, upgraded));
    const BinfmtOptions& options = *ours;
    return locked_apply(options, [&](const std::vector<BinfmtEntry>& current) {
        return plan_binfmt_unregister(names, current);
    });
}

Result<void> set_binfmt_enabled(const std::vector<std::string>& names, bool enabled,
                                const BinfmtOptions& given) {
    std::optional<BinfmtOptions> upgraded;
    const BinfmtOptions* ours = EMURUN_TRY(util::caller_form(given, upgraded));
    const BinfmtOptions& options = *ours;
    EMURUN_TRY(ensure_binfmt_mount(options));
    auto lock = EMURUN_TRY(detail::lock_binfmt(options));
    std::vector<BinfmtEntry> entries;
    for (const auto& n : names) {
        auto e = read_binfmt_entry(options.mount, n);
        if (!e) {
            return fail((enabled ? "enable " : "disable ") + show(n),
                        "no such entry: " + e.error().why,
                        "see 'emurun binfmt status'; nothing was changed");
        }
        entries.push_back(std::move(*e));
    }
    if (options.dry_run) {
        return {};
    }
    Applier a(options);
    for (const auto& e : entries) {
        if (e.enabled == enabled) {
            continue;
        }
        if (auto r = a.set_enabled(e, enabled); !r) {
            a.rollback();
            return r;
        }
    }
    return {};
}

} // namespace emurun
