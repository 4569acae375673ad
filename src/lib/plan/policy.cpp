#include "policy.hpp"

#include <algorithm>

#include "base/limits.hpp"
#include "codecs/pipeline.hpp"

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

namespace {
// The writer refuses a pipeline the reader would reject; say so before the first file.
void check_storable(const std::vector<Pipeline>& alternatives) {
    for (const Pipeline& p : alternatives) check_pipeline_storable(p.stages.size());
}
}  // namespace

void parse_codec_option(const std::string& text, CodecChoice& choice) {
    // "group=pipeline,..." has an '=' before any '(' (planes(top=...) is a pipeline).
    const size_t first_eq = text.find('='), first_paren = text.find('(');
    if (first_eq == std::string::npos || (first_paren != std::string::npos && first_paren < first_eq)) {
        check_storable(parse_alternatives(text, DataShape{}));  // names, arguments, stage count: now, not mid-file
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
        check_storable(parse_alternatives(pipe, DataShape{}));
        choice.groups[group] = pipe;
    }
}

// K/V (and recurrent-state) sections, by preset and element type. Measured on the real
// corpus (bench/RESULTS.md; study: ../shared/docs/studies/entropy-coders.md):
//  fast     byte planes in storage order, each coded on its own: the sign/exponent plane by
//           zstd -1 (f16) or order-0 rANS (bf16, f32), quant planes by lzrans (zstd -1 where
//           a plane repeats, else order-0 rANS; the scale's high byte by order-0 rANS); the
//           near-random low bytes of floats stored. Smaller than zstd -19.
//  default  channel-major byte planes; only the sign/exponent byte (and quant scale high byte,
//           quants of 4-bit blocks) is entropy coded, by static order-1 rANS; the near-random
//           mantissa bytes are stored (bitpack: only their varying bits, so the low bits
//           that a lossy mode zeroed cost nothing; on exact data it stores). V rows repeat
//           (layer 0): dedup first; float V's top plane then by order-0 rANS in storage order
//           (f16's by zstd -1), f16's mantissa byte too (quant V planes by zstd -1 where they
//           repeat, else order-0 rANS: lzrans).
//  max      per chunk the smallest of chanctx, byte planes + lzma -9e and the default's graph.
constexpr uint64_t kSmallQuantKBytes = 64 << 10;

// What goes before every K/V graph: trim, then one copy of each group of repeated heads
// (head_repeats.hpp; after trim, whose trimmed rows the probe measured the segments in), and
// for V the dedup of repeated rows or cells. K rows carry their position (RoPE) and never
// repeat: no dedup there. V cells repeat (layer 0 depends only on the token; shared prompts in
// every layer): rows of row-major V, columns of transposed V (celldedup: 14 % of the corpus's
// transposed V bytes).
struct KvPrefix {
    std::string trim, dedup;
};
static KvPrefix kv_prefix(const Section& s) {
    const std::string heads = s.repeat_group ? "headdup:" + std::to_string(s.repeat_seg) + ":" +
                                                   std::to_string(s.repeat_group) + "+"
                                             : "";
    const bool value = s.kind == SectionKind::KvValue;
    return {(s.shape().keep_bytes ? "trim+" : "") + heads, !value ? "" : s.transposed ? "celldedup+" : "dedup+"};
}

// Fast, the sign/exponent plane (of quant blocks the scale's high byte) by order-0 rANS, of
// f16 by zstd -1 (its top byte holds two mantissa bits: rANS there was 0.1 % larger and
// decoded 5-9 % slower over the corpus's f16 files). Small planes too: rANS once set up its
// tables per plane at a cost above zstd -1's (a size threshold of 64 KB kept small planes on
// zstd -1), no longer (the corpus folder in-process, three runs each, 64 KB threshold ->
// none: compression 1.32-1.35x -> 1.48-1.50x zstd:3's speed, decompression 1.53-1.59x ->
// 1.55-1.63x, 0.06 % smaller; bf16 and f32 files compress 1.9-2.5x faster, decompress
// 1.13-1.33x; quant files compress 3-19 % faster, decompress within noise). The quants and
// the scale's low byte by lzrans: zstd -1 where a plane repeats (V rows of a conversation),
// order-0 rANS elsewhere (the corpus folder: decompression 7-11 % faster, compression 3-4 %
// slower, 0.04 % larger; its 22 quantised files decompress 11-20 % faster); the near-random low
// bytes of floats by bitpack.
static std::string fast_kv_graph(const Section& s, bool block) {
    const std::string top = s.type == ElemType::F16 ? "zstd:1" : "rans:0";
    return block ? "planes:rm(hi=" + top + ",rest=lzrans:1)" : "planes:rm(top=" + top + ",rest=bitpack)";
}

