#include "fuzz_entry.hpp"

#include <cstdlib>

#include "engine.hpp"
#include "pipeline.hpp"

namespace stzfuzz {

using namespace stz;

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
    // 1. decoding an arbitrary payload must throw or produce exactly the declared size
    try {
        std::vector<uint64_t> sizes(p.stages.size(), declared);
        Bytes out = decode_pipeline(p, payload, sizes);
        if (out.size() != declared) std::abort();
    } catch (const Error&) {
    }
    // 2. encoding then decoding the payload must give it back exactly, within the sizes the
    //    codec declares (the reader rejects a stage outside them)
    EncodedChunk e = encode_pipeline(p, payload);
    const Codec& c = *p.stages[0].codec;
    if (e.payload.size() > c.max_encoded_size(payload.size()) ||
        payload.size() > c.max_decoded_size(p.stages[0].params, e.payload.size()))
        std::abort();
    if (decode_pipeline(p, e.payload, e.stage_input_sizes) != Bytes(payload.begin(), payload.end())) std::abort();
}

}  // namespace stzfuzz
