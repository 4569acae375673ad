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
    // "group=pipeline,..." has an '=' before any '(' (planes(top=...) is a pipeline).
    const size_t first_eq = text.find('='), first_paren = text.find('(');
    if (first_eq == std::string::npos || (first_paren != std::string::npos && first_paren < first_eq)) {
        parse_alternatives(text, DataShape{});  // validates names and arguments now, not mid-file
        choice.all = text;
        return;
    }
    for (const std::string& item : split_top_level(text, ',')) {
        size_t eq = item.find('=');
        if (eq == std::string::npos) throw Error("--codec: expected group=pipeline, got '" + item + "'");
        std::string group = item.substr(0, eq), pipe = item.substr(eq + 1);
        static const std::string groups[] = {"kv", "meta", "logits", "zero", "opaque"};
        if (std::find(std::begin(groups), std::end(groups), group) == std::end(groups))
            throw Error("--codec: unknown group '" + group + "' (kv, meta, logits, zero, opaque)");
        parse_alternatives(pipe, DataShape{});
        choice.groups[group] = pipe;
    }
}

// Presets, measured on the real corpus (bench/RESULTS.md):
//  fast     (V: repeated rows removed) byte planes + zstd -1: zstd-like speed, about zstd -19's size.
//  default  repeated rows removed, then the adaptive channel-context model (chanctx).
//  max      per chunk the smaller of chanctx and byte planes + lzma -9e.
// A level (-1 .. -19) sets the general-purpose stage; levels 1-5 also pick the fast K/V path.
std::string choose_pipeline(const Section& s, const CodecChoice& c) {
    if (auto it = c.groups.find(section_group(s.kind)); it != c.groups.end()) return it->second;
    if (!c.all.empty()) return c.all;
    Preset p = c.preset;
    if (c.level && p == Preset::Default && c.level <= 5) p = Preset::Fast;
    const std::string lvl = std::to_string(c.level);
    const std::string general = c.level ? "zstd:" + lvl : p == Preset::Fast ? "zstd:1" : p == Preset::Max ? "lzma:9e" : "zstd:3";
    const std::string meta = c.level ? "zstd:" + lvl : p == Preset::Fast ? "zstd:3" : p == Preset::Max ? "lzma:9e" : "zstd:19";
    const auto& t = elem_type_info(s.type);
    const bool typed = t.kind != ElemKind::Bytes;
    switch (s.kind) {
        case SectionKind::Slack: return "trim+" + general;
        case SectionKind::Opaque: return general;
        case SectionKind::Logits: case SectionKind::Embeddings:
            return p == Preset::Fast ? "shuffle+zstd:1" : "chanctx|shuffle+" + meta;
        case SectionKind::KvKey: case SectionKind::KvValue: case SectionKind::RecState: {
            std::string trim = s.shape().keep_bytes ? "trim+" : "";
            if (!typed) return trim + general;
            std::string split = t.kind == ElemKind::Block ? "fields" : "shuffle";
            // Fast: byte planes for floats (blocks compress better whole with zstd); repeated
            // V rows removed first (cheap, and layer-0 V rows repeat with their tokens).
            std::string dedup = s.kind == SectionKind::KvValue && !s.transposed ? "dedup+" : "";
            if (p == Preset::Fast) return trim + dedup + (t.kind == ElemKind::Block ? "" : "shuffle+") + "zstd:1";
            // K rows carry their position (RoPE) and never repeat: no dedup, no match model there.
            std::string model = s.kind == SectionKind::KvKey ? trim + "chanctx:nomatch"
                                                             : trim + (s.transposed ? "" : "dedup+") + "chanctx";
            if (p == Preset::Max) return model + "|" + trim + split + "+lzma:9e";
            return model;
        }
        default: return meta;
    }
}

}  // namespace stz
