#include "engine.hpp"

#include <xxhash.h>

#include <atomic>
#include <exception>
#include <thread>

namespace stz {

namespace {

// Runs fn(0..n-1) on up to `threads` threads; rethrows the first exception.
void parallel_for(size_t n, unsigned threads, const std::function<void(size_t)>& fn) {
    if (threads <= 1 || n <= 1) {
        for (size_t i = 0; i < n; ++i) fn(i);
        return;
    }
    std::atomic<size_t> next{0};
    std::exception_ptr err;
    std::atomic<bool> failed{false};
    std::vector<std::thread> pool;
    for (unsigned t = 0; t < std::min<size_t>(threads, n); ++t)
        pool.emplace_back([&] {
            for (size_t i; !failed && (i = next++) < n;) {
                try {
                    fn(i);
                } catch (...) {
                    if (!failed.exchange(true)) err = std::current_exception();
                }
            }
        });
    for (auto& th : pool) th.join();
    if (err) std::rethrow_exception(err);
}

struct Hasher {
    XXH3_state_t* st = XXH3_createState();
    Hasher() { XXH3_64bits_reset(st); }
    ~Hasher() { XXH3_freeState(st); }
    void update(ByteSpan d) { XXH3_64bits_update(st, d.data(), d.size()); }
    uint64_t digest() const { return XXH3_64bits_digest(st); }
};

struct ChunkJob {
    uint32_t section;
    uint64_t offset;
    uint32_t size;
};

}  // namespace

CompressResult compress_stream(InputSource& in, OutputSink& out, const CompressOptions& opt) {
    ParsedFile parsed = parse_state_file(in, opt.hints);
    return compress_parsed(in, parsed, out, opt);
}

CompressResult compress_parsed(InputSource& in, const ParsedFile& parsed, OutputSink& out, const CompressOptions& opt) {
    CompressResult res;
    res.parsed = parsed;
    res.original_bytes = in.size();
    check_tiling(parsed.sections, in.size());

    ContainerHeader h;
    h.original_size = in.size();
    h.format = parsed.format;
    h.format_version = parsed.version ? *parsed.version : -1;
    h.detail = parsed.detail;
    h.note = parsed.note;
    h.sections = parsed.sections;

    // One pipeline per section, parsed once; chunks of a row-structured section hold whole rows.
    std::vector<std::vector<Pipeline>> pipes;  // per section: alternatives, smallest output wins
    std::vector<ChunkJob> jobs;
    const uint64_t target = std::max<uint32_t>(opt.chunk_bytes, 4096);
    for (uint32_t si = 0; si < parsed.sections.size(); ++si) {
        const Section& s = parsed.sections[si];
        std::string spec = choose_pipeline(s, opt.codec);
        DataShape shape = s.shape();
        uint64_t step = target;
        if (shape.row_bytes && shape.row_bytes <= kMaxChunkRaw) {
            step = std::max<uint64_t>(1, target / shape.row_bytes) * shape.row_bytes;
        } else {
            shape.row_bytes = shape.keep_bytes = 0;  // rows too large for one chunk: treat as bytes
        }
        pipes.push_back(parse_alternatives(spec, shape));
        res.sections.push_back({spec, s.size, 0});
        for (uint64_t off = 0; off < s.size; off += step)
            jobs.push_back({si, s.offset + off, static_cast<uint32_t>(std::min(step, s.size - off))});
    }

    ContainerWriter w(out, h);
    Hasher whole;
    Pipeline store;
    store.stages.push_back({find_codec("store"), {}});
    const unsigned threads = std::max(1u, opt.threads);
    const size_t window = threads * 2;
    uint64_t done = 0;
    for (size_t first = 0; first < jobs.size(); first += window) {
        size_t n = std::min(window, jobs.size() - first);
        std::vector<Bytes> raw(n);
        for (size_t i = 0; i < n; ++i) {  // reads stay sequential: one pass over the input
            const ChunkJob& j = jobs[first + i];
            raw[i].resize(j.size);
            in.read_at(j.offset, raw[i].data(), j.size);
            whole.update(raw[i]);
        }
        std::vector<EncodedChunk> enc(n);
        std::vector<uint64_t> hashes(n);
        std::vector<const Pipeline*> used(n);
        parallel_for(n, threads, [&](size_t i) {
            const ChunkJob& j = jobs[first + i];
            hashes[i] = hash64(raw[i]);
            used[i] = &store;  // never expand: store unless a pipeline is smaller
            enc[i] = encode_pipeline(store, raw[i]);
            for (const Pipeline& p : pipes[j.section]) {
                EncodedChunk e = encode_pipeline(p, raw[i]);
                if (e.payload.size() < enc[i].payload.size()) enc[i] = std::move(e), used[i] = &p;
            }
        });
        for (size_t i = 0; i < n; ++i) {
            const ChunkJob& j = jobs[first + i];
            w.add_chunk(j.section, j.offset, j.size, hashes[i], *used[i], enc[i]);
            res.sections[j.section].stored += enc[i].payload.size();
            done += j.size;
        }
        if (opt.progress) opt.progress(done, in.size(), parsed.sections[jobs[first + n - 1].section].name);
    }
    w.finish(whole.digest());
    res.compressed_bytes = w.bytes_written();
    return res;
}

DecompressResult decompress_stream(InputStream& in, OutputSink& out, unsigned threads, ProgressFn progress) {
    ContainerReader r(in);
    DecompressResult res;
    res.header = r.header();
    Hasher whole;
    threads = std::max(1u, threads);
    const size_t window = threads * 2;
    for (bool more = true; more;) {
        std::vector<ChunkRecord> batch;
        while (batch.size() < window) {
            auto c = r.next();
            if (!c) {
                more = false;
                break;
            }
            batch.push_back(std::move(*c));
        }
        std::vector<Bytes> raw(batch.size());
        parallel_for(batch.size(), threads, [&](size_t i) { raw[i] = r.decode(batch[i]); });
        for (size_t i = 0; i < batch.size(); ++i) {
            whole.update(raw[i]);
            out.write(raw[i].data(), raw[i].size());
            res.bytes_out += raw[i].size();
        }
        if (progress && !batch.empty())
            progress(res.bytes_out, res.header.original_size, res.header.sections[batch.back().section].name);
    }
    if (whole.digest() != r.content_hash()) throw Error("whole-file checksum mismatch: the output is not the original");
    return res;
}

}  // namespace stz
