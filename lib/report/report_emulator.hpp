// Private: the emulator and image records of a step in the report's JSON.
#pragma once

#include "util/json.hpp"

#include <emurun/report.hpp>

namespace emurun::detail {

/// {"path", "version", "cpu", "cpu_default"}, or null.
util::Json emulator_json(const std::optional<EmulatorRecord>& emulator);
/// The step's "emulator" member; absent or null gives nullopt. Errors name the place.
Result<std::optional<EmulatorRecord>> emulator_from(const util::Json& step, const util::Place& at);

/// {"reference", "platform", "digest"}, or null.
util::Json image_json(const std::optional<ImageRecord>& image);
/// The step's "image" member; absent or null gives nullopt. Errors name the place.
Result<std::optional<ImageRecord>> image_from(const util::Json& step, const util::Place& at);
/// "app.tar#arm64 (linux/arm64, sha256:1a2b3c4d5e6f)", or "(no image)".
std::string describe_image(const std::optional<ImageRecord>& image);

} // namespace emurun::detail
