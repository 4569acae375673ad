// Listing a seekable .stz of version 1 or 2 from its end record: the header, the chunk index
// and the content hash, read without touching any chunk (version 3 is listed in
// container_compact.cpp). Every field is checked against the file before it is used.
#include "container.hpp"

#include "base/hashing.hpp"
#include "layout/wire.hpp"

namespace stz {

using namespace container_detail;
using wire::EndTail, wire::FixedHeader, wire::IndexEntry, wire::Trailer, wire::kEndHeadBytes, wire::kMinChunkRecordBytes;

namespace {

// The header, checked against its own hash; returns its size in the file.
uint64_t read_listed_header(InputSource& in, ContainerListing& L) {
    const uint64_t size = in.size();
    // A header body is never shorter than 8 bytes: nothing below this size can be a .stz.
    constexpr uint64_t kSmallestStz = FixedHeader::kSize + wire::kHeaderHashBytes + 8 + wire::kMinEndBytes;
    if (size < kSmallestStz) throw DataError("file too small to be a .stz", 0);
    Bytes fixed(FixedHeader::kSize);
    in.read_at(0, fixed.data(), fixed.size());
    const FixedHeader fh = FixedHeader::decode(fixed.data());
    const uint32_t len = fh.body_length;
    if (len > kMaxHeaderBytes || fh.end() > size) throw DataError("bad header length", FixedHeader::kLengthAt);
    Bytes hdr(fh.end());
    in.read_at(0, hdr.data(), hdr.size());
    if (hash64({hdr.data(), size_t(fh.hash_at())}) != load_le<uint64_t>(hdr.data() + fh.hash_at()))
        throw DataError("header checksum mismatch", fh.hash_at());
    L.header = decode_header_body({hdr.data() + FixedHeader::kSize, len}, fh.flags, fh.version, FixedHeader::kSize);
    return hdr.size();
}

// `n` index entries from `at`, read in blocks of 4096 so that a crafted (e.g. sparse) file
// costs memory only for entries that are really there and valid; each entry must follow the
// previous one inside the chunk area [first_chunk, end). Returns the raw bytes they cover.
uint64_t read_listed_index(InputSource& in, ContainerListing& L, uint64_t at, uint32_t n, uint64_t first_chunk,
                       uint64_t end, Hasher& rec_hash) {
    uint64_t next_offset = first_chunk, raw_total = 0;
    Bytes block;
    for (uint32_t done = 0; done < n;) {
        const uint32_t take = std::min<uint32_t>(n - done, 4096);
        const uint64_t block_at = at + uint64_t(done) * IndexEntry::kSize;
        block.resize(size_t(take) * IndexEntry::kSize);
        in.read_at(block_at, block.data(), block.size());
        rec_hash.update(block);
        for (uint32_t i = 0; i < take; ++i) {
            const ChunkIndexEntry e = IndexEntry::decode(block.data() + size_t(i) * IndexEntry::kSize);
            const uint64_t where = block_at + uint64_t(i) * IndexEntry::kSize;
            if (e.section >= L.header.sections.size()) throw DataError("bad section in chunk index", where);
            if (e.raw_size == 0 || e.raw_size > kMaxChunkRaw || e.raw_size > L.header.original_size - raw_total)
                throw DataError("bad chunk size in chunk index", where);
            if (e.stored_size > kMaxStageBytes || e.container_offset < next_offset ||
                e.container_offset > end - kMinChunkRecordBytes - e.stored_size)
                throw DataError("chunk index entry points outside the chunk area", where);
            raw_total += e.raw_size;
            next_offset = e.container_offset + kMinChunkRecordBytes + e.stored_size;
            L.index.push_back(e);
        }
        done += take;
    }
    return raw_total;
}

}  // namespace

ContainerListing list_container(InputSource& in) {
    ContainerListing L;
    L.container_size = in.size();
    const uint64_t size = in.size();
    if (size < wire::kCompactFixedBytes) throw DataError("file too small to be a .stz", 0);
    uint8_t magic[wire::kCompactFixedBytes];
    in.read_at(0, magic, wire::kCompactFixedBytes);
    if (!looks_like_stz({magic, sizeof magic})) throw DataError("not a statezip (.stz) file: bad magic", 0);
    const uint16_t version = load_le<uint16_t>(magic + FixedHeader::kVersionAt);
    check_version(version);
    if (version == kStzVersionCompact) return list_compact_container(in);
    const uint64_t header_size = read_listed_header(in, L);
    uint8_t trailer[Trailer::kSize];
    const uint64_t trailer_at = size - Trailer::kSize;
    in.read_at(trailer_at, trailer, Trailer::kSize);
    if (!Trailer::has_magic(trailer)) throw DataError("bad trailer (truncated .stz?)", trailer_at);
    const uint64_t end = Trailer::decode(trailer).end_offset;
    if (end < header_size || end > trailer_at - kEndHeadBytes - EndTail::kSize) throw DataError("bad end-record offset", trailer_at);
    // The end record: kind, chunk count, one index entry per chunk, original size, content
    // hash, its own hash. The count is checked against what the file can hold before anything
    // is allocated.
    uint8_t head[kEndHeadBytes];
    in.read_at(end, head, kEndHeadBytes);
    if (head[0] != static_cast<uint8_t>(ChunkKind::End)) throw DataError("end record expected", end);
    const uint32_t n = load_le<uint32_t>(head + 1);
    if (uint64_t(n) * IndexEntry::kSize + kEndHeadBytes + EndTail::kSize != trailer_at - end)
        throw DataError("end record size does not match its chunk count", end);
    if (n > L.header.original_size || n > (end - header_size) / kMinChunkRecordBytes)
        throw DataError("end record lists " + std::to_string(n) + " chunks, more than the file can hold", end + 1);
    Hasher rec_hash;
    rec_hash.update({head, kEndHeadBytes});
    const uint64_t raw_total = read_listed_index(in, L, end + kEndHeadBytes, n, header_size, end, rec_hash);
    uint8_t tail[EndTail::kSize];
    in.read_at(end + kEndHeadBytes + uint64_t(n) * IndexEntry::kSize, tail, EndTail::kSize);
    rec_hash.update({tail, EndTail::kHashedBytes});
    const EndTail et = EndTail::decode(tail);
    L.content_hash = et.content_hash;
    if (et.end_hash != rec_hash.digest()) throw DataError("end record checksum mismatch", end);
    if (et.original_size != L.header.original_size) throw DataError("end record and header disagree on the original size", end);
    if (raw_total != et.original_size) throw DataError("chunk index does not cover the original size", end);
    return L;
}

}  // namespace stz
