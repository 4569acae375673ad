// statezip bench --set: one related set of files (checkpoints, turns of a conversation,
// views of one cache) stored by statezip per file, by `statezip pack`, and by the system
// tools on the whole set (tar | xz -9, tar | zstd -19 --long=27, zstd --patch-from chains),
// each checked byte for byte. System tools run without a shell in a private folder.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>

#include "bench_tools.hpp"
#include "file_io.hpp"
#include "pack_cmd.hpp"
#include "related/patch.hpp"
#include "report.hpp"

namespace stzcli {

using namespace stz;
using Clock = std::chrono::steady_clock;

namespace {

struct SetRow {
    std::string method;
    bool external = false;
    uint64_t bytes = 0;
    double c_seconds = 0, d_seconds = 0;
};

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

Bytes slurp_file(const std::string& p) {
    std::ifstream f(p, std::ios::binary);
    return Bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}

CompressOptions preset_options(const std::string& name) {
    CompressOptions o;
    if (auto p = preset_from_name(name)) o.codec.preset = *p;
    else parse_codec_option(name, o.codec);
    return o;
}

// `name`: a preset, or a pipeline for every section (zstd:3, the speed yardstick).
SetRow per_file(const std::vector<Bytes>& data, int runs, const std::string& name) {
    SetRow row{name == "default" ? "statezip per file (default)" : "in-process " + name + " per file", false, 0, 0, 0};
    const CompressOptions opt = preset_options(name);
    std::vector<double> ct, dt;
    for (int i = 0; i < runs; ++i) {
        std::vector<Bytes> out;
        auto t0 = Clock::now();
        for (const auto& d : data) {
            MemorySource src(d);
            MemorySink sink;
            compress_stream(src, sink, opt);
            out.push_back(std::move(sink.out));
        }
        ct.push_back(seconds_since(t0));
        row.bytes = 0;
        t0 = Clock::now();
        for (size_t k = 0; k < out.size(); ++k) {
            MemoryStream in(out[k]);
            MemorySink back;
            decompress_stream(in, back, 1);
            if (back.out != data[k]) throw Error("statezip per-file round trip is not byte-exact");
            row.bytes += out[k].size();
        }
        dt.push_back(seconds_since(t0));
    }
    row.c_seconds = median(ct), row.d_seconds = median(dt);
    return row;
}

SetRow packed(const std::vector<Bytes>& data, const std::vector<std::string>& files, int runs, const std::string& preset) {
    SetRow row{"statezip pack (" + preset + ")", false, 0, 0, 0};
    PackOptions popt;
    popt.compress = preset_options(preset);
    std::vector<double> ct, dt;
    for (int i = 0; i < runs; ++i) {
        MemoryFile set;
        auto t0 = Clock::now();
        auto w = PackWriter::create(set, popt);
        std::vector<std::unique_ptr<MemorySource>> srcs;
        for (size_t k = 0; k < data.size(); ++k) {
            srcs.push_back(std::make_unique<MemorySource>(data[k]));
            std::string name = std::to_string(k);
            name.append(1, '/').append(normalise_member_name(files[k]).value_or("file"));
            w->add(*srcs.back(), name);
        }
        w->commit();
        ct.push_back(seconds_since(t0));
        row.bytes = set.data.size();
        t0 = Clock::now();
        PackReader r(set);
        for (size_t k = 0; k < data.size(); ++k) {
            MemoryFile out;
            r.restore(k, out);
            if (out.data != data[k]) throw Error("statezip pack round trip is not byte-exact");
        }
        dt.push_back(seconds_since(t0));
    }
    row.c_seconds = median(ct), row.d_seconds = median(dt);
    return row;
}

// Each file given the previous one (the first alone), as `statezip --patch-from`.
SetRow patch_chain(const std::vector<Bytes>& data, const std::vector<std::string>& files, int runs) {
    SetRow row{"statezip --patch-from chain (default)", false, 0, 0, 0};
    std::vector<double> ct, dt;
    for (int i = 0; i < runs; ++i) {
        std::vector<Bytes> out;
        auto t0 = Clock::now();
        for (size_t k = 0; k < data.size(); ++k) {
            MemorySource src(data[k]);
            MemorySink sink;
            if (k) {
                MemorySource ref(data[k - 1]);
                compress_patch(src, ref, files[k - 1], sink, CompressOptions{});
            } else {
                compress_stream(src, sink, CompressOptions{});
            }
            out.push_back(std::move(sink.out));
        }
        ct.push_back(seconds_since(t0));
        row.bytes = 0;
        t0 = Clock::now();
        for (size_t k = 0; k < out.size(); ++k) {
            MemoryStream in(out[k]);
            MemorySink back;
            DecompressOptions d;
            std::unique_ptr<MemorySource> ref;
            if (k) ref = std::make_unique<MemorySource>(data[k - 1]), d.reference = ref.get();
            decompress_stream(in, back, d);
            if (back.out != data[k]) throw Error("statezip --patch-from round trip is not byte-exact");
            row.bytes += out[k].size();
        }
        dt.push_back(seconds_since(t0));
    }
    row.c_seconds = median(ct), row.d_seconds = median(dt);
    return row;
}

uint64_t file_size(const std::string& p) {
    std::ifstream f(p, std::ios::binary | std::ios::ate);
    return static_cast<uint64_t>(f.tellg());
}

// One system-tool row: `steps` compress commands (each writes `comp`) and their decompress
// commands (each writes `back`, compared with `expect`); sizes and times summed over steps.
struct Step {
    std::vector<std::string> c, d;
    const Bytes* expect;
};
std::optional<SetRow> external_row(const std::string& name, const std::vector<Step>& steps, const std::string& comp,
                                   const std::string& back, int runs) {
    SetRow row{name, true, 0, 0, 0};
    std::vector<double> ct(runs, 0), dt(runs, 0);
    for (const Step& s : steps) {
        if (!have_tool(s.c[0])) return std::nullopt;
        for (int i = 0; i < runs; ++i) {
            double c = run_tool_timed(s.c, comp);
            double d = c >= 0 ? run_tool_timed(s.d, back) : -1;
            if (c < 0 || d < 0) return std::nullopt;
            ct[i] += c, dt[i] += d;
        }
        row.bytes += file_size(comp);
        if (slurp_file(back) != *s.expect) throw Error(name + " did not round-trip");
    }
    row.c_seconds = median(ct), row.d_seconds = median(dt);
    return row;
}

std::vector<SetRow> system_rows(const std::vector<std::string>& files, const std::vector<Bytes>& data, int runs) {
    std::vector<SetRow> rows;
    if (!have_tool("tar")) return rows;
    ScratchDir scratch;
    const std::string tar = scratch.create_file("set.tar"), comp = scratch.create_file("c"), back = scratch.create_file("d");
    std::vector<std::string> tar_argv = {"tar", "-cf", "-", "--"};
    for (const auto& f : files) tar_argv.push_back(f);
    if (run_tool_timed(tar_argv, tar) < 0) return rows;
    const Bytes tar_bytes = slurp_file(tar);
    auto add = [&](std::optional<SetRow> r) {
        if (r) rows.push_back(*r);
    };
    add(external_row("tar | xz -9", {{{"xz", "-9", "-T1", "-c", "--", tar}, {"xz", "-d", "-c", "--", comp}, &tar_bytes}}, comp,
                     back, runs));
    add(external_row("tar | zstd -19 --long=27",
                     {{{"zstd", "-19", "--long=27", "-T1", "-q", "-c", "--", tar}, {"zstd", "-d", "--long=27", "-q", "-c", "--", comp},
                       &tar_bytes}},
                     comp, back, runs));
    std::vector<Step> chain;
    for (size_t k = 0; k < files.size(); ++k) {
        Step s{{"zstd", "-19", "--long=27", "-T1", "-q", "-c"}, {"zstd", "-d", "--long=27", "-q", "-c"}, &data[k]};
        if (k) s.c.push_back("--patch-from=" + files[k - 1]), s.d.push_back("--patch-from=" + files[k - 1]);
        s.c.insert(s.c.end(), {"--", files[k]});
        s.d.insert(s.d.end(), {"--", comp});
        chain.push_back(s);
    }
    add(external_row("zstd -19 --long=27 --patch-from chain", chain, comp, back, runs));
    return rows;
}

void print_set(const std::vector<std::string>& files, uint64_t total, const std::vector<SetRow>& rows, const BenchOptions& b) {
    double xz_speed = 0;
    for (const auto& r : rows)
        if (r.method == "tar | xz -9" && r.c_seconds > 0) xz_speed = total / 1e6 / r.c_seconds;
    auto mbps = [&](double s) { return s > 0 ? total / 1e6 / s : 0.0; };
    if (b.json) {
        std::printf("{\"set\": {\"files\": [");
        for (size_t i = 0; i < files.size(); ++i) std::printf("%s%s", i ? ", " : "", json_escape(files[i]).c_str());
        std::printf("], \"bytes\": %llu, \"results\": [\n", (unsigned long long)total);
        for (size_t i = 0; i < rows.size(); ++i)
            std::printf("  {\"method\": %s, \"external\": %s, \"compressed_bytes\": %llu, \"ratio\": %s, \"compress_mbps\": %s, "
                        "\"decompress_mbps\": %s, \"verified\": true}%s\n",
                        json_escape(rows[i].method).c_str(), rows[i].external ? "true" : "false", (unsigned long long)rows[i].bytes,
                        fixed(rows[i].bytes ? double(total) / rows[i].bytes : 0, 6).c_str(), fixed(mbps(rows[i].c_seconds), 2).c_str(),
                        fixed(mbps(rows[i].d_seconds), 2).c_str(), i + 1 < rows.size() ? "," : "");
        std::printf("]}}\n");
        return;
    }
    if (b.csv) {
        std::printf("method,external,set_bytes,compressed_bytes,ratio,compress_mbps,decompress_mbps,verified\n");
        for (const auto& r : rows)
            std::printf("\"%s\",%d,%llu,%llu,%s,%s,%s,1\n", r.method.c_str(), r.external ? 1 : 0, (unsigned long long)total,
                        (unsigned long long)r.bytes, fixed(r.bytes ? double(total) / r.bytes : 0, 6).c_str(),
                        fixed(mbps(r.c_seconds), 2).c_str(), fixed(mbps(r.d_seconds), 2).c_str());
        return;
    }
    std::printf("set of %zu files, %s\n", files.size(), human_bytes(total).c_str());
    std::printf("  %-40s %12s %8s %10s %10s %10s\n", "method", "bytes", "ratio", "comp MB/s", "dec MB/s", "x xz speed");
    for (const auto& r : rows)
        std::printf("  %-40s %12llu %8.3f %10.2f %10.2f %10.1f\n", r.method.c_str(), (unsigned long long)r.bytes,
                    r.bytes ? double(total) / r.bytes : 0.0, mbps(r.c_seconds), mbps(r.d_seconds),
                    xz_speed > 0 ? mbps(r.c_seconds) / xz_speed : 0.0);
    std::printf("  (median of %d runs, one thread; every row verified byte for byte; in-process zstd:3 is the speed yardstick)\n",
                b.runs);
}

}  // namespace

int run_bench_set(const BenchOptions& b) {
    try {
        if (b.files.size() < 2) throw Error("bench --set needs at least two files");
        std::vector<Bytes> data;
        uint64_t total = 0;
        for (const auto& f : b.files) {
            FileSource src(f);
            Bytes d(src.size());
            src.read_at(0, d.data(), d.size());
            total += d.size();
            data.push_back(std::move(d));
        }
        const bool progress = b.progress == 1 || (b.progress == -1 && is_terminal(2));
        auto note = [&](const char* what) {
            if (progress) std::fprintf(stderr, "\r\033[Kbench --set: %s", what);
        };
        std::vector<SetRow> rows;
        note("statezip per file");
        rows.push_back(per_file(data, b.runs, "zstd:3"));
        rows.push_back(per_file(data, b.runs, "default"));
        note("statezip pack");
        rows.push_back(packed(data, b.files, b.runs, "default"));
        rows.push_back(packed(data, b.files, b.runs, "max"));
        note("statezip --patch-from chain");
        rows.push_back(patch_chain(data, b.files, b.runs));
        if (b.external) {
            note("system tools");
            for (auto& r : system_rows(b.files, data, b.runs)) rows.push_back(r);
        }
        if (progress) std::fprintf(stderr, "\r\033[K");
        print_set(b.files, total, rows, b);
        return 0;
    } catch (const std::exception& e) {
        print_error("", e.what());
        return 1;
    }
}

}  // namespace stzcli
