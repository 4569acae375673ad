#include "hostile.hpp"

#include <algorithm>
#include <random>

#include "engine/engine.hpp"
#include "layout/wire.hpp"

namespace stzhostile {

using namespace stz;

Bytes noise(size_t n, uint64_t seed) {
    std::mt19937_64 g(seed);
    Bytes b(n);
    for (auto& x : b) x = static_cast<uint8_t>(g());
    return b;
}

Bytes sample_rows(size_t n) {
    Bytes b = noise(n, 77);
    for (size_t i = 0; i < n; i += 2) b[i + 1 < n ? i + 1 : i] = static_cast<uint8_t>(0x3c + (i / 64) % 3);
    std::fill(b.begin() + n / 2, b.begin() + n / 2 + n / 8, 0);
    return b;
}

Bytes le64(uint64_t a) {
    Bytes b;
    append_le<uint64_t>(b, a);
    return b;
}

Bytes le64x2(uint64_t a, uint64_t b) {
    Bytes p = le64(a);
    append_le<uint64_t>(p, b);
    return p;
}

Bytes chanctx_params(unsigned record, uint8_t flags, uint64_t row_records, const Bytes& classes) {
    Bytes p(10 + classes.size());  // sized up front: appending trips a GCC 12 false -Wstringop-overread
    p[0] = static_cast<uint8_t>(record), p[1] = flags;
    store_le<uint64_t>(p.data() + 2, row_records);
    std::copy(classes.begin(), classes.end(), p.begin() + 10);
    return p;
}

namespace {

// The chunk record (kind, section, raw offset and size, stored size, stages, raw hash,
// record hash over record and payload), as container.cpp reads it.
Bytes chunk_record(uint64_t raw_hash, uint32_t raw_size, const std::vector<RawStage>& stages, const Bytes& payload) {
    Bytes rec;
    rec.push_back(1);
    append_le<uint32_t>(rec, 0);
    append_le<uint64_t>(rec, 0);
    append_le<uint32_t>(rec, raw_size);
    append_le<uint32_t>(rec, static_cast<uint32_t>(payload.size()));
    rec.push_back(static_cast<uint8_t>(stages.size()));
    for (const auto& st : stages) {
        rec.push_back(st.codec);
        append_le<uint32_t>(rec, st.in_size);
        rec.push_back(static_cast<uint8_t>(st.params.size()));
        append_bytes(rec, st.params);
    }
    append_le<uint64_t>(rec, raw_hash);
    Hasher ch;
    ch.update(rec);
    ch.update(payload);
    append_le<uint64_t>(rec, ch.digest());
    return rec;
}

}  // namespace

Bytes craft_stz(const Bytes& raw, const std::vector<RawStage>& stages, const Bytes& payload, uint32_t declared) {
    const uint32_t raw_size = declared ? declared : static_cast<uint32_t>(raw.size());
    ContainerHeader h;
    h.original_size = raw_size;
    Section s;
    s.name = "data";
    s.size = raw_size;
    h.sections.push_back(s);
    MemorySink sink;
    { ContainerWriter w(sink, h, ContainerLayout::Fixed); }  // writes the header only (fixed-width records follow)
    Bytes out = sink.out;
    const uint64_t chunk_at = out.size();
    append_bytes(out, chunk_record(hash64(raw), raw_size, stages, payload));
    append_bytes(out, payload);
    const uint64_t end_at = out.size();
    Bytes end;
    end.push_back(0);
    append_le<uint32_t>(end, 1);
    append_le<uint64_t>(end, chunk_at);
    append_le<uint32_t>(end, 0);
    append_le<uint32_t>(end, raw_size);
    append_le<uint32_t>(end, static_cast<uint32_t>(payload.size()));
    append_le<uint64_t>(end, raw_size);
    append_le<uint64_t>(end, hash64(raw));
    append_le<uint64_t>(end, hash64(end));
    append_le<uint64_t>(end, end_at);
    end.insert(end.end(), kStzTrailerMagic, kStzTrailerMagic + 8);
    append_bytes(out, end);
    return out;
}

Bytes craft_one_stage(const std::string& codec, const Bytes& good_params, const Bytes& params, const Bytes& raw) {
    const Codec* c = find_codec(codec);
    if (!c) throw Error("no codec " + codec);
    Bytes payload;
    c->encode(raw, good_params, payload);
    return craft_stz(raw, {{c->id(), static_cast<uint32_t>(raw.size()), params}}, payload);
}

Bytes chanctx_row_records(size_t raw_bytes) {
    // One-byte records: kHistory x rows wraps to 2, so record 2 reads 2^63+1 records back.
    const Bytes raw = sample_rows(raw_bytes);
    return craft_one_stage("chanctx", chanctx_params(1, 2, 32, {1}), chanctx_params(1, 2, (1ull << 63) + 1, {1}), raw);
}

Bytes oversized_stage(uint32_t declared) {
    // bf16 records: both bytes modelled, no raw plane, so at most ~4 KiB per input byte can exist.
    const Bytes params = chanctx_params(2, 2, 32, {2, 1});
    Bytes payload;
    append_le<uint32_t>(payload, 96);
    append_bytes(payload, noise(96, 5));
    const Bytes raw(16, 0);  // its content is irrelevant: the chunk record is checked first
    return craft_stz(raw, {{find_codec("chanctx")->id(), declared, params}}, payload, declared);
}

Bytes chanctx_range_overrun_params() { return chanctx_params(2, 0, 64, {0, 1}); }

Bytes chanctx_range_overrun_payload(size_t records) {
    // f16 records without the match model: the low byte from the raw plane, the high byte
    // range coded. 16 range-coder bytes cannot hold `records` modelled bytes of noise.
    Bytes in;
    append_le<uint32_t>(in, 16);
    append_bytes(in, noise(16, 9));
    append_bytes(in, noise(records, 10));  // the raw low-byte plane
    return in;
}

Bytes range_overrun(size_t records) {
    const uint32_t out_size = static_cast<uint32_t>(records * 2);
    return craft_stz(Bytes(out_size, 0), {{find_codec("chanctx")->id(), out_size, chanctx_range_overrun_params()}},
                     chanctx_range_overrun_payload(records));
}

SparseImage huge_chunk_count(uint64_t apparent_size) {
    CompressOptions opt;
    opt.codec.all = "zstd:3";
    opt.container = ContainerLayout::Fixed;  // a version 1 end record with its chunk count
    const Bytes rows = sample_rows(3000);
    MemorySource src(rows);
    MemorySink real;
    compress_stream(src, real, opt);
    const uint64_t header = wire::FixedHeader::decode(real.out.data()).end();
    // End record right after the header, claiming as many index entries as fit.
    const uint64_t end = header;
    constexpr uint64_t kEndFixed = wire::kEndHeadBytes + wire::EndTail::kSize;
    const uint64_t n = std::min<uint64_t>((apparent_size - wire::Trailer::kSize - end - kEndFixed) / wire::IndexEntry::kSize,
                                          UINT32_MAX);
    SparseImage img;
    img.size = end + n * wire::IndexEntry::kSize + kEndFixed + wire::Trailer::kSize;
    Bytes end_head{0};
    append_le<uint32_t>(end_head, static_cast<uint32_t>(n));
    Bytes trailer;
    wire::Trailer{end}.encode(trailer);
    img.pieces = {{0, Bytes(real.out.begin(), real.out.begin() + header)}, {end, end_head},
                  {img.size - wire::Trailer::kSize, trailer}};
    return img;
}

namespace {
void put32(Bytes& b, uint32_t v) { append_le<uint32_t>(b, v); }
void put64(Bytes& b, uint64_t v) { append_le<uint64_t>(b, v); }
}  // namespace

Bytes ggsq2_empty_records(size_t n) {
    Bytes b;
    put32(b, 0x67677371), put32(b, 2), put32(b, 0);
    for (size_t i = 0; i < n; ++i) put32(b, 1), put32(b, 0);
    return b;
}

Bytes ggsq2_k_only_records(size_t records) {
    Bytes b;
    put32(b, 0x67677371), put32(b, 2), put32(b, 0);
    for (size_t r = 0; r < records; ++r) {
        put32(b, 1), put32(b, 1), put32(b, 0), put32(b, 0), put32(b, 0), put32(b, 1);  // 1 stream, 1 cell, 1 layer
        put32(b, 1), put64(b, 2), b.push_back(0), b.push_back(0x3c);                   // K: f16, one 2-byte row
    }
    return b;
}

Bytes ggsq2_many_layers(size_t records, uint64_t seed) {
    Bytes b;
    put32(b, 0x67677371), put32(b, 2), put32(b, 0);
    Bytes rows = noise(records * 1024 * 2, seed);
    size_t k = 0;
    for (size_t r = 0; r < records; ++r) {
        put32(b, 1);                                      // n_stream
        put32(b, 1);                                      // cell_count
        put32(b, static_cast<uint32_t>(r)), put32(b, 0);  // cell: pos, no seq ids
        put32(b, 0), put32(b, 512);                       // v_trans, n_layer
        for (int kv = 0; kv < 2; ++kv)
            for (int il = 0; il < 512; ++il) {
                put32(b, 1), put64(b, 2);  // f16, 2-byte rows
                b.push_back(rows[k++]), b.push_back(rows[k++]);
            }
    }
    return b;
}

}  // namespace stzhostile