// Max: per chunk the smallest of a context model (chanctx; qctx for quant K), lzma -9e on the
// fields or shuffled bytes, and the default's `graph`.
static std::string max_kv_alternatives(const Section& s, const std::string& trim, bool block, bool value,
                                       const std::string& graph) {
    if (block && !value) {
        // Quant K: both alternatives know records, so the small layers are still gathered (lzma
        // on the fields was never the smallest on the corpus's quant K once qctx was there).
        return trim + "qctx|" + trim + "planes(top=rans:1,q=lzma:9e,rest=zstd:3)";
    }
    const std::string model = value ? trim + (s.transposed ? "" : "dedup+") + "chanctx" : trim + "chanctx:nomatch";
    return model + "|" + trim + (block ? "fields" : "shuffle") + "+lzma:9e|" + graph;
}

static std::string kv_pipeline(const Section& s, Preset p, bool patch_rows) {
    const bool block = elem_type_info(s.type).kind == ElemKind::Block;
    const bool value = s.kind == SectionKind::KvValue;
    const auto [trim, dedup] = kv_prefix(s);
    if (p == Preset::Fast) return trim + dedup + fast_kv_graph(s, block);
    std::string graph;
    // Quant blocks: K by qctx, every field of the block (scale, min, the quants with their q5
    // high bits) by an adaptive model, the quants in a model per channel where the chunk's counts
    // say it pays (the quants of a trained model depend on their channel: on the corpus's
    // stories260K-hd32 files K is 16-30 % smaller than planes(top=rans:1,q=rans:1,rest=zstd:3)
    // for every block type; the random-weight model's K within 0.4 % of it); V in storage
    // order, each plane by zstd -1 where it repeats (a conversation's V rows: zstd's matches;
    // order-0 rANS on every plane lost 1-4 % on the trained hd32 files), else by order-0 rANS
    // (lzrans; its two-half kernel decodes a near-random plane faster than zstd's Huffman
    // literals: the corpus's random-weight q8_0 files decompress 9-18 % faster, and the 22
    // quantised files 8-11 %, for 0.06 % more bytes than zstd -1 on every plane). zstd -1, not
    // -3: on the 26 quantised-type files of the corpus folders 20,581,507 bytes against
    // 20,580,007 (+0.007 %), and their compression 0.80x -> 0.86x in-process zstd:3's speed
    // (most of it on the near-random V of the random-weight model, where -3 searched for
    // matches that are not there).
    // The default's quant K does not take the model per channel (qctx:planes: rANS planes):
    // on the corpus that model saved 0.2 % of the folder's bytes (3-7 % of the trained hd32
    // files' output, each still smaller than xz -9) for 5-7x the time of the rest of the file
    // both ways. 5-bit blocks too, since qctx codes their values whole in a plane (mode 3: a
    // value's high bit lies apart from its nibble, in qh, where byte planes cannot relate
    // them): hd32 q5_0 77,306 bytes against the model's 75,071 and xz -9's 87,656, decoded
    // 7-8x faster (in-process zstd:3's speed 0.06x -> 0.45-0.50x). Max keeps the model for all.
    if (block && value) graph = p == Preset::Default ? "planes:rm(all=lzrans:1)" : "planes:rm(all=zstd:3)";
    else if (block) graph = p == Preset::Default ? "qctx:planes" : "qctx";
    else if (!value) graph = "planes(top=rans:1,rest=bitpack)";
    // V floats in storage order: as small as channel-major (f16 0.35 % smaller) and no transpose.
    // The default codes them without zstd -3: after dedup, zstd -3's matches on V were worth
    // 0.16 % of the corpus folder (ratio 1.2757 -> 1.2736; f16 files +0.20 %, bf16 +0.09 %,
    // f32 +0.27 %) and cost about what the whole zstd:3 baseline costs on those bytes. The
    // sign/exponent plane by order-0 rANS (rans:1's estimate chose order-0 on nearly every V
    // chunk, 0.01 % smaller). The mantissa bytes by order-0 rANS too (it stores them when
    // near-random), not bitpack: after dedup/celldedup the reference list lies inside the
    // planes' rows and bitpack then sees every bit vary (f16 --lossy drop:V=6 saved 3 % instead
    // of >= 15 %; f32 --lossy f16-exact on raw-s260k-multi4-kvu-f32-fa1 709,949 bytes with
    // bitpack, 622,189 with rans:0, lossless 0.1 % larger than bitpack).
    // Compression Ir of the whole file as a multiple of zstd:3's (callgrind, -T1), before ->
    // after: raw-s260k-n4000 f32 0.94x -> 1.32x, legacy np294 f32 0.92x -> 1.45x, s260k-n1024
    // bf16 0.65x -> 0.79x, rnd1024-n1024 f16 0.87x -> 1.11x (bench/PROFILE.md). Max keeps the
    // zstd graph as its third alternative.
    // f16's top byte (sign, exponent and two mantissa bits) by zstd -1 instead, as in fast: its
    // Huffman literals and few matches are as small and decode faster (the corpus's float files,
    // three runs each: 0.11 % smaller, decompression 3-6 % faster, compression the same;
    // corpus-legacy and v040's floats 0.07 % smaller, decompression 8-9 % faster; no file more
    // than 0.21 % larger).
    else if (p == Preset::Default)
        graph = s.type == ElemType::F16 ? "planes:rm(top=zstd:1,rest=rans:0)" : "planes:rm(all=rans:0)";
    else graph = s.type == ElemType::F16 ? "planes:rm(all=zstd:3)" : "planes:rm(top=rans:1,rest=zstd:3)";
    // The new quant K rows of a patch, when few: order-1 tables may not pay there and zstd's
    // matches may; each chunk keeps the smaller (srv-conv10 q8_0 patch: 95,040 -> 94,276
    // bytes). Not in whole files, whose small layers are gathered: trying both cost 34 % more
    // time on the hd32 q8_0 files for no byte saved.
    if (patch_rows && block && !value && s.size < kSmallQuantKBytes)
        graph += "|" + trim + "planes(top=rans:1,q=zstd:6,rest=zstd:3)";
    graph = trim + dedup + graph;
    if (p == Preset::Default) return graph;
    return max_kv_alternatives(s, trim, block, value, graph);
}

