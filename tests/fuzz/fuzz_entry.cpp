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

void codecs(const uint8_t* data, size_t size) {
    if (size < 4) return;
    static const char* specs[] = {"store", "rle", "lz4", "lz4hc", "zstd:1", "zstd:3:long", "lzma:1", "trim", "shuffle",
                                  "transpose", "fields", "chanctx", "chanctx:nomatch", "dedup"};
    const size_t n_specs = sizeof specs / sizeof *specs;
    DataShape shapes[4];
    shapes[1].kind = ElemKind::F16, shapes[1].elem_bytes = 2, shapes[1].row_bytes = 16, shapes[1].keep_bytes = 6;
    shapes[2].kind = ElemKind::Block, shapes[2].elem_bytes = 34, shapes[2].block_head = 2, shapes[2].row_bytes = 68;
    shapes[3] = shapes[1], shapes[3].transposed = true, shapes[3].kind = ElemKind::BF16;
    const Pipeline p = parse_pipeline(specs[data[0] % n_specs], shapes[data[1] % 4]);
    const size_t declared = (size_t(data[2]) << 8 | data[3]) * 4;  // up to 256 KiB
    ByteSpan payload(data + 4, size - 4);
    // 1. decoding an arbitrary payload must throw or produce exactly the declared size
    try {
        std::vector<uint64_t> sizes(p.stages.size(), declared);
        Bytes out = decode_pipeline(p, payload, sizes);
        if (out.size() != declared) std::abort();
    } catch (const Error&) {
    }
    // 2. encoding then decoding the payload must give it back exactly
    EncodedChunk e = encode_pipeline(p, payload);
    if (decode_pipeline(p, e.payload, e.stage_input_sizes) != Bytes(payload.begin(), payload.end())) std::abort();
}

}  // namespace stzfuzz
