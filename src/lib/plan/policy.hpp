// Chooses a codec pipeline for each section: by preset, section kind and element type,
// unless the user forced one pipeline for everything or per group of sections.
#pragma once
#include <map>

#include "sections/section.hpp"

namespace stz {

enum class Preset { Fast, Default, Max };
std::optional<Preset> preset_from_name(const std::string& s);
const char* preset_name(Preset p);

struct CodecChoice {
    Preset preset = Preset::Default;
    int level = 0;  // 0: the preset's own; otherwise the level of the general-purpose stage
    std::string all;                            // one pipeline for every section
    std::map<std::string, std::string> groups;  // group ("kv", "meta", "logits", "zero", "opaque") -> pipeline
    // The K/V sections hold only the new rows of a --patch-from (all layers' in one section,
    // often small): small quant K sections then also try zstd on the quants.
    bool patch_rows = false;
};

// Parses "--codec" text: either a pipeline, or "group=pipeline,group=pipeline".
void parse_codec_option(const std::string& text, CodecChoice& choice);
const char* section_group(SectionKind k);
std::string choose_pipeline(const Section& s, const CodecChoice& c);

}  // namespace stz
