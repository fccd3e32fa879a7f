// Small parsing helpers shared by subcommands.
#pragma once

#include <emurun/sysroot.hpp>

#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace emurun::cli {

/// "K=V" strings into a map; throws Failure (exit 2) naming a malformed one.
std::map<std::string, std::string> parse_env_assignments(const std::vector<std::string>& items);

/// Strings into paths.
std::vector<std::filesystem::path> to_paths(const std::vector<std::string>& items);

/// Split "a,b,c" (and repeated options) into items, dropping empty ones.
std::vector<std::string> split_list(const std::vector<std::string>& items);

/// A warning naming the emulated steps the --baseline report `baseline` has no step for
/// (baseline_misses): they got no factor. Nothing when there are none.
void warn_baseline_misses(const std::vector<std::string>& steps, const std::string& baseline);

/// Run the emurun-sysroot tool for `request` (apt and dpkg do the work); its exit code is
/// emurun's, except its usage error (2): emurun built that command line from what it was given,
/// so a value the tool refused is bad input (125; it said why). `sysroot fetch|source|build-dep`
/// and `qemu fetch` (defined in cmd_sysroot.cpp).
int run_sysroot_tool(const SysrootRequest& request);

} // namespace emurun::cli
