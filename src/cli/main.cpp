// statezip command line: zstd/xz-style flags over the statezip library.
#include <CLI/CLI.hpp>

#include <cstring>
#include <regex>

#include "commands.hpp"
#include "file_io.hpp"

using namespace stzcli;

namespace {

// zstd-style "-19" levels and verb aliases are rewritten before CLI11 sees them.
std::vector<std::string> preprocess(int argc, char** argv, bool& is_sub) {
    std::vector<std::string> a;
    static const std::regex level_re("-([0-9]{1,2})");
    for (int i = 1; i < argc; ++i) {
        std::string s = argv[i];
        std::smatch m;
        if (i == 1 && (s == "decompress" || s == "d")) s = "-d";
        else if (i == 1 && s == "compress") continue;
        else if (i == 1 && s == "list") s = "-l";
        else if (i == 1 && s == "test") s = "-t";
        if (i == 1 && (s == "inspect" || s == "bench")) is_sub = true;
        if (std::regex_match(s, m, level_re)) s = "--level=" + m[1].str();
        a.push_back(s);
    }
    return a;
}

}  // namespace

int main(int argc, char** argv) {
    install_signal_handlers();
    bool is_sub = false;
    std::vector<std::string> args = preprocess(argc, argv, is_sub);

    CLI::App app{"statezip: lossless compressor for llama.cpp state files (sessions, sequence files, raw state blobs)",
                 "statezip"};
    app.set_version_flag("-V,--version", "statezip 0.1.0 (.stz format 1)");
    Options o;
    bool decompress = false, test = false, list = false, quiet = false, fast = false, max = false;
    int verbose = 0, level = 0;
    bool progress = false, no_progress = false, no_keep = false;
    std::string codec, preset;
    uint64_t n_layer = 0, n_ctx = 0, n_embd = 0;
    unsigned chunk_mib = 4;
    app.add_option("files", o.files, "input files ('-' = standard input)");
    app.add_flag("-d,--decompress", decompress, "decompress");
    bool compress_flag = false, keep_flag = false;
    app.add_flag("-z,--compress", compress_flag, "compress (default)");
    app.add_flag("-t,--test", test, "test the integrity of compressed files");
    app.add_flag("-l,--list", list, "list the sections of .stz files without decompressing");
    app.add_flag("-c,--stdout", o.to_stdout, "write to standard output");
    app.add_option("-o,--output", o.output, "output file (one input only)");
    app.add_flag("-f,--force", o.force, "overwrite outputs; write compressed data to a terminal");
    app.add_flag("-k,--keep", keep_flag, "keep the input files (default)");
    app.add_flag("--rm", o.remove_input, "remove each input after its output is complete and verified");
    app.add_flag("--no-keep", no_keep, "same as --rm");
    app.add_flag("-q,--quiet", quiet, "no summary lines, no progress");
    app.add_flag("-v,--verbose", verbose, "more output (repeatable)");
    app.add_flag("--progress", progress, "show a progress bar even when stderr is not a terminal");
    app.add_flag("--no-progress", no_progress, "never show a progress bar");
    app.add_option("-T,--threads", o.threads, "worker threads (0 = all cores, the default)");
    app.add_option("--level", level, "level of the general-purpose stage, as -1 .. -19")->check(CLI::Range(1, 22));
    app.add_flag("--fast", fast, "fast preset");
    app.add_flag("--max", max, "max preset (smallest output)");
    app.add_option("--preset", preset, "preset: fast, default, max");
    app.add_option("--codec", codec,
                   "force a pipeline for all sections (e.g. zstd:19, shuffle+lzma:9e, lz4hc:9) or per group: "
                   "kv=...,meta=...,logits=...,zero=...,opaque=...");
    app.add_option("--chunk-size", chunk_mib, "chunk size in MiB (1-64)")->check(CLI::Range(1, 64));
    app.add_option("--n-layer", n_layer, "model layer count, for 2023 blobs that do not record it");
    app.add_option("--n-ctx", n_ctx, "context size, for 2023 blobs");
    app.add_option("--n-embd", n_embd, "K/V row width, for 2023 blobs");

    auto* inspect = app.add_subcommand("inspect", "show the sections of a state file (or of a .stz)");
    std::vector<std::string> inspect_files;
    bool inspect_json = false;
    inspect->add_option("files", inspect_files, "files")->required();
    inspect->add_flag("--json", inspect_json, "JSON output");

    auto* bench = app.add_subcommand("bench", "size and speed of every codec pipeline on state files");
    BenchOptions b;
    std::string pipelines;
    bench->add_option("files", b.files, "state files (default: the bundled sample)");
    bench->add_option("--runs,-n", b.runs, "timed runs per pipeline (median reported)")->check(CLI::Range(1, 100));
    bench->add_flag("--json", b.json, "JSON output");
    bench->add_flag("--csv", b.csv, "CSV output");
    bench->add_flag("--sections", b.sections, "per-section breakdown (which pipeline wins on K, V, metadata)");
    bench->add_option("--plot", b.plot, "write a ratio-vs-speed SVG chart");
    bench->add_option("--pipelines", pipelines, "comma-separated pipelines (or preset names) instead of the built-in list");
    bench->add_flag("--quick", b.quick, "a short list of pipelines");
    bool no_external = false;
    bench->add_flag("--no-external", no_external, "skip the system zstd/xz/lz4 tools");
    bench->add_option("-T,--threads", b.threads, "threads per run (default 1)");
    app.require_subcommand(0, 1);

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

    stz::ParseHints hints;
    if (n_layer) hints.n_layer = n_layer;
    if (n_ctx) hints.n_ctx = n_ctx;
    if (n_embd) hints.n_embd = n_embd;
    int prog = progress ? 1 : no_progress ? 0 : -1;

    try {
        if (*inspect) return run_inspect(inspect_files, inspect_json, hints);
        if (*bench) {
            b.external = !no_external;
            b.hints = hints;
            b.progress = prog;
            std::string cur;
            for (char c : pipelines + ",") {
                if (c == ',') {
                    if (!cur.empty()) b.pipelines.push_back(cur);
                    cur.clear();
                } else cur += c;
            }
            return run_bench(b);
        }
        if (int(decompress) + int(test) + int(list) > 1) {
            print_error("", "choose one of -d, -t, -l");
            return 2;
        }
        o.mode = decompress ? Mode::Decompress : test ? Mode::Test : list ? Mode::List : Mode::Compress;
        o.verbosity = quiet ? 0 : 1 + verbose;
        o.progress = quiet ? 0 : prog;
        o.remove_input = o.remove_input || no_keep;
        if (int(fast) + int(max) + int(!preset.empty()) > 1) {
            print_error("", "choose one of --fast, --max, --preset");
            return 2;
        }
        if (fast) preset = "fast";
        if (max) preset = "max";
        if (!preset.empty()) {
            auto p = stz::preset_from_name(preset);
            if (!p) {
                print_error("", "unknown preset '" + preset + "' (fast, default, max)");
                return 2;
            }
            o.compress.codec.preset = *p;
        }
        o.compress.codec.level = level;
        if (!codec.empty()) stz::parse_codec_option(codec, o.compress.codec);
        o.compress.hints = hints;
        o.compress.chunk_bytes = chunk_mib << 20;
        return run_files(o);
    } catch (const std::exception& e) {
        print_error("", e.what());
        return 2;
    }
}
