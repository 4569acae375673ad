#include "fuzz_entry.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>

#include "engine/engine.hpp"
#include "related/patch.hpp"
#include "rebuild/patch_map.hpp"
#include "codecs/pipeline.hpp"
#include "rebuild/token_model.hpp"
#include "zstd.h"

namespace stzfuzz {

using namespace stz;

namespace {
struct CountingNull final : OutputSink {
    uint64_t bytes = 0;
    void write(const uint8_t*, size_t n) override { bytes += n; }
};
}  // namespace

void parse(const uint8_t* data, size_t size) {
    MemorySource src({data, size});
    for (int hinted = 0; hinted < 2; ++hinted) {
        ParseHints h;
        if (hinted) h.n_layer = 2, h.n_ctx = 64, h.n_embd = 8;
        ParsedFile pf = parse_state_file(src, h);
        check_tiling(pf.sections, size);  // throws (uncaught: a finding) if they do not tile
    }
}

void container(const uint8_t* data, size_t size) {
    try {
        MemoryStream s({data, size});
        NullSink sink;
        decompress_stream(s, sink, 1);
    } catch (const Error&) {
    }
    try {
        MemorySource src({data, size});
        (void)list_container(src);
    } catch (const Error&) {
    }
}

// Every sample spec of every registered codec (the registry is the one list).
static const std::vector<std::string>& sample_specs() {
    static const std::vector<std::string> specs = [] {
        std::vector<std::string> v;
        for (const Codec* c : all_codecs())
            for (auto& s : c->sample_specs()) v.push_back(s);
        return v;
    }();
    return specs;
}

// A decoder given arbitrary parameter bytes and an arbitrary payload: if check_params
// accepts the parameters, decode must throw or append exactly the declared size; if it
// refuses them, decode must refuse them too (no silent defaults).
static void decode_with_arbitrary_params(const uint8_t* data, size_t size) {
    const auto codecs = all_codecs();
    const Codec* c = codecs[data[0] % codecs.size()];
    const size_t n_params = std::min<size_t>(data[1] % 48, size - 4);
    const ByteSpan params(data + 4, n_params);
    const size_t declared = (size_t(data[2]) << 8 | data[3]) * 4;  // up to 256 KiB
    const ByteSpan payload(data + 4 + n_params, size - 4 - n_params);
    bool valid = true;
    try {
        c->check_params(params);
        (void)c->max_decoded_size(params, payload.size());
    } catch (const Error&) {
        valid = false;
    }
    Bytes out(3, 0xAB);  // decode appends: what is already there must stay
    try {
        c->decode(payload, params, declared, out);
    } catch (const Error&) {
        return;
    }
    if (!valid || out.size() != 3 + declared || out[0] != 0xAB) std::abort();
}

void codecs(const uint8_t* data, size_t size) {
    if (size < 4) return;
    decode_with_arbitrary_params(data, size);
    const auto& specs = sample_specs();
    DataShape shapes[4];
    shapes[1].kind = ElemKind::F16, shapes[1].elem_bytes = 2, shapes[1].row_bytes = 16, shapes[1].keep_bytes = 6;
    shapes[2].kind = ElemKind::Block, shapes[2].elem_bytes = 34, shapes[2].block_head = 2, shapes[2].row_bytes = 68;
    shapes[3] = shapes[1], shapes[3].transposed = true, shapes[3].kind = ElemKind::BF16;
    const Pipeline p = parse_pipeline(specs[data[0] % specs.size()], shapes[data[1] % 4]);
    const size_t declared = (size_t(data[2]) << 8 | data[3]) * 4;  // up to 256 KiB
    ByteSpan payload(data + 4, size - 4);
    // 1. decoding an arbitrary payload must throw or produce exactly the declared size; into
    //    a caller's memory it must do the same, with the same bytes and none past them
    const std::vector<uint64_t> sizes(p.stages.size(), declared);
    Bytes out;
    bool decoded = false;
    try {
        out = decode_pipeline(p, payload, sizes);
        if (out.size() != declared) std::abort();
        decoded = true;
    } catch (const Error&) {
    }
    Bytes into(declared + 16, 0xee);
    bool decoded_into = false;
    try {
        decode_pipeline_into(p, payload, sizes, into.data(), declared);
        decoded_into = true;
    } catch (const Error&) {
    }
    if (decoded != decoded_into || (decoded && !std::equal(out.begin(), out.end(), into.begin()))) std::abort();
    for (size_t i = declared; i < into.size(); ++i)
        if (into[i] != 0xee) std::abort();
    // 2. encoding then decoding the payload must give it back exactly, within the sizes the
    //    codec declares (the reader rejects a stage outside them)
    EncodedChunk e = encode_pipeline(p, payload);
    const Codec& c = *p.stages[0].codec;
    if (e.payload.size() > c.max_encoded_size(payload.size()) ||
        payload.size() > c.max_decoded_size(p.stages[0].params, e.payload.size()))
        std::abort();
    if (decode_pipeline(p, e.payload, e.stage_input_sizes) != Bytes(payload.begin(), payload.end())) std::abort();
}

// The reference of the patch target: 4 KiB of fixed pseudo-random bytes with two cell
// layouts whose cells repeat (so token keys repeat): 10 rows of 8 bytes at 64 (period 3), and
// 32 channel rows of 40 two-byte cells at 1024 (transposed, period 5).
const Bytes& patch_reference() {
    static const Bytes ref = [] {
        Bytes b(4096);
        uint64_t x = 0x9E3779B97F4A7C15ull;
        for (auto& v : b) {
            x = x * 6364136223846793005ull + 1442695040888963407ull;
            v = static_cast<uint8_t>(x >> 56);
        }
        for (int c = 3; c < 10; ++c) std::memcpy(b.data() + 64 + 8 * c, b.data() + 64 + 8 * (c % 3), 8);
        for (int ch = 0; ch < 32; ++ch)
            for (int c = 5; c < 40; ++c) std::memcpy(b.data() + 1024 + ch * 80 + 2 * c, b.data() + 1024 + ch * 80 + 2 * (c % 5), 2);
        return b;
    }();
    return ref;
}

namespace {

// The stored stream a fuzzed map may take (filler bytes): bounds what one input can cost.
constexpr uint64_t kPatchFuzzStream = 1u << 20;

// The head of a stored stream holding `content` (no dictionary), as patch.cpp encode_head.
Bytes patch_head(const uint8_t* content, size_t size) {
    Bytes head(1 + ZSTD_compressBound(size), 0);  // varint 0: no dictionary
    const size_t n = ZSTD_compress(head.data() + 1, head.size() - 1, content, size, 1);
    if (ZSTD_isError(n)) std::abort();
    head.resize(1 + n);
    return head;
}

// PatchSink (the decoder -d and -t run) over the map as a real file would hold it: REF's
// identity, patched_size, the head, then `stream` filler bytes of new rows.
void patch_sink(const uint8_t* data, size_t size, const PatchMap& m, uint64_t stream) {
    MemorySource ref(patch_reference());
    const Bytes head = patch_head(data, size);
    ContainerHeader h;
    h.original_size = head.size() + stream;
    Section s;
    s.name = kPatchMapSection;
    s.size = head.size();
    h.sections.push_back(s);
    h.set_property(kReferenceProperty, identify_reference(ref, "ref").value(), true);
    h.set_property(kPatchedSizeProperty, std::to_string(m.original_size), false);
    CountingNull out;
    try {
        PatchSink sink(h, &ref, out);
        sink.write(head.data(), head.size());
        const Bytes filler(static_cast<size_t>(std::min<uint64_t>(stream, 64u << 10)), 0x5a);
        for (uint64_t done = 0; done < stream;) {
            const size_t k = static_cast<size_t>(std::min<uint64_t>(filler.size(), stream - done));
            sink.write(filler.data(), k);
            done += k;
        }
        sink.finish();
        if (sink.bytes_out() != m.original_size || out.bytes != m.original_size) std::abort();
    } catch (const Error&) {
    }
}

}  // namespace

void patch(const uint8_t* data, size_t size) {
    MemorySource ref(patch_reference());
    try {
        Bytes meta;
        PatchSources src;
        // The bound PatchSink applies to a stored stream of at most kPatchFuzzStream + the head.
        const PatchMap m = decode_patch_content({data, size}, ref, meta, 0,
                                                max_patch_original(ref.size(), kPatchFuzzStream + size + 64), &src);
        if (src.from_ref > kMaxRefCopyFactor * ref.size() || src.from_meta != meta.size()) std::abort();
        if (src.from_stream > kPatchFuzzStream) return;  // the size of a real stream: not made up here
        // Every segment is at least one byte of what the map takes: the walk is bounded.
        PatchWalker w(m);
        uint64_t total = 0;
        while (auto s = w.next()) total += s->length;
        if (total != m.original_size || total != src.from_ref + src.from_stream + src.from_meta) std::abort();
        patch_sink(data, size, m, src.from_stream);
    } catch (const Error&) {
    }
}

namespace {

// A map over patch_reference() and its meta bytes; `tokens`: a token model on group 0.
Bytes patch_seed(bool transposed, bool in_meta, bool tokens) {
    MemorySource ref(patch_reference());
    PatchMap m;
    PatchGroup g;
    Bytes meta(12, 7);
    if (transposed) {
        m.ref_groups.push_back({40, {{1024, 80}}});
        g.n_cells = 40;
        g.parts.push_back({32, 2, true, 0, in_meta});
        g.runs = {{20, 0u, 0}, {5, std::nullopt, 0}, {15, 0u, 25}};
    } else {
        m.ref_groups.push_back({10, {{64, 8}}});
        g.n_cells = 10;
        g.parts.push_back({1, 8, false, 0, in_meta});
        g.runs = {{8, 0u, 0}, {2, std::nullopt, 0}};
    }
    m.groups.push_back(g);
    const uint64_t part = g.parts[0].channels * g.n_cells * g.parts[0].piece_bytes;
    const uint64_t n_tokens = transposed ? 44 : 12, new_cells = transposed ? 5 : 2;
    m.regions.push_back({RegionKind::Stream, 12});
    m.regions.push_back({RegionKind::Tokens, 4 * n_tokens, 0, 0, 3000, 8});  // 2 tokens from REF
    m.regions.push_back({RegionKind::Part, part, 0, 0});
    m.original_size = 12 + 4 * n_tokens + part;
    std::vector<uint32_t> list(n_tokens);
    for (uint32_t i = 0; i < n_tokens; ++i) list[i] = i < 2 ? load_le<uint32_t>(patch_reference().data() + 3000 + 4 * i) : i % 7;
    Bytes tail;
    for (uint64_t i = 2; i < n_tokens; ++i) append_le<uint32_t>(tail, list[i]);
    if (tokens) {
        m.tokens = PatchTokenModel{12, 3000, 2, n_tokens - 2, 0, {{g.n_cells, 0, 1}, {n_tokens - g.n_cells, kNoTokenCell, 1}}};
        TokenKeys keys(m, *m.tokens, ref);
        tail = predict_tokens(list, 2, std::ref(keys));
    }
    append_bytes(meta, tail);
    if (in_meta) meta.resize(meta.size() + g.parts[0].channels * new_cells * g.parts[0].piece_bytes, 9);
    m.meta_raw = meta.size();
    Bytes content = encode_patch_map(m);
    append_bytes(content, meta);
    return content;
}

}  // namespace

namespace {

// Maps that claim far more than a 4 KiB REF and a small stream justify (the decoder's bounds):
// 2^30 one-byte copies of one REF byte, 64 groups each copying REF 4 times, a part of 2^40
// new bytes, and a part named by two regions.
std::vector<Bytes> hostile_patch_seeds() {
    std::vector<Bytes> out;
    auto add = [&](PatchMap m) {
        m.meta_raw = 0;
        out.push_back(encode_patch_map(m));
    };
    PatchMap bytes;
    bytes.ref_groups.push_back({1, {{0, 0}}});
    bytes.groups.push_back({1, {{1ull << 30, 1, true, 0, false}}, {{1, 0u, 0}}});
    bytes.regions.push_back({RegionKind::Part, 0, 0, 0});
    bytes.original_size = 1ull << 30;
    add(bytes);
    PatchMap copies;
    copies.ref_groups.push_back({64, {{0, 64}}});
    PatchGroup g{256, {{1, 64, false, 0, false}}, {}};
    for (int i = 0; i < 4; ++i) g.runs.push_back({64, 0u, 0});
    for (uint32_t i = 0; i < 64; ++i) {
        copies.groups.push_back(g);
        copies.regions.push_back({RegionKind::Part, 0, i, 0});
    }
    copies.original_size = 64 * 4 * 4096;
    add(copies);
    PatchMap fresh;
    fresh.groups.push_back({1ull << 34, {{1, 64, false, 0, false}}, {{1ull << 34, std::nullopt, 0}}});
    fresh.regions.push_back({RegionKind::Part, 0, 0, 0});
    fresh.original_size = 1ull << 40;
    add(fresh);
    PatchMap twice;
    twice.ref_groups.push_back({64, {{0, 64}}});
    twice.groups.push_back({64, {{1, 64, false, 0, false}}, {{64, 0u, 0}}});
    for (int i = 0; i < 2; ++i) twice.regions.push_back({RegionKind::Part, 0, 0, 0});
    twice.original_size = 2 * 4096;
    add(twice);
    return out;
}

void write_seed(const std::string& path, const Bytes& seed) {
    std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(seed.data()), static_cast<std::streamsize>(seed.size()));
}

}  // namespace

void write_patch_seeds(const char* dir) {
    int i = 0;
    for (bool transposed : {false, true})
        for (bool in_meta : {false, true})
            for (bool tokens : {false, true}) write_seed(std::string(dir) + "/map" + std::to_string(i++), patch_seed(transposed, in_meta, tokens));
    i = 0;
    for (const Bytes& seed : hostile_patch_seeds()) write_seed(std::string(dir) + "/hostile" + std::to_string(i++), seed);
}

}  // namespace stzfuzz
