// Private: a child in new user + mount + pid namespaces whose uids/gids 0..65535 are mapped
// (a whole Debian root's worth), set up by a caller-supplied function, then running a command
// as the child of its pid 1. Used by the root module (`emurun root create/install/run`).
#pragma once

#include <emurun/error.hpp>
#include <emurun/process.hpp>

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <sys/types.h>

namespace emurun::process {

/// How many ids a namespace maps (0..k_mapped_ids-1): enough for every system user a Debian
/// root's packages create (_apt, messagebus, nobody = 65534).
inline constexpr unsigned long k_mapped_ids = 65536;

/// A subordinate id range from /etc/subuid or /etc/subgid.
struct SubIdRange {
    unsigned long start = 0;
    unsigned long count = 0;
};

/// The first range of /etc/subuid-style `text` for `user` (by name or numeric uid) with at
/// least `needed` ids. Error: none, with the fix (usermod --add-subuids, package uidmap).
[[nodiscard]] Result<SubIdRange> find_subid_range(const std::string& text, const std::string& user,
                                                  uid_t uid, const std::string& file,
                                                  unsigned long needed);

/// The login name of `uid` in passwd(5)-format `text` (/etc/passwd, or `getent passwd`'s
/// line): the first field of the first line whose third field is `uid`; nullopt if none.
[[nodiscard]] std::optional<std::string> passwd_name(std::string_view text, uid_t uid);

/// How the child's id maps are written:
/// - as real root: "0 0 65536" for uids and gids (the root's files keep their own ids);
/// - otherwise: newuidmap/newgidmap (package uidmap) map 0 to the caller and 1..65535 to the
///   caller's /etc/subuid and /etc/subgid range.
/// Error (before anything is started) when neither is possible, naming the fix.
[[nodiscard]] Result<void> check_id_maps();

/// Run in the child as root of the new namespaces, before `command` starts: mounts and the
/// like. The child is single-threaded and freshly cloned; errors travel back to the caller.
using NamespaceSetup = std::function<Result<void>()>;

/// What SIGINT (Ctrl-C) does to a command in the namespaces. SIGTERM/SIGHUP always go to every
/// process of the namespace, and what is left 10 s later is killed.
enum class Interrupts {
    interactive, ///< the terminal's SIGINT reaches the command, which decides (a shell goes
                 ///< on); a SIGINT sent to the caller alone is passed on to the namespace
    stop_all,    ///< SIGINT stops the whole namespace as SIGTERM does (mmdebstrap, tar: dpkg
                 ///< and mmdebstrap's worker would otherwise finish their minutes of work first)
};

/// clone(CLONE_NEWUSER|CLONE_NEWNS|CLONE_NEWPID); the parent writes the id maps; the child
/// becomes uid/gid 0, makes every mount private, calls `setup`, then forks `command` (its env is
/// the whole environment, PATH searched in it; cwd applied after setup) and, as the namespace's
/// pid 1, reaps every process until the command ends. The parent ignores SIGQUIT while it waits,
/// notes SIGINT (forwards it with Interrupts::stop_all, and when it came from a process rather
/// than the terminal) and forwards SIGTERM/SIGHUP, so the
/// caller outlives an interrupted command and can clean up (see interrupted_by()). Returns the
/// command's status as pid 1 saw it: exit code, or 128+N for death by signal N (exited(127) when
/// the command was not found, after a message on stderr). Errors: the caller is multithreaded
/// (clone is fine, but `setup` runs arbitrary code after it); id maps cannot be written; `setup`
/// failed (its error); clone failed (user namespaces disabled: named with the sysctl to check).
[[nodiscard]] Result<ExitStatus> run_in_namespaces(const NamespaceSetup& setup,
                                                   const Command& command,
                                                   Interrupts interrupts = Interrupts::interactive);

/// The signal (SIGINT, SIGTERM or SIGHUP) the caller received during its last
/// run_in_namespaces(), or 0: an interrupted command is not an ordinary failure (no retry).
[[nodiscard]] int interrupted_by();

} // namespace emurun::process
