#include "container.hpp"

#include "layout/wire.hpp"

#include "base/hashing.hpp"
#define ZSTD_STATIC_LINKING_ONLY  // ZSTD_decompressBound
#include <zstd.h>

#include "base/zstd_context.hpp"

namespace stz {

bool looks_like_stz(ByteSpan b) { return b.size() >= 8 && std::equal(b.begin(), b.begin() + 8, kStzMagic); }

void read_exact(InputStream& in, uint8_t* dst, size_t n, uint64_t offset, const char* what) {
    size_t got = 0;
    while (got < n) {
        size_t r = in.read(dst + got, n - got);
        if (r == 0) throw DataError(std::string("truncated ") + what, offset + got);
        got += r;
    }
}

// Required properties this reader knows how to honour. A new one is one line here plus
// the code that honours it.
static const char* const kUnderstoodRequiredProperties[] = {"reference"};

bool header_property_understood(const std::string& key) {
    for (const char* k : kUnderstoodRequiredProperties)
        if (key == k) return true;
    return false;
}

const HeaderProperty* ContainerHeader::property(const std::string& key) const {
    for (const auto& p : properties)
        if (p.key == key) return &p;
    return nullptr;
}

void ContainerHeader::set_property(const std::string& key, const std::string& value, bool required) {
    for (auto& p : properties)
        if (p.key == key) {
            p.value = value;
            p.required = required;
            return;
        }
    properties.push_back({key, value, required});
}

uint64_t encoded_header_bound(const ContainerHeader& h) {
    uint64_t names = 0;
    for (const auto& s : h.sections) names += s.name.size();
    uint64_t strings = uint64_t(h.format.size()) + h.detail.size() + h.note.size();
    if (!h.properties.empty()) strings += 4;  // property count
    for (const auto& p : h.properties) strings += 2 + p.key.size() + 1 + 2 + p.value.size();
    return encoded_header_bound(h.sections.size(), names, strings);
}

void check_header_storable(const ContainerHeader& h) {
    check_header_string_storable(h.format, "the format name");
    check_header_string_storable(h.detail, "the format detail");
    check_header_string_storable(h.note, "the note");
    for (const auto& s : h.sections) check_header_string_storable(s.name, "a section name");
    if (h.properties.size() > kMaxHeaderProperties) throw Error("too many header properties");
    for (const auto& p : h.properties) {
        check_header_string_storable(p.key, "a property name");
        check_header_string_storable(p.value, "a property value");
    }
    check_header_storable(encoded_header_bound(h));
}

static Bytes encode_fixed_body(const ContainerHeader& h) {
    Bytes body;
    append_le<uint64_t>(body, h.original_size);
    append_string(body, h.format);
    append_le<int64_t>(body, h.format_version);
    append_string(body, h.detail);
    append_string(body, h.note);
    append_le<uint32_t>(body, static_cast<uint32_t>(h.sections.size()));
    for (const auto& s : h.sections) {
        append_string(body, s.name);
        body.push_back(static_cast<uint8_t>(s.kind));
        body.push_back(static_cast<uint8_t>(s.type));
        body.push_back(s.transposed ? 1 : 0);
        for (uint64_t v : {s.offset, s.size, s.rows, s.row_elems, s.filled_elems}) append_le<uint64_t>(body, v);
    }
    if (!h.properties.empty()) {
        append_le<uint32_t>(body, static_cast<uint32_t>(h.properties.size()));
        for (const auto& p : h.properties) {
            append_string(body, p.key);
            body.push_back(p.required ? 1 : 0);
            append_string(body, p.value);
        }
    }
    return body;
}

namespace container_detail {

std::optional<Bytes> compress_header_body(ByteSpan body, size_t size_field_bytes) {
    // The section table is repetitive (names, offsets): zstd halves it or better, which
    // matters for small state files. Stored as the body's size, then a zstd frame.
    Bytes packed(size_field_bytes + ZSTD_compressBound(body.size()));
    // Level 9: within 6 bytes a file of level 19 on the corpus, at a fifth of the time (level 19
    // was 20 % of the instructions of a --fast compression of a 170 KB file). One context per
    // thread: pack writes a header per block.
    constexpr int kHeaderLevel = 9;
    thread_local ZstdCCtx ctx;
    size_t n = ZSTD_compressCCtx(ctx.c, packed.data() + size_field_bytes, packed.size() - size_field_bytes, body.data(),
                                 body.size(), kHeaderLevel);
    if (ZSTD_isError(n) || size_field_bytes + n >= body.size()) return std::nullopt;
    packed.resize(size_field_bytes + n);
    return packed;
}

Bytes decompress_header_body(ByteSpan frame, uint64_t raw, uint64_t base) {
    if (raw > kMaxHeaderBytes) throw DataError("header too large", base);
    // The writer's frame records its content size: check it (and what the frame's blocks
    // can hold) before allocating, so a small header cannot claim 64 MiB.
    unsigned long long content = ZSTD_getFrameContentSize(frame.data(), frame.size());
    unsigned long long bound = ZSTD_decompressBound(frame.data(), frame.size());
    if (content != raw || bound == ZSTD_CONTENTSIZE_ERROR || bound < raw) throw DataError("corrupt header", base);
    Bytes unpacked(raw);
    // The thread's context: ZSTD_decompress makes and frees one (~100 KB) per call, which was 6 %
    // of a small file's decompression through the C API (which reads the header twice).
    size_t n = ZSTD_decompressDCtx(thread_dctx(), unpacked.data(), raw, frame.data(), frame.size());
    if (ZSTD_isError(n) || n != raw) throw DataError("corrupt header", base);
    return unpacked;
}

void check_property(const ContainerHeader& h, const HeaderProperty& p, uint64_t at) {
    if (h.property(p.key)) throw DataError("property '" + p.key + "' appears twice", at);
    if (p.required && !header_property_understood(p.key))
        throw DataError("the file needs '" + p.key + "', which this statezip does not know (written by a newer statezip?)", at);
}

}  // namespace container_detail

using namespace container_detail;

static Bytes encode_header(const ContainerHeader& h, ContainerLayout layout) {
    check_header_storable(h);
    if (layout == ContainerLayout::Compact) return encode_compact_header(h);
    const Bytes body = encode_fixed_body(h);
    Bytes size_field;
    append_le<uint32_t>(size_field, static_cast<uint32_t>(body.size()));
    std::optional<Bytes> packed = compress_header_body(body, size_field.size());
    if (packed) std::copy(size_field.begin(), size_field.end(), packed->begin());
    const Bytes& stored = packed ? *packed : body;
    Bytes out;
    wire::FixedHeader{h.properties.empty() ? kStzVersion : kStzVersionProperties, packed ? kHeaderCompressed : uint16_t(0),
                      static_cast<uint32_t>(stored.size())}
        .encode(out);
    append_bytes(out, stored);
    append_le<uint64_t>(out, hash64(out));
    return out;
}

// Parses and validates the header body; `base` is its offset in the container.
// Version 2's property list (the end of the header body): unique keys, flags bit 0 =
// required; a required key this reader does not understand refuses the file.
static void decode_properties(SpanReader& r, ContainerHeader& h) {
    uint32_t n = r.u32("property count");
    if (n > kMaxHeaderProperties) throw DataError("too many header properties (" + std::to_string(n) + ")", r.file_offset());
    for (uint32_t i = 0; i < n; ++i) {
        HeaderProperty p;
        p.key = r.str16("property name");
        uint8_t flags = r.u8("property flags");
        if (flags & ~1u) throw DataError("unknown property flags (written by a newer statezip?)", r.file_offset());
        p.required = flags & 1;
        p.value = r.str16("property value");
        check_property(h, p, r.file_offset());
        h.properties.push_back(std::move(p));
    }
}

ContainerHeader container_detail::decode_header_body(ByteSpan stored, uint16_t flags, uint16_t version, uint64_t base) {
    if (flags & ~kHeaderCompressed) throw DataError("unknown header flags (written by a newer statezip?)", 10);
    Bytes unpacked;
    ByteSpan body = stored;
    if (flags & kHeaderCompressed) {
        if (stored.size() < 4) throw DataError("truncated header", base);
        unpacked = decompress_header_body(stored.subspan(4), load_le<uint32_t>(stored.data()), base);
        body = unpacked;
    }
    SpanReader r(body, base);
    ContainerHeader h;
    h.original_size = r.u64("header");
    h.format = r.str16("header");
    h.format_version = static_cast<int64_t>(r.u64("header"));
    h.detail = r.str16("header");
    h.note = r.str16("header");
    uint32_t n = r.u32("section count");
    if (n > body.size() / 43) throw DataError("section count " + std::to_string(n) + " does not fit the header", r.file_offset());
    uint64_t at = 0;
    for (uint32_t i = 0; i < n; ++i) {
        Section s;
        s.name = r.str16("section name");
        auto kind = section_kind_from_u8(r.u8("section kind"));
        auto type = elem_type_from_u8(r.u8("section type"));
        if (!kind || !type) throw DataError("unknown section kind or element type", r.file_offset());
        s.kind = *kind;
        s.type = *type;
        s.transposed = r.u8("section flags") & 1;
        s.offset = r.u64("section");
        s.size = r.u64("section");
        s.rows = r.u64("section");
        s.row_elems = r.u64("section");
        s.filled_elems = r.u64("section");
        if (s.offset != at || s.size > h.original_size - at)
            throw DataError("section table does not tile the original file", r.file_offset());
        at += s.size;
        h.sections.push_back(std::move(s));
    }
    if (at != h.original_size) throw DataError("section table does not cover the original file", r.file_offset());
    if (version >= kStzVersionProperties) decode_properties(r, h);
    if (r.remaining()) throw DataError("unexpected bytes in header", r.file_offset());
    return h;
}

ContainerWriter::ContainerWriter(OutputSink& out, const ContainerHeader& h, ContainerLayout layout)
    : out_(out), layout_(layout), original_size_(h.original_size) {
    const Bytes header = encode_header(h, layout);
    if (layout == ContainerLayout::Compact) {
        header_hash_ = hash64(header);
        end_check_ = std::make_unique<Hasher>();
        wire::begin_compact_end_check(*end_check_, header_hash_);
    }
    put(header);
}

void ContainerWriter::put(const Bytes& b) {
    out_.write(b.data(), b.size());
    pos_ += b.size();
}

void check_pipeline_storable(const Pipeline& p) {
    check_pipeline_storable(p.stages.size());
    for (size_t i = 0; i < p.stages.size(); ++i) {
        const Stage& st = p.stages[i];
        if (st.params.size() > kMaxParamBytes)
            throw Error("stage " + std::to_string(i + 1) + " (" + std::string(st.codec->name()) + "): parameters longer than " +
                        std::to_string(kMaxParamBytes) + " bytes");
        st.codec->check_params(st.params);
    }
}

void check_chunk_storable(const Pipeline& p, const std::vector<uint64_t>& sizes, uint64_t payload) {
    check_pipeline_storable(p);
    if (sizes.size() != p.stages.size()) throw Error("stage sizes do not match the pipeline");
    if (sizes[0] == 0 || sizes[0] > kMaxChunkRaw)
        throw Error("chunk size " + std::to_string(sizes[0]) + " is not 1 to " + std::to_string(kMaxChunkRaw));
    if (payload > kMaxStageBytes) throw Error("stored size " + std::to_string(payload) + " is too large");
    check_stage_sizes(p, sizes, payload);
}

void ContainerWriter::add_chunk(uint32_t section, uint64_t raw_offset, uint32_t raw_size, uint64_t raw_hash,
                                const Pipeline& p, const EncodedChunk& enc) {
    add_record(chunk_record(section, raw_offset, raw_size, raw_hash, p, enc), section, raw_size, enc);
}

void ContainerWriter::add_record(const Bytes& record, uint32_t section, uint32_t raw_size, const EncodedChunk& enc) {
    if (layout_ == ContainerLayout::Compact) {
        end_check_->update(record);  // its head and checksums: the payload is covered by the record's check
        ++n_chunks_;
    } else {
        index_.push_back({pos_, section, raw_size, static_cast<uint32_t>(enc.payload.size())});
    }
    put(record);
    put(enc.payload);
}

Bytes ContainerWriter::chunk_record(uint32_t section, uint64_t raw_offset, uint32_t raw_size, uint64_t raw_hash,
                                    const Pipeline& p, const EncodedChunk& enc) const {
    // Never write what the reader would reject (e.g. 9 stages, or 256 wrapping to 0).
    check_chunk_storable(p, enc.stage_input_sizes, enc.payload.size());
    if (enc.stage_input_sizes[0] != raw_size) throw Error("chunk size does not match its first stage");
    if (layout_ == ContainerLayout::Compact) return compact_record(raw_offset, raw_size, raw_hash, p, enc);
    Bytes rec;
    rec.push_back(static_cast<uint8_t>(ChunkKind::Data));
    wire::ChunkHead{section, raw_offset, raw_size, static_cast<uint32_t>(enc.payload.size()),
                    static_cast<uint8_t>(p.stages.size())}
        .encode(rec);
    for (size_t i = 0; i < p.stages.size(); ++i) {
        wire::StageHead{p.stages[i].codec->id(), static_cast<uint32_t>(enc.stage_input_sizes[i]),
                        static_cast<uint8_t>(p.stages[i].params.size())}
            .encode(rec);
        append_bytes(rec, p.stages[i].params);
    }
    append_le<uint64_t>(rec, raw_hash);
    Hasher h;
    h.update(rec);
    h.update(enc.payload);
    append_le<uint64_t>(rec, h.digest());
    return rec;
}

void ContainerWriter::finish(uint64_t content_hash) {
    if (layout_ == ContainerLayout::Compact) return finish_compact(content_hash);
    uint64_t end_offset = pos_;
    Bytes rec;
    rec.push_back(static_cast<uint8_t>(ChunkKind::End));
    append_le<uint32_t>(rec, static_cast<uint32_t>(index_.size()));
    for (const auto& e : index_) wire::IndexEntry::encode(rec, e);
    append_le<uint64_t>(rec, original_size_);
    append_le<uint64_t>(rec, content_hash);
    append_le<uint64_t>(rec, hash64(rec));
    wire::Trailer{end_offset}.encode(rec);
    put(rec);
}

void container_detail::check_version(uint16_t version) {
    if (version < kStzVersion || version > kStzMaxVersion)
        throw DataError("unsupported .stz format version " + std::to_string(version) + " (this statezip reads versions " +
                            std::to_string(kStzVersion) + " to " + std::to_string(kStzMaxVersion) + ")", 8);
}

ContainerReader::ContainerReader(InputStream& in) : in_(in) {
    using wire::FixedHeader;
    uint8_t fixed[FixedHeader::kSize];
    read(fixed, wire::kCompactFixedBytes, "header");
    if (!looks_like_stz({fixed, wire::kCompactFixedBytes})) throw DataError("not a statezip (.stz) file: bad magic", 0);
    version_ = load_le<uint16_t>(fixed + FixedHeader::kVersionAt);
    check_version(version_);
    if (version_ == kStzVersionCompact) {
        Bytes all(fixed, fixed + wire::kCompactFixedBytes);
        read_compact_header(all);
        return;
    }
    read(fixed + wire::kCompactFixedBytes, FixedHeader::kSize - wire::kCompactFixedBytes, "header");
    const FixedHeader fh = FixedHeader::decode(fixed);
    const uint32_t len = fh.body_length;
    if (len > kMaxHeaderBytes)
        throw DataError("header length " + std::to_string(len) + " is too large", FixedHeader::kLengthAt);
    Bytes all(fixed, fixed + FixedHeader::kSize);
    read_growing(all, size_t(len) + wire::kHeaderHashBytes, "header");
    if (hash64({all.data(), size_t(fh.hash_at())}) != load_le<uint64_t>(all.data() + fh.hash_at()))
        throw DataError("header checksum mismatch", fh.hash_at());
    header_ = decode_header_body({all.data() + FixedHeader::kSize, len}, fh.flags, fh.version, FixedHeader::kSize);
}

void ContainerReader::read(uint8_t* dst, size_t n, const char* what) {
    try {
        read_exact(in_, dst, n, pos_, what);
    } catch (const DataError&) {
        ran_out_ = true;
        throw;
    }
    pos_ += n;
}

void ContainerReader::read_growing(Bytes& dst, size_t n, const char* what) {
    constexpr size_t kStep = 1u << 20;
    // A new buffer (a chunk's payload) takes the one recycle_payload kept: no allocation.
    if (dst.capacity() == 0 && spare_payload_.capacity() > 0) dst.swap(spare_payload_);
    while (n > 0) {
        size_t take = std::min(n, kStep), at = dst.size();
        if (dst.capacity() < at + take) dst.reserve(std::max(at + take, std::min(at + n, 2 * dst.capacity())));
        dst.resize(at + take);
        read(dst.data() + at, take, what);
        n -= take;
    }
}

void ContainerReader::take(Hasher& h, uint8_t* dst, size_t n, const char* what) {
    read(dst, n, what);
    h.update({dst, n});
}

// The end record (its kind byte already read and hashed into st), the trailer, and the end
// of the stream: every count and size must agree with the chunks read.
void ContainerReader::read_end_record(uint64_t start, Hasher& st) {
    auto take = [&](uint8_t* dst, size_t n, const char* what) { this->take(st, dst, n, what); };
    uint8_t b4[4];
    take(b4, 4, "end record");
    uint32_t n = load_le<uint32_t>(b4);
    if (n != n_chunks_) throw DataError("end record lists " + std::to_string(n) + " chunks but " +
                                            std::to_string(n_chunks_) + " were read", start);
    for (uint32_t i = 0; i < n; ++i) {
        uint8_t e[wire::IndexEntry::kSize];
        take(e, sizeof e, "chunk index");
        const ChunkIndexEntry x = wire::IndexEntry::decode(e);
        const auto& y = seen_[i];
        if (x.container_offset != y.container_offset || x.section != y.section || x.raw_size != y.raw_size ||
            x.stored_size != y.stored_size)
            throw DataError("chunk index entry " + std::to_string(i) + " does not match chunk", start);
    }
    // The hashed part of the tail, then end_hash and the trailer (not hashed).
    uint8_t tail[wire::EndTail::kSize + wire::Trailer::kSize];
    take(tail, wire::EndTail::kHashedBytes, "end record");
    const uint64_t expect = st.digest();
    read(tail + wire::EndTail::kHashedBytes, sizeof tail - wire::EndTail::kHashedBytes, "trailer");
    const wire::EndTail et = wire::EndTail::decode(tail);
    const uint8_t* trailer = tail + wire::EndTail::kSize;
    content_hash_ = et.content_hash;
    if (et.end_hash != expect) throw DataError("end record checksum mismatch", pos_ - 8 - wire::Trailer::kSize);
    if (et.original_size != header_.original_size || raw_pos_ != et.original_size)
        throw DataError("chunks cover " + std::to_string(raw_pos_) + " of " + std::to_string(header_.original_size) +
                            " bytes", start);
    if (wire::Trailer::decode(trailer).end_offset != start || !wire::Trailer::has_magic(trailer))
        throw DataError("bad trailer", pos_ - wire::Trailer::kSize);
    uint8_t extra;
    if (in_.read(&extra, 1) != 0) throw DataError("unexpected data after the end of the .stz stream", pos_);
    ended_ = true;
}

void ContainerReader::add_stage(ChunkRecord& c, uint8_t codec_id, uint64_t in_size, Bytes params, const std::string& where,
                                uint64_t start) {
    const Codec* codec = find_codec(codec_id);
    if (!codec) throw DataError(where + ": unknown codec id " + std::to_string(codec_id) + " (written by a newer statezip?)", start);
    if (in_size > kMaxStageBytes) throw DataError(where + ": codec stage size too large", start);
    c.pipeline.stages.push_back({codec, std::move(params)});
    c.stage_sizes.push_back(in_size);
}

// A chunk's place (in order, inside its section) and its pipeline's sizes and parameters,
// checked before anything is allocated or decoded.
void ContainerReader::check_chunk(const ChunkRecord& c, uint64_t stored, const std::string& where, uint64_t start) const {
    const Section& sec = header_.sections[c.section];
    if (c.raw_offset != raw_pos_) throw DataError(where + ": chunks out of order", start);
    if (c.raw_size == 0 || c.raw_size > kMaxChunkRaw) throw DataError(where + ": bad chunk size", start);
    if (c.raw_offset < sec.offset || c.raw_offset + c.raw_size > sec.offset + sec.size)
        throw DataError(where + ": chunk lies outside its section", start);
    if (c.stage_sizes[0] != c.raw_size) throw DataError(where + ": stage sizes do not match the chunk size", start);
    if (stored > kMaxStageBytes) throw DataError(where + ": stored size too large", start);
    try {
        check_chunk_storable(c.pipeline, c.stage_sizes, stored);
    } catch (const DataError&) {
        throw;
    } catch (const Error& e) {
        throw DataError(where + ": " + e.what(), start);
    }
}

std::optional<ChunkRecord> ContainerReader::next(PayloadCheck check) {
    if (ended_) return std::nullopt;
    if (version_ == kStzVersionCompact) return next_compact(check);
    uint64_t start = pos_;
    uint8_t kind;
    read(&kind, 1, "chunk record");
    auto record_hash = std::make_shared<Hasher>();
    Hasher& st = *record_hash;
    st.update({&kind, 1});
    if (kind == static_cast<uint8_t>(ChunkKind::End)) {
        read_end_record(start, st);
        return std::nullopt;
    }
    if (kind != static_cast<uint8_t>(ChunkKind::Data))
        throw DataError("unknown chunk kind " + std::to_string(kind) + " (written by a newer statezip?)", start);
    auto take = [&](uint8_t* dst, size_t n, const char* what) { this->take(st, dst, n, what); };
    uint8_t h[wire::ChunkHead::kSize];
    take(h, sizeof h, "chunk header");
    const wire::ChunkHead ch = wire::ChunkHead::decode(h);
    ChunkRecord c;
    c.index = n_chunks_;
    c.container_offset = start;
    c.section = ch.section;
    c.raw_offset = ch.raw_offset;
    c.raw_size = ch.raw_size;
    const uint32_t stored = ch.stored_size;
    const uint8_t n_stages = ch.n_stages;
    std::string where = "chunk " + std::to_string(n_chunks_);
    if (c.section >= header_.sections.size()) throw DataError(where + ": bad section index", start);
    if (n_stages == 0 || n_stages > kMaxStages)
        throw DataError(where + ": " + std::to_string(n_stages) + " codec stages (1 to " + std::to_string(kMaxStages) + " allowed)", start);
    for (uint8_t i = 0; i < n_stages; ++i) {
        uint8_t sh[wire::StageHead::kSize];
        take(sh, sizeof sh, "codec stage");
        const wire::StageHead stage = wire::StageHead::decode(sh);
        Bytes params(stage.params_len);
        take(params.data(), params.size(), "codec parameters");
        add_stage(c, stage.codec, stage.input_size, std::move(params), where, start);
    }
    check_chunk(c, stored, where, start);
    uint8_t hh[wire::ChunkChecksums::kSize];
    read(hh, sizeof hh, "chunk checksums");
    c.raw_hash = load_le<uint64_t>(hh);
    st.update({hh, 8});
    take_payload(c, stored, check);
    c.record_checksum = load_le<uint64_t>(hh + 8);
    if (check != PayloadCheck::Now) c.record_hash_pending = std::move(record_hash);
    else check_record(st, c);
    seen_.push_back({start, c.section, c.raw_size, stored});
    raw_pos_ += c.raw_size;
    ++n_chunks_;
    return c;
}

void ContainerReader::recycle_payload(Bytes&& payload) {
    // The larger buffer is kept: a chunk's payload is at most kMaxStageBytes (check_chunk).
    if (payload.capacity() <= spare_payload_.capacity()) return;
    spare_payload_ = std::move(payload);
    spare_payload_.clear();
}

void ContainerReader::check_record(const Hasher& record_hash, const ChunkRecord& c) {
    if (record_hash.digest_after(c.payload_bytes()) != c.record_checksum)
        throw DataError("checksum mismatch in chunk " + std::to_string(c.index), c.container_offset);
}

// The record checksum next() left for decoding, if any (a damaged record is named by it).
void ContainerReader::check_pending_record(const ChunkRecord& c) {
    if (c.record_hash_pending) check_record(*c.record_hash_pending, c);
}

// Runs a chunk's decoding, with a codec's error (a stz::Error that is not a DataError) named
// as a corrupt chunk at the chunk's offset. A record checksum left for after decoding is
// checked first on any error: a damaged payload is named as such.
template <class F> void ContainerReader::decoding_chunk(const ChunkRecord& c, F&& decode) const {
    try {
        decode();
    } catch (const DataError&) {
        check_pending_record(c);
        throw;
    } catch (const Error& e) {
        check_pending_record(c);
        throw DataError(std::string("corrupt chunk (") + e.what() + ")", c.container_offset);
    }
}

void ContainerReader::check_before_decode(const ChunkRecord& c) const {
    if (c.payload_source) throw Error("chunk payload not loaded");  // load_payload first
    if (record_check_ == RecordCheck::BeforeDecode || c.record_checks_header) check_pending_record(c);
}

// The decoded chunk is not the one written: the record checksum names a damaged record first.
void ContainerReader::throw_decoded_mismatch(const ChunkRecord& c) {
    check_pending_record(c);
    throw DataError("checksum mismatch in decoded chunk", c.container_offset);
}

Bytes ContainerReader::decode(const ChunkRecord& c) const {
    check_before_decode(c);
    Bytes raw;
    decoding_chunk(c, [&] { raw = decode_pipeline(c.pipeline, c.payload_bytes(), c.stage_sizes); });
    if (hash64(raw) != c.raw_hash) throw_decoded_mismatch(c);
    return raw;
}

void ContainerReader::decode_into(const ChunkRecord& c, uint8_t* dst) const {
    check_before_decode(c);
    const size_t n = static_cast<size_t>(c.raw_size);
    decoding_chunk(c, [&] { decode_pipeline_into(c.pipeline, c.payload_bytes(), c.stage_sizes, dst, n); });
    if (hash64({dst, n}) != c.raw_hash) throw_decoded_mismatch(c);
}

}  // namespace stz
