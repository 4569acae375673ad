#include "engine.hpp"

#include <deque>
#include <memory>

#include "thread_pool.hpp"

namespace stz {

namespace {

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
    struct Done {
        EncodedChunk enc;
        uint64_t hash = 0;
        const Pipeline* used = nullptr;
    };
    auto encode = [&](std::shared_ptr<Bytes> raw, uint32_t section) {
        Done d;
        d.hash = hash64(*raw);
        for (const Pipeline& p : pipes[section]) {
            EncodedChunk e = encode_pipeline(p, *raw);
            if (!d.used || e.payload.size() < d.enc.payload.size()) d.enc = std::move(e), d.used = &p;
        }
        if (d.enc.payload.size() >= raw->size()) d.enc = encode_pipeline(store, *raw), d.used = &store;  // never expand
        return d;
    };
    // Reads stay sequential (one pass over the input); up to 2 x threads chunks are in flight.
    ThreadPool pool(threads);
    std::deque<std::pair<size_t, std::future<Done>>> inflight;
    uint64_t done = 0;
    auto retire = [&] {
        auto [ji, fut] = std::move(inflight.front());
        inflight.pop_front();
        Done d = fut.get();
        const ChunkJob& j = jobs[ji];
        w.add_chunk(j.section, j.offset, j.size, d.hash, *d.used, d.enc);
        res.sections[j.section].stored += d.enc.payload.size();
        done += j.size;
        if (opt.progress) opt.progress(done, in.size(), parsed.sections[j.section].name);
    };
    for (size_t ji = 0; ji < jobs.size(); ++ji) {
        const ChunkJob& j = jobs[ji];
        auto raw = std::make_shared<Bytes>(j.size);
        in.read_at(j.offset, raw->data(), j.size);
        whole.update(*raw);
        inflight.emplace_back(ji, pool.submit([&encode, raw, s = j.section] { return encode(raw, s); }));
        while (inflight.size() >= 2 * threads) retire();
    }
    while (!inflight.empty()) retire();
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
    ThreadPool pool(threads);
    std::deque<std::pair<uint32_t, std::future<Bytes>>> inflight;
    auto retire = [&] {
        auto [section, fut] = std::move(inflight.front());
        inflight.pop_front();
        Bytes raw = fut.get();
        whole.update(raw);
        out.write(raw.data(), raw.size());
        res.bytes_out += raw.size();
        if (progress) progress(res.bytes_out, res.header.original_size, res.header.sections[section].name);
    };
    while (auto c = r.next()) {
        auto rec = std::make_shared<ChunkRecord>(std::move(*c));
        inflight.emplace_back(rec->section, pool.submit([&r, rec] { return r.decode(*rec); }));
        while (inflight.size() >= 2 * threads) retire();
    }
    while (!inflight.empty()) retire();
    if (whole.digest() != r.content_hash()) throw Error("whole-file checksum mismatch: the output is not the original");
    return res;
}

}  // namespace stz
