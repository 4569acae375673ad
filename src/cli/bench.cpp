// statezip bench: compressed size and speed of each pipeline on state files, next to the
// system zstd/xz/lz4 tools, with a byte-exact round-trip check of every run.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>

#include "bench_plot.hpp"
#include "bench_tools.hpp"
#include "commands.hpp"
#include "file_io.hpp"
#include "report.hpp"
#include "report/stats.hpp"

namespace stzcli {

using namespace stz;
using Clock = std::chrono::steady_clock;

namespace {

struct Row {
    std::string pipeline;
    bool external = false;
    uint64_t compressed = 0;
    double ratio = 0, c_mbps = 0, d_mbps = 0;
    bool verified = false;
    std::map<std::string, std::pair<uint64_t, uint64_t>> groups;  // section kind -> raw, stored
};

struct FileResult {
    std::string file;
    uint64_t bytes = 0;
    std::string format;
    std::vector<Row> rows;
    uint64_t float_kv_bytes = 0;  // f16/bf16/f32 K and V sections
    double float_kv_bound = 0;    // their per-channel order-0 bound, in bytes
};

std::vector<std::string> default_pipelines(bool quick) {
    if (quick) return {"fast", "default", "max", "lz4", "zstd:3", "zstd:19", "lzma:9"};
    std::vector<std::string> v = {"fast", "default", "max"};
    std::vector<std::string> base = {"rle",     "lz4",     "lz4hc:9",      "zstd:1", "zstd:3", "zstd:9",
                                     "zstd:19", "zstd:19:long", "lzma:6", "lzma:9", "lzma:9e"};
    for (const auto& b : base) v.push_back(b);
    for (const auto& b : base) v.push_back("trim+" + b);
    for (const char* f : {"shuffle+zstd:3", "shuffle+zstd:19", "shuffle+lzma:9", "transpose+shuffle+zstd:3",
                          "fields+zstd:3", "shuffle+lz4", "chanctx", "planes(all=zstd:1)", "planes(all=zstd:3)",
                          "planes(top=rans:1,rest=store)", "planes(top=rans:0,rest=store)"})
        v.push_back(f);
    return v;
}

CodecChoice choice_for(const std::string& p) {
    CodecChoice c;
    if (auto preset = preset_from_name(p)) c.preset = *preset;
    else parse_codec_option(p, c);
    return c;
}

// One pipeline under test: its options, its timings and its last output.
struct Trial {
    Row row;
    CompressOptions opt;
    std::vector<double> ct, dt;
    Bytes packed;
    // The output buffers, reused run after run (as a caller of the C API reuses its buffers,
    // and as zstd's own benchmark does): a fresh one per run timed its growth (reallocation
    // copies) and its page faults with the codec, about a quarter of a fast compression of
    // the corpus's 8 MB f16 file. The warm-up run faults them in.
    Bytes compressed_buffer, decompressed_buffer;
    // Calls per timed sample, each way, set from the warm-up run (see bench_pipelines).
    int compress_calls = 1, decompress_calls = 1;
};

// How many back-to-back calls make a timed sample of at least `min_seconds`, given one call's
// time: a small file's single call (0.1-0.3 ms on the corpus's 120 KB q5_0 cache) is within
// the machine's jitter, so its median over a few runs moved by up to half between two runs of
// the same bytes. zstd's own benchmark and lzbench loop the same way, with a minimum time.
int calls_per_sample(double one_call_seconds, double min_seconds) {
    if (min_seconds <= 0 || one_call_seconds >= min_seconds) return 1;
    const double calls = std::ceil(min_seconds / std::max(one_call_seconds, 1e-7));
    return static_cast<int>(std::min(calls, 10000.0));
}

// Every pipeline in turn within each run (run 0 is the warm-up), compression runs first and
// then decompression runs: a shared machine's drifting speed then weighs on all pipelines
// alike, and each speed is a median over runs. A run's sample is one call, or as many calls in
// a row as last `min_seconds` (counted from the warm-up's call), timed together. `lossy`:
// compressed with that mode; each round trip must give `expect` (the rounded file), else `data`.
std::vector<Row> bench_pipelines(const Bytes& data, const ParsedFile& pf, const std::vector<std::string>& names,
                                 const BenchOptions& b, const LossySpec& lossy = {}, const Bytes* expect = nullptr) {
    const int runs = b.runs;
    const double min_seconds = b.min_time_ms / 1e3;
    std::vector<Trial> trials(names.size());
    for (size_t k = 0; k < names.size(); ++k) {
        Trial& t = trials[k];
        t.row.pipeline = lossy.active() ? names[k] + " --lossy=" + lossy.text() : names[k];
        t.opt.codec = choice_for(names[k]);
        t.opt.lossy = lossy;
        t.opt.threads = b.threads;
    }
    for (int i = 0; i <= runs; ++i)
        for (Trial& t : trials) {
            MemorySink sink;
            sink.out = std::move(t.compressed_buffer);
            sink.out.reserve(data.size() + data.size() / 16 + 4096);  // past that, it grows
            CompressResult r;
            auto t0 = Clock::now();
            for (int call = 0; call < t.compress_calls; ++call) {
                MemorySource src(data);
                sink.out.clear();
                r = compress_parsed(src, pf, sink, t.opt);
            }
            const double seconds = std::chrono::duration<double>(Clock::now() - t0).count();
            if (i) t.ct.push_back(seconds / t.compress_calls);
            else t.compress_calls = calls_per_sample(seconds, min_seconds);
            if (i == runs) {
                for (size_t s = 0; s < pf.sections.size(); ++s) {
                    const Section& sec = pf.sections[s];
                    std::string key = section_kind_name(sec.kind);
                    if (sec.kind == SectionKind::KvKey || sec.kind == SectionKind::KvValue) key += "/" + sec.type_string();
                    auto& g = t.row.groups[key];
                    g.first += r.sections[s].raw;
                    g.second += r.sections[s].stored;
                }
            }
            if (i == runs) t.packed = sink.out;  // every run writes the same bytes
            t.compressed_buffer = std::move(sink.out);
        }
    for (int i = 0; i <= runs; ++i)
        for (Trial& t : trials) {
            // Into a buffer of the known size, as a caller of stz_decompress (and zstd's own
            // benchmark) decodes: each chunk is decoded where it belongs.
            Bytes& back = t.decompressed_buffer;
            back.resize(data.size());
            size_t used = 0;
            auto t0 = Clock::now();
            for (int call = 0; call < t.decompress_calls; ++call) {
                MemoryStream in(t.packed);
                SpanSink out(back.data(), back.size());
                decompress_stream(in, out, b.threads);
                used = out.used();
            }
            const double seconds = std::chrono::duration<double>(Clock::now() - t0).count();
            if (i) t.dt.push_back(seconds / t.decompress_calls);
            else t.decompress_calls = calls_per_sample(seconds, min_seconds);
            if (used != back.size() || back != (expect ? *expect : data))
                throw Error("round trip of pipeline " + t.row.pipeline + " is not byte-exact");
        }
    std::vector<Row> rows;
    for (Trial& t : trials) {
        Row& row = t.row;
        row.verified = true;
        row.compressed = t.packed.size();
        row.ratio = row.compressed ? double(data.size()) / row.compressed : 0;
        row.c_mbps = data.size() / 1e6 / median(t.ct);
        row.d_mbps = data.size() / 1e6 / median(t.dt);
        rows.push_back(std::move(row));
    }
    return rows;
}

std::vector<Row> bench_external(const std::string& file, const Bytes& data, int runs) {
    struct Tool { std::string name; std::vector<std::string> c, d; };
    const std::vector<Tool> tools = {
        {"zstd -3 (system)", {"zstd", "-3", "-T1", "-q", "-c"}, {"zstd", "-d", "-q", "-c"}},
        {"zstd -19 (system)", {"zstd", "-19", "-T1", "-q", "-c"}, {"zstd", "-d", "-q", "-c"}},
        {"xz -9 (system)", {"xz", "-9", "-T1", "-c"}, {"xz", "-d", "-c"}},
        {"lz4 -1 (system)", {"lz4", "-1", "-q", "-c"}, {"lz4", "-d", "-q", "-c"}},
        {"lz4 -9 (system)", {"lz4", "-9", "-q", "-c"}, {"lz4", "-d", "-q", "-c"}},
    };
    std::vector<Row> rows;
    ScratchDir scratch;  // private folder: no predictable names, removed on every exit path
    const std::string comp = scratch.create_file("c"), back = scratch.create_file("d");
    for (const auto& t : tools) {
        if (!have_tool(t.c[0])) continue;
        std::vector<double> ct, dt;
        bool ok = true;
        auto c_argv = t.c, d_argv = t.d;
        c_argv.push_back("--"), c_argv.push_back(file);
        d_argv.push_back("--"), d_argv.push_back(comp);
        for (int i = 0; i <= runs && ok; ++i) {
            double c = run_tool_timed(c_argv, comp);
            double d = c >= 0 ? run_tool_timed(d_argv, back) : -1;
            ok = c >= 0 && d >= 0;
            if (i) ct.push_back(c), dt.push_back(d);
        }
        if (!ok) continue;
        Row r;
        r.pipeline = t.name;
        r.external = true;
        std::ifstream cf(comp, std::ios::binary | std::ios::ate);
        r.compressed = static_cast<uint64_t>(cf.tellg());
        std::ifstream bf(back, std::ios::binary);
        Bytes round((std::istreambuf_iterator<char>(bf)), std::istreambuf_iterator<char>());
        r.verified = round == data;
        if (!r.verified) throw Error(t.name + " did not round-trip");
        r.ratio = r.compressed ? double(data.size()) / r.compressed : 0;
        r.c_mbps = data.size() / 1e6 / median(ct);
        r.d_mbps = data.size() / 1e6 / median(dt);
        rows.push_back(r);
    }
    return rows;
}

void print_human(const std::vector<FileResult>& results, bool sections) {
    for (const auto& fr : results) {
        std::printf("%s: %s, %s\n", printable(fr.file).c_str(), printable(fr.format).c_str(), human_bytes(fr.bytes).c_str());
        if (fr.float_kv_bytes)
            std::printf("  float K/V sections: %s; per-channel order-0 bound %.0f bytes (ratio %.4f)\n",
                        human_bytes(fr.float_kv_bytes).c_str(), fr.float_kv_bound, fr.float_kv_bytes / fr.float_kv_bound);
        std::vector<Row> rows = fr.rows;
        std::sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) { return a.ratio > b.ratio; });
        double best_ratio = 0, best_speed = 0;
        for (const auto& r : rows) best_ratio = std::max(best_ratio, r.ratio), best_speed = std::max(best_speed, r.c_mbps);
        std::printf("  %-34s %12s %8s %12s %12s\n", "pipeline", "bytes", "ratio", "comp MB/s", "decomp MB/s");
        for (const auto& r : rows)
            std::printf("  %-34s %12llu %8.4f %12.1f %12.1f %s%s\n", r.pipeline.c_str(), (unsigned long long)r.compressed,
                        r.ratio, r.c_mbps, r.d_mbps, r.ratio == best_ratio ? " smallest" : "",
                        r.c_mbps == best_speed ? " fastest" : "");
        if (sections) {
            std::map<std::string, std::pair<std::string, double>> best;  // kind -> pipeline, ratio
            for (const auto& r : rows)
                for (const auto& [k, g] : r.groups)
                    if (g.second && double(g.first) / g.second > best[k].second) best[k] = {r.pipeline, double(g.first) / g.second};
            std::printf("  best pipeline per section kind:\n");
            for (const auto& [k, b] : best) std::printf("    %-12s %-34s ratio %.4f\n", k.c_str(), b.first.c_str(), b.second);
        }
        std::printf("  (median of the timed runs after one warm-up; statezip rows in-process, a run's calls repeated to last\n"
                    "   --min-time, system tools as processes)\n");
    }
}

