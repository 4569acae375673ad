// statezip command line: zstd/xz-style flags over the statezip library.
#include <CLI/CLI.hpp>

#include <cstring>
#include <stdexcept>
#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include "commands.hpp"
#include "file_io.hpp"
#include "lossy_cli.hpp"
#include "engine/presets.hpp"
#include "statezip_version.h"
#include "pack_cmd.hpp"
#include "container/container.hpp"
#include "related/pack_format.hpp"
#include "rebuild/patch_map.hpp"

using namespace stzcli;

namespace {

// The formats this build writes and reads, from the constants the reader checks, so the line
// cannot drift from the code: a .stz is written as container version 3 (compact records);
// versions 1 and 2 (0.1.0 and later) are still read.
std::string version_text() {
    const std::string stz_versions = std::to_string(stz::kStzVersion) + "-" + std::to_string(stz::kStzMaxVersion);
    return "statezip " STATEZIP_VERSION_STRING " (writes .stz container version " + std::to_string(stz::kStzVersionCompact) +
           " and reads .stz container versions " + stz_versions + ", .stzp set version " + std::to_string(stz::kPackVersion) +
           ", --patch-from map versions " + std::to_string(stz::kPatchMapVersion) + "-" +
           std::to_string(stz::kPatchMapVersionTokens) + ")";
}

struct UsageError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// Options that take a value, with the long name the value is attached to ("--threads=-1"),
// so that a value starting with '-' (a negative number, a file name) stays a value.
const char* long_name_taking_value(const std::string& s) {
    static const std::pair<const char*, const char*> names[] = {
        {"-T", "--threads"}, {"--threads", "--threads"}, {"-o", "--output"}, {"--output", "--output"},
        {"-n", "--runs"}, {"--runs", "--runs"}, {"--min-time", "--min-time"}, {"--level", "--level"}, {"--preset", "--preset"},
        {"--codec", "--codec"}, {"--chunk-size", "--chunk-size"}, {"--n-layer", "--n-layer"}, {"--n-ctx", "--n-ctx"},
        {"--n-embd", "--n-embd"}, {"--plot", "--plot"}, {"--pipelines", "--pipelines"}, {"-M", "--memory"},
        {"--memory", "--memory"}, {"--lossy", "--lossy"}, {"--patch-from", "--patch-from"}, {"--append", "--append"},
        {"-C", "--directory"}, {"--directory", "--directory"}};
    for (const auto& [n, l] : names)
        if (s == n) return l;
    return nullptr;
}

// The verbs (decompress, d, compress, list, test, inspect, bench) are read only as the first
// argument and only when no file of that name exists; "--" ends the options (and verbs).
// zstd-style "-19" levels are rewritten before CLI11 sees them.
std::vector<std::string> preprocess(int argc, char** argv, bool& is_sub) {
    std::vector<std::string> a;
    bool options_ended = false;
    for (int i = 1; i < argc; ++i) {
        std::string s = argv[i];
        if (options_ended || s == "--") {
            options_ended = true;
            a.push_back(s);
            continue;
        }
        if (i == 1 && !path_exists(s)) {
            if (s == "decompress" || s == "d") s = "-d";
            else if (s == "compress") continue;
            else if (s == "list") s = "-l";
            else if (s == "test") s = "-t";
            if (s == "inspect" || s == "bench" || s == "pack" || s == "unpack") is_sub = true;
        }
        if (const char* long_name = long_name_taking_value(s); long_name && i + 1 < argc) {
            a.push_back(std::string(long_name) + "=" + argv[++i]);
            continue;
        }
        if (s.size() >= 2 && s[0] == '-' && s.find_first_not_of("0123456789", 1) == std::string::npos) {
            if (s.size() > 4 || std::stoi(s.substr(1)) < 1 || std::stoi(s.substr(1)) > 22)
                throw UsageError(s + ": compression level out of range (-1 .. -22)");
            s = "--level=" + s.substr(1);
        }
        a.push_back(s);
    }
    return a;
}

// -T: a count of threads, 0 = all cores; more than 4 x cores is capped (with a note).
unsigned parse_threads(const std::string& arg, int verbosity) {
    if (arg.empty()) return 0;
    if (arg.size() > 9 || arg.find_first_not_of("0123456789") != std::string::npos)
        throw UsageError("-T takes a number of threads (0 = all cores, at most " + std::to_string(max_threads()) +
                         "), not '" + arg + "'");
    unsigned t = static_cast<unsigned>(std::stoul(arg));
    if (t > max_threads()) {
        if (verbosity >= 2)
            std::fprintf(stderr, "statezip: -T %u capped at %u (4 x cores)\n", t, max_threads());
        t = max_threads();
    }
    return t;
}

// --memory: bytes the chunks in flight may hold together, like xz's --memlimit: a number with
// an optional K, M or G suffix (binary; KiB/MiB/GiB also accepted). At least 16 MiB.
uint64_t parse_memory(const std::string& arg) {
    size_t used = 0;
    unsigned long long n = 0;
    try {
        n = std::stoull(arg, &used);
    } catch (const std::exception&) {
        used = 0;
    }
    std::string unit = used ? arg.substr(used) : "";
    static const std::pair<const char*, int> units[] = {{"", 0},    {"K", 10},   {"KiB", 10}, {"M", 20},
                                                        {"MiB", 20}, {"G", 30}, {"GiB", 30}};
    int shift = -1;
    for (const auto& [u, sh] : units)
        if (unit == u) shift = sh;
    if (!used || arg[0] == '-' || shift < 0 || n > (UINT64_MAX >> shift))
        throw UsageError("--memory takes a size such as 256M or 2G, not '" + arg + "'");
    const uint64_t bytes = uint64_t{n} << shift;
    if (bytes < (16u << 20)) throw UsageError("--memory must be at least 16M (got '" + arg + "')");
    return bytes;
}

// Every flag as CLI11 fills it, before it is checked and mapped to the commands' options.
struct Flags {
    Options o;
    bool decompress = false, test = false, list = false, quiet = false, fast = false, max = false;
    bool compress = false, keep = false, progress = false, no_progress = false, no_keep = false;
    int verbose = 0, level = 0;
    std::string codec, preset, threads_arg, memory_arg, lossy;
    uint64_t n_layer = 0, n_ctx = 0, n_embd = 0;
    unsigned chunk_mib = 4;
    CLI::App* inspect = nullptr;
    std::vector<std::string> inspect_files;
    bool inspect_json = false;
    CLI::App* bench = nullptr;
    BenchOptions b;
    std::string pipelines, bench_threads_arg;
    bool no_external = false;
    // pack / unpack / bench --set (pack_cmd.hpp)
    CLI::App* pack = nullptr;
    CLI::App* unpack = nullptr;
    PackCliOptions p;
    std::vector<std::string> unpack_args;
    bool bench_set = false;
};

void declare_main_flags(CLI::App& app, Flags& f) {
    app.set_version_flag("-V,--version", version_text());
    app.add_option("files", f.o.files, "input files ('-' = standard input)");
    app.add_flag("-d,--decompress", f.decompress, "decompress");
    app.add_flag("-z,--compress", f.compress, "compress (default)");
    app.add_flag("-t,--test", f.test, "test the integrity of compressed files");
    app.add_flag("-l,--list", f.list, "list the sections of .stz files without decompressing");
    app.add_flag("-c,--stdout", f.o.to_stdout, "write to standard output");
    app.add_option("-o,--output", f.o.output, "output file (one input only)");
    app.add_flag("-f,--force", f.o.force, "overwrite outputs; write compressed data to a terminal");
    app.add_flag("-k,--keep", f.keep, "keep the input files (default)");
    app.add_flag("--rm", f.o.remove_input, "remove each input after its output is complete and verified");
    app.add_flag("--no-keep", f.no_keep, "same as --rm");
    app.add_flag("-q,--quiet", f.quiet, "no summary lines, no progress");
    app.add_flag("-v,--verbose", f.verbose, "more output (repeatable)");
    app.add_flag("--progress", f.progress, "show a progress bar even when stderr is not a terminal");
    app.add_flag("--no-progress", f.no_progress, "never show a progress bar");
    app.add_option("-M,--memory", f.memory_arg,
                   "memory the chunks in flight may use together (default 512M; e.g. 256M, 2G); peak RSS stays "
                   "about this whatever -T and the input");
    app.add_option("-T,--threads", f.threads_arg, "worker threads that code the chunks (0 = all cores, the default; at most 4 x cores); "
                   "the calling thread reads and writes beside them, so -T1 runs two threads");
    app.add_option("--level", f.level, "level of the general-purpose stage, as -1 .. -19")->check(CLI::Range(1, 22));
    app.add_flag("--fast", f.fast, "fast preset");
    app.add_flag("--max", f.max, "max preset (smallest output)");
    app.add_option("--preset", f.preset, "preset: fast, default, max");
    app.add_option("--codec", f.codec,
                   "force a pipeline for all sections (e.g. zstd:19, shuffle+lzma:9e, lz4hc:9) or per group: "
                   "kv=...,meta=...,logits=...,zero=...,opaque=...");
    app.add_option("--chunk-size", f.chunk_mib, "chunk size in MiB (1-64)")->check(CLI::Range(1, 64));
    app.add_option("--lossy", f.lossy,
                   "LOSSY, opt-in: round K/V values before compressing (the file still loads in llama.cpp): "
                   "f16-exact (f32 caches with flash attention: what llama.cpp computes anyway), "
                   "drop:K=N,V=M (round away N/M low mantissa bits), keep:K=N,V=M (keep N/M mantissa bits)");
    app.add_option("--patch-from", f.o.patch_from,
                   "REF: store only what REF (e.g. an earlier save) does not have; -d needs the same REF");
    app.add_option("--n-layer", f.n_layer, "model layer count, for 2023 blobs that do not record it");
    app.add_option("--n-ctx", f.n_ctx, "context size, for 2023 blobs");
    app.add_option("--n-embd", f.n_embd, "K/V row width, for 2023 blobs");
}

void declare_subcommands(CLI::App& app, Flags& f) {
    f.inspect = app.add_subcommand("inspect", "show the sections of a state file (or of a .stz)");
    f.inspect->add_option("files", f.inspect_files, "files")->required();
    f.inspect->add_flag("--json", f.inspect_json, "JSON output");

    f.bench = app.add_subcommand("bench", "size and speed of every codec pipeline on state files");
    f.bench->add_option("files", f.b.files, "state files (default: the bundled sample)");
    f.bench->add_option("--runs,-n", f.b.runs, "timed runs per pipeline (median reported)")->check(CLI::Range(1, 100));
    f.bench->add_option("--min-time", f.b.min_time_ms,
                        "statezip rows: a timed run repeats the call until it lasts this many ms (default 10; 0 = one call)")
        ->check(CLI::Range(0.0, 10000.0));
    f.bench->add_flag("--json", f.b.json, "JSON output");
    f.bench->add_flag("--csv", f.b.csv, "CSV output");
    f.bench->add_flag("--sections", f.b.sections, "per-section breakdown (which pipeline wins on K, V, metadata)");
    f.bench->add_option("--plot", f.b.plot, "write a ratio-vs-speed SVG chart");
    f.bench->add_option("--pipelines", f.pipelines,
                        "comma-separated pipelines (or preset names) instead of the built-in list");
    f.bench->add_flag("--quick", f.b.quick, "a short list of pipelines");
    f.bench->add_option("--lossy", f.b.lossy,
                        "also bench each preset row with this lossy mode (repeatable, e.g. --lossy f16-exact "
                        "--lossy drop:V=6); rows verified against the rounded file")
        ->allow_extra_args(false);
    f.bench->add_flag("--no-external", f.no_external, "skip the system zstd/xz/lz4 tools");
    f.bench->add_option("-T,--threads", f.bench_threads_arg, "threads per run (default 1)");
    f.bench->add_flag("--set", f.bench_set, "the files as one related set: per file, pack, patch chains, tar|xz, tar|zstd");

    f.pack = app.add_subcommand("pack", "store related state files as one set (SET.stzp), each distinct KV cell once");
    f.pack->add_option("files", f.p.files, "files (member names: the paths as given, relative)");
    f.pack->add_option("--append", f.p.append, "add the files to this set (created if missing)");
    f.pack->fallthrough();
    f.unpack = app.add_subcommand("unpack", "restore members of a set: unpack SET.stzp [-C DIR] [NAME...]");
    f.unpack->add_option("args", f.unpack_args, "the set, then members to restore (default all)")->required();
    f.unpack->add_option("-C,--directory", f.p.dir, "restore under this folder (default .)");
    f.unpack->fallthrough();
    app.require_subcommand(0, 1);
}

int run_bench_command(Flags& f, const stz::ParseHints& hints, int prog) {
    f.b.external = !f.no_external;
    if (f.bench_set) f.b.hints = hints, f.b.progress = prog;
    if (f.bench_set) return run_bench_set(f.b);
    f.b.hints = hints;
    f.b.progress = prog;
    // Commas inside a stage's parentheses belong to it: "planes(top=rans:1,rest=store),zstd:3".
    for (auto& p : stz::split_top_level(f.pipelines, ','))
        if (!p.empty()) f.b.pipelines.push_back(p);
    return run_bench(f.b);
}

// Checks the flags of the main command and maps them to Options; UsageError on a bad combination.
void map_main_flags(Flags& f, const stz::ParseHints& hints, int prog) {
    Options& o = f.o;
    if (int(f.decompress) + int(f.test) + int(f.list) > 1) throw UsageError("choose one of -d, -t, -l");
    o.mode = f.decompress ? Mode::Decompress : f.test ? Mode::Test : f.list ? Mode::List : Mode::Compress;
    o.verbosity = f.quiet ? 0 : 1 + f.verbose;
    o.progress = f.quiet ? 0 : prog;
    o.remove_input = o.remove_input || f.no_keep;
    if (int(f.fast) + int(f.max) + int(!f.preset.empty()) > 1) throw UsageError("choose one of --fast, --max, --preset");
    if (f.fast) f.preset = "fast";
    if (f.max) f.preset = "max";
    auto preset = stz::preset_from_name(f.preset.empty() ? "default" : f.preset);
    if (!preset) throw UsageError("unknown preset '" + f.preset + "' (fast, default, max)");
    const uint64_t memory_budget = o.compress.memory_budget;  // -M, mapped before
    o.compress = stz::preset_options(*preset, f.level, f.codec);  // presets.hpp: the same as the C API
    o.compress.memory_budget = memory_budget;
    o.compress.hints = hints;
    o.compress.chunk_bytes = f.chunk_mib << 20;
    o.compress.lossy = lossy_from_flags(f.lossy, o.mode == Mode::Compress, o.remove_input, o.force);
    // A patch stores rows of the file as read; the rounding happens inside the normal
    // compression path only, so the two would disagree about what the output is.
    if (!f.lossy.empty() && !o.patch_from.empty()) throw UsageError("--lossy cannot be combined with --patch-from");
}

// pack, unpack, and -l / -t of .stzp sets (the other files of -l / -t go to run_files).
int run_pack_modes(Flags& f) {
    f.p.output = f.o.output, f.p.force = f.o.force, f.p.verbosity = f.o.verbosity;
    f.p.threads = f.o.threads, f.p.compress = f.o.compress;
    if ((*f.pack || *f.unpack) && !f.o.patch_from.empty())  // sets share cells among their own members only
        throw UsageError("--patch-from cannot be combined with pack or unpack");
    if (*f.pack) return run_pack(f.p);
    if (*f.unpack) {
        f.p.set = f.unpack_args[0];
        f.p.names.assign(f.unpack_args.begin() + 1, f.unpack_args.end());
        return run_unpack(f.p);
    }
    int rc = 0;
    std::vector<std::string> others;
    for (const auto& file : f.o.files) {
        if (!is_pack_file(file)) others.push_back(file);
        else rc = std::max(rc, f.o.mode == Mode::List ? run_pack_list(file, f.o.verbosity) : run_pack_test(file, f.p));
    }
    if (others.empty() && !f.o.files.empty()) return rc;
    f.o.files = others;
    return std::max(rc, run_files(f.o));
}

int run_parsed(Flags& f) {
    stz::ParseHints hints;
    if (f.n_layer) hints.n_layer = f.n_layer;
    if (f.n_ctx) hints.n_ctx = f.n_ctx;
    if (f.n_embd) hints.n_embd = f.n_embd;
    const int prog = f.progress ? 1 : f.no_progress ? 0 : -1;
    const int verbosity = f.quiet ? 0 : 1 + f.verbose;
    try {
        f.o.threads = parse_threads(f.threads_arg, verbosity);
        if (!f.memory_arg.empty()) f.o.compress.memory_budget = parse_memory(f.memory_arg);
        if (!f.bench_threads_arg.empty()) f.b.threads = std::max(1u, parse_threads(f.bench_threads_arg, verbosity));
        if (*f.inspect) return run_inspect(f.inspect_files, f.inspect_json, hints);
        if (*f.bench) return run_bench_command(f, hints, prog);
        map_main_flags(f, hints, prog);
        if (*f.pack || *f.unpack || f.o.mode == Mode::List || f.o.mode == Mode::Test) return run_pack_modes(f);
    } catch (const std::exception& e) {  // usage errors and bad --codec pipelines
        print_error("", e.what());
        return 2;
    }
    try {
        return run_files(f.o);
    } catch (const std::exception& e) {
        print_error("", e.what());
        return 2;
    }
}

// The library allocates each chunk's buffers (plane copies, coded streams: 0.1-4 MB) and frees
// them after the chunk. glibc's defaults hand such blocks back to the kernel (mmap above its
// threshold, trimming of the heaps' tops), so the next chunk faults the same pages in again:
// under a hypervisor those faults were 12-15 % of the default's time (perf), and a q8_0 cache
// compressed at ~0.7x the speed it does without them. The process keeps what it freed for
// reuse instead; the chunks in flight, not the heap, still bound the peak (-M).
void keep_freed_memory_for_reuse() {
#if defined(__GLIBC__)
    mallopt(M_MMAP_THRESHOLD, 32 << 20);  // glibc's largest: blocks up to 32 MB from the heaps
    mallopt(M_TRIM_THRESHOLD, 256 << 20);
#endif
}

}  // namespace

int main(int argc, char** argv) {
    keep_freed_memory_for_reuse();
    install_signal_handlers();
    bool is_sub = false;
    std::vector<std::string> args;
    try {
        args = preprocess(argc, argv, is_sub);
    } catch (const UsageError& e) {
        print_error("", e.what());
        std::fprintf(stderr, "Try 'statezip --help'.\n");
        return 2;
    }
    CLI::App app{"statezip: lossless compressor for llama.cpp state files (sessions, sequence files, raw state blobs)",
                 "statezip"};
    Flags f;
    declare_main_flags(app, f);
    declare_subcommands(app, f);
    std::vector<std::string> rev(args.rbegin(), args.rend());
    try {
        app.parse(rev);
    } catch (const CLI::CallForHelp& e) {
        return app.exit(e);
    } catch (const CLI::CallForAllHelp& e) {
        return app.exit(e);
    } catch (const CLI::Success& e) {
        return app.exit(e);
    } catch (const CLI::ParseError& e) {
        print_error("", e.what());
        std::fprintf(stderr, "Try 'statezip --help'.\n");
        return 2;
    }
    return run_parsed(f);
}
