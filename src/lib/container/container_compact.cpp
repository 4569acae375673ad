// Version 3 of the .stz container (docs/FORMAT.md, "Version 3"): the records of versions 1
// and 2 in varints, with what is implied or a default left out, and one checksum fewer per
// record: the header and the chunk order are covered by every record's check.
#include "container.hpp"

#include "layout/wire.hpp"

namespace stz {

using namespace container_detail;
using wire::ByteFeed, wire::SpanFeed, wire::get_varint, wire::put_varint;

namespace {

// Permanent ids (0 = the string is written out): the format names the parsers give, and the
// note of a file no parser recognised, which would otherwise be most of a small file's header.
const char* const kKnownFormats[] = {"opaque", "raw", "seqraw", "ggsn", "ggsq", "legacy-full", "legacy-compact",
                                     "legacy-wrapper", "legacy-raw"};
const char* const kKnownNotes[] = {"not a recognised llama.cpp state file: compressed as one opaque section"};
constexpr const char* kDefaultSectionName = "data";

// Header body flags: which optional fields follow.
enum : uint8_t { kHasFormatVersion = 1, kHasDetail = 2, kHasNote = 4, kKnownNote = 8, kHasProperties = 16, kHeaderBits = 31 };
// Section flags.
enum : uint8_t { kTransposed = 1, kHasShape = 2, kHasFilled = 4, kHasName = 8, kHasKindType = 16, kSectionBits = 31 };

template <size_t N> uint64_t known_id(const char* const (&table)[N], const std::string& s) {
    for (size_t i = 0; i < N; ++i)
        if (s == table[i]) return i + 1;
    return 0;
}

void put_str(Bytes& out, const std::string& s) {
    put_varint(out, s.size());
    out.insert(out.end(), s.begin(), s.end());
}

std::string get_str(ByteFeed& f, const char* what) {
    const uint64_t at = f.offset(), n = get_varint(f, what);
    if (n > kMaxHeaderString) throw DataError(std::string(what) + " too long", at);
    const uint8_t* p = f.take(size_t(n), what);
    return std::string(reinterpret_cast<const char*>(p), size_t(n));
}

uint64_t zigzag(int64_t v) { return (uint64_t(v) << 1) ^ uint64_t(v >> 63); }
int64_t unzigzag(uint64_t v) { return int64_t(v >> 1) ^ -int64_t(v & 1); }

void put_section(Bytes& out, const Section& s, bool last) {
    const bool shape = s.rows || s.row_elems, kind_type = s.kind != SectionKind::Opaque || s.type != ElemType::Bytes;
    const bool named = s.name != kDefaultSectionName;
    if (static_cast<uint8_t>(s.kind) > 15 || static_cast<uint8_t>(s.type) > 15)
        throw Error("section kind or type does not fit a version 3 header");
    out.push_back(static_cast<uint8_t>((s.transposed ? kTransposed : 0) | (shape ? kHasShape : 0) |
                                       (s.filled_elems ? kHasFilled : 0) | (named ? kHasName : 0) |
                                       (kind_type ? kHasKindType : 0)));
    if (kind_type) out.push_back(static_cast<uint8_t>(static_cast<uint8_t>(s.kind) | static_cast<uint8_t>(s.type) << 4));
    if (named) put_str(out, s.name);
    if (!last) put_varint(out, s.size);  // the last one ends where the file does
    if (shape) put_varint(out, s.rows), put_varint(out, s.row_elems);
    if (s.filled_elems) put_varint(out, s.filled_elems);
}

Bytes encode_body(const ContainerHeader& h) {
    Bytes body;
    const uint64_t format = known_id(kKnownFormats, h.format), note = known_id(kKnownNotes, h.note);
    put_varint(body, format);
    if (!format) put_str(body, h.format);
    body.push_back(static_cast<uint8_t>((h.format_version != -1 ? kHasFormatVersion : 0) | (h.detail.empty() ? 0 : kHasDetail) |
                                        (h.note.empty() || note ? 0 : kHasNote) | (note ? kKnownNote : 0) |
                                        (h.properties.empty() ? 0 : kHasProperties)));
    put_varint(body, h.original_size);
    if (h.format_version != -1) put_varint(body, zigzag(h.format_version));
    if (!h.detail.empty()) put_str(body, h.detail);
    if (note) put_varint(body, note);
    else if (!h.note.empty()) put_str(body, h.note);
    put_varint(body, h.sections.size());
    for (size_t i = 0; i < h.sections.size(); ++i) put_section(body, h.sections[i], i + 1 == h.sections.size());
    if (!h.properties.empty()) {
        put_varint(body, h.properties.size());
        for (const auto& p : h.properties) {
            put_str(body, p.key);
            body.push_back(p.required ? 1 : 0);
            put_str(body, p.value);
        }
    }
    return body;
}

// Reads one section at `at` in the original; `last`: its size is the rest of the file.
Section get_section(SpanFeed& f, uint64_t original_size, uint64_t at, bool last) {
    const uint64_t where = f.offset();
    const uint8_t bits = *f.take(1, "section");
    if (bits & ~kSectionBits) throw DataError("unknown section flags (written by a newer statezip?)", where);
    Section s;
    if (bits & kHasKindType) {
        const uint8_t kt = *f.take(1, "section");
        auto kind = section_kind_from_u8(kt & 15);
        auto type = elem_type_from_u8(kt >> 4);
        if (!kind || !type) throw DataError("unknown section kind or element type", where);
        s.kind = *kind, s.type = *type;
    }
    s.name = bits & kHasName ? get_str(f, "section name") : kDefaultSectionName;
    s.transposed = bits & kTransposed;
    s.offset = at;
    s.size = last ? original_size - at : get_varint(f, "section");
    if (s.size > original_size - at) throw DataError("section table does not tile the original file", where);
    if (bits & kHasShape) s.rows = get_varint(f, "section"), s.row_elems = get_varint(f, "section");
    if (bits & kHasFilled) s.filled_elems = get_varint(f, "section");
    return s;
}

void get_properties(SpanFeed& f, ContainerHeader& h) {
    const uint64_t n = get_varint(f, "property count");
    if (n > kMaxHeaderProperties) throw DataError("too many header properties (" + std::to_string(n) + ")", f.offset());
    for (uint64_t i = 0; i < n; ++i) {
        HeaderProperty p;
        p.key = get_str(f, "property name");
        const uint8_t flags = *f.take(1, "property flags");
        if (flags & ~1u) throw DataError("unknown property flags (written by a newer statezip?)", f.offset());
        p.required = flags & 1;
        p.value = get_str(f, "property value");
        check_property(h, p, f.offset());
        h.properties.push_back(std::move(p));
    }
}

ContainerHeader decode_body(ByteSpan body, uint64_t base) {
    SpanFeed f(body, base);
    ContainerHeader h;
    const uint64_t format = get_varint(f, "header");
    if (format > std::size(kKnownFormats)) throw DataError("unknown format id " + std::to_string(format), base);
    h.format = format ? kKnownFormats[format - 1] : get_str(f, "header");
    const uint64_t bits_at = f.offset();
    const uint8_t bits = *f.take(1, "header");
    if (bits & ~kHeaderBits || (bits & kHasNote && bits & kKnownNote))
        throw DataError("unknown header flags (written by a newer statezip?)", bits_at);
    h.original_size = get_varint(f, "header");
    if (bits & kHasFormatVersion) h.format_version = unzigzag(get_varint(f, "header"));
    if (bits & kHasDetail) h.detail = get_str(f, "header");
    if (bits & kKnownNote) {
        const uint64_t note = get_varint(f, "header");
        if (note == 0 || note > std::size(kKnownNotes)) throw DataError("unknown note id " + std::to_string(note), bits_at);
        h.note = kKnownNotes[note - 1];
    }
    if (bits & kHasNote) h.note = get_str(f, "header");
    const uint64_t n = get_varint(f, "section count");
    if (n > f.remaining()) throw DataError("section count " + std::to_string(n) + " does not fit the header", f.offset());
    uint64_t at = 0;
    for (uint64_t i = 0; i < n; ++i) {
        h.sections.push_back(get_section(f, h.original_size, at, i + 1 == n));
        at += h.sections.back().size;
    }
    if (at != h.original_size) throw DataError("section table does not cover the original file", f.offset());
    if (bits & kHasProperties) get_properties(f, h);
    if (f.remaining()) throw DataError("unexpected bytes in header", f.offset());
    return h;
}

// After the fixed bytes: varint (stored length << 1 | compressed), then the stored body; a
// compressed body is varint size, then a zstd frame.
ContainerHeader decode_stored_body(ByteSpan stored, bool compressed, uint64_t base) {
    if (!compressed) return decode_body(stored, base);
    SpanFeed f(stored, base);
    const uint64_t raw = get_varint(f, "header");
    const Bytes body = decompress_header_body(stored.subspan(f.pos()), raw, base);
    return decode_body(body, base);
}

}  // namespace

Bytes container_detail::encode_compact_header(const ContainerHeader& h) {
    const Bytes body = encode_body(h);
    if (body.size() > kMaxHeaderBytes) throw Error("the section table needs more header bytes than a .stz reader accepts");
    Bytes size_field;
    put_varint(size_field, body.size());
    std::optional<Bytes> packed = compress_header_body(body, size_field.size());
    if (packed) std::copy(size_field.begin(), size_field.end(), packed->begin());
    const Bytes& stored = packed ? *packed : body;
    Bytes out(kStzMagic, kStzMagic + 8);
    append_le<uint16_t>(out, kStzVersionCompact);
    put_varint(out, uint64_t(stored.size()) << 1 | (packed ? 1 : 0));
    append_bytes(out, stored);
    return out;
}

// ---- writer ----

Bytes ContainerWriter::compact_record(uint64_t raw_offset, uint32_t raw_size, uint64_t raw_hash, const Pipeline& p,
                                      const EncodedChunk& enc) const {
    wire::CompactChunkHead head{raw_size, enc.payload.size(), {}};
    head.stages.reserve(p.stages.size());
    size_t head_bytes = 2 * wire::kMaxVarintBytes + wire::kCompactChecksumBytes;
    for (size_t i = 0; i < p.stages.size(); ++i) {
        head.stages.push_back({p.stages[i].codec->id(), enc.stage_input_sizes[i], p.stages[i].params});
        head_bytes += 2 * wire::kMaxVarintBytes + 2 + p.stages[i].params.size();
    }
    Bytes rec;
    rec.reserve(head_bytes);  // (one allocation, not one per doubling)
    head.encode(rec);
    append_le<uint64_t>(rec, raw_hash);
    Hasher h;
    wire::begin_compact_check(h, header_hash_, raw_offset);
    h.update(rec);
    h.update(enc.payload);
    append_le<uint64_t>(rec, h.digest());
    return rec;
}

void ContainerWriter::finish_compact(uint64_t content_hash) {
    Bytes rec{0};  // a chunk head of raw size 0
    if (n_chunks_ >= 2) append_le<uint64_t>(rec, content_hash);  // one chunk: its raw hash; none: nothing to hash
    end_check_->update(rec);
    if (n_chunks_ != 1) append_le<uint64_t>(rec, end_check_->digest());  // one chunk: its check covers all
    put(rec);
}

// ---- streaming reader ----

static_assert(kMaxStageBytes <= UINT32_MAX, "ChunkRecord::payload_pending holds a payload's size");

// Both layouts' readers (next, next_compact) take their payloads here.
void ContainerReader::take_payload(ChunkRecord& c, size_t n, PayloadCheck check) {
    // An input in memory (a C API caller's buffer) is not copied: the payload is used where
    // it lies, whatever the check's timing.
    InputSource* const positioned = in_.positioned();
    const bool memory = positioned && positioned->memory();
    InputSource* src = memory || check == PayloadCheck::InDecodeRead ? positioned : nullptr;
    if (!src) return read_growing(c.payload, n, "chunk payload");
    // The error a sequential read gives where the bytes run out: the input is the same.
    const uint64_t size = src->size();
    if (pos_ > size || n > size - pos_) {
        ran_out_ = true;
        throw DataError("truncated chunk payload", std::max(pos_, size));
    }
    in_.skip(n);
    if (memory) {
        c.payload_in_input = ByteSpan(src->memory() + pos_, n);
    } else {
        if (c.payload.capacity() == 0 && spare_payload_.capacity() > 0) c.payload.swap(spare_payload_);
        c.payload_source = src;
        c.payload_at = pos_;
        c.payload_pending = static_cast<uint32_t>(n);
    }
    pos_ += n;
}

void ContainerReader::load_payload(ChunkRecord& c) {
    if (!c.payload_source) return;
    c.payload.resize(c.payload_pending);  // not zero-filled (Bytes' allocator): read_at fills it
    c.payload_source->read_at(c.payload_at, c.payload.data(), c.payload.size());
    c.payload_source = nullptr;
    c.payload_pending = 0;
}

// Reads a record's head from the stream, keeping its bytes (to hash them).
class StreamFeed final : public ByteFeed {
public:
    StreamFeed(ContainerReader& r, Bytes& kept) : r_(r), kept_(kept) {}
    const uint8_t* take(size_t n, const char* what) override {
        const size_t at = kept_.size();
        kept_.resize(at + n);
        r_.read(kept_.data() + at, n, what);
        return kept_.data() + at;
    }
    uint64_t offset() const override { return r_.pos_; }

private:
    ContainerReader& r_;
    Bytes& kept_;
};

void ContainerReader::read_compact_header(Bytes& all) {
    StreamFeed feed(*this, all);
    const uint64_t tag = get_varint(feed, "header");
    const uint64_t len = tag >> 1;
    if (len > kMaxHeaderBytes)
        throw DataError("header length " + std::to_string(len) + " is too large", wire::kCompactFixedBytes);
    const size_t body_at = all.size();
    read_growing(all, size_t(len), "header");
    header_hash_ = hash64(all);
    end_check_ = std::make_unique<Hasher>();
    wire::begin_compact_end_check(*end_check_, header_hash_);
    header_ = decode_stored_body({all.data() + body_at, size_t(len)}, tag & 1, body_at);
}

uint32_t ContainerReader::section_at(uint64_t raw_offset, uint64_t start) {
    const auto& s = header_.sections;
    while (section_cursor_ < s.size() && s[section_cursor_].offset + s[section_cursor_].size <= raw_offset) ++section_cursor_;
    if (section_cursor_ == s.size())
        throw DataError("chunk " + std::to_string(n_chunks_) + " lies past the end of the original file", start);
    return section_cursor_;
}

std::optional<ChunkRecord> ContainerReader::next_compact(PayloadCheck check) {
    const uint64_t start = pos_;
    Bytes& rec = record_head_;  // (kept: a fresh one grew by reallocation, varint by varint, every chunk)
    rec.clear();
    StreamFeed feed(*this, rec);
    wire::CompactChunkHead head = wire::CompactChunkHead::decode(feed);
    if (head.raw_size == 0) {
        read_compact_end(start);
        return std::nullopt;
    }
    const std::string where = "chunk " + std::to_string(n_chunks_);
    if (head.raw_size > kMaxChunkRaw) throw DataError(where + ": bad chunk size", start);
    if (head.stored_size > kMaxStageBytes) throw DataError(where + ": stored size too large", start);
    ChunkRecord c;
    c.index = n_chunks_;
    c.container_offset = start;
    c.raw_offset = raw_pos_;
    c.raw_size = static_cast<uint32_t>(head.raw_size);
    c.section = section_at(raw_pos_, start);
    c.pipeline.stages.reserve(head.stages.size());
    c.stage_sizes.reserve(head.stages.size());
    for (auto& s : head.stages) add_stage(c, s.codec, s.input_size, std::move(s.params), where, start);
    check_chunk(c, head.stored_size, where, start);
    const uint8_t* sums = feed.take(wire::kCompactChecksumBytes, "chunk checksums");
    c.raw_hash = load_le<uint64_t>(sums);
    c.record_checksum = load_le<uint64_t>(sums + 8);
    auto record_hash = std::make_shared<Hasher>();
    wire::begin_compact_check(*record_hash, header_hash_, c.raw_offset);
    record_hash->update({rec.data(), rec.size() - 8});  // through raw_hash
    end_check_->update(rec);
    take_payload(c, size_t(head.stored_size), check);
    if (check != PayloadCheck::Now) c.record_hash_pending = std::move(record_hash);
    else check_record(*record_hash, c);
    c.record_checks_header = n_chunks_ == 0;
    last_raw_hash_ = c.raw_hash;
    raw_pos_ += c.raw_size;
    ++n_chunks_;
    return c;
}

void ContainerReader::read_compact_end(uint64_t start) {
    uint8_t rest[16];
    size_t n = 0;
    if (n_chunks_ >= 2) read(rest, 8, "end record"), n = 8;
    end_check_->update({&wire::kCompactEndTag, 1});
    end_check_->update({rest, n});
    content_hash_ = n_chunks_ >= 2 ? load_le<uint64_t>(rest) : n_chunks_ == 1 ? last_raw_hash_ : hash64({});
    if (n_chunks_ != 1) {
        read(rest + 8, 8, "end record");
        if (load_le<uint64_t>(rest + 8) != end_check_->digest()) throw DataError("end record checksum mismatch", start);
    }
    if (raw_pos_ != header_.original_size)
        throw DataError("chunks cover " + std::to_string(raw_pos_) + " of " + std::to_string(header_.original_size) + " bytes",
                        start);
    uint8_t extra;
    if (in_.read(&extra, 1) != 0) throw DataError("unexpected data after the end of the .stz stream", pos_);
    ended_ = true;
}

ContainerHeader read_checked_header(InputStream& in) {
    ContainerReader r(in);
    if (r.version() == kStzVersionCompact) {
        try {
            (void)r.next(PayloadCheck::Now);
        } catch (const DataError&) {
            if (!r.ran_out()) throw;
        }
    }
    return r.header();
}

// ---- listing ----

namespace {

// Reads the record at `at` of a one-chunk file in full and checks it: without an end check,
// its check is what covers the header and the record for a lister too (one chunk at most
// kMaxStageBytes is read, never decoded).
void check_only_chunk(InputSource& in, uint64_t at, size_t head_bytes, uint64_t stored, uint64_t header_hash) {
    Bytes head(head_bytes);
    in.read_at(at, head.data(), head.size());
    Hasher h;
    wire::begin_compact_check(h, header_hash, 0);
    h.update({head.data(), head.size() - 8});
    Bytes block;
    for (uint64_t done = 0; done < stored;) {
        block.resize(size_t(std::min<uint64_t>(stored - done, 1u << 20)));
        in.read_at(at + head_bytes + done, block.data(), block.size());
        h.update(block);
        done += block.size();
    }
    if (h.digest() != load_le<uint64_t>(head.data() + head.size() - 8)) throw DataError("checksum mismatch in chunk 0", at);
}

// Reads `in` a window at a time, so that walking many small records costs about one read per
// 4 KiB of file, not one per record.
class ReadAhead {
public:
    explicit ReadAhead(InputSource& in) : in_(in) {}
    // At least min(need, bytes left) bytes from `pos` on.
    ByteSpan at(uint64_t pos, size_t need) {
        const uint64_t want = std::min<uint64_t>(need, in_.size() - pos);
        if (pos < start_ || pos + want > start_ + buf_.size()) {
            start_ = pos;
            buf_.resize(size_t(std::min<uint64_t>(std::max<size_t>(need, kWindow), in_.size() - pos)));
            in_.read_at(pos, buf_.data(), buf_.size());
        }
        return ByteSpan(buf_).subspan(size_t(pos - start_));
    }

private:
    static constexpr size_t kWindow = 4096;
    InputSource& in_;
    uint64_t start_ = 0;
    Bytes buf_;
};

}  // namespace

ContainerListing list_compact_container(InputSource& in) {
    ContainerListing L;
    const uint64_t size = L.container_size = in.size();
    Bytes fixed(size_t(std::min<uint64_t>(size, wire::kCompactFixedBytes + wire::kMaxVarintBytes)));
    in.read_at(0, fixed.data(), fixed.size());
    SpanFeed ff(fixed, 0);
    ff.take(wire::kCompactFixedBytes, "header");
    const uint64_t tag = get_varint(ff, "header"), len = tag >> 1, body_at = ff.pos();
    if (len > kMaxHeaderBytes || len > size - body_at) throw DataError("bad header length", wire::kCompactFixedBytes);
    Bytes hdr(size_t(body_at + len));
    in.read_at(0, hdr.data(), hdr.size());
    const uint64_t header_hash = hash64(hdr);
    L.header = decode_stored_body({hdr.data() + body_at, size_t(len)}, tag & 1, body_at);
    // The chunk heads, one read each, up to the end record; each at least kMinCompactRecordHead
    // bytes, so the walk is bounded by the file's size. The end check covers them all.
    Hasher end_check;
    wire::begin_compact_end_check(end_check, header_hash);
    uint64_t at = hdr.size(), raw_total = 0;
    uint32_t section = 0;
    size_t only_head = 0;
    uint64_t only_stored = 0, only_raw_hash = 0;
    ReadAhead ahead(in);
    for (;;) {
        const ByteSpan window = ahead.at(at, wire::kMaxCompactRecordHead);
        SpanFeed f(window, at);
        const wire::CompactChunkHead head = wire::CompactChunkHead::decode(f);
        if (head.raw_size == 0) break;
        const uint64_t where = at;
        if (head.raw_size > kMaxChunkRaw || head.raw_size > L.header.original_size - raw_total)
            throw DataError("bad chunk size", where);
        if (head.stored_size > kMaxStageBytes) throw DataError("stored size too large", where);
        const uint8_t* sums = f.take(wire::kCompactChecksumBytes, "chunk checksums");
        const auto& secs = L.header.sections;
        while (section < secs.size() && secs[section].offset + secs[section].size <= raw_total) ++section;
        if (section == secs.size() || raw_total + head.raw_size > secs[section].offset + secs[section].size)
            throw DataError("chunk lies outside its section", where);
        if (head.stored_size > size - at - f.pos()) throw DataError("truncated chunk payload", where);
        end_check.update({window.data(), f.pos()});
        L.index.push_back({at, section, static_cast<uint32_t>(head.raw_size), static_cast<uint32_t>(head.stored_size)});
        if (L.index.size() == 1) only_head = f.pos(), only_stored = head.stored_size, only_raw_hash = load_le<uint64_t>(sums);
        raw_total += head.raw_size;
        at += f.pos() + head.stored_size;
    }
    const size_t n = L.index.size();
    const uint64_t end_bytes = 1 + (n >= 2 ? 8 : 0) + (n != 1 ? 8 : 0);
    if (size - at != end_bytes) throw DataError(size - at < end_bytes ? "truncated end record" : "unexpected data after the end record", at);
    Bytes end(end_bytes);
    in.read_at(at, end.data(), end.size());
    const size_t hashed = n >= 2 ? 9 : 1;
    end_check.update({end.data(), hashed});
    if (n != 1 && load_le<uint64_t>(end.data() + hashed) != end_check.digest()) throw DataError("end record checksum mismatch", at);
    if (raw_total != L.header.original_size) throw DataError("the chunk list does not cover the original size", at);
    if (n == 1) check_only_chunk(in, L.index[0].container_offset, only_head, only_stored, header_hash);
    L.content_hash = n >= 2 ? load_le<uint64_t>(end.data() + 1) : n == 1 ? only_raw_hash : hash64({});
    return L;
}

}  // namespace stz