void print_json(const std::vector<FileResult>& results, bool sections) {
    std::printf("{\"files\": [\n");
    for (size_t f = 0; f < results.size(); ++f) {
        const auto& fr = results[f];
        std::printf(" {\"file\": %s, \"bytes\": %llu, \"format\": %s, \"float_kv_bytes\": %llu, \"float_kv_bound_bytes\": %.0f,"
                    " \"results\": [\n", json_escape(fr.file).c_str(), (unsigned long long)fr.bytes, json_escape(fr.format).c_str(),
                    (unsigned long long)fr.float_kv_bytes, fr.float_kv_bound);
        for (size_t i = 0; i < fr.rows.size(); ++i) {
            const Row& r = fr.rows[i];
            std::printf("  {\"pipeline\": %s, \"external\": %s, \"compressed_bytes\": %llu, \"ratio\": %s, "
                        "\"compress_mbps\": %s, \"decompress_mbps\": %s, \"verified\": %s",
                        json_escape(r.pipeline).c_str(), r.external ? "true" : "false", (unsigned long long)r.compressed,
                        fixed(r.ratio, 6).c_str(), fixed(r.c_mbps, 2).c_str(), fixed(r.d_mbps, 2).c_str(),
                        r.verified ? "true" : "false");
            if (sections && !r.external) {
                std::printf(", \"sections\": {");
                size_t k = 0;
                for (const auto& [name, g] : r.groups)
                    std::printf("%s%s: {\"bytes\": %llu, \"compressed_bytes\": %llu}", k++ ? ", " : "", json_escape(name).c_str(),
                                (unsigned long long)g.first, (unsigned long long)g.second);
                std::printf("}");
            }
            std::printf("}%s\n", i + 1 < fr.rows.size() ? "," : "");
        }
        std::printf(" ]}%s\n", f + 1 < results.size() ? "," : "");
    }
    std::printf("]}\n");
}

