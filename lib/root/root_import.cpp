// Roots from container images: an OCI image layout (a directory or a tarball of one), a
// `docker save` archive or a rootfs tarball, the chosen platform's layers checked against
// their digests and applied (root_layers.cpp) beside DIR, then renamed into place. The image
// config's run defaults are kept in DIR/k_root_image_file for root run.
#include "process/spawn.hpp"
#include "root/root_internal.hpp"
#include "util/file.hpp"
#include "util/json.hpp"
#include "util/path.hpp"
#include "util/temp_dir.hpp"

#include <emurun/json.hpp>
#include <emurun/root.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <sys/stat.h>
#include <unistd.h>

namespace emurun {
namespace fs = std::filesystem;
using util::Json;

namespace {

constexpr std::size_t k_max_json = 16 * 1024 * 1024; // an index, a manifest, a config
using root_detail::k_oci_index_type;
constexpr std::string_view k_list_type =
    "application/vnd.docker.distribution.manifest.list.v2+json";

/// The image as found: its layers' files (bottom to top) with the digest each must have, and
/// its config.
struct FoundImage {
    std::string kind;
    std::vector<std::pair<fs::path, std::string>> layers; // file, "sha256:HEX" (or empty)
    Json config = Json::object();
    std::string digest;   // RootImage::digest: the manifest's, the docker config's, the tarball's
    std::string platform; // RootImage::platform: the index entry taken, if any
    std::vector<std::string> platforms; // RootImage::platforms: the index's Linux entries
};

std::string import_what(const RootImportSpec& spec) {
    return "import " + spec.source.string() + " as a root";
}

Result<Json> read_json(const fs::path& file, const std::string& what) {
    auto text = util::read_file(file, k_max_json);
    if (!text) {
        return fail(what, text.error().message(),
                    "is it an OCI image layout or a 'docker save' archive?");
    }
    return util::parse_json_text(*text, file.string());
}

/// blobs/sha256/HEX of an OCI layout for the digest `digest` (64 lower-case hex digits only).
Result<fs::path> blob_path(const fs::path& layout, const std::string& digest,
                           const std::string& what) {
    const std::string prefix = "sha256:";
    const std::string hex = digest.starts_with(prefix) ? digest.substr(prefix.size()) : "";
    if (hex.size() != 64 || !std::ranges::all_of(hex, [](char c) {
            return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
        })) {
        return fail(what, "the digest '" + digest + "' is not sha256:<64 hex digits>",
                    "only sha256 digests are supported");
    }
    return layout / "blobs" / "sha256" / hex;
}

/// A blob read as JSON after checking its digest.
Result<Json> read_blob_json(const fs::path& layout, const std::string& digest,
                            const std::string& what) {
    const fs::path file = EMURUN_TRY(blob_path(layout, digest, what));
    EMURUN_TRY(root_detail::check_digest(file, file.filename().string(), digest, what));
    return read_json(file, what);
}

std::string platform_name(const Json& platform) {
    std::string name = platform.value("os", "?") + "/" + platform.value("architecture", "?");
    if (const std::string v = platform.value("variant", ""); !v.empty()) {
        name += "/" + v;
    }
    return name;
}

/// "linux/ARCH[/VARIANT]" of an index entry's platform (one for Linux).
std::string linux_platform(const Json& platform) {
    const std::string name = platform_name(platform);
    return "linux" + name.substr(name.find('/'));
}

/// The index's manifests for Linux, matching the spec's arch and variant when given; each
/// Linux platform the index offers in `names`.
Result<Json> choose_manifest(const Json& index, const RootImportSpec& spec, const std::string& what,
                             std::vector<std::string>& names) {
    std::vector<Json> matching;
    std::string offered;
    names.clear();
    for (const auto& m : index.value("manifests", Json::array())) {
        const Json platform = m.value("platform", Json::object());
        if (!platform.is_object() || platform.value("os", "linux") != "linux") {
            continue; // attestations ("unknown/unknown") and other systems
        }
        const std::string name = platform_name(platform);
        offered += (offered.empty() ? "" : ", ") + name;
        names.push_back(linux_platform(platform));
        auto arch =
            oci_platform_arch(platform.value("architecture", ""), platform.value("variant", ""));
        if ((spec.arch == nullptr || (arch && *arch == spec.arch)) &&
            (spec.variant.empty() || platform.value("variant", "") == spec.variant)) {
            matching.push_back(m);
        }
    }
    if (matching.size() == 1) {
        return matching.front();
    }
    if (matching.empty() && index.value("manifests", Json::array()).size() == 1) {
        return index["manifests"][0]; // one manifest, no platform: its config says the arch
    }
    return fail(what,
                matching.empty() ? "the image has no manifest for " +
                                       (spec.arch ? spec.arch->name : std::string("Linux")) +
                                       " (it has: " + (offered.empty() ? "none" : offered) + ")"
                                 : "the image is for several platforms: " + offered,
                "choose one of them (option arch, e.g. --platform linux/arm64)");
}

/// The image manifest of an OCI layout's index for the spec's platform (nested indexes
/// followed), read and checked; its digest, the platform taken and those offered in `img`
/// (the innermost index's).
Result<Json> oci_manifest(const fs::path& layout, const RootImportSpec& spec, FoundImage& img) {
    const std::string what = import_what(spec);
    Json index = EMURUN_TRY(read_json(layout / "index.json", what));
    for (int depth = 0; depth < 4; ++depth) {
        const Json desc = EMURUN_TRY(choose_manifest(index, spec, what, img.platforms));
        const std::string type = desc.value("mediaType", "");
        const Json platform = desc.value("platform", Json::object());
        img.platform = platform.is_object() && platform.contains("architecture")
                           ? linux_platform(platform)
                           : std::string();
        const std::string& digest = img.digest = desc.value("digest", "");
        Json blob = EMURUN_TRY(read_blob_json(layout, digest, what));
        if (type != k_oci_index_type && type != k_list_type) {
            return blob;
        }
        index = std::move(blob);
    }
    return fail(what, "its indexes are nested more than 4 deep", "is it an OCI image layout?");
}

Result<FoundImage> find_oci(const fs::path& layout, const RootImportSpec& spec) {
    const std::string what = import_what(spec);
    FoundImage img;
    const Json manifest = EMURUN_TRY(oci_manifest(layout, spec, img));
    img.kind = "oci";
    const Json config = manifest.value("config", Json::object());
    img.config = EMURUN_TRY(read_blob_json(layout, config.value("digest", ""), what));
    for (const auto& layer : manifest.value("layers", Json::array())) {
        const std::string digest = layer.value("digest", "");
        img.layers.emplace_back(EMURUN_TRY(blob_path(layout, digest, what)), digest);
    }
    return img;
}

/// A `docker save` archive, unpacked into `dir`: manifest.json's one image; its layers are
/// checked against the config's rootfs.diff_ids.
Result<FoundImage> find_docker(const fs::path& dir, const RootImportSpec& spec) {
    const std::string what = import_what(spec);
    const Json list = EMURUN_TRY(read_json(dir / "manifest.json", what));
    if (!list.is_array() || list.size() != 1 || !list[0].is_object()) {
        return fail(what, "its manifest.json does not list exactly one image",
                    "save one image per archive (docker save IMAGE)");
    }
    const auto member = [&](const Json& name) -> Result<fs::path> {
        if (!name.is_string() || !util::is_plain_relative(name.get<std::string>())) {
            return fail(what, "its manifest.json names " + util::describe(name) +
                                  ", not a file of the archive");
        }
        return dir / name.get<std::string>();
    };
    FoundImage img;
    img.kind = "docker-archive";
    const fs::path config = EMURUN_TRY(member(list[0].value("Config", Json())));
    img.config = EMURUN_TRY(read_json(config, what));
    img.digest = EMURUN_TRY(root_detail::sha256_of(config)); // the image ID
    const Json layers = list[0].value("Layers", Json::array());
    const Json diff_ids = img.config.value("rootfs", Json::object()).value("diff_ids", Json());
    if (!layers.is_array() || !diff_ids.is_array() || diff_ids.size() != layers.size()) {
        return fail(what, "its config's rootfs.diff_ids do not match its manifest's Layers",
                    "save the image again");
    }
    for (std::size_t i = 0; i < layers.size(); ++i) {
        img.layers.emplace_back(EMURUN_TRY(member(layers[i])),
                                diff_ids[i].is_string() ? diff_ids[i].get<std::string>() : "?");
    }
    return img;
}

/// A tarball of an image (docker-archive or OCI layout) unpacked into `into`, its members
/// checked as a layer's are.
Result<void> unpack_container(const fs::path& archive, const fs::path& into) {
    std::vector<std::string> notes;
    return root_detail::apply_layers({{archive, ""}}, into, notes);
}

/// The image `spec.source` holds; a tarball of a layout or archive is unpacked into `work`.
Result<FoundImage> find_image(const RootImportSpec& spec, const fs::path& work) {
    const std::string what = import_what(spec);
    std::error_code ec;
    if (fs::is_directory(spec.source, ec)) {
        if (!fs::exists(spec.source / "oci-layout", ec)) {
            return fail(what, "the directory holds no oci-layout file",
                        "give an OCI image layout (skopeo copy ... oci:DIR), a 'docker save' "
                        "archive or a rootfs tarball");
        }
        return find_oci(spec.source, spec);
    }
    EMURUN_TRY(util::open_read(spec.source)); // a missing source says so, not tar
    const auto names = EMURUN_TRY(root_detail::tar_member_names(spec.source, what));
    const auto has = [&](std::string_view n) { return std::ranges::find(names, n) != names.end(); };
    if (!has("manifest.json") && !has("oci-layout")) {
        FoundImage img;
        img.kind = "rootfs";
        img.digest = EMURUN_TRY(root_detail::sha256_of(spec.source));
        img.layers = {{spec.source, img.digest}}; // what is extracted is what the digest says
        return img;
    }
    EMURUN_TRY(unpack_container(spec.source, work));
    return has("oci-layout") ? find_oci(work, spec) : find_docker(work, spec);
}

std::vector<std::string> strings_of(const Json& j) {
    std::vector<std::string> out;
    if (j.is_array()) {
        for (const auto& s : j) {
            if (s.is_string()) {
                out.push_back(s.get<std::string>());
            }
        }
    }
    return out;
}

RootImage image_of(const FoundImage& found) {
    RootImage img;
    img.source_kind = found.kind;
    img.architecture = found.config.value("architecture", "");
    img.variant = found.config.value("variant", "");
    const Json c = found.config.value("config", Json::object());
    if (c.is_object()) {
        img.env = strings_of(c.value("Env", Json()));
        img.working_dir = c.value("WorkingDir", "");
        img.user = c.value("User", "");
        img.entrypoint = strings_of(c.value("Entrypoint", Json()));
        img.cmd = strings_of(c.value("Cmd", Json()));
    }
    for (const auto& [file, digest] : found.layers) {
        img.layers.push_back(digest);
    }
    img.digest = found.digest;
    img.imported = root_detail::utc_text(std::time(nullptr));
    img.platform = found.platform;
    img.platforms = found.platforms;
    return img;
}

std::string image_json(const RootImage& img) {
    return json_text(Json{{"format", 1},
                          {"source_kind", img.source_kind},
                          {"architecture", img.architecture},
                          {"variant", img.variant},
                          {"env", img.env},
                          {"working_dir", img.working_dir},
                          {"user", img.user},
                          {"entrypoint", img.entrypoint},
                          {"cmd", img.cmd},
                          {"layers", img.layers},
                          {"digest", img.digest},
                          {"imported", img.imported},
                          {"notes", img.notes},
                          {"platform", img.platform},
                          {"platforms", img.platforms},
                          {"source_digest", img.source_digest}}) +
           "\n";
}

/// The root's arch: the config's (checked against bin/sh when there is one), for a rootfs
/// tarball the spec's or bin/sh's.
Result<const Arch*> imported_arch(const RootImportSpec& spec, RootImage& img, const fs::path& dir) {
    const std::string what = import_what(spec);
    std::error_code ec;
    const bool has_sh = fs::exists(fs::symlink_status(dir / "bin/sh", ec));
    const Arch* arch = spec.arch;
    if (!img.architecture.empty()) {
        arch = EMURUN_TRY(oci_platform_arch(img.architecture, img.variant));
    } else if (arch == nullptr) {
        if (!has_sh) {
            return fail(what, "the tarball has no image config and no bin/sh to tell its arch",
                        "name the arch (option arch)");
        }
        arch = EMURUN_TRY(root_detail::shell_arch(dir));
    }
    if (has_sh) {
        const Arch* sh = EMURUN_TRY(root_detail::shell_arch(dir));
        if (sh != arch) {
            return fail(what, "its bin/sh is " + sh->name + ", not " + arch->name,
                        "check the image's platform; nothing was imported");
        }
    }
    if (spec.arch != nullptr && arch != spec.arch) {
        return fail(what, "it is an image for " + arch->name + ", not " + spec.arch->name,
                    "choose the image of that arch, or leave the arch out");
    }
    if (img.architecture.empty()) { // a rootfs tarball: what root_arch will read back
        img.architecture = arch->debian.empty() ? arch->name : arch->debian;
    }
    return arch;
}

Result<RootImported> import_into(const RootImportSpec& spec, const fs::path& partial,
                                 const fs::path& work) {
    const FoundImage found = EMURUN_TRY(find_image(spec, work));
    RootImported done; // each layer's digest checked on the file apply_layers extracts
    EMURUN_TRY(root_detail::apply_layers(found.layers, partial, done.notes));
    done.image = image_of(found);
    done.image.notes = done.notes;
    done.arch = EMURUN_TRY(imported_arch(spec, done.image, partial));
    if (done.image.platform.empty()) { // no index: the config's platform, or bin/sh's
        done.image.platform = oci_platform_text(done.image);
    }
    std::error_code ec; // a rootfs without bin/sh offers no platform: the request named one
    if (done.image.platforms.empty() &&
        (found.kind != "rootfs" || fs::exists(fs::symlink_status(partial / "bin/sh", ec)))) {
        done.image.platforms = {done.image.platform};
    }
    EMURUN_TRY(root_detail::write_root_image(partial, done.image));
    return done;
}

} // namespace

namespace {

/// OCI's (Go's GOARCH) names of the arches whose name differs from emurun's, both ways.
struct OciName {
    std::string_view emurun, oci, variant;
};
constexpr std::array<OciName, 8> k_oci_names{{{"x86_64", "amd64", ""},
                                              {"i386", "386", ""},
                                              {"aarch64", "arm64", ""},
                                              {"arm", "arm", "v7"},
                                              {"mipsel", "mipsle", ""},
                                              {"mips64el", "mips64le", ""},
                                              {"loongarch64", "loong64", ""},
                                              {"ppc64le", "ppc64le", ""}}};

} // namespace

Result<const Arch*> oci_platform_arch(const std::string& architecture, const std::string& variant) {
    if (architecture == "arm") { // armel (v5, v6) and armhf (v7) are one arch to QEMU
        return find_arch(variant == "v5" || variant == "v6" ? "armel" : "armhf");
    }
    for (const auto& n : k_oci_names) {
        if (n.oci == architecture) {
            return find_arch(n.emurun);
        }
    }
    return find_arch(architecture);
}

Result<OciPlatform> parse_oci_platform(std::string_view text) {
    std::vector<std::string> parts;
    for (std::size_t at = 0; at <= text.size();) {
        auto slash = text.find('/', at);
        slash = slash == std::string_view::npos ? text.size() : slash;
        parts.emplace_back(text.substr(at, slash - at));
        at = slash + 1;
    }
    const std::string what = "the platform '" + std::string(text) + "'";
    if (parts.size() > 1 && parts.front() != "linux") {
        return fail(ErrorKind::bad_input, what, "only linux images become roots",
                    "e.g. linux/arm64", "platform");
    }
    if (parts.size() > 1) {
        parts.erase(parts.begin());
    }
    if (parts.size() > 2 || parts.front().empty()) {
        return fail(ErrorKind::bad_input, what, "expected OS/ARCH[/VARIANT]",
                    "e.g. linux/arm64 or linux/arm/v7", "platform");
    }
    OciPlatform p;
    p.variant = parts.size() == 2 ? parts[1] : "";
    p.arch = EMURUN_TRY(oci_platform_arch(parts[0], p.variant));
    return p;
}

std::pair<std::string, std::string> oci_platform_of(const Arch& arch) {
    for (const auto& n : k_oci_names) {
        if (n.emurun == arch.name) {
            return {std::string(n.oci), std::string(n.variant)};
        }
    }
    return {arch.name, ""};
}

std::string oci_platform_text(const RootImage& image) {
    std::string arch = image.architecture; // a rootfs tarball's is Debian's name: OCI's is said
    std::string variant = image.variant;
    if (const auto known = oci_platform_arch(arch, variant); known && *known != nullptr) {
        auto [oci, oci_variant] = oci_platform_of(**known);
        arch = oci;
        variant = variant.empty() ? oci_variant : variant;
    }
    return "linux/" + arch + (variant.empty() ? "" : "/" + variant);
}

Result<RootImported> import_root(const RootImportSpec& spec) {
    root_detail::note_interrupted(0);
    return spec.cache ? root_detail::import_through_cache(spec) : root_detail::import_fresh(spec);
}

Result<RootImported> root_detail::import_fresh(const RootImportSpec& spec) {
    EMURUN_TRY(root_detail::check_new_root_dir(spec.dir));
    std::error_code ec;
    const fs::path dir = fs::absolute(spec.dir, ec);
    const std::string base = "." + dir.filename().string() + ".emurun-";
    EMURUN_TRY(root_detail::make_dirs(dir.parent_path())); // roots/aarch64 with no roots/ yet
    // Both removed with what they hold unless the root is complete (TempDir opens read-only
    // directories up to remove them).
    auto partial = EMURUN_TRY(util::TempDir::make(dir.parent_path() / (base + "partial-")));
    auto work = EMURUN_TRY(util::TempDir::make(dir.parent_path() / (base + "image-")));
    auto done = EMURUN_TRY(import_into(spec, partial.path(), work.path()));
    ::chmod(partial.path().c_str(), 0755);                    // mkdtemp made it 0700
    if (::rename(partial.path().c_str(), dir.c_str()) != 0) { // onto an absent or empty dir
        return std::unexpected(
            system_error("rename " + partial.path().string() + " to " + dir.string(), errno));
    }
    return done;
}

Result<void> root_detail::write_root_image(const fs::path& dir, const RootImage& image) {
    return util::write_file_atomic(dir / k_root_image_file, image_json(image));
}

Result<std::optional<RootImage>> read_root_image(const fs::path& dir) {
    const fs::path file = dir / k_root_image_file;
    std::error_code ec;
    if (!fs::exists(fs::symlink_status(file, ec))) {
        return std::optional<RootImage>{};
    }
    auto text = util::read_file(file, k_max_json);
    if (!text) {
        return fail("read " + file.string(), text.error().message(),
                    "import the image again into a new directory");
    }
    return std::optional<RootImage>(EMURUN_TRY(root_detail::root_image_from_text(*text, file)));
}

Result<RootImage> root_detail::root_image_from_text(const std::string& text, const fs::path& file) {
    const Json j = EMURUN_TRY(util::parse_json_text(text, file.string()));
    if (!j.is_object() || j.value("format", 0) != 1) {
        return fail("read " + file.string(), "it is not what emurun root import writes",
                    "import the image again into a new directory");
    }
    RootImage img;
    img.source_kind = j.value("source_kind", "");
    img.architecture = j.value("architecture", "");
    img.variant = j.value("variant", "");
    img.env = strings_of(j.value("env", Json()));
    img.working_dir = j.value("working_dir", "");
    img.user = j.value("user", "");
    img.entrypoint = strings_of(j.value("entrypoint", Json()));
    img.cmd = strings_of(j.value("cmd", Json()));
    img.layers = strings_of(j.value("layers", Json()));
    img.notes = strings_of(j.value("notes", Json()));
    img.platforms = strings_of(j.value("platforms", Json()));
    for (auto [key, into] :
         {std::pair{"digest", &img.digest}, std::pair{"imported", &img.imported},
          std::pair{"platform", &img.platform}, std::pair{"source_digest", &img.source_digest}}) {
        const Json v = j.value(key, Json(""));
        *into = v.is_string() ? v.get<std::string>() : "";
    }
    return img;
}

Result<void> apply_root_image(RootSpec& spec, std::vector<std::string>& argv) {
    const auto image = EMURUN_TRY(read_root_image(spec.dir));
    if (!image) {
        return {};
    }
    std::vector<std::pair<std::string, std::string>> env;
    for (const auto& kv : image->env) {
        const auto eq = kv.find('=');
        if (eq != std::string::npos && eq > 0) {
            env.emplace_back(kv.substr(0, eq), kv.substr(eq + 1));
        }
    }
    spec.env.insert(spec.env.begin(), env.begin(), env.end());
    if (!spec.cwd && !image->working_dir.empty()) {
        spec.cwd = image->working_dir;
    }
    if (argv.empty()) {
        argv = image->entrypoint;
        argv.insert(argv.end(), image->cmd.begin(), image->cmd.end());
    }
    if (argv.empty()) {
        return fail(ErrorKind::bad_input, "run in " + spec.dir.string(),
                    "no command given, and the image has no Entrypoint or Cmd",
                    "name the command to run", "argv");
    }
    return {};
}

} // namespace emurun
