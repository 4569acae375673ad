// Where the records of a version 3 (compact) .stz lie, for tests that edit them, and the
// re-hash of a chunk's check after an edit.
#pragma once
#include "test_util.hpp"
#include "layout/wire.hpp"

namespace stztest {

struct CompactRecord {
    size_t start = 0, sums = 0, payload = 0, end = 0;  // head, raw_hash + check, payload, next record
    uint64_t raw_offset = 0;
};

struct CompactFile {
    size_t header_end = 0;
    uint64_t header_hash = 0;
    std::vector<CompactRecord> chunks;
    size_t end_record = 0;
};

inline CompactFile compact_file(const stz::Bytes& c) {
    using namespace stz::wire;
    CompactFile f;
    SpanFeed h(c, 0);
    h.take(kCompactFixedBytes, "header");
    const uint64_t tag = get_varint(h, "header");
    f.header_end = h.pos() + size_t(tag >> 1);
    f.header_hash = stz::hash64({c.data(), f.header_end});
    size_t at = f.header_end;
    uint64_t raw = 0;
    for (;;) {
        SpanFeed g(stz::ByteSpan(c).subspan(at), at);
        const CompactChunkHead head = CompactChunkHead::decode(g);
        if (head.raw_size == 0) break;
        CompactRecord r;
        r.start = at, r.sums = at + g.pos(), r.payload = r.sums + kCompactChecksumBytes;
        r.end = r.payload + size_t(head.stored_size), r.raw_offset = raw;
        f.chunks.push_back(r);
        raw += head.raw_size;
        at = r.end;
    }
    f.end_record = at;
    return f;
}

// Recomputes the check of chunk record `r` (its head or payload edited; `r` as before the edit).
inline void rehash_compact_chunk(stz::Bytes& c, const CompactFile& f, const CompactRecord& r) {
    stz::Hasher h;
    stz::wire::begin_compact_check(h, f.header_hash, r.raw_offset);
    h.update({c.data() + r.start, r.sums + 8 - r.start});
    h.update({c.data() + r.payload, r.end - r.payload});
    stz::store_le<uint64_t>(c.data() + r.sums + 8, h.digest());
}

// A .stz written by ContainerWriter: `raw` cut into sections of the given sizes, each into
// stored chunks of at most `chunk` bytes (smaller than the engine's plans ever cut them).
inline stz::Bytes chunked_stz(const stz::Bytes& raw, const std::vector<size_t>& section_sizes, size_t chunk,
                              stz::ContainerLayout layout = stz::ContainerLayout::Compact) {
    stz::ContainerHeader h;
    h.original_size = raw.size();
    size_t at = 0;
    for (size_t i = 0; i < section_sizes.size(); ++i) {
        stz::Section s;
        s.name = "s" + std::to_string(i);
        s.offset = at, s.size = section_sizes[i];
        h.sections.push_back(s);
        at += s.size;
    }
    stz::Pipeline store;
    store.stages.push_back({stz::find_codec("store"), {}});
    stz::MemorySink sink;
    stz::ContainerWriter w(sink, h, layout);
    for (uint32_t i = 0; i < h.sections.size(); ++i)
        for (uint64_t o = h.sections[i].offset; o < h.sections[i].offset + h.sections[i].size; o += chunk) {
            const size_t n = size_t(std::min<uint64_t>(chunk, h.sections[i].offset + h.sections[i].size - o));
            const stz::ByteSpan part(raw.data() + o, n);
            w.add_chunk(i, o, uint32_t(n), stz::hash64(part), store, stz::encode_pipeline(store, part));
        }
    w.finish(stz::hash64(raw));
    return sink.out;
}

inline bool decode_fails(const stz::Bytes& c) {
    try {
        (void)decompress_bytes(c);
        return false;
    } catch (const stz::Error&) {
        return true;
    }
}

inline bool list_fails(const stz::Bytes& c) {
    try {
        stz::MemorySource src(c);
        (void)stz::list_container(src);
        return false;
    } catch (const stz::Error&) {
        return true;
    }
}

}  // namespace stztest
