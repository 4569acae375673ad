#include "pack_records.hpp"

#include <algorithm>
#include <optional>

#include "base/hashing.hpp"

namespace stz {

namespace {

uint64_t head_hash(const uint8_t* head13) { return hash64(ByteSpan(head13, 13)); }

// Reads `length` bytes of a set sequentially from `start`, hashing them (a literal stream
// is decoded as it is read; its checksum is compared when it has been read whole).
class RangeStream final : public InputStream {
public:
    RangeStream(InputSource& f, uint64_t start, uint64_t length) : f_(f), pos_(start), left_(length) {}
    size_t read(uint8_t* dst, size_t n) override {
        n = static_cast<size_t>(std::min<uint64_t>(n, left_));
        if (!n) return 0;
        f_.read_at(pos_, dst, n);
        hash_.update(ByteSpan(dst, n));
        pos_ += n, left_ -= n;
        return n;
    }
    uint64_t drain_and_digest() {
        Bytes buf(1 << 16);
        while (read(buf.data(), buf.size())) {
        }
        return hash_.digest();
    }

private:
    InputSource& f_;
    uint64_t pos_, left_;
    Hasher hash_;
};

// Accepts exactly `limit` bytes (a block's declared size): a crafted block cannot make the
// reader hold more than its head announced and the limits allow.
class BoundedSink final : public OutputSink {
public:
    explicit BoundedSink(uint64_t limit) : limit_(limit) {}  // grows as bytes arrive, not as declared
    void write(const uint8_t* d, size_t n) override {
        if (n > limit_ - out.size()) throw Error("a cell block decodes to more bytes than its head declares");
        out.insert(out.end(), d, d + n);
    }
    Bytes out;

private:
    uint64_t limit_;
};

// Writes a stream into the gaps of a member (the ranges outside its K/V groups), in order.
class GapSink final : public OutputSink {
public:
    GapSink(RandomFile& out, std::vector<std::pair<uint64_t, uint64_t>> gaps) : out_(out), gaps_(std::move(gaps)) {}
    void write(const uint8_t* d, size_t n) override {
        while (n) {
            while (gi_ < gaps_.size() && used_ == gaps_[gi_].second) ++gi_, used_ = 0;
            if (gi_ == gaps_.size()) throw Error("the literal stream holds more bytes than the member's gaps");
            const size_t take = static_cast<size_t>(std::min<uint64_t>(n, gaps_[gi_].second - used_));
            out_.write_at(gaps_[gi_].first + used_, d, take);
            used_ += take, d += take, n -= take, written += take;
        }
    }
    uint64_t written = 0;

private:
    RandomFile& out_;
    std::vector<std::pair<uint64_t, uint64_t>> gaps_;
    size_t gi_ = 0;
    uint64_t used_ = 0;
};

// The member's ranges outside its K/V sections (decode_member checked that these do not overlap).
std::vector<std::pair<uint64_t, uint64_t>> member_gaps(const MemberRecord& m) {
    std::vector<std::pair<uint64_t, uint64_t>> ext, gaps;
    for (const auto& g : m.groups)
        for (size_t j = 0; j < g.offsets.size(); ++j) ext.push_back({g.offsets[j], g.n_cells * g.layout[j].cell_bytes});
    std::sort(ext.begin(), ext.end());
    uint64_t pos = 0;
    for (const auto& [off, len] : ext) {
        if (off > pos) gaps.push_back({pos, off - pos});
        pos = off + len;
    }
    if (m.size > pos) gaps.push_back({pos, m.size - pos});
    return gaps;
}

// Copies run `r` of group `g` (member cells from `pos`) out of a decoded block.
void scatter_run(const Bytes& raw, const BlockHead& bh, const MemberGroup& g, const PackRun& r, uint64_t pos,
                 RandomFile& out) {
    if (bh.layout != g.layout) throw DataError("a member's cell run names a block of another layout", r.block_offset);
    if (r.first > bh.n_cells || r.count > bh.n_cells - r.first)
        throw DataError("a member's cell run reaches past its block's cells", r.block_offset);
    uint64_t base = 0;
    for (size_t j = 0; j < g.layout.size(); ++j) {
        const CellLayout& l = g.layout[j];
        if (!l.elem_bytes) {
            out.write_at(g.offsets[j] + pos * l.cell_bytes, raw.data() + base + r.first * l.cell_bytes, r.count * l.cell_bytes);
        } else {
            const uint64_t channels = l.cell_bytes / l.elem_bytes;
            for (uint64_t ch = 0; ch < channels; ++ch)
                out.write_at(g.offsets[j] + (ch * g.n_cells + pos) * l.elem_bytes,
                             raw.data() + base + (ch * bh.n_cells + r.first) * l.elem_bytes, r.count * l.elem_bytes);
        }
        base += bh.n_cells * l.cell_bytes;
    }
}

}  // namespace

Bytes pack_header() {
    Bytes h(kPackMagic, kPackMagic + 8);
    append_le<uint16_t>(h, kPackVersion);
    append_le<uint16_t>(h, 0);
    append_le<uint32_t>(h, 0);
    append_le<uint64_t>(h, hash64(h));
    return h;
}

RecordHead read_record_head(InputSource& f, uint64_t off) {
    uint8_t h[kRecordHeaderBytes];
    if (off > f.size() || f.size() - off < kRecordHeaderBytes + kRecordTrailerBytes)
        throw DataError("truncated record header", off);
    f.read_at(off, h, sizeof h);
    if (!std::equal(h, h + 4, kRecordMagic)) throw DataError("not a record (bad magic)", off);
    if (load_le<uint64_t>(h + 13) != head_hash(h)) throw DataError("record header checksum mismatch", off);
    RecordHead r;
    if (h[4] < 1 || h[4] > 4) throw DataError("unknown record type " + std::to_string(h[4]), off + 4);
    r.type = static_cast<RecordType>(h[4]);
    r.offset = off;
    r.payload = off + kRecordHeaderBytes;
    r.length = load_le<uint64_t>(h + 5);
    if (r.length > f.size() - r.payload - kRecordTrailerBytes) throw DataError("record reaches past the end of the set", off);
    return r;
}

Bytes read_record_payload(InputSource& f, const RecordHead& h, uint64_t max_bytes) {
    if (h.length > max_bytes)
        throw DataError(std::string(record_type_name(h.type)) + " record larger than a reader accepts", h.offset);
    Bytes p(h.length);
    f.read_at(h.payload, p.data(), p.size());
    uint8_t t[8];
    f.read_at(h.payload + h.length, t, 8);
    if (load_le<uint64_t>(t) != hash64(p))
        throw DataError(std::string(record_type_name(h.type)) + " record checksum mismatch", h.offset);
    return p;
}

Bytes read_record(InputSource& f, uint64_t off, RecordType want, uint64_t max_bytes, RecordHead* head) {
    RecordHead h = read_record_head(f, off);
    if (h.type != want)
        throw DataError(std::string("expected a ") + record_type_name(want) + " record, found a " + record_type_name(h.type), off);
    if (head) *head = h;
    return read_record_payload(f, h, max_bytes);
}

RecordSink::RecordSink(RandomFile& f, uint64_t at, RecordType type) : f_(f), at_(at), pos_(at + kRecordHeaderBytes), type_(type) {
    uint8_t zero[kRecordHeaderBytes] = {};
    f_.write_at(at_, zero, sizeof zero);  // replaced by finish(); a reader rejects it meanwhile
    buf_.reserve(1 << 20);
}

RecordSink::~RecordSink() = default;

void RecordSink::write(const uint8_t* data, size_t n) {
    hash_.update(ByteSpan(data, n));
    length_ += n;
    if (buf_.size() + n > buf_.capacity()) flush();
    if (n >= buf_.capacity()) {
        f_.write_at(pos_, data, n);
        pos_ += n;
        return;
    }
    buf_.insert(buf_.end(), data, data + n);
}

void RecordSink::flush() {
    if (buf_.empty()) return;
    f_.write_at(pos_, buf_.data(), buf_.size());
    pos_ += buf_.size();
    buf_.clear();
}

uint64_t RecordSink::finish(bool sync_before_header) {
    flush();
    uint8_t t[8];
    store_le<uint64_t>(t, hash_.digest());
    f_.write_at(pos_, t, 8);
    pos_ += 8;
    if (sync_before_header) f_.sync();  // the payload reaches the disk before the header that vouches for it
    uint8_t h[kRecordHeaderBytes];
    std::copy(kRecordMagic, kRecordMagic + 4, h);
    h[4] = static_cast<uint8_t>(type_);
    store_le<uint64_t>(h + 5, length_);
    store_le<uint64_t>(h + 13, head_hash(h));
    f_.write_at(at_, h, sizeof h);
    return pos_;
}

Bytes load_block(InputSource& f, uint64_t off, BlockHead& head, const DecompressOptions& dopt) {
    RecordHead rh;
    Bytes payload = read_record(f, off, RecordType::Block, kMaxBlockPayload, &rh);
    SpanReader r(payload, rh.payload);
    head = decode_block_head(r);
    MemoryStream in(ByteSpan(payload).subspan(r.pos()));
    BoundedSink sink(head.raw_bytes());
    decompress_stream(in, sink, dopt);
    if (sink.out.size() != head.raw_bytes()) throw DataError("a cell block decodes to fewer bytes than its head declares", off);
    return std::move(sink.out);
}

const Bytes& BlockCache::get(InputSource& f, uint64_t off, BlockHead& head, const DecompressOptions& dopt) {
    if (auto it = entries_.find(off); it != entries_.end()) {
        it->second.used = ++clock_;
        head = it->second.head;
        last_ = it->second.raw;
        return *last_;
    }
    Bytes raw = load_block(f, off, head, dopt);
    put(off, head, std::move(raw));
    auto it = entries_.find(off);
    if (it != entries_.end()) return *(last_ = it->second.raw);
    return *last_;
}

void BlockCache::put(uint64_t off, const BlockHead& head, Bytes raw) {
    auto p = std::make_shared<const Bytes>(std::move(raw));
    last_ = p;
    if (p->size() > budget_) return;  // used once, not kept
    make_room(p->size());
    held_ += p->size();
    entries_[off] = Entry{head, p, ++clock_};
}

void BlockCache::make_room(uint64_t bytes) {
    while (held_ + bytes > budget_ && !entries_.empty()) {
        auto oldest = entries_.begin();
        for (auto it = entries_.begin(); it != entries_.end(); ++it)
            if (it->second.used < oldest->second.used) oldest = it;
        held_ -= oldest->second.raw->size();
        entries_.erase(oldest);
    }
}

void decode_literal(InputSource& set, const MemberRecord& m, OutputSink& out, const DecompressOptions& dopt) {
    RecordHead lh = read_record_head(set, m.literal_offset);
    if (lh.type != RecordType::Literal) throw DataError("the member's literal stream is not a literal record", m.literal_offset);
    RangeStream rs(set, lh.payload, lh.length);
    decompress_stream(rs, out, dopt);
    uint8_t t[8];
    set.read_at(lh.payload + lh.length, t, 8);
    if (rs.drain_and_digest() != load_le<uint64_t>(t)) throw DataError("literal stream checksum mismatch", lh.offset);
}

void restore_member(InputSource& set, const MemberRecord& m, RandomFile& out, const DecompressOptions& dopt, BlockCache* cache) {
    out.truncate(m.size);
    // The bytes outside the K/V groups, in file order.
    GapSink gaps(out, member_gaps(m));
    decode_literal(set, m, gaps, dopt);
    if (gaps.written != m.literal_bytes) throw DataError("the literal stream is shorter than the member's gaps", m.literal_offset);
    // The cells, block by block (each block decoded once).
    struct Task {
        uint64_t block;
        size_t group, run;
        uint64_t pos;
    };
    std::vector<Task> tasks;
    for (size_t gi = 0; gi < m.groups.size(); ++gi) {
        uint64_t pos = 0;
        for (size_t ri = 0; ri < m.groups[gi].runs.size(); ++ri) {
            tasks.push_back({m.groups[gi].runs[ri].block_offset, gi, ri, pos});
            pos += m.groups[gi].runs[ri].count;
        }
    }
    std::stable_sort(tasks.begin(), tasks.end(), [](const Task& a, const Task& b) { return a.block < b.block; });
    BlockCache one_block(0);
    BlockCache& blocks = cache ? *cache : one_block;
    const Bytes* raw = nullptr;
    BlockHead bh;
    std::optional<uint64_t> loaded;  // no block yet (every u64 is a possible block offset)
    for (const Task& t : tasks) {
        if (!loaded || t.block != *loaded) raw = &blocks.get(set, t.block, bh, dopt), loaded = t.block;
        scatter_run(*raw, bh, m.groups[t.group], m.groups[t.group].runs[t.run], t.pos, out);
    }
}

}  // namespace stz
