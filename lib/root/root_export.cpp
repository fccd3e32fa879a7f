// emurun root export: roots written as one container image (an OCI image layout, a tarball of
// one, or a docker archive), with tar, gzip and sha256sum doing the bytes, as import reads them.
#include "root/root_internal.hpp"
#include "util/file.hpp"
#include "util/json.hpp"
#include "util/temp_dir.hpp"

#include <emurun/json.hpp>
#include <emurun/root.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <ctime>
#include <regex>
#include <sys/stat.h>
#include <unistd.h>

namespace emurun {
namespace fs = std::filesystem;
using util::Json;

namespace {

constexpr std::string_view k_manifest_type = "application/vnd.oci.image.manifest.v1+json";
using root_detail::k_oci_index_type;
constexpr std::string_view k_config_type = "application/vnd.oci.image.config.v1+json";
constexpr std::string_view k_layer_gzip = "application/vnd.oci.image.layer.v1.tar+gzip";
constexpr std::string_view k_layer_tar = "application/vnd.oci.image.layer.v1.tar";

/// Where the image is assembled (a layout directory at `layout`) and how.
struct Build {
    const RootExportSpec& spec;
    std::string what;
    fs::path layout;
    bool gzip = true;
    std::string created;
};

/// A blob in the layout: its digest and size.
struct Blob {
    std::string digest;
    std::uint64_t size = 0;
};

/// The tag's repository and tag ("name:latest" when only a name is given). Docker's rule: a
/// lower-case repository path (host[:port]/a/b), a tag of at most 128 word characters.
Result<std::pair<std::string, std::string>> parse_tag(const std::string& text) {
    static const std::regex name(
        R"(^[a-z0-9]+([._-]+[a-z0-9]+)*(:[0-9]+)?(/[a-z0-9]+([._-]+[a-z0-9]+)*)*$)");
    static const std::regex tag(R"(^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$)");
    const auto slash = text.rfind('/');
    const auto colon = text.rfind(':');
    const bool has_tag =
        colon != std::string::npos && (slash == std::string::npos || colon > slash);
    const std::string repo = has_tag ? text.substr(0, colon) : text;
    const std::string t = has_tag ? text.substr(colon + 1) : "latest";
    if (!std::regex_match(repo, name) || !std::regex_match(t, tag)) {
        return fail(ErrorKind::bad_input, "tag the image '" + text + "'",
                    "expected NAME[:TAG]: a lower-case name of letters, digits and . _ - "
                    "separated by /, a tag of at most 128 letters, digits, _ . -",
                    "e.g. myproject/build:arm64", "tag");
    }
    return std::pair{repo, t};
}

/// SOURCE_DATE_EPOCH (reproducible builds) or now, as RFC 3339 in UTC.
Result<std::string> created_time() {
    std::time_t t = std::time(nullptr);
    if (const char* epoch = std::getenv("SOURCE_DATE_EPOCH"); epoch != nullptr && *epoch) {
        char* end = nullptr;
        errno = 0;
        const long long v = std::strtoll(epoch, &end, 10);
        if (errno != 0 || *end != '\0' || v < 0) {
            return fail(ErrorKind::bad_input, "read SOURCE_DATE_EPOCH '" + std::string(epoch) + "'",
                        "it is not a number of seconds since 1970",
                        "unset it, or set it to e.g. $(git log -1 --format=%ct)");
        }
        t = static_cast<std::time_t>(v);
    }
    return root_detail::utc_text(t);
}

/// Move `file` into the layout's blobs under its digest.
Result<Blob> add_blob(const Build& b, const fs::path& file) {
    const std::string digest = EMURUN_TRY(root_detail::sha256_of(file));
    std::error_code ec;
    const auto size = fs::file_size(file, ec);
    const fs::path to = b.layout / "blobs" / "sha256" / digest.substr(7);
    if (ec || ::rename(file.c_str(), to.c_str()) != 0) {
        return std::unexpected(
            system_error("move " + file.string() + " to " + to.string(), ec ? ec.value() : errno));
    }
    return Blob{digest, size};
}

/// A JSON document as a blob.
Result<Blob> add_json_blob(const Build& b, const Json& j, const std::string& name) {
    const fs::path file = b.layout / name;
    EMURUN_TRY(util::write_file_atomic(file, j.dump(), 0644, util::Durability::cache));
    return add_blob(b, file);
}

Json descriptor(std::string_view type, const Blob& blob) {
    return Json{{"mediaType", type}, {"digest", blob.digest}, {"size", blob.size}};
}

/// tar's arguments for the root's tree: dev, proc and sys themselves but not what is in them,
/// everything else but emurun's own top-level files; as root the owners kept, else all 0.
std::vector<std::string> layer_tar_args(const fs::path& root, const fs::path& out) {
    std::vector<std::string> args{"-c", "-f", out.string(), "--numeric-owner", "--sort=name"};
    if (::geteuid() != 0) {
        args.insert(args.end(), {"--owner=0", "--group=0"});
    }
    args.insert(args.end(), {"-C", root.string(), "--no-recursion"});
    std::vector<std::string> whole;
    std::vector<fs::path> entries = root_detail::list_dir(root);
    std::ranges::sort(entries);
    for (const auto& e : entries) {
        const std::string name = e.filename().string();
        std::error_code ec;
        if (name.starts_with(".emurun-")) {
            continue;
        }
        const bool mount_point = (name == "dev" || name == "proc" || name == "sys") &&
                                 fs::is_directory(fs::symlink_status(e, ec));
        (mount_point ? args : whole).push_back(name);
    }
    args.emplace_back("--recursion");
    args.emplace_back("--");
    args.insert(args.end(), whole.begin(), whole.end());
    return args;
}

/// The root's tree as a layer blob (gzip'd for OCI): its blob and its diff_id (the digest of
/// the plain tar).
Result<std::pair<Blob, std::string>> add_layer(const Build& b, const fs::path& root) {
    const fs::path tar = b.layout / "layer.tar";
    EMURUN_TRY(root_detail::run_tool(
        [&] {
            auto args = layer_tar_args(root, tar);
            args.insert(args.begin(), "tar");
            return args;
        }(),
        b.what + ": pack " + root.string()));
    const std::string diff_id = EMURUN_TRY(root_detail::sha256_of(tar));
    if (!b.gzip) {
        const Blob blob = EMURUN_TRY(add_blob(b, tar));
        return std::pair{blob, diff_id};
    }
    EMURUN_TRY(root_detail::run_tool({"gzip", "-n", "-6", "--", tar.string()},
                                     b.what + ": compress the layer of " + root.string()));
    const Blob blob = EMURUN_TRY(add_blob(b, fs::path(tar.string() + ".gz")));
    return std::pair{blob, diff_id};
}

/// The image config's run defaults: an imported root's; where it has no Env, PATH; where it
/// has no Entrypoint or Cmd, `/bin/sh` (when there is one).
Result<Json> run_config(const fs::path& root) {
    const auto image = EMURUN_TRY(read_root_image(root)).value_or(RootImage{});
    Json c = Json::object();
    c["Env"] = image.env;
    if (image.env.empty()) {
        c["Env"] =
            Json::array({"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"});
    }
    for (const auto& [key, value] :
         {std::pair{"WorkingDir", image.working_dir}, std::pair{"User", image.user}}) {
        if (!value.empty()) {
            c[key] = value;
        }
    }
    std::error_code ec;
    if (!image.entrypoint.empty()) {
        c["Entrypoint"] = image.entrypoint;
    }
    if (!image.cmd.empty()) {
        c["Cmd"] = image.cmd;
    } else if (image.entrypoint.empty() && fs::exists(fs::symlink_status(root / "bin/sh", ec))) {
        c["Cmd"] = Json::array({"/bin/sh"});
    }
    return c;
}

/// One root as a manifest of the layout: layer, config, manifest blobs.
Result<RootExportedPlatform> add_root(const Build& b, const fs::path& root, std::size_t n) {
    RootExportedPlatform p;
    p.arch = EMURUN_TRY(root_arch(root));
    std::tie(p.architecture, p.variant) = oci_platform_of(*p.arch);
    const auto [layer, diff_id] = EMURUN_TRY(add_layer(b, root));
    const Json run = EMURUN_TRY(run_config(root));
    Json config{
        {"created", b.created},
        {"architecture", p.architecture},
        {"os", "linux"},
        {"config", run},
        {"rootfs", {{"type", "layers"}, {"diff_ids", Json::array({diff_id})}}},
        {"history", Json::array({Json{{"created", b.created},
                                      {"created_by", "emurun root export " + root.string()}}})}};
    if (!p.variant.empty()) {
        config["variant"] = p.variant;
    }
    const Blob cfg = EMURUN_TRY(add_json_blob(b, config, "config-" + std::to_string(n)));
    const Json manifest{
        {"schemaVersion", 2},
        {"mediaType", k_manifest_type},
        {"config", descriptor(k_config_type, cfg)},
        {"layers", Json::array({descriptor(b.gzip ? k_layer_gzip : k_layer_tar, layer)})}};
    const Blob m = EMURUN_TRY(add_json_blob(b, manifest, "manifest-" + std::to_string(n)));
    p.manifest = m.digest;
    p.layer = layer.digest;
    p.layer_bytes = layer.size;
    return p;
}

Json platform_json(const RootExportedPlatform& p) {
    Json j{{"architecture", p.architecture}, {"os", "linux"}};
    if (!p.variant.empty()) {
        j["variant"] = p.variant;
    }
    return j;
}

/// The manifest's size, read back from its blob.
std::uint64_t blob_size(const Build& b, const std::string& digest) {
    std::error_code ec;
    const auto size = fs::file_size(b.layout / "blobs" / "sha256" / digest.substr(7), ec);
    return ec ? 0 : size;
}

/// index.json (and oci-layout): one platform listed there, several in a nested index, the
/// tag's annotations on the entry index.json lists.
Result<void> write_index(const Build& b, const std::vector<RootExportedPlatform>& platforms) {
    Json manifests = Json::array();
    for (const auto& p : platforms) {
        Json d = descriptor(k_manifest_type, Blob{p.manifest, blob_size(b, p.manifest)});
        d["platform"] = platform_json(p);
        manifests.push_back(d);
    }
    Json entry = manifests.front();
    if (platforms.size() > 1) {
        const Json nested{
            {"schemaVersion", 2}, {"mediaType", k_oci_index_type}, {"manifests", manifests}};
        const Blob blob = EMURUN_TRY(add_json_blob(b, nested, "index-nested"));
        entry = descriptor(k_oci_index_type, blob);
    }
    if (!b.spec.tag.empty()) {
        const auto [repo, tag] = EMURUN_TRY(parse_tag(b.spec.tag));
        entry["annotations"] = {{"org.opencontainers.image.ref.name", tag},
                                {"io.containerd.image.name", repo + ":" + tag}};
    }
    const Json index{
        {"schemaVersion", 2}, {"mediaType", k_oci_index_type}, {"manifests", Json::array({entry})}};
    EMURUN_TRY(util::write_file_atomic(b.layout / "index.json", json_text(index) + "\n", 0644,
                                       util::Durability::cache));
    return util::write_file_atomic(b.layout / "oci-layout",
                                   R"({"imageLayoutVersion": "1.0.0"})"
                                   "\n",
                                   0644, util::Durability::cache);
}

/// manifest.json of a docker archive (docker 25's layout: the blobs are an OCI layout's).
Result<void> write_docker_manifest(const Build& b, const RootExportedPlatform& p) {
    Json tags = Json::array();
    if (!b.spec.tag.empty()) {
        const auto [repo, tag] = EMURUN_TRY(parse_tag(b.spec.tag));
        tags.push_back(repo + ":" + tag);
    }
    const std::string text =
        EMURUN_TRY(util::read_file(b.layout / "blobs/sha256" / p.manifest.substr(7), 1 << 20));
    const auto manifest = EMURUN_TRY(util::parse_json_text(text, "the manifest"));
    const Json entry{
        {"Config", "blobs/sha256/" + manifest["config"]["digest"].get<std::string>().substr(7)},
        {"RepoTags", tags},
        {"Layers", Json::array({"blobs/sha256/" + p.layer.substr(7)})}};
    return util::write_file_atomic(b.layout / "manifest.json",
                                   json_text(Json::array({entry})) + "\n", 0644,
                                   util::Durability::cache);
}

/// The spec's own errors, before anything is written.
Result<void> check_spec(const RootExportSpec& spec, const std::string& what) {
    if (spec.format != "oci" && spec.format != "oci-archive" && spec.format != "docker-archive") {
        return fail(ErrorKind::bad_input, what, "unknown format '" + spec.format + "'",
                    "choose oci, oci-archive or docker-archive", "format");
    }
    if (spec.roots.empty()) {
        return fail(ErrorKind::bad_input, what, "no root given", "name one root or more");
    }
    if (spec.format == "docker-archive" && spec.roots.size() > 1) {
        return fail(ErrorKind::bad_input, what,
                    "a docker archive holds one platform, and " +
                        std::to_string(spec.roots.size()) + " roots were given",
                    "export each root on its own, or all of them as one multi-arch oci image",
                    "format");
    }
    if (!spec.tag.empty()) {
        EMURUN_TRY(parse_tag(spec.tag));
    }
    std::error_code ec;
    if (spec.out.empty() || fs::exists(fs::symlink_status(spec.out, ec))) {
        return fail(ErrorKind::bad_input, what,
                    spec.out.empty() ? "no output path given" : spec.out.string() + " exists",
                    "remove it first, or choose another path");
    }
    return {};
}

/// Every root is one, each of another arch than the others.
Result<void> check_roots(const RootExportSpec& spec, const std::string& what) {
    std::vector<const Arch*> seen;
    for (const auto& root : spec.roots) {
        const Arch* arch = EMURUN_TRY(root_arch(root));
        if (std::ranges::find(seen, arch) != seen.end()) {
            return fail(ErrorKind::bad_input, what,
                        root.string() + " is a second " + arch->name + " root",
                        "an image has one manifest per platform: export them as two images");
        }
        seen.push_back(arch);
    }
    return {};
}

/// The assembled layout put at spec.out: renamed (oci), or tarred beside it and renamed.
Result<void> finish(const Build& b, const fs::path& out) {
    if (b.spec.format != "oci") {
        std::vector<std::string> args{"tar",
                                      "-c",
                                      "-f",
                                      (b.layout / "image.tar").string(),
                                      "--numeric-owner",
                                      "--owner=0",
                                      "--group=0",
                                      "--sort=name",
                                      "-C",
                                      b.layout.string(),
                                      "--",
                                      "blobs",
                                      "index.json",
                                      "oci-layout"};
        if (b.spec.format == "docker-archive") {
            args.emplace_back("manifest.json");
        }
        EMURUN_TRY(root_detail::run_tool(args, b.what + ": write the archive"));
        if (::rename((b.layout / "image.tar").c_str(), out.c_str()) != 0) {
            return std::unexpected(system_error("rename the archive to " + out.string(), errno));
        }
        return {};
    }
    ::chmod(b.layout.c_str(), 0755); // mkdtemp made it 0700
    if (::rename(b.layout.c_str(), out.c_str()) != 0) {
        return std::unexpected(
            system_error("rename " + b.layout.string() + " to " + out.string(), errno));
    }
    return {};
}

} // namespace

Result<RootExported> export_root(const RootExportSpec& spec) {
    root_detail::note_interrupted(0);
    const std::string what = "export " + std::to_string(spec.roots.size()) +
                             (spec.roots.size() == 1 ? " root" : " roots") + " as " +
                             spec.out.string();
    EMURUN_TRY(check_spec(spec, what));
    EMURUN_TRY(check_roots(spec, what));
    std::error_code ec;
    const fs::path out = fs::absolute(spec.out, ec);
    auto work = EMURUN_TRY(util::TempDir::make(
        out.parent_path() / ("." + out.filename().string() + ".emurun-export-")));
    const std::string created = EMURUN_TRY(created_time());
    Build b{spec, what, work.path(), spec.format != "docker-archive", created};
    EMURUN_TRY(root_detail::make_dirs(b.layout / "blobs" / "sha256"));
    RootExported done;
    for (const auto& root : spec.roots) {
        auto platform = EMURUN_TRY(add_root(b, root, done.platforms.size()));
        done.platforms.push_back(std::move(platform));
    }
    EMURUN_TRY(write_index(b, done.platforms));
    if (spec.format == "docker-archive") {
        EMURUN_TRY(write_docker_manifest(b, done.platforms.front()));
    }
    EMURUN_TRY(finish(b, out));
    if (::geteuid() != 0) {
        done.notes.push_back("the files are owned by uid 0 in the image (yours on this host)");
    }
    return done;
}

} // namespace emurun
