// The .stz byte layout (docs/FORMAT.md) in one place: one struct per fixed-size record with
// its named size and field offsets, and its encode and decode. The writer, the streaming
// reader, the lister, tools and tests use these instead of spelling offsets by hand.
// Decoders here only unpack bytes; every check of what the values mean stays with the
// reader (container.cpp), which knows what it has read so far.
#pragma once
#include "base/bytes.hpp"
#include "base/hashing.hpp"
#include "base/limits.hpp"

namespace stz {

inline constexpr uint8_t kStzMagic[8] = {0x89, 'S', 'T', 'Z', '\r', '\n', 0x1a, '\n'};
inline constexpr uint8_t kStzTrailerMagic[8] = {'S', 'T', 'Z', 'E', 'N', 'D', '\r', '\n'};

// Where a chunk record lies and what it holds, as the end record's index lists it.
struct ChunkIndexEntry {
    uint64_t container_offset = 0;
    uint32_t section = 0;
    uint32_t raw_size = 0;
    uint32_t stored_size = 0;
};

}  // namespace stz

namespace stz::wire {

// Versions 1 and 2 (fixed-width records) first, then version 3 (compact records), below.

// Offsets 0..15: magic, format version, flags, stored header body length.
struct FixedHeader {
    static constexpr size_t kSize = 16;
    static constexpr size_t kVersionAt = 8, kFlagsAt = 10, kLengthAt = 12;
    uint16_t version = 0;
    uint16_t flags = 0;
    uint32_t body_length = 0;  // L: the stored body (compressed or not)
    void encode(Bytes& out) const;
    static FixedHeader decode(const uint8_t* p);  // p: kSize bytes (magic not checked here)
    // The body, then XXH3-64 of [0, kSize + L): the first chunk record starts after it.
    uint64_t hash_at() const { return kSize + uint64_t(body_length); }
    uint64_t end() const { return hash_at() + 8; }
};
inline constexpr size_t kHeaderHashBytes = 8;

// A record starts with its kind byte (ChunkKind).
inline constexpr size_t kKindBytes = 1;

// Data chunk record after its kind byte: section u32, raw_offset u64, raw_size u32,
// stored_size u32, n_stages u8.
struct ChunkHead {
    static constexpr size_t kSize = 21;
    static constexpr size_t kSectionAt = 0, kRawOffsetAt = 4, kRawSizeAt = 12, kStoredAt = 16, kStagesAt = 20;
    uint32_t section = 0;
    uint64_t raw_offset = 0;
    uint32_t raw_size = 0;
    uint32_t stored_size = 0;
    uint8_t n_stages = 0;
    void encode(Bytes& out) const;
    static ChunkHead decode(const uint8_t* p);
};

// One codec stage: codec id u8, input_size u32, params_len u8, then params_len bytes.
struct StageHead {
    static constexpr size_t kSize = 6;
    static constexpr size_t kCodecAt = 0, kInputSizeAt = 1, kParamsLenAt = 5;
    uint8_t codec = 0;
    uint32_t input_size = 0;
    uint8_t params_len = 0;
    void encode(Bytes& out) const;
    static StageHead decode(const uint8_t* p);
};

// After the stages: raw_hash u64 (of the decoded bytes), record_hash u64 (of the record from
// its kind byte through raw_hash, then the payload). The payload follows.
struct ChunkChecksums {
    static constexpr size_t kSize = 16;
    uint64_t raw_hash = 0, record_hash = 0;
};

// The smallest chunk record: kind, head, one stage without parameters, checksums.
inline constexpr uint64_t kMinChunkRecordBytes = kKindBytes + ChunkHead::kSize + StageHead::kSize + ChunkChecksums::kSize;

// End record: kind 0, n_chunks u32, n index entries, then the tail; then the trailer.
inline constexpr size_t kEndHeadBytes = kKindBytes + 4;
struct IndexEntry {  // {container_offset u64, section u32, raw_size u32, stored_size u32}
    static constexpr size_t kSize = 20;
    static void encode(Bytes& out, const ChunkIndexEntry& e);
    static ChunkIndexEntry decode(const uint8_t* p);
};
struct EndTail {  // original_size u64, content_hash u64, end_hash u64 (of the record up to here)
    static constexpr size_t kSize = 24;
    static constexpr size_t kHashedBytes = 16;  // end_hash covers original_size and content_hash
    uint64_t original_size = 0, content_hash = 0, end_hash = 0;
    static EndTail decode(const uint8_t* p);
};
struct Trailer {  // end_offset u64 (of the end record's kind byte), magic "STZEND\r\n"
    static constexpr size_t kSize = 16;
    uint64_t end_offset = 0;
    void encode(Bytes& out) const;
    static Trailer decode(const uint8_t* p);  // magic not checked here: see has_magic
    static bool has_magic(const uint8_t* p);
};
// The smallest end record with its trailer (no chunks).
inline constexpr uint64_t kMinEndBytes = kEndHeadBytes + EndTail::kSize + Trailer::kSize;

// Where the parts of one chunk record lie in a buffer holding a whole .stz (for tools and
// tests that edit a record); throws DataError if the record runs past the buffer.
struct ChunkLayout {
    size_t start = 0;      // kind byte
    size_t stages = 0;     // first stage
    size_t checksums = 0;  // raw_hash, record_hash
    size_t payload = 0;
    size_t end = 0;        // next record
};
ChunkLayout chunk_layout(ByteSpan stz, size_t start);
// Recomputes record_hash of the chunk record at `start` after an edit.
void rehash_chunk(Bytes& stz, size_t start);

// ---- Version 3: compact records (docs/FORMAT.md) ----

// The magic and the u16 format version, as in versions 1 and 2 (so that their readers name
// the version they cannot read); then varint (body length << 1 | compressed), the body.
inline constexpr size_t kCompactFixedBytes = 10;

// Unsigned LEB128. get_varint accepts only the canonical (shortest) form of a value that fits
// 64 bits, so every value has exactly one encoding.
inline constexpr size_t kMaxVarintBytes = 10;
void put_varint(Bytes& out, uint64_t v);
size_t varint_size(uint64_t v);

// Where a record's bytes come from while it is parsed: take(n) returns the next n bytes (and
// may keep them, e.g. to hash them), or throws DataError naming `what` and the offset.
class ByteFeed {
public:
    virtual ~ByteFeed() = default;
    virtual const uint8_t* take(size_t n, const char* what) = 0;
    virtual uint64_t offset() const = 0;  // in the file, of the next byte
};
uint64_t get_varint(ByteFeed& f, const char* what);

// A ByteFeed over bytes in memory; `base` is their offset in the file.
class SpanFeed final : public ByteFeed {
public:
    SpanFeed(ByteSpan data, uint64_t base) : data_(data), base_(base) {}
    const uint8_t* take(size_t n, const char* what) override;
    uint64_t offset() const override { return base_ + pos_; }
    size_t pos() const { return pos_; }
    size_t remaining() const { return data_.size() - pos_; }

private:
    ByteSpan data_;
    uint64_t base_;
    size_t pos_ = 0;
};

// One codec stage of a compact chunk head: varint (codec << 2 | has parameters << 1 | last
// stage), then, with parameters, varint length (1..255) and the bytes; every stage after the
// first then its varint input size (the first stage's input is the chunk's raw size).
struct CompactStage {
    uint8_t codec = 0;
    uint64_t input_size = 0;
    Bytes params;
};
// A compact chunk head: varint raw_size (0: this is the end record, nothing else follows in
// the head), varint stored_size, the stages (1..kMaxStages, the last one flagged). Then u64 raw_hash and u64 check
// (CompactChecksums), then the payload. The section and the raw offset are implied: chunks
// are in file order and tile the original, and each lies in the section that holds its first byte.
// Room made for a head's stages before they are read: most pipelines have up to four.
inline constexpr size_t kTypicalStages = 4;
struct CompactChunkHead {
    uint64_t raw_size = 0;
    uint64_t stored_size = 0;
    std::vector<CompactStage> stages;
    void encode(Bytes& out) const;
    // Unpacks a head (at most kMaxStages stages, parameter lengths 1..kMaxParamBytes, codec
    // ids that fit a byte); the values are checked by the reader.
    static CompactChunkHead decode(ByteFeed& f);
};
inline constexpr uint8_t kCompactEndTag = 0;  // the end record: a head of raw size 0
inline constexpr size_t kCompactChecksumBytes = 16;  // raw_hash u64, check u64
// The largest compact head with its checksums (8 stages of 255 parameter bytes, every size 10 bytes).
inline constexpr size_t kMaxCompactRecordHead =
    2 * kMaxVarintBytes + kMaxStages * (2 + 2 + kMaxParamBytes + kMaxVarintBytes) + kCompactChecksumBytes;
// The smallest: raw and stored size, one stage without parameters, the checksums.
inline constexpr size_t kMinCompactRecordHead = 1 + 1 + 1 + kCompactChecksumBytes;

// The bytes every compact record check starts with: XXH3-64 of the header as stored (the
// header has no checksum of its own: each record's check covers it), and for a chunk its raw
// offset (implied, so a chunk moved to another place fails its check).
void begin_compact_check(Hasher& h, uint64_t header_hash, uint64_t raw_offset);
void begin_compact_end_check(Hasher& h, uint64_t header_hash);

}  // namespace stz::wire
