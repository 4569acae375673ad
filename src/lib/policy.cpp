#include "policy.hpp"

#include <algorithm>

#include "pipeline.hpp"

namespace stz {

std::optional<Preset> preset_from_name(const std::string& s) {
    if (s == "fast") return Preset::Fast;
    if (s == "default") return Preset::Default;
    if (s == "max") return Preset::Max;
    return std::nullopt;
}

const char* preset_name(Preset p) { return p == Preset::Fast ? "fast" : p == Preset::Max ? "max" : "default"; }

const char* section_group(SectionKind k) {
    switch (k) {
        case SectionKind::KvKey: case SectionKind::KvValue: case SectionKind::RecState: return "kv";
        case SectionKind::Logits: case SectionKind::Embeddings: return "logits";
        case SectionKind::Slack: return "zero";
        case SectionKind::Opaque: return "opaque";
        default: return "meta";
    }
}

void parse_codec_option(const std::string& text, CodecChoice& choice) {
    if (text.find('=') == std::string::npos) {
        parse_pipeline(text, DataShape{});  // validates names and arguments now, not mid-file
        choice.all = text;
        return;
    }
    size_t start = 0;
    while (start <= text.size()) {
        size_t comma = text.find(',', start);
        std::string item = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
        size_t eq = item.find('=');
        if (eq == std::string::npos) throw Error("--codec: expected group=pipeline, got '" + item + "'");
        std::string group = item.substr(0, eq), pipe = item.substr(eq + 1);
        static const std::string groups[] = {"kv", "meta", "logits", "zero", "opaque"};
        if (std::find(std::begin(groups), std::end(groups), group) == std::end(groups))
            throw Error("--codec: unknown group '" + group + "' (kv, meta, logits, zero, opaque)");
        parse_pipeline(pipe, DataShape{});
        choice.groups[group] = pipe;
        if (comma == std::string::npos) break;
        start = comma + 1;
    }
}

static std::string entropy_stage(Preset p, int level) {
    if (level) return "zstd:" + std::to_string(level);
    switch (p) {
        case Preset::Fast: return "zstd:1";
        case Preset::Max: return "lzma:9e";
        default: return "zstd:3";
    }
}

std::string choose_pipeline(const Section& s, const CodecChoice& c) {
    if (auto it = c.groups.find(section_group(s.kind)); it != c.groups.end()) return it->second;
    if (!c.all.empty()) return c.all;
    const std::string ent = entropy_stage(c.preset, c.level);
    const std::string meta = c.preset == Preset::Fast ? "zstd:3" : c.preset == Preset::Max ? "lzma:9e" : "zstd:19";
    const auto& t = elem_type_info(s.type);
    switch (s.kind) {
        case SectionKind::Slack: return "trim+" + ent;
        case SectionKind::Opaque: return ent;
        case SectionKind::Logits: case SectionKind::Embeddings: return "shuffle+" + ent;
        case SectionKind::KvKey: case SectionKind::KvValue: case SectionKind::RecState: {
            std::string trim = s.shape().keep_bytes ? "trim+" : "";
            if (t.kind == ElemKind::Block) return trim + "fields+" + ent;
            if (t.kind == ElemKind::Bytes) return trim + ent;
            return trim + "shuffle+" + ent;
        }
        default: return meta;
    }
}

}  // namespace stz
