// The compression options a preset stands for: one function for the CLI and the C API, so that
// `statezip --max` and stz_compress with STZ_PRESET_MAX write the same bytes.
#pragma once
#include "engine.hpp"

namespace stz {

inline constexpr uint32_t kDefaultChunkBytes = 4u << 20;

// `level` 0 keeps the preset's own levels; `codec` (empty = none) is --codec text and is
// checked here (stz::Error when it names an unknown codec or a pipeline the reader refuses).
CompressOptions preset_options(Preset preset, int level = 0, const std::string& codec = {});

}  // namespace stz
