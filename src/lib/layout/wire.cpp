#include "wire.hpp"

#include <algorithm>

#include "base/hashing.hpp"

namespace stz::wire {

void FixedHeader::encode(Bytes& out) const {
    out.insert(out.end(), kStzMagic, kStzMagic + 8);
    append_le<uint16_t>(out, version);
    append_le<uint16_t>(out, flags);
    append_le<uint32_t>(out, body_length);
}

FixedHeader FixedHeader::decode(const uint8_t* p) {
    return {load_le<uint16_t>(p + kVersionAt), load_le<uint16_t>(p + kFlagsAt), load_le<uint32_t>(p + kLengthAt)};
}

void ChunkHead::encode(Bytes& out) const {
    append_le<uint32_t>(out, section);
    append_le<uint64_t>(out, raw_offset);
    append_le<uint32_t>(out, raw_size);
    append_le<uint32_t>(out, stored_size);
    out.push_back(n_stages);
}

ChunkHead ChunkHead::decode(const uint8_t* p) {
    return {load_le<uint32_t>(p + kSectionAt), load_le<uint64_t>(p + kRawOffsetAt), load_le<uint32_t>(p + kRawSizeAt),
            load_le<uint32_t>(p + kStoredAt), p[kStagesAt]};
}

void StageHead::encode(Bytes& out) const {
    out.push_back(codec);
    append_le<uint32_t>(out, input_size);
    out.push_back(params_len);
}

StageHead StageHead::decode(const uint8_t* p) {
    return {p[kCodecAt], load_le<uint32_t>(p + kInputSizeAt), p[kParamsLenAt]};
}

void IndexEntry::encode(Bytes& out, const ChunkIndexEntry& e) {
    append_le<uint64_t>(out, e.container_offset);
    append_le<uint32_t>(out, e.section);
    append_le<uint32_t>(out, e.raw_size);
    append_le<uint32_t>(out, e.stored_size);
}

ChunkIndexEntry IndexEntry::decode(const uint8_t* p) {
    return {load_le<uint64_t>(p), load_le<uint32_t>(p + 8), load_le<uint32_t>(p + 12), load_le<uint32_t>(p + 16)};
}

EndTail EndTail::decode(const uint8_t* p) { return {load_le<uint64_t>(p), load_le<uint64_t>(p + 8), load_le<uint64_t>(p + 16)}; }

void Trailer::encode(Bytes& out) const {
    append_le<uint64_t>(out, end_offset);
    out.insert(out.end(), kStzTrailerMagic, kStzTrailerMagic + 8);
}

Trailer Trailer::decode(const uint8_t* p) { return {load_le<uint64_t>(p)}; }

bool Trailer::has_magic(const uint8_t* p) { return std::equal(p + 8, p + 16, kStzTrailerMagic); }

ChunkLayout chunk_layout(ByteSpan stz, size_t start) {
    auto need = [&](size_t at, size_t n) {
        if (at > stz.size() || n > stz.size() - at) throw DataError("chunk record runs past the buffer", at);
    };
    ChunkLayout l;
    l.start = start;
    need(start, kKindBytes + ChunkHead::kSize);
    ChunkHead h = ChunkHead::decode(stz.data() + start + kKindBytes);
    size_t p = start + kKindBytes + ChunkHead::kSize;
    l.stages = p;
    for (uint8_t i = 0; i < h.n_stages; ++i) {
        need(p, StageHead::kSize);
        p += StageHead::kSize + StageHead::decode(stz.data() + p).params_len;
    }
    l.checksums = p;
    l.payload = p + ChunkChecksums::kSize;
    l.end = l.payload + h.stored_size;
    need(l.checksums, ChunkChecksums::kSize + size_t(h.stored_size));
    return l;
}

void rehash_chunk(Bytes& stz, size_t start) {
    ChunkLayout l = chunk_layout(stz, start);
    Hasher h;
    h.update({stz.data() + l.start, l.checksums + 8 - l.start});  // through raw_hash
    h.update({stz.data() + l.payload, l.end - l.payload});
    store_le<uint64_t>(stz.data() + l.checksums + 8, h.digest());
}

void put_varint(Bytes& out, uint64_t v) {
    while (v >= 0x80) {
        out.push_back(static_cast<uint8_t>(v | 0x80));
        v >>= 7;
    }
    out.push_back(static_cast<uint8_t>(v));
}

size_t varint_size(uint64_t v) {
    size_t n = 1;
    while (v >= 0x80) v >>= 7, ++n;
    return n;
}

uint64_t get_varint(ByteFeed& f, const char* what) {
    const uint64_t at = f.offset();
    uint64_t v = 0;
    for (size_t i = 0; i < kMaxVarintBytes; ++i) {
        const uint8_t b = *f.take(1, what);
        const uint64_t bits = b & 0x7f;
        if (i == 9 && bits > 1) break;  // more than 64 bits
        v |= bits << (7 * i);
        if (!(b & 0x80)) {
            if (i > 0 && b == 0) break;  // a redundant zero group: not the shortest form
            return v;
        }
    }
    throw DataError(std::string("bad number in ") + what, at);
}

const uint8_t* SpanFeed::take(size_t n, const char* what) {
    if (n > remaining()) throw DataError(std::string("truncated ") + what, offset());
    const uint8_t* p = data_.data() + pos_;
    pos_ += n;
    return p;
}

void CompactChunkHead::encode(Bytes& out) const {
    put_varint(out, raw_size);
    put_varint(out, stored_size);
    for (size_t i = 0; i < stages.size(); ++i) {
        const CompactStage& s = stages[i];
        put_varint(out, uint64_t(s.codec) << 2 | (s.params.empty() ? 0 : 2) | (i + 1 == stages.size() ? 1 : 0));
        if (!s.params.empty()) {
            put_varint(out, s.params.size());
            append_bytes(out, s.params);
        }
        if (i > 0) put_varint(out, s.input_size);
    }
}

CompactChunkHead CompactChunkHead::decode(ByteFeed& f) {
    CompactChunkHead h;
    const uint64_t at = f.offset();
    h.raw_size = get_varint(f, "chunk record");
    if (h.raw_size == 0) return h;  // the end record
    h.stored_size = get_varint(f, "chunk record");
    h.stages.reserve(kTypicalStages);
    for (bool last = false; !last;) {
        if (h.stages.size() == kMaxStages)
            throw DataError("more than " + std::to_string(kMaxStages) + " codec stages", at);
        CompactStage s;
        const uint64_t tag = get_varint(f, "codec stage");
        if (tag >> 2 > 0xff) throw DataError("unknown codec id " + std::to_string(tag >> 2) + " (written by a newer statezip?)", at);
        s.codec = static_cast<uint8_t>(tag >> 2);
        last = tag & 1;
        if (tag & 2) {
            const uint64_t len = get_varint(f, "codec parameters");
            if (len == 0 || len > kMaxParamBytes) throw DataError("bad codec parameter length", f.offset());
            const uint8_t* p = f.take(size_t(len), "codec parameters");
            s.params.assign(p, p + len);
        }
        s.input_size = h.stages.empty() ? h.raw_size : get_varint(f, "codec stage");
        h.stages.push_back(std::move(s));
    }
    return h;
}

void begin_compact_check(Hasher& h, uint64_t header_hash, uint64_t raw_offset) {
    uint8_t b[16];
    store_le<uint64_t>(b, header_hash);
    store_le<uint64_t>(b + 8, raw_offset);
    h.update({b, sizeof b});
}

void begin_compact_end_check(Hasher& h, uint64_t header_hash) {
    uint8_t b[8];
    store_le<uint64_t>(b, header_hash);
    h.update({b, sizeof b});
}

}  // namespace stz::wire
