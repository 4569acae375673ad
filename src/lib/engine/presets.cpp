#include "presets.hpp"

namespace stz {

CompressOptions preset_options(Preset preset, int level, const std::string& codec) {
    CompressOptions o;
    o.codec.preset = preset;
    o.codec.level = level;
    if (!codec.empty()) parse_codec_option(codec, o.codec);  // refuses what cannot be stored
    o.chunk_bytes = kDefaultChunkBytes;
    return o;
}

}  // namespace stz
