#include "commands.hpp"

#include <unistd.h>

#include <cstdio>
#include <thread>

#include "file_io.hpp"
#include "report.hpp"

namespace stzcli {

using namespace stz;

void print_error(const std::string& file, const std::string& message) {
    if (file.empty()) std::fprintf(stderr, "statezip: %s\n", message.c_str());
    else std::fprintf(stderr, "statezip: %s: %s\n", file.c_str(), message.c_str());
}

unsigned resolve_threads(unsigned requested) {
    if (requested) return requested;
    unsigned hc = std::thread::hardware_concurrency();
    return hc ? hc : 1;
}

namespace {

constexpr const char* kSuffix = ".stz";

bool show_progress(const Options& o) {
    if (o.progress >= 0) return o.progress == 1;
    return o.verbosity >= 1 && is_terminal(2);
}

std::string display(const std::string& f) { return f == "-" ? "(stdin)" : f; }

bool ends_with(const std::string& s, const std::string& suf) {
    return s.size() >= suf.size() && s.compare(s.size() - suf.size(), suf.size(), suf) == 0;
}

void summary(const Options& o, const std::string& in, uint64_t a, uint64_t b, const std::string& out) {
    if (o.verbosity < 1) return;
    double pct = a ? 100.0 * b / a : 100.0;
    std::fprintf(stderr, "%s : %6.2f%%   (%s => %s, %s)\n", display(in).c_str(), pct, human_bytes(a).c_str(),
                 human_bytes(b).c_str(), out.c_str());
}

// Decodes a finished .stz again (verification before --rm).
void verify_container(const std::string& path, unsigned threads) {
    FdStream s(path);
    NullSink n;
    decompress_stream(s, n, threads);
}

void compress_one(Options& o, const std::string& in_path) {
    FileSource src(in_path);
    const bool to_stdout = o.to_stdout || (in_path == "-" && o.output.empty());
    std::string out_path = to_stdout ? "-" : (!o.output.empty() ? o.output : in_path + kSuffix);
    if (!to_stdout && ends_with(in_path, kSuffix) && o.output.empty() && !o.force)
        throw Error("already has the " + std::string(kSuffix) + " suffix; use -f to compress it again");
    if (to_stdout && is_terminal(1) && !o.force)
        throw Error("refusing to write compressed data to a terminal (use -o FILE, redirect, or -f)");
    Progress bar(show_progress(o), display(in_path));
    CompressOptions copt = o.compress;
    copt.threads = resolve_threads(o.threads);
    copt.progress = [&](uint64_t d, uint64_t t, const std::string& s) { bar.update(d, t, s); };
    CompressResult res;
    if (to_stdout) {
        FdSink sink(1, "(stdout)");
        res = compress_stream(src, sink, copt);
        sink.flush();
    } else {
        AtomicFile out(out_path, o.force, src.mode());
        res = compress_stream(src, out, copt);
        out.flush();
        if (o.remove_input) verify_container(out.temp_path(), copt.threads);
        out.commit();
    }
    bar.finish();
    if (o.verbosity >= 2 && !res.parsed.note.empty()) print_error(display(in_path), "note: " + res.parsed.note);
    if (o.verbosity >= 2)
        std::fprintf(stderr, "%s: %s%s%s, %zu sections\n", display(in_path).c_str(), res.parsed.format.c_str(),
                     res.parsed.version ? (" v" + std::to_string(*res.parsed.version)).c_str() : "",
                     res.parsed.detail.empty() ? "" : (" (" + res.parsed.detail + ")").c_str(), res.parsed.sections.size());
    summary(o, in_path, res.original_bytes, res.compressed_bytes, to_stdout ? "(stdout)" : out_path);
    if (o.remove_input && !to_stdout && in_path != "-") remove_file(in_path);
}

void decompress_one(Options& o, const std::string& in_path) {
    const bool to_stdout = o.to_stdout || (in_path == "-" && o.output.empty());
    std::string out_path;
    if (!to_stdout) {
        if (!o.output.empty()) out_path = o.output;
        else if (ends_with(in_path, kSuffix) && in_path.size() > 4) out_path = in_path.substr(0, in_path.size() - 4);
        else throw Error("unknown suffix (expected " + std::string(kSuffix) + "); use -o to name the output");
    }
    FdStream in(in_path);
    Progress bar(show_progress(o) && o.mode == Mode::Decompress, display(in_path));
    unsigned threads = resolve_threads(o.threads);
    auto prog = [&](uint64_t d, uint64_t t, const std::string& s) { bar.update(d, t, s); };
    DecompressResult res;
    if (o.mode == Mode::Test) {
        NullSink sink;
        res = decompress_stream(in, sink, threads, prog);
        bar.finish();
        if (o.verbosity >= 1) std::fprintf(stderr, "%s : OK (%s)\n", display(in_path).c_str(), human_bytes(res.bytes_out).c_str());
        return;
    }
    if (to_stdout) {
        FdSink sink(1, "(stdout)");
        res = decompress_stream(in, sink, threads, prog);
        sink.flush();
    } else {
        int mode = 0644;
        if (in_path != "-") mode = FileSource(in_path).mode();
        AtomicFile out(out_path, o.force, mode);
        res = decompress_stream(in, out, threads, prog);
        out.commit();
    }
    bar.finish();
    if (o.verbosity >= 2) std::fprintf(stderr, "%s : %s\n", display(in_path).c_str(), human_bytes(res.bytes_out).c_str());
    if (o.remove_input && !to_stdout && in_path != "-") remove_file(in_path);
}

void list_one(const Options& o, const std::string& in_path) {
    ContainerListing L;
    if (in_path == "-") throw Error("-l needs a file (the index is at the end)");
    FileSource src(in_path);
    L = list_container(src);
    std::vector<uint64_t> stored(L.header.sections.size());
    for (const auto& e : L.index) stored[e.section] += e.stored_size;
    double ratio = L.container_size ? double(L.header.original_size) / L.container_size : 0;
    std::printf("%s: %s%s%s, %s -> %s (ratio %.3f), %zu chunks, xxh3 %016llx\n", in_path.c_str(), L.header.format.c_str(),
                L.header.format_version >= 0 ? (" v" + std::to_string(L.header.format_version)).c_str() : "",
                L.header.detail.empty() ? "" : (" (" + L.header.detail + ")").c_str(), human_bytes(L.header.original_size).c_str(),
                human_bytes(L.container_size).c_str(), ratio, L.index.size(), (unsigned long long)L.content_hash);
    if (!L.header.note.empty()) std::printf("  note: %s\n", L.header.note.c_str());
    if (o.verbosity < 2 && L.header.sections.size() > 40) {
        std::printf("  %zu sections (use -v to list them)\n", L.header.sections.size());
        return;
    }
    std::printf("  %-22s %12s %12s %12s %7s  %-6s %s\n", "section", "offset", "bytes", "stored", "ratio", "type", "shape");
    for (size_t i = 0; i < L.header.sections.size(); ++i) {
        const Section& s = L.header.sections[i];
        std::printf("  %-22s %12llu %12llu %12llu %7.3f  %-6s %s\n", s.name.c_str(), (unsigned long long)s.offset,
                    (unsigned long long)s.size, (unsigned long long)stored[i], stored[i] ? double(s.size) / stored[i] : 0.0,
                    s.type_string().c_str(), s.shape_string().c_str());
    }
}

}  // namespace

int run_files(Options& o) {
    if (o.files.empty()) o.files.push_back("-");
    if (!o.output.empty() && o.files.size() > 1 && o.mode != Mode::List && o.mode != Mode::Test) {
        print_error("", "-o takes one input file");
        return 2;
    }
    int rc = 0;
    for (const auto& f : o.files) {
        try {
            switch (o.mode) {
                case Mode::Compress: compress_one(o, f); break;
                case Mode::Decompress: case Mode::Test: decompress_one(o, f); break;
                case Mode::List: list_one(o, f); break;
            }
        } catch (const std::exception& e) {
            print_error(display(f), e.what());
            rc = 1;
        }
    }
    return rc;
}

}  // namespace stzcli