// A CSV field: quoted, inner quotes doubled (file names may hold commas, quotes, newlines).
std::string csv_quote(const std::string& s) {
    std::string o = "\"";
    for (char c : s) o += c == '"' ? std::string("\"\"") : std::string(1, c);
    return o + "\"";
}

void print_csv(const std::vector<FileResult>& results) {
    std::printf("file,bytes,pipeline,external,compressed_bytes,ratio,compress_mbps,decompress_mbps,verified\n");
    for (const auto& fr : results)
        for (const auto& r : fr.rows)
            std::printf("%s,%llu,%s,%d,%llu,%s,%s,%s,%d\n", csv_quote(fr.file).c_str(), (unsigned long long)fr.bytes,
                        csv_quote(r.pipeline).c_str(), r.external ? 1 : 0, (unsigned long long)r.compressed, fixed(r.ratio, 6).c_str(),
                        fixed(r.c_mbps, 2).c_str(), fixed(r.d_mbps, 2).c_str(), r.verified ? 1 : 0);
}

}  // namespace

std::string default_sample_path() {
    if (const char* e = std::getenv("STATEZIP_SAMPLE"); e && *e) return e;
#ifdef STATEZIP_SAMPLE
    return STATEZIP_SAMPLE;
#else
    return "sample.bin";
#endif
}

