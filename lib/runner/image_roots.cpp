// Image roots of a run: a pipeline step's "root" naming a container image gets a root of the
// run's own, imported once per image and platform (the root module caches the import) and
// removed when the run ends.
#include "runner/runner_internal.hpp"

#include <emurun/diagnostics.hpp>
#include <emurun/root.hpp>

#include <chrono>
#include <csignal>
#include <tuple>

namespace emurun::detail {
namespace fs = std::filesystem;

namespace {

/// The platform a step takes from its image: its "#PLATFORM", else its arch, else none.
Result<void> image_platform(const Step& step, ImageRootSpec& spec) {
    if (step.root_platform) {
        const auto p = EMURUN_TRY(parse_oci_platform(*step.root_platform));
        spec.arch = p.arch;
        spec.variant = p.variant;
    } else if (step.arch) {
        spec.arch = EMURUN_TRY(find_arch(*step.arch));
    }
    return {};
}

std::string describe(const ImageRoot& root, const fs::path& source, double seconds) {
    std::string text = source.string() + " (" + (root.arch ? root.arch->name : "?") + "): ";
    text += root.from_cache ? "copied from the imported image" : "imported, then copied";
    text += " into a fresh root in " + format_seconds(seconds);
    for (const auto& note : root.notes) {
        text += "; " + note;
    }
    return text;
}

} // namespace

ImageRoots::~ImageRoots() {
    for (const auto& root : made) {
        remove_image_root(root);
    }
}

Result<void> prepare_image_roots(Pipeline& pipeline, ImageRoots& roots,
                                 const DiagnosticSink& diagnostics) {
    std::map<std::tuple<fs::path, const Arch*, std::string>, fs::path> fresh;
    std::map<std::tuple<fs::path, const Arch*, std::string>, Error> broken;
    for (auto& step : pipeline.steps) {
        if (step.emulation != Emulation::root || !step.root ||
            (!step.root_platform && !is_root_image(*step.root))) {
            continue;
        }
        const std::string what = "step \"" + step.name + "\": root " + step.root->string();
        ImageRootSpec spec;
        spec.source = *step.root;
        if (auto r = image_platform(step, spec); !r) {
            return std::unexpected(Error{what + ": " + r.error().what, r.error().why,
                                         r.error().hint, r.error().kind, "root"});
        }
        const auto key = std::make_tuple(spec.source, spec.arch, spec.variant);
        if (auto it = fresh.find(key); it != fresh.end()) {
            step.root = it->second;
            continue;
        }
        if (auto it = broken.find(key); it != broken.end()) {
            roots.failed.emplace(step.name, it->second);
            continue;
        }
        const auto began = std::chrono::steady_clock::now();
        auto made = make_image_root(spec);
        if (!made && root_interrupted_by() != 0) {
            // Raised again (blocked during a run, so pending): the run takes it before its
            // first step, so the reports say it was interrupted and nothing ran (128 + N).
            emit(diagnostics, Severity::info, what + ": " + made.error().message());
            ::raise(root_interrupted_by());
            return {};
        }
        if (!made) { // the steps that name the image fail with why; the run goes on
            Error e = made.error();
            e.what = "root " + step.root->string() +
                     (step.root_platform ? "#" + *step.root_platform : std::string()) + ": " +
                     e.what;
            broken.emplace(key, e);
            roots.failed.emplace(step.name, std::move(e));
            continue;
        }
        const std::chrono::duration<double> took = std::chrono::steady_clock::now() - began;
        emit(diagnostics, Severity::info, what + ": " + describe(*made, spec.source, took.count()));
        fresh[key] = made->dir;
        roots.images[made->dir] = ImageRecord{
            step.root->string() + (step.root_platform ? "#" + *step.root_platform : std::string()),
            oci_platform_text(made->image), made->image.digest};
        step.root = made->dir;
        roots.made.push_back(std::move(*made));
    }
    return {};
}

std::string name_image_roots(std::string text, const ImageRoots& roots) {
    for (const auto& [dir, image] : roots.images) {
        const std::string path = dir.string();
        const std::string name = image.reference + " (this run's root from it)";
        for (auto at = text.find(path); at != std::string::npos;
             at = text.find(path, at + name.size())) {
            text.replace(at, path.size(), name);
        }
    }
    return text;
}

} // namespace emurun::detail
