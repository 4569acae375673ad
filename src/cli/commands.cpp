#include "commands.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <algorithm>
#include <thread>

#include "file_io.hpp"
#include "lossy_cli.hpp"
#include "related/patch.hpp"
#include "patch_cli.hpp"
#include "report.hpp"

namespace stzcli {

using namespace stz;

// Messages can quote file names and header strings: escaped, so that a crafted name cannot
// drive the terminal or fake a line.
void print_error(const std::string& file, const std::string& message) {
    if (file.empty()) std::fprintf(stderr, "statezip: %s\n", printable(message).c_str());
    else std::fprintf(stderr, "statezip: %s: %s\n", printable(file).c_str(), printable(message).c_str());
}

unsigned max_threads() {
    unsigned hc = std::thread::hardware_concurrency();
    return 4 * (hc ? hc : 1);
}

unsigned resolve_threads(unsigned requested, uint64_t work_units) {
    unsigned hc = std::thread::hardware_concurrency();
    uint64_t t = requested ? requested : (hc ? hc : 1);
    t = std::min<uint64_t>({t, max_threads(), std::max<uint64_t>(work_units, 1)});
    return static_cast<unsigned>(t);
}

namespace {

constexpr const char* kSuffix = ".stz";

bool show_progress(const Options& o) {
    if (o.progress >= 0) return o.progress == 1;
    return o.verbosity >= 1 && is_terminal(2);
}

std::string display(const std::string& f) { return f == "-" ? "(stdin)" : printable(f); }

bool ends_with(const std::string& s, const std::string& suf) {
    return s.size() >= suf.size() && s.compare(s.size() - suf.size(), suf.size(), suf) == 0;
}

void summary(const Options& o, const std::string& in, uint64_t a, uint64_t b, const std::string& out) {
    if (o.verbosity < 1) return;
    double pct = a ? 100.0 * b / a : 100.0;
    std::fprintf(stderr, "%s : %6.2f%%   (%s => %s, %s)\n", display(in).c_str(), pct, human_bytes(a).c_str(),
                 human_bytes(b).c_str(), printable(out).c_str());
}

// Threads worth starting: chunks hold about chunk_bytes of input (smaller sections make
// smaller chunks, not more work), and a chunk record takes at least 44 bytes of a .stz.
uint64_t compress_work_units(uint64_t input_bytes, uint32_t chunk_bytes) {
    return input_bytes / std::max<uint32_t>(chunk_bytes, 1) + 1;
}
uint64_t decompress_work_units(const struct stat& st) {
    return S_ISREG(st.st_mode) ? static_cast<uint64_t>(st.st_size) / 44 + 1 : UINT64_MAX;
}

// The decoder's options from the command line: threads, progress and the --memory budget.
DecompressOptions decode_options(const Options& o, unsigned threads, ProgressFn progress = {}) {
    DecompressOptions d;
    d.threads = threads;
    d.progress = std::move(progress);
    d.memory_budget = o.compress.memory_budget;
    d.reference = o.reference.get();
    if (o.mode == Mode::Test) d.record_check = RecordCheck::BeforeDecode;  // -t names any damaged byte
    return d;
}

bool writes_stdout(const Options& o, const std::string& in_path) {
    return o.to_stdout || (in_path == "-" && o.output.empty());
}

// Where the output of `in_path` goes: "-" standard output, "" nowhere (-t, -l) or unknown
// (-d of a name without the suffix, refused when its turn comes).
std::string output_path(const Options& o, const std::string& in_path) {
    if (o.mode == Mode::Test || o.mode == Mode::List) return "";
    if (writes_stdout(o, in_path)) return "-";
    if (!o.output.empty()) return o.output;
    if (o.mode == Mode::Compress) return in_path + kSuffix;
    if (ends_with(in_path, kSuffix) && in_path.size() > 4) return in_path.substr(0, in_path.size() - 4);
    return "";
}

// Decodes a finished .stz again (verification before --rm).
void verify_container(const Options& o, const std::string& path, unsigned threads) {
    FdStream s(path);
    NullSink n;
    DecompressOptions d = decode_options(o, threads);
    d.record_check = RecordCheck::BeforeDecode;  // the file as written, every byte, before the input goes
    decompress_stream(s, n, d);
}

void compress_one(Options& o, const std::string& in_path) {
    FileSource src(in_path);
    const bool to_stdout = writes_stdout(o, in_path);
    const std::string out_path = output_path(o, in_path);
    if (!to_stdout && ends_with(in_path, kSuffix) && o.output.empty() && !o.force)
        throw Error("already has the " + std::string(kSuffix) + " suffix; use -f to compress it again");
    if (to_stdout && is_terminal(1) && !o.force)
        throw Error("refusing to write compressed data to a terminal (use -o FILE, redirect, or -f)");
    if (to_stdout && in_path != "-" && stdout_is_file(src.info())) throw Error("standard output is the input file");
    bool removable = true;
    Progress bar(show_progress(o), display(in_path));
    CompressOptions copt = o.compress;
    copt.threads = resolve_threads(o.threads, compress_work_units(src.size(), copt.chunk_bytes));
    copt.progress = [&](uint64_t d, uint64_t t, const std::string& s) { bar.update(d, t, s); };
    CompressResult res;
    std::string patch_detail;
    auto compress = [&](OutputSink& sink) {
        if (!o.reference) return compress_stream(src, sink, copt);
        return compress_with_reference(src, *o.reference, o.patch_from, sink, copt, patch_detail);
    };
    if (to_stdout) {
        FdSink sink(1, "(stdout)");
        res = compress(sink);
        sink.flush();
    } else {
        AtomicFile out(out_path, o.force, in_path == "-" ? nullptr : &src.info());
        res = compress(out);
        out.flush();
        // A --patch-from output is always decoded again against REF before it is kept.
        if ((o.remove_input || o.reference) && !out.in_place()) verify_container(o, out.temp_path(), copt.threads);
        out.commit();
        if (o.remove_input && out.in_place() && in_path != "-") {
            print_error(display(in_path), "kept: --rm needs a regular output file that can be verified");
            removable = false;
        }
    }
    bar.finish();
    if (o.verbosity >= 2 && !res.parsed.note.empty()) print_error(display(in_path), "note: " + res.parsed.note);
    if (o.verbosity >= 2)
        std::fprintf(stderr, "%s: %s, %zu sections\n", display(in_path).c_str(),
                     format_line(res.parsed.format, res.parsed.version ? int64_t(*res.parsed.version) : -1, res.parsed.detail).c_str(),
                     res.parsed.sections.size());
    if (o.verbosity >= 2 && !patch_detail.empty()) std::fprintf(stderr, "%s: %s\n", display(in_path).c_str(), patch_detail.c_str());
    summary(o, in_path, res.original_bytes, res.compressed_bytes, to_stdout ? "(stdout)" : out_path);
    print_lossy_summary(display(in_path), res, o.verbosity);
    if (o.remove_input && removable && !to_stdout && in_path != "-") remove_file(in_path);
}

void decompress_one(Options& o, const std::string& in_path) {
    const bool to_stdout = writes_stdout(o, in_path);
    const std::string out_path = output_path(o, in_path);  // -t tests any name, as zstd does
    if (!to_stdout && o.mode == Mode::Decompress && out_path.empty())
        throw Error("unknown suffix (expected " + std::string(kSuffix) + "); use -o to name the output");
    FdStream in(in_path);
    if (to_stdout && o.mode == Mode::Decompress && in_path != "-" && stdout_is_file(in.info()))
        throw Error("standard output is the input file");
    Progress bar(show_progress(o) && o.mode == Mode::Decompress, display(in_path));
    unsigned threads = resolve_threads(o.threads, decompress_work_units(in.info()));
    auto prog = [&](uint64_t d, uint64_t t, const std::string& s) { bar.update(d, t, s); };
    DecompressResult res;
    if (o.mode == Mode::Test) {
        NullSink sink;
        res = decompress_stream(in, sink, decode_options(o, threads, prog));
        bar.finish();
        if (o.verbosity >= 1) std::fprintf(stderr, "%s : OK (%s)\n", display(in_path).c_str(), human_bytes(res.bytes_out).c_str());
        return;
    }
    if (to_stdout) {
        FdSink sink(1, "(stdout)");
        res = decompress_stream(in, sink, decode_options(o, threads, prog));
        sink.flush();
    } else {
        const bool from_file = in_path != "-" && S_ISREG(in.info().st_mode);
        AtomicFile out(out_path, o.force, from_file ? &in.info() : nullptr);
        res = decompress_stream(in, out, decode_options(o, threads, prog));
        out.commit();
        if (o.remove_input && out.in_place() && in_path != "-") {
            print_error(display(in_path), "kept: --rm needs a regular output file");
            return;
        }
    }
    bar.finish();
    print_lossy_decompress_note(display(in_path), res.header, o.verbosity);
    if (o.verbosity >= 2) std::fprintf(stderr, "%s : %s\n", display(in_path).c_str(), human_bytes(res.bytes_out).c_str());
    if (o.remove_input && !to_stdout && in_path != "-") remove_file(in_path);
}

// Sizes a valid .stz cannot have (a crafted end record; the reader already checks that the
// sections tile the original size): worth a warning, since -l shows them without decoding.
std::vector<std::string> listing_warnings(const ContainerListing& L) {
    std::vector<std::string> w;
    uint64_t raw = 0, stored = 0;
    bool overflow = false;
    for (const auto& e : L.index) {
        overflow |= __builtin_add_overflow(raw, e.raw_size, &raw);
        overflow |= __builtin_add_overflow(stored, e.stored_size, &stored);
    }
    if (overflow || raw != L.header.original_size)
        w.push_back("the chunks hold " + std::to_string(raw) + " bytes, not the original size " +
                    std::to_string(L.header.original_size));
    if (overflow || stored > L.container_size) w.push_back("the chunks claim more stored bytes than the file has");
    return w;
}

void list_one(const Options& o, const std::string& in_path) {
    ContainerListing L;
    if (in_path == "-") throw Error("-l needs a file (the index is at the end)");
    FileSource src(in_path);
    L = list_container(src);
    std::vector<uint64_t> stored(L.header.sections.size());
    for (const auto& e : L.index) stored[e.section] += e.stored_size;
    const uint64_t original = stz::rebuilt_size(L.header);  // a --patch-from file: the file it rebuilds
    double ratio = L.container_size ? double(original) / L.container_size : 0;
    std::printf("%s: %s, %s -> %s (ratio %.3f), %zu chunks, xxh3 %016llx\n", printable(in_path).c_str(),
                format_line(L.header.format, L.header.format_version, L.header.detail).c_str(),
                human_bytes(original).c_str(), human_bytes(L.container_size).c_str(), ratio, L.index.size(),
                (unsigned long long)L.content_hash);
    for (const auto& w : listing_warnings(L)) print_error(display(in_path), "warning: " + w + " (damaged or crafted file?)");
    if (!L.header.note.empty()) std::printf("  note: %s\n", printable(L.header.note).c_str());
    for (const auto& p : L.header.properties)
        std::printf("  %s: %s%s\n", printable(p.key).c_str(), printable(p.value).c_str(), p.required ? " (needed to decode)" : "");
    if (o.verbosity < 2 && L.header.sections.size() > 40) {
        std::printf("  %zu sections (use -v to list them)\n", L.header.sections.size());
        return;
    }
    std::printf("  %-22s %12s %12s %12s %7s  %-6s %s\n", "section", "offset", "bytes", "stored", "ratio", "type", "shape");
    for (size_t i = 0; i < L.header.sections.size(); ++i) {
        const Section& s = L.header.sections[i];
        std::printf("  %-22s %12llu %12llu %12llu %7.3f  %-6s %s\n", printable(s.name).c_str(), (unsigned long long)s.offset,
                    (unsigned long long)s.size, (unsigned long long)stored[i], stored[i] ? double(s.size) / stored[i] : 0.0,
                    printable(s.type_string()).c_str(), printable(s.shape_string()).c_str());
    }
}

}  // namespace

int run_files(Options& o) {
    if (o.files.empty()) o.files.push_back("-");
    if (!o.output.empty() && o.files.size() > 1 && o.mode != Mode::List && o.mode != Mode::Test) {
        print_error("", "-o takes one input file");
        return 2;
    }
    if (o.to_stdout && !o.output.empty() && o.mode != Mode::List && o.mode != Mode::Test) {
        print_error("", "choose one of -c (standard output) and -o FILE");
        return 2;
    }
    if (o.to_stdout && o.mode == Mode::Compress && o.files.size() > 1) {
        // Concatenated .stz streams would not decompress: one ContainerReader reads exactly
        // one stream and rejects what follows it.
        print_error("", "-c with several inputs would write one unreadable concatenation; compress them one at a time");
        return 2;
    }
    std::shared_ptr<FileSource> reference;
    try {
        reference = open_reference(o.patch_from);
    } catch (const std::exception& e) {
        print_error(o.patch_from, e.what());
        return 1;
    }
    if (reference) {  // before any output is written
        const std::string clash = reference_clash(o, reference->info(), [&](const std::string& in) { return output_path(o, in); });
        if (!clash.empty()) {
            print_error("", clash);
            return 2;
        }
    }
    o.reference = reference;
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
