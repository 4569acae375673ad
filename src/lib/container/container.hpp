// The .stz container (docs/FORMAT.md): header with the section table, a sequence of
// independently decodable chunks, an end record with the chunk index and whole-file hash,
// and a fixed trailer pointing at the end record. Written in one pass; readable from a pipe.
#pragma once
#include <memory>
#include <optional>

#include "base/io.hpp"
#include "base/limits.hpp"
#include "codecs/pipeline.hpp"
#include "sections/section.hpp"
#include "base/hashing.hpp"  // hash64, Hasher
#include "layout/wire.hpp"  // kStzMagic, ChunkIndexEntry: the byte layout this reads and writes

namespace stz {

// Version 1: what 0.1.0 writes and reads. Version 2 adds a property list at the end of the
// header body (below). Version 3 (compact): the same content in varints, defaults omitted,
// no chunk index and one checksum fewer per record (docs/FORMAT.md); what the writer writes.
// Readers accept all three.
inline constexpr uint16_t kStzVersion = 1;
inline constexpr uint16_t kStzVersionProperties = 2;
inline constexpr uint16_t kStzVersionCompact = 3;
inline constexpr uint16_t kStzMaxVersion = kStzVersionCompact;
inline constexpr uint32_t kMaxHeaderProperties = 64;
inline constexpr uint16_t kHeaderCompressed = 1;  // header flag: body is u32 size + zstd frame

// Which records a writer writes: Compact (version 3, the default), or Fixed (version 1, or 2
// with properties: readable by 0.1.0; tools and tests that craft fixed-width records use it).
enum class ContainerLayout : uint8_t { Compact, Fixed };

enum class ChunkKind : uint8_t { End = 0, Data = 1 /* 2 reserved: reference into another file */ };

// A named fact about the whole file that is not a section: that it was made lossy and how,
// the reference file it needs, ... `required`: decoding depends on it, so a reader that does
// not know the key must refuse the file (liblzma's idea for filter flags); otherwise a reader
// may ignore it. Keys this release understands as required: header_property_understood().
struct HeaderProperty {
    std::string key;
    std::string value;
    bool required = false;
};
bool header_property_understood(const std::string& key);

struct ContainerHeader {
    uint64_t original_size = 0;
    std::string format = "opaque";
    int64_t format_version = -1;  // -1: none
    std::string detail;
    std::string note;
    std::vector<Section> sections;
    std::vector<HeaderProperty> properties;  // in the order written; keys unique
    const HeaderProperty* property(const std::string& key) const;
    void set_property(const std::string& key, const std::string& value, bool required);
};

// Bytes of this header's uncompressed body (see limits.hpp), and a check that a reader would
// accept it (every string short enough, the body within kMaxHeaderBytes); throws stz::Error.
uint64_t encoded_header_bound(const ContainerHeader& h);
void check_header_storable(const ContainerHeader& h);

// Throws stz::Error unless a chunk with this pipeline, these stage input sizes and this
// payload size is one the reader accepts: 1..kMaxStages stages, valid parameters, every
// size within kMaxStageBytes and within what each codec can produce from its input
// (Codec::max_encoded_size / max_decoded_size). The writer and the reader both call it.
void check_chunk_storable(const Pipeline& p, const std::vector<uint64_t>& stage_sizes, uint64_t payload_size);
// The size-independent part, for the planner and the CLI to call when a pipeline is parsed:
// 1..kMaxStages stages, each stage's parameters at most kMaxParamBytes and valid.
void check_pipeline_storable(const Pipeline& p);


struct ChunkRecord {
    uint32_t index = 0;  // in the file
    uint32_t section = 0;
    uint64_t raw_offset = 0;
    uint32_t raw_size = 0;
    Pipeline pipeline;
    std::vector<uint64_t> stage_sizes;
    uint64_t raw_hash = 0;
    Bytes payload;
    uint64_t container_offset = 0;
    // Set when the record's checksum is still to be checked over the payload (next(InDecode)):
    // the record's hash of every byte before the payload, and the checksum it must reach.
    std::shared_ptr<const Hasher> record_hash_pending;
    uint64_t record_checksum = 0;
    // The first record of a compact file, whose check is the first over the file's header: it is
    // checked before decoding whatever set_record_check says (the header's properties, a
    // reference file or rounding, decide what the output is, and no raw hash covers them).
    bool record_checks_header = false;
    // Set when the payload was left in a positioned input for the decode job to read
    // (next(InDecodeRead)): payload is then empty, with capacity to reuse, until load_payload.
    InputSource* payload_source = nullptr;
    uint64_t payload_at = 0;
    uint32_t payload_pending = 0;
    // Set when the input is memory (InputSource::memory): the payload where it lies there,
    // `payload` then empty. Valid while the input is.
    ByteSpan payload_in_input;
    uint64_t payload_size() const { return payload.size() + payload_pending + payload_in_input.size(); }
    ByteSpan payload_bytes() const { return payload_in_input.empty() ? ByteSpan(payload) : payload_in_input; }
};

// When ContainerReader::next checks a chunk record's checksum over its payload: at once, or in
// decode (on a worker thread: hashing the payload is then not serial work of the reader).
// InDecodeRead: as InDecode, and from a positioned input (InputStream::positioned) the payload
// is left for the decode job to read too (ContainerReader::load_payload): the reader then only
// reads record heads.
enum class PayloadCheck { Now, InDecode, InDecodeRead };

// When decode checks a deferred record checksum (PayloadCheck::InDecode, InDecodeRead):
// BeforeDecode, so that a damaged byte is named even where decoding would not read it or would
// decode the chunk as written anyway (testing a file, verifying one before its input goes); or
// OnFailure, only when decoding fails or its output does not match raw_hash, to name the damage
// (decompression). Either way a file is refused unless it decodes as written: raw_hash covers
// every byte decoded, and the chunks must tile the file in order (version 3: the end check over
// every head, in order, or the one chunk's check). What OnFailure defers is where a whole record
// that decodes as written was moved (a chunk swapped with another of its size): found by the end
// check, after the chunks before it were handed out (a file output is then not kept; a stream
// has had them, and then the error, as with zstd's checksum). What OnFailure saves is a pass
// over the payload before decoding (10 % of a random-weight q5_1 cache's decompression, whose
// blocks are mostly stored). The decoders take any payload: every length and size in it is
// checked, whatever the checksums say.
enum class RecordCheck { BeforeDecode, OnFailure };

class ContainerWriter {
public:
    ContainerWriter(OutputSink& out, const ContainerHeader& h, ContainerLayout layout = ContainerLayout::Compact);
    void add_chunk(uint32_t section, uint64_t raw_offset, uint32_t raw_size, uint64_t raw_hash, const Pipeline& p,
                   const EncodedChunk& enc);
    // A chunk's record up to its payload (kind, heads, stage parameters, raw hash, and the
    // record checksum over all of it and the payload), checked as the reader would check it.
    // Changes nothing in the writer: the engine builds it on the worker that encoded the chunk,
    // so that the writing thread does not hash the payload.
    Bytes chunk_record(uint32_t section, uint64_t raw_offset, uint32_t raw_size, uint64_t raw_hash, const Pipeline& p,
                       const EncodedChunk& enc) const;
    // Writes a record made by chunk_record, then its payload.
    void add_record(const Bytes& record, uint32_t section, uint32_t raw_size, const EncodedChunk& enc);
    void finish(uint64_t content_hash);
    uint64_t bytes_written() const { return pos_; }

private:
    void put(const Bytes& b);
    Bytes compact_record(uint64_t raw_offset, uint32_t raw_size, uint64_t raw_hash, const Pipeline& p,
                         const EncodedChunk& enc) const;
    void finish_compact(uint64_t content_hash);
    OutputSink& out_;
    ContainerLayout layout_;
    uint64_t pos_ = 0;
    uint64_t original_size_;
    std::vector<ChunkIndexEntry> index_;  // Fixed only
    // Compact: XXH3-64 of the header, and the end record's check over every record head so far.
    uint64_t header_hash_ = 0;
    std::unique_ptr<Hasher> end_check_;
    uint32_t n_chunks_ = 0;
};

// Sequential reader: header, then chunks in order, then the end record and trailer.
class ContainerReader {
public:
    explicit ContainerReader(InputStream& in);
    const ContainerHeader& header() const { return header_; }
    // Next data chunk, verified against its record hash (the payload's part of it, with
    // PayloadCheck::InDecode, by decode, as set_record_check says); nullopt after the end
    // record, which is verified too (chunk count, sizes, trailer).
    std::optional<ChunkRecord> next(PayloadCheck check = PayloadCheck::Now);
    // Reads a payload next(InDecodeRead) left in the input (nothing if it did not); any thread.
    static void load_payload(ChunkRecord& c);
    void set_record_check(RecordCheck when) { record_check_ = when; }  // BeforeDecode unless set
    Bytes decode(const ChunkRecord& c) const;  // (checks the record,) decodes and checks the raw hash
    // The same into `dst`, which holds the chunk's raw_size bytes (its place in the caller's
    // memory); on a throw `dst` may hold anything.
    void decode_into(const ChunkRecord& c, uint8_t* dst) const;
    // Hands back the payload buffer of a chunk already decoded: the next chunk's payload is read
    // into it, so that a long stream does not allocate (and fault in) a new buffer per chunk.
    void recycle_payload(Bytes&& payload);
    uint64_t content_hash() const { return content_hash_; }
    uint32_t chunks_read() const { return n_chunks_; }

