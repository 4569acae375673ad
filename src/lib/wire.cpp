#include "wire.hpp"

#include <algorithm>

#include "hashing.hpp"

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
    // XXH3-64 of the record through raw_hash, then of the payload (the container's Hasher).
    std::unique_ptr<XXH3_state_t, decltype(&XXH3_freeState)> h(XXH3_createState(), XXH3_freeState);
    if (!h || XXH3_64bits_reset(h.get()) != XXH_OK) throw std::bad_alloc();
    XXH3_64bits_update(h.get(), stz.data() + l.start, l.checksums + 8 - l.start);
    XXH3_64bits_update(h.get(), stz.data() + l.payload, l.end - l.payload);
    store_le<uint64_t>(stz.data() + l.checksums + 8, XXH3_64bits_digest(h.get()));
}

}  // namespace stz::wire