int run_bench(const BenchOptions& b) {
    std::vector<std::string> files = b.files;
    if (files.empty()) files.push_back(default_sample_path());
    std::vector<std::string> pipes = b.pipelines.empty() ? default_pipelines(b.quick) : b.pipelines;
    for (const auto& p : pipes) choice_for(p);  // reject bad names before any work
    for (const auto& l : b.lossy) parse_lossy_spec(l);
    const bool progress = b.progress == 1 || (b.progress == -1 && is_terminal(2));
    std::vector<FileResult> results;
    int rc = 0;
    for (const auto& f : files) {
        try {
            FileSource src(f);
            Bytes data(src.size());
            src.read_at(0, data.data(), data.size());
            MemorySource mem(data);
            ParsedFile pf = parse_state_file(mem, b.hints);
            FileResult fr;
            fr.file = f;
            fr.bytes = data.size();
            fr.format = pf.format + (pf.version ? " v" + std::to_string(*pf.version) : "");
            for (const auto& s : pf.sections)
                if (s.kind == SectionKind::KvKey || s.kind == SectionKind::KvValue)
                    if (double bits = channel_bound_bits(mem, s); bits > 0) {
                        fr.float_kv_bytes += s.size;
                        fr.float_kv_bound += bits * (s.size / elem_type_info(s.type).block_bytes) / 8;
                    }
            if (progress) std::fprintf(stderr, "\r\033[Kbench %s: %zu pipelines", printable(f).c_str(), pipes.size());
            for (Row& r : bench_pipelines(data, pf, pipes, b)) fr.rows.push_back(std::move(r));
            std::vector<std::string> presets;  // the preset rows again, lossy (compact: presets only)
            for (const auto& p : pipes)
                if (preset_from_name(p)) presets.push_back(p);
            for (const auto& spec : b.lossy) {
                const LossySpec ls = parse_lossy_spec(spec);
                const Bytes rounded = apply_lossy(data, pf, ls);
                for (Row& r : bench_pipelines(data, pf, presets, b, ls, &rounded)) fr.rows.push_back(std::move(r));
            }
            if (b.external) {
                if (progress) std::fprintf(stderr, "\r\033[Kbench %s: system tools", printable(f).c_str());
                for (auto& r : bench_external(f, data, b.runs)) fr.rows.push_back(r);
            }
            if (progress) std::fprintf(stderr, "\r\033[K");
            results.push_back(std::move(fr));
        } catch (const std::exception& e) {
            if (progress) std::fprintf(stderr, "\r\033[K");
            print_error(f, e.what());
            rc = 1;
        }
    }
    if (b.json) print_json(results, b.sections);
    else if (b.csv) print_csv(results);
    else print_human(results, b.sections);
    if (!b.plot.empty() && !results.empty()) {
        std::vector<PlotPoint> pts;
        for (const auto& fr : results)
            for (const auto& r : fr.rows) {
                // one point per pipeline: totals over all files
                auto it = std::find_if(pts.begin(), pts.end(), [&](const PlotPoint& p) { return p.label == r.pipeline; });
                if (it == pts.end()) pts.push_back({r.pipeline, 0, 0, 0, r.external}), it = pts.end() - 1;
                it->raw += fr.bytes;
                it->compressed += r.compressed;
                it->seconds += fr.bytes / 1e6 / r.c_mbps;
            }
        try {
            write_plot_svg(b.plot, pts);
        } catch (const std::exception& e) {
            print_error(b.plot, e.what());
            rc = 1;
        }
    }
    return rc;
}

}  // namespace stzcli