    uint16_t version() const { return version_; }
    bool ran_out() const { return ran_out_; }  // a read failed at the end of the stream

private:
    friend class StreamFeed;
    void read_compact_header(Bytes& all);
    std::optional<ChunkRecord> next_compact(PayloadCheck check);
    void read_compact_end(uint64_t start);
    uint32_t section_at(uint64_t raw_offset, uint64_t start);
    void add_stage(ChunkRecord& c, uint8_t codec_id, uint64_t in_size, Bytes params, const std::string& where, uint64_t start);
    void check_chunk(const ChunkRecord& c, uint64_t stored, const std::string& where, uint64_t start) const;
    void read(uint8_t* dst, size_t n, const char* what);
    // Appends n bytes to dst, growing it only as the bytes arrive (a size field of a short
    // stream cannot make it allocate more than the stream holds).
    void read_growing(Bytes& dst, size_t n, const char* what);
    // A chunk's payload of n bytes (n checked against kMaxStageBytes): read now, or skipped
    // and left for load_payload when `check` is InDecodeRead and the input is positioned.
    void take_payload(ChunkRecord& c, size_t n, PayloadCheck check);
    void take(Hasher& h, uint8_t* dst, size_t n, const char* what);  // read and hash
    void read_end_record(uint64_t start, Hasher& st);
    static void check_record(const Hasher& record_hash, const ChunkRecord& c);
    static void check_pending_record(const ChunkRecord& c);
    void check_before_decode(const ChunkRecord& c) const;
    template <class F> void decoding_chunk(const ChunkRecord& c, F&& decode) const;
    [[noreturn]] static void throw_decoded_mismatch(const ChunkRecord& c);
    InputStream& in_;
    uint64_t pos_ = 0;
    ContainerHeader header_;
    uint64_t raw_pos_ = 0;
    uint32_t n_chunks_ = 0;
    std::vector<ChunkIndexEntry> seen_;
    uint64_t content_hash_ = 0;
    bool ended_ = false;
    uint16_t version_ = 0;
    // Compact: see ContainerWriter; the raw hash of the last chunk (a one-chunk file's content
    // hash) and the section that held the last chunk (chunks name none).
    uint64_t header_hash_ = 0;
    std::unique_ptr<Hasher> end_check_;
    uint64_t last_raw_hash_ = 0;
    uint32_t section_cursor_ = 0;
    bool ran_out_ = false;
    Bytes spare_payload_;  // recycle_payload's buffer (empty, with its capacity)
    Bytes record_head_;    // next_compact's bytes of the record head being read
    RecordCheck record_check_ = RecordCheck::BeforeDecode;
};

// The header of a .stz stream, checked: in versions 1 and 2 by its own checksum; in version 3
// by the first record's check (which covers it) when the stream holds that record. A stream
// that ends before it (the first bytes of a file) gives the header as parsed.
ContainerHeader read_checked_header(InputStream& in);

struct ContainerListing {
    ContainerHeader header;
    std::vector<ChunkIndexEntry> index;
    uint64_t container_size = 0;
    uint64_t content_hash = 0;
};
// Reads header and index only (seeks to the trailer), without decoding any chunk.
ContainerListing list_container(InputSource& in);
ContainerListing list_compact_container(InputSource& in);  // list_container of a version 3 file

bool looks_like_stz(ByteSpan first_bytes);

// Shared by the writers and readers of both layouts (container.cpp, container_compact.cpp).
namespace container_detail {
// A header body as stored when compressed: `size_field_bytes` left free for its size, then a
// zstd frame; nullopt when that is not smaller than the body.
std::optional<Bytes> compress_header_body(ByteSpan body, size_t size_field_bytes);
// The frame's content, which must be `raw` bytes (at most kMaxHeaderBytes); base: its offset.
Bytes decompress_header_body(ByteSpan frame, uint64_t raw, uint64_t base);
Bytes encode_compact_header(const ContainerHeader& h);  // the whole version 3 header
void check_property(const ContainerHeader& h, const HeaderProperty& p, uint64_t at);  // before it is added
void check_version(uint16_t version);  // one this statezip reads, else DataError at its offset
// A version 1/2 header body (`stored` as in the file, compressed when flags say so); base: its offset.
ContainerHeader decode_header_body(ByteSpan stored, uint16_t flags, uint16_t version, uint64_t base);
}  // namespace container_detail

}  // namespace stz
