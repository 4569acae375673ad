#include "engine.hpp"

#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>

#include "plan/head_repeats.hpp"
#include "rebuild/patch_decode.hpp"
#include "base/thread_pool.hpp"

namespace stz {

namespace {

// The whole-file hash, fed in file order by whichever worker thread is free: the thread that
// finishes the piece next in order hashes it (while it is still in its cache) and then every
// later piece already waiting. Keeps the serial hash off the thread that reads and writes.
// A piece must stay valid until hashed(seq) returns.
class OrderedHasher {
public:
    void add(uint64_t seq, ByteSpan piece) {
        std::unique_lock<std::mutex> lk(m_);
        waiting_.emplace(seq, piece);
        if (busy_ || stopped_) return;  // the hashing thread will find it
        busy_ = true;
        for (auto it = waiting_.find(next_); !stopped_ && it != waiting_.end(); it = waiting_.find(next_)) {
            const ByteSpan p = it->second;
            waiting_.erase(it);
            lk.unlock();
            hash_.update(p);
            lk.lock();
            ++next_;
            cv_.notify_all();
        }
        busy_ = false;
        cv_.notify_all();
    }
    // Waits until every piece up to `seq` is hashed: the caller added them all (each job adds its
    // piece before its result is visible, and results are taken in order), so this ends.
    void hashed(uint64_t seq) {
        std::unique_lock<std::mutex> lk(m_);
        cv_.wait(lk, [&] { return next_ > seq; });
    }
    uint64_t digest() const { return hash_.digest(); }
    // No piece is hashed any more once this returns: called before the results that hold the
    // pieces are destroyed (a failed write leaves later pieces waiting).
    void stop() {
        std::unique_lock<std::mutex> lk(m_);
        stopped_ = true;
        cv_.wait(lk, [&] { return !busy_; });
    }

private:
    std::mutex m_;
    std::condition_variable cv_;
    std::map<uint64_t, ByteSpan> waiting_;
    uint64_t next_ = 0;
    bool busy_ = false, stopped_ = false;
    Hasher hash_;
};

// Inputs this small are coded on the calling thread: a worker started for them would start
// cold (its malloc arena's pages faulted in again, per-thread rANS tables and zstd contexts
// built again), which on a file of a few hundred KiB cost more than its overlap of reading
// with coding gains; with several threads only a file of one chunk's size, which cannot be
// split between them, stays inline. (The size is the header's claim when decoding: it only
// chooses the schedule.)
constexpr uint64_t kInlineBytesOneThread = 16ull << 20, kInlineBytesThreads = 1ull << 20;
bool runs_inline(unsigned threads, uint64_t input_bytes) {
    return input_bytes <= (threads <= 1 ? kInlineBytesOneThread : kInlineBytesThreads);
}

// A chunk being encoded holds its raw bytes, the stage buffers of the alternative being
// tried and the best output so far: about four times its size; one more where alternatives
// begin alike (the output of the stages they share is kept for the next one).
uint64_t encode_cost_factor(const std::vector<Pipeline>& alternatives) {
    for (size_t a = 0; a + 1 < alternatives.size(); ++a)
        if (shared_stages(alternatives[a], alternatives[a + 1])) return 5;
    return 4;
}

struct Encoded {
    EncodedChunk enc;
    uint64_t hash = 0;
    Pipeline recipe;  // what the chunk's record lists: the alternative kept, less its unchanged stages
    Bytes record;  // ContainerWriter::chunk_record (a const member), made by the worker
    Bytes raw;     // the chunk's bytes: kept until the whole-file hash has them, then reused
};

// Chunks below this are stored without trying their pipelines: no codec's framing pays for itself
// on so few bytes (a small quantised cache has a dozen such sections: its 12-byte header, each V
// layer's 12-byte header, the architecture's name; zstd set up per call for each of them was 6 % of its
// compression), and no corpus file has a chunk under 128 bytes that any pipeline shrank.
constexpr size_t kMinTriedChunk = 16;

Encoded encode_chunk(const std::vector<Pipeline>& alternatives, const Pipeline& store, ByteSpan raw) {
    Encoded d;
    d.hash = hash64(raw);
    StagePrefix prefix;  // what the stages this alternative shares with the one before made
    const Pipeline* used = nullptr;
    for (size_t a = 0; a < alternatives.size() && raw.size() >= kMinTriedChunk; ++a) {
        const Pipeline& p = alternatives[a];
        const size_t keep = a + 1 < alternatives.size() ? shared_stages(p, alternatives[a + 1]) : 0;
        EncodedChunk e = encode_pipeline(p, raw, prefix, keep, true);
        if (!used || e.payload.size() < d.enc.payload.size()) d.enc = std::move(e), used = &p;
    }
    if (!used || d.enc.payload.size() >= raw.size()) d.enc = encode_pipeline(store, raw), used = &store;  // never expand
    d.recipe = chunk_recipe(*used, d.enc);
    return d;
}

// Per parsed section: raw and stored bytes; a merged section's stored bytes are shared out
// in proportion to the raw sizes of the parsed sections it holds.
std::vector<SectionStats> per_parsed_section(const ParsedFile& parsed, const Plan& plan,
                                             const std::vector<uint64_t>& stored) {
    std::vector<SectionStats> out;
    out.reserve(parsed.sections.size());
    for (size_t i = 0; i < parsed.sections.size(); ++i) {
        const uint32_t w = plan.written_of[i];
        const uint64_t raw = parsed.sections[i].size, whole = plan.header.sections[w].size;
        const uint64_t share = whole ? static_cast<uint64_t>(static_cast<long double>(stored[w]) * raw / whole) : 0;
        out.push_back({plan.sections[w].spec, raw, share});
    }
    return out;
}

// Chunk buffers handed back by the writing thread and reused for later chunks, so that a long
// input does not allocate (and fault in) a fresh buffer per chunk. Holds at most `max` buffers.
class BufferPool {
public:
    explicit BufferPool(size_t max) : max_(max) {}
    Bytes take(size_t n) {
        Bytes b;
        {
            std::lock_guard<std::mutex> lk(m_);
            if (!free_.empty()) b = std::move(free_.back()), free_.pop_back();
        }
        b.clear();    // a smaller buffer that must grow copies nothing
        b.resize(n);  // not zero-filled (Bytes' allocator): read_at overwrites every byte
        return b;
    }
    void give(Bytes&& b) {
        std::lock_guard<std::mutex> lk(m_);
        if (free_.size() < max_) free_.push_back(std::move(b));
    }

private:
    std::mutex m_;
    std::vector<Bytes> free_;
    size_t max_;
};

// Executes a plan: chunks are read in file order (by the workers themselves when the input
// allows concurrent reads and there are several: the calling thread then only writes), encoded
// on the pool, fed to the whole-file hash in order by whichever worker is free, and written in
// order. Returns the stored bytes per written section.
std::vector<uint64_t> execute(InputSource& in, const Plan& plan, ContainerWriter& w, const CompressOptions& opt) {
    Pipeline store;
    store.stages.push_back({find_codec("store"), {}});
    std::vector<uint64_t> stored(plan.sections.size(), 0);
    OrderedHasher whole;
    uint64_t done = 0;
    const unsigned threads = std::max(1u, opt.threads);
    const bool inline_run = runs_inline(threads, in.size());
    // A source that is memory (the C API's buffers, bench) lends its chunks: each is encoded
    // and hashed where it lies, not copied into a chunk buffer first.
    const uint8_t* const lent = in.memory();
    const bool workers_read = !lent && !inline_run && threads > 1 && in.concurrent_reads();
    const size_t max_jobs = 2 * size_t(threads);
    BufferPool buffers(max_jobs + 1);
    ThreadPool pool = inline_run ? ThreadPool(ThreadPool::Inline{}) : ThreadPool(threads);
    OrderedQueue<Encoded, size_t> queue(pool, max_jobs, opt.memory_budget, [&](const size_t& ci, Encoded&& d) {
        const ChunkJob& j = plan.chunks[ci];
        whole.hashed(ci);  // before its raw bytes are reused
        buffers.give(std::move(d.raw));
        w.add_record(d.record, j.section, j.size, d.enc);
        stored[j.section] += d.enc.payload.size();
        done += j.size;
        if (opt.progress) opt.progress(done, in.size(), plan.header.sections[j.section].name);
    });
    struct StopHashing {
        OrderedHasher& h;
        ~StopHashing() { h.stop(); }
    } stop_hashing{whole};  // destroyed before the queue and its results
    for (size_t ci = 0; ci < plan.chunks.size(); ++ci) {
        const ChunkJob& j = plan.chunks[ci];
        const std::vector<Pipeline>* alts = &plan.sections[j.section].alternatives;
        const uint64_t cost = encode_cost_factor(*alts) * j.size;
        queue.make_room(cost);
        auto raw = std::make_shared<Bytes>();
        if (lent && (j.offset > in.size() || j.size > in.size() - j.offset)) throw Error("a chunk lies past the end of the input");
        if (!workers_read && !lent) {
            *raw = buffers.take(j.size);
            in.read_at(j.offset, raw->data(), j.size);
        }
        queue.submit(ci, cost, [&, alts, raw, ci, j] {
            if (workers_read) {
                *raw = buffers.take(j.size);
                in.read_at(j.offset, raw->data(), j.size);
            }
            const ByteSpan bytes = lent ? ByteSpan(lent + j.offset, j.size) : ByteSpan(raw->data(), j.size);
            Encoded d = encode_chunk(*alts, store, bytes);
            d.record = w.chunk_record(j.section, j.offset, j.size, d.hash, d.recipe, d.enc);
            whole.add(ci, bytes);
            d.raw = std::move(*raw);  // the same buffer: the piece stays valid
            return d;
        });
    }
    queue.drain();
    w.finish(whole.digest());
    return stored;
}

}  // namespace

CompressResult compress_stream(InputSource& in, OutputSink& out, const CompressOptions& opt) {
    ParsedFile parsed = parse_state_file(in, opt.hints);
    return compress_parsed(in, parsed, out, opt);
}

// The output never exceeds the input by more than expansion_allowance: a plan whose
// container overhead could exceed it (many sections for their size) is tried into memory
// first, for inputs small enough (where such structures occur), and replaced by the strict
// fallback plan when the data did not compress enough to pay for it.
static Plan plan_with_properties(const ParsedFile& parsed, const CompressOptions& opt, PlanLimit limit) {
    Plan plan = make_plan(parsed, opt.codec, opt.chunk_bytes, limit);
    for (const auto& p : opt.properties) plan.header.set_property(p.key, p.value, p.required);
    check_header_storable(plan.header);
    return plan;
}

// `plan`'s container written to `out` if it takes at most `limit` bytes (`stored` and `bytes`
// set); else false with nothing written. A sink that can start over (the C API's buffer) is
// written directly and emptied again if the container grew past `limit` (or past the sink's
// room: the strict plan may still fit); any other is given the bytes from a trial in memory.
// (The trial's growing buffer and its copy were 5-8 % of a small file's compression.)
static bool write_if_within(InputSource& in, const Plan& plan, OutputSink& out, uint64_t limit,
                            const CompressOptions& opt, std::vector<uint64_t>& stored, uint64_t& bytes) {
    if (out.can_start_over()) {
        try {
            ContainerWriter w(out, plan.header, opt.container);
            std::vector<uint64_t> s = execute(in, plan, w, opt);
            if (w.bytes_written() <= limit) {
                stored = std::move(s), bytes = w.bytes_written();
                return true;
            }
        } catch (const OutputFull&) {
        }
        out.start_over();
        return false;
    }
    MemorySink trial;
    ContainerWriter w(trial, plan.header, opt.container);
    std::vector<uint64_t> s = execute(in, plan, w, opt);
    if (w.bytes_written() > limit) return false;
    out.write(trial.out.data(), trial.out.size());
    stored = std::move(s), bytes = w.bytes_written();
    return true;
}

static CompressResult compress_exact(InputSource& in, const ParsedFile& as_parsed, OutputSink& out,
                                    const CompressOptions& opt) {
    check_tiling(as_parsed.sections, in.size());
    // Repeated KV heads, found on a sample: the plan codes one copy of each.
    const std::optional<ParsedFile> with_repeats = find_head_repeats(in, as_parsed);
    const ParsedFile& parsed = with_repeats ? *with_repeats : as_parsed;
    Plan plan = plan_with_properties(parsed, opt, PlanLimit::Structure);
    const uint64_t allowance = expansion_allowance(in.size());
    std::vector<uint64_t> stored;
    CompressResult res;
    res.original_bytes = in.size();
    bool written = false;
    if (plan.overhead_bound > allowance && in.size() <= opt.memory_budget / 4) {
        written = write_if_within(in, plan, out, in.size() + allowance, opt, stored, res.compressed_bytes);
        if (!written) plan = plan_with_properties(parsed, opt, PlanLimit::Strict);
    }
    if (!written) {
        ContainerWriter w(out, plan.header, opt.container);
        stored = execute(in, plan, w, opt);
        res.compressed_bytes = w.bytes_written();
    }
    res.layout = plan.layout;
    res.sections = per_parsed_section(parsed, plan, stored);
    if (plan.layout == PlanLayout::AsParsed) {
        res.parsed = parsed;
    } else {  // the facts without the (possibly millions of) parsed sections
        ParsedFile& p = res.parsed;
        p.format = parsed.format, p.version = parsed.version, p.detail = parsed.detail, p.arch = parsed.arch;
        p.n_tokens = parsed.n_tokens, p.n_cells = parsed.n_cells, p.n_layer = parsed.n_layer;
        p.n_ctx = parsed.n_ctx, p.n_embd = parsed.n_embd;
        p.sections = plan.header.sections;
        p.note = plan.header.note;
    }
    return res;
}

// Lossy: the error is measured first (the header, written first, records it), then the file
// is compressed as read through the rounding. When no value changes (nothing to round, or
// values already rounded) the output is the exact compression and does not claim to be lossy.
CompressResult compress_parsed(InputSource& in, const ParsedFile& parsed, OutputSink& out, const CompressOptions& opt) {
    if (!opt.lossy.active()) return compress_exact(in, parsed, out, opt);
    check_tiling(parsed.sections, in.size());
    LossyReport report = measure_lossy(in, parsed, plan_lossy(parsed, opt.lossy));
    CompressOptions exact = opt;
    exact.lossy = {};
    CompressResult res;
    if (report.k.changed + report.v.changed == 0) {
        res = compress_exact(in, parsed, out, exact);
        res.lossy = std::move(report);
        return res;
    }
    exact.properties.push_back({kLossyProperty, report.summary(), false});
    RoundingSource rounded(in, parsed, report.plan);
    res = compress_exact(rounded, parsed, out, exact);
    res.lossy = std::move(report);
    return res;
}

uint64_t chunk_decode_cost(const ChunkRecord& c) {
    // The decoded chunk counts twice: the last stage's output and its copy in a sink's memory.
    uint64_t cost = c.payload_size() + c.raw_size;
    for (uint64_t s : c.stage_sizes) cost += s;  // the reader caps each stage size: no overflow
    return cost;
}

DecompressResult decompress_stream(InputStream& in, OutputSink& out, const DecompressOptions& opt) {
    ContainerReader r(in);
    r.set_record_check(opt.record_check);
    DecompressResult res;
    res.header = r.header();
    // A --patch-from file: the stored stream goes through the patch sink, which adds REF's bytes.
    std::unique_ptr<PatchSink> patch;
    if (res.header.property(kReferenceProperty)) patch = std::make_unique<PatchSink>(res.header, opt.reference, out);
    OutputSink& sink = patch ? *patch : out;
    const unsigned threads = std::max(1u, opt.threads);
    const bool inline_run = runs_inline(threads, res.header.original_size);
    ThreadPool pool = inline_run ? ThreadPool(ThreadPool::Inline{}) : ThreadPool(threads);
    // With several workers, a positioned input gives each decode job its own payload to read and
    // a positioned output (a new regular file) takes each chunk at its offset from the job that
    // decoded it: the copies into and out of the kernel, most of the work on a fast-decoding
    // file, then run on every thread instead of all on the calling thread, which only parses
    // record heads. With one worker the calling thread's reading and writing overlaps the
    // worker's decoding as it is.
    const bool spread_io = !inline_run && threads > 1;
    OutputSink* direct = spread_io && !patch && out.positioned_writes() ? &out : nullptr;
    // A sink with memory of its own (a caller's buffer) takes each chunk decoded straight into
    // its place, on any schedule: no copy of the output at all.
    OutputSink* in_memory = !patch && out.memory_at(0, 0) ? &out : nullptr;
    const PayloadCheck check = spread_io ? PayloadCheck::InDecodeRead : PayloadCheck::InDecode;
    // A decoded chunk (empty when it was decoded into the sink's memory), its size, and the
    // payload buffer it came from (recycled for a later chunk).
    struct Decoded {
        Bytes raw, payload;
        size_t size = 0;
    };
    OrderedQueue<Decoded, uint32_t> queue(  // tagged with the chunk's section
        pool, 2 * size_t(threads), opt.memory_budget, [&](const uint32_t& section, Decoded&& d) {
            r.recycle_payload(std::move(d.payload));
            if (!direct && !in_memory) sink.write(d.raw.data(), d.raw.size());
            res.bytes_out += d.size;
            if (opt.progress) opt.progress(res.bytes_out, res.header.original_size, res.header.sections[section].name);
        });
    // The decode jobs check each chunk's record checksum (payload, head, raw offset; before
    // decoding or only on a failure, as opt.record_check says) and its raw_hash after decoding:
    // the reading thread only reads and writes, so that it keeps the workers fed. The output is
    // not hashed again as a whole: the reader checks that the chunks are in order and tile the
    // file (each raw offset is the running position, the end check or index covers every head,
    // the running position reaches the original size), so chunks whose raw_hash matched are
    // the whole file that content_hash was taken of (docs/FORMAT.md). The output is the
    // original once every chunk is in: a positioned output is a temporary file that the caller
    // renames into place only after this returns.
    for (;;) {
        std::optional<ChunkRecord> c;
        try {
            c = r.next(check);
        } catch (const DataError&) {
            queue.drain();  // a damaged chunk before this point is named first, as when checked at once
            throw;
        }
        if (!c) break;
        auto rec = std::make_shared<ChunkRecord>(std::move(*c));
        const uint64_t cost = chunk_decode_cost(*rec);
        queue.submit(rec->section, cost, [&r, rec, direct, in_memory] {
            ContainerReader::load_payload(*rec);
            Decoded d;
            d.size = rec->raw_size;
            if (in_memory) r.decode_into(*rec, in_memory->memory_at(rec->raw_offset, rec->raw_size));
            else d.raw = r.decode(*rec);
            d.payload = std::move(rec->payload);
            if (direct && !in_memory) direct->write_at(rec->raw_offset, d.raw.data(), d.raw.size());
            return d;
        });
    }
    queue.drain();
    if (patch) {
        patch->finish();
        res.bytes_out = patch->bytes_out();
    }
    return res;
}

DecompressResult decompress_stream(InputStream& in, OutputSink& out, unsigned threads, ProgressFn progress) {
    DecompressOptions opt;
    opt.threads = threads;
    opt.progress = std::move(progress);
    return decompress_stream(in, out, opt);
}

}  // namespace stz
