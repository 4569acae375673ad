// Record framing of `.stzp` sets over a random-access file (docs/PACK.md), shared by the
// writer and the reader: each record is a header (magic, type, payload length, checksum of
// those), the payload, and the payload's checksum.
#pragma once
#include <map>

#include "engine/engine.hpp"
#include "pack_format.hpp"

namespace stz {

struct RecordHead {
    RecordType type = RecordType::Block;
    uint64_t offset = 0, payload = 0, length = 0;
    uint64_t end() const { return payload + length + kRecordTrailerBytes; }
};

// The fixed header a set starts with.
Bytes pack_header();

// Reads and checks a record header at `off` (its checksum, a known type, the record inside
// the file). Throws DataError naming the offset.
RecordHead read_record_head(InputSource& f, uint64_t off);
// The payload, checked against its checksum; refuses more than `max_bytes` before reading.
Bytes read_record_payload(InputSource& f, const RecordHead& h, uint64_t max_bytes);
// A record of the expected type at `off` with its payload checked.
Bytes read_record(InputSource& f, uint64_t off, RecordType want, uint64_t max_bytes, RecordHead* head = nullptr);

// Writes one record at `at`: a placeholder header, the payload as it is written (buffered),
// then the payload checksum and the real header.
class RecordSink final : public OutputSink {
public:
    RecordSink(RandomFile& f, uint64_t at, RecordType type);
    ~RecordSink() override;
    void write(const uint8_t* data, size_t n) override;
    // Writes the payload check, then the header; returns the offset after the record. With
    // `sync_before_header` the file is synced in between, so that even after a power loss a
    // valid header means a complete payload (a commit: header valid, payload bad = damage).
    uint64_t finish(bool sync_before_header = false);
    uint64_t offset() const { return at_; }

private:
    void flush();
    RandomFile& f_;
    uint64_t at_, pos_;
    RecordType type_;
    Hasher hash_;
    Bytes buf_;
    uint64_t length_ = 0;
};

// Decodes a cell block (checks the record, its head and the decoded size).
Bytes load_block(InputSource& f, uint64_t off, BlockHead& head, const DecompressOptions& dopt);

// Decoded blocks kept for the next members (checkpoints share most of their cells), at most
// `budget` bytes; the least recently used go first.
class BlockCache {
public:
    explicit BlockCache(uint64_t budget) : budget_(budget) {}
    // The block at `off`, decoded now or earlier.
    const Bytes& get(InputSource& f, uint64_t off, BlockHead& head, const DecompressOptions& dopt);
    void put(uint64_t off, const BlockHead& head, Bytes raw);
    void clear() { entries_.clear(), held_ = 0; }

private:
    struct Entry {
        BlockHead head;
        std::shared_ptr<const Bytes> raw;
        uint64_t used = 0;
    };
    void make_room(uint64_t bytes);
    uint64_t budget_, held_ = 0, clock_ = 0;
    std::map<uint64_t, Entry> entries_;
    std::shared_ptr<const Bytes> last_;  // the block returned last stays alive while it is used
};

// Rebuilds member `m` into `out` (no whole-file check: the caller does it). Every byte of
// [0, m.size) is written exactly once.
void restore_member(InputSource& set, const MemberRecord& m, RandomFile& out, const DecompressOptions& dopt,
                    BlockCache* cache = nullptr);

// Decodes the member's literal stream (the bytes outside its K/V sections, in file order)
// into `out`, then checks the stream's record checksum.
void decode_literal(InputSource& set, const MemberRecord& m, OutputSink& out, const DecompressOptions& dopt);

// Rebuilds member `m` in file order into `out` (exactly m.size bytes, or throws), holding at
// most about `window_bytes` of one K/V section at a time besides the blocks in `cache`: the
// whole-member hash of `-t` and of the writer's check need no copy of the member (pack_rebuild.cpp).
void rebuild_member_in_order(InputSource& set, const MemberRecord& m, OutputSink& out, const DecompressOptions& dopt,
                             BlockCache& cache, uint64_t window_bytes);

// Largest payload of a cell block a reader accepts: the block head and a .stz of at most
// kMaxBlockRaw bytes (which never exceeds its input by more than the engine's allowance).
inline constexpr uint64_t kMaxBlockPayload = kMaxBlockRaw + (kMaxBlockRaw >> 6) + (1u << 20);

}  // namespace stz
