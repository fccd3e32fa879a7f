// Telling the user which Debian package provides a missing library.
#include <emurun/sysroot.hpp>

#include <algorithm>
#include <array>
#include <cctype>
#include <expected>
#include <utility>

namespace emurun {

namespace {

constexpr std::array<std::pair<std::string_view, std::string_view>, 16> k_known{{
    {"libc.so.6", "libc6"},
    {"libm.so.6", "libc6"},
    {"libpthread.so.0", "libc6"},
    {"libdl.so.2", "libc6"},
    {"librt.so.1", "libc6"},
    {"libresolv.so.2", "libc6"},
    {"libutil.so.1", "libc6"},
    {"libstdc++.so.6", "libstdc++6"},
    {"libgcc_s.so.1", "libgcc-s1"},
    {"libz.so.1", "zlib1g"},
    {"libssl.so.3", "libssl3"},
    {"libcrypto.so.3", "libssl3"},
    {"libatomic.so.1", "libatomic1"},
    {"libgomp.so.1", "libgomp1"},
    {"libffi.so.8", "libffi8"},
    {"libbz2.so.1.0", "libbz2-1.0"},
}};

/// The package emurun knows ships `soname`, or empty.
std::string known_package(const std::string& soname) {
    for (const auto& [so, p] : k_known) {
        if (so == soname) {
            return std::string(p);
        }
    }
    return soname.starts_with("ld-") || soname.starts_with("/") ? "libc6" : "";
}

/// Debian's library package naming: libNAME.so.V -> libNAMEV, or libNAME-V when NAME ends in
/// a digit (policy 8.1).
std::string by_policy(const std::string& soname) {
    auto so = soname.find(".so.");
    if (!soname.starts_with("lib") || so == std::string::npos) {
        return {};
    }
    std::string name = soname.substr(0, so);
    std::string version = soname.substr(so + 4);
    version = version.substr(0, version.find('.'));
    if (version.empty()) {
        return {};
    }
    std::string pkg = name;
    if (std::isdigit(static_cast<unsigned char>(name.back())) != 0) {
        pkg += '-';
    }
    pkg += version;
    for (auto& c : pkg) {
        c = c == '_' ? '-' : static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
    return pkg;
}

/// A sysroot the user may write to: the first searched one that is not the host's / or a
/// system cross root under /usr; empty when there is none.
std::string user_sysroot(const std::vector<std::filesystem::path>& sysroots) {
    for (const auto& s : sysroots) {
        const std::string p = s.lexically_normal().string();
        if (p != "/" && !p.starts_with("/usr/")) {
            return p;
        }
    }
    return {};
}

/// The hint and its field: "Debian ships them in zlib1g:arm64: put them into a sysroot with
/// 'emurun-sysroot fetch --arch arm64 --dir DIR zlib1g' and add DIR to the sysroots", field
/// sysroots (none when DIR is searched already): a command that works as printed.
std::pair<std::string, std::string> fetch_hint(const std::vector<std::filesystem::path>& sysroots,
                                               const std::string& pkgs, bool guessed) {
    std::string names;
    std::string arch;
    for (std::size_t start = 0; start < pkgs.size();) {
        const auto end = std::min(pkgs.find(' ', start), pkgs.size());
        const std::string word = pkgs.substr(start, end - start);
        const auto colon = word.find(':');
        names += (names.empty() ? "" : " ") + word.substr(0, colon);
        if (arch.empty() && colon != std::string::npos) {
            arch = word.substr(colon + 1);
        }
        start = end + 1;
    }
    const std::string ships =
        guessed ? "Debian likely ships them in " + pkgs +
                      " (names guessed from the sonames by Debian's naming policy; when one is "
                      "wrong, emurun-sysroot lists similar names)"
                : "Debian ships them in " + pkgs;
    if (arch.empty()) {
        return {ships + "; name a sysroot holding them", "sysroots"};
    }
    std::string dir = user_sysroot(sysroots);
    const bool searched = !dir.empty();
    if (!searched) {
        dir = "sysroot-" + arch;
    }
    return {ships + ": unpack them into a sysroot with 'emurun-sysroot " + "fetch --arch " + arch +
                " --dir " + dir + " " + names + "'" +
                (searched ? "" : " and add " + dir + " to the sysroots"),
            searched ? "" : "sysroots"};
}

} // namespace

std::string guess_package(const std::string& soname, const Arch& arch) {
    std::string pkg = known_package(soname);
    if (pkg.empty()) {
        pkg = by_policy(soname);
    }
    if (pkg.empty() || arch.debian.empty()) {
        return pkg;
    }
    return pkg + ":" + arch.debian;
}

Result<void> check_sysroot_dirs(const std::vector<std::filesystem::path>& sysroots) {
    for (const auto& root : sysroots) {
        std::error_code ec;
        const auto st = std::filesystem::status(root, ec);
        if (st.type() == std::filesystem::file_type::directory) {
            continue;
        }
        const std::string why = st.type() == std::filesystem::file_type::not_found
                                    ? "no such directory"
                                : ec ? ec.message()
                                     : "not a directory";
        return std::unexpected(
            Error{"sysroot " + root.string(), why,
                  "name a directory holding the target's /lib and /usr/lib, or make one: "
                  "emurun-sysroot fetch --arch ARCH --dir " +
                      root.string() + " libc6 PACKAGE...",
                  st.type() == std::filesystem::file_type::not_found ? ErrorKind::not_found
                                                                     : ErrorKind::bad_input,
                  "sysroots"});
    }
    return {};
}

bool package_guessed(const std::string& soname) {
    return known_package(soname).empty() && !by_policy(soname).empty();
}

Error LinkMap::missing_error(const std::filesystem::path& binary) const {
    std::string why;
    std::string pkgs;
    bool guessed = false;
    auto add = [&](const LibraryLookup& l) {
        guessed = guessed || l.package_guessed;
        why += (why.empty() ? "" : ", ") + l.name + " (needed by " + l.needed_by + ")";
        if (!l.package_hint.empty() && pkgs.find(l.package_hint) == std::string::npos) {
            pkgs += (pkgs.empty() ? "" : " ") + l.package_hint;
        }
    };
    if (interpreter && !interpreter->path) {
        add(*interpreter);
    }
    for (const auto& l : libraries) {
        if (!l.path) {
            add(l);
        }
    }
    std::string searched;
    for (const auto& s : sysroots) {
        searched += (searched.empty() ? "" : ", ") + s.string();
    }
    auto [hint, field] =
        pkgs.empty()
            ? std::pair<std::string, std::string>("name a sysroot holding them", "sysroots")
            : fetch_hint(sysroots, pkgs, guessed);
    return Error{"cannot run " + binary.string(),
                 "missing from the sysroot (searched: " + (searched.empty() ? "none" : searched) +
                     "): " + why,
                 std::move(hint), ErrorKind::missing_library, std::move(field)};
}

} // namespace emurun