// Cell lists (records of int32 fields: position, sequence count, sequence ids) through
// deltarun, which turns the arithmetic runs of cells into a few counts (corpus, bench/META.md:
// cells 71 KB -> 2 KB in the default, below xz -9e on every file). Token lists (int32 ids,
// repeated in phrases) through lzp in the default and max: 39.5 KB on the corpus's 62 lists
// against xz -9e's 50.1 KB, in 2.2 ms against lzma -1's 5.6 (bench/META.md); fast keeps
// deltarun (ids narrowed to their bytes in use) and zstd -3, which decodes 6x faster.
static std::string cells_pipeline(Preset p, int level) {
    if (level) return "deltarun+zstd:" + std::to_string(level);
    if (p == Preset::Fast) return "deltarun+zstd:3";
    if (p == Preset::Default) return "deltarun|deltarun+zstd:19";
    return "deltarun|deltarun+zstd:19|deltarun+lzma:9e";
}
static std::string tokens_pipeline(Preset p, int level) {
    if (level) return "deltarun:0+zstd:" + std::to_string(level);
    if (p == Preset::Fast) return "deltarun:0+zstd:3";
    if (p == Preset::Default) return "lzp";
    return "lzp|deltarun:0+lzma:9e:lc0lp1pb1|lzma:9e|deltarun:0";
}

// A level (-1 .. -19) sets the general-purpose stage; levels 1-5 also pick the fast K/V path.
std::string choose_pipeline(const Section& s, const CodecChoice& c) {
    if (auto it = c.groups.find(section_group(s.kind)); it != c.groups.end()) return it->second;
    if (!c.all.empty()) return c.all;
    Preset p = c.preset;
    if (c.level && p == Preset::Default && c.level <= 5) p = Preset::Fast;
    const std::string lvl = std::to_string(c.level);
    const std::string general = c.level ? "zstd:" + lvl : p == Preset::Fast ? "zstd:1" : p == Preset::Max ? "lzma:9e" : "zstd:3";
    // Metadata (cells, tokens, headers): zstd -9 in the default is within 0.01 % of -19 on the
    // corpus at twice the speed of the whole file.
    const std::string meta = c.level ? "zstd:" + lvl : p == Preset::Fast ? "zstd:3" : p == Preset::Max ? "lzma:9e" : "zstd:9";
    const auto& t = elem_type_info(s.type);
    const bool typed = t.kind != ElemKind::Bytes;
    switch (s.kind) {
        case SectionKind::Slack: return "trim+" + general;
        case SectionKind::Opaque: return general;
        case SectionKind::Logits: case SectionKind::Embeddings:
            if (p == Preset::Fast) return "planes:rm(all=zstd:1)";
            if (p == Preset::Default) return "planes:rm(top=rans:1,rest=store)|shuffle+" + meta;
            return "chanctx|shuffle+" + meta + "|planes:rm(top=rans:1,rest=store)";
        case SectionKind::KvKey: case SectionKind::KvValue: case SectionKind::RecState:
            if (!typed) return (s.shape().keep_bytes ? "trim+" : "") + general;
            return kv_pipeline(s, p, c.patch_rows);
        case SectionKind::Cells: return cells_pipeline(p, c.level);
        case SectionKind::Tokens: return tokens_pipeline(p, c.level);
        default: return meta;
    }
}

}  // namespace stz
