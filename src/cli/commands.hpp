// The CLI's commands. Each takes parsed options and returns the process exit code.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "engine/engine.hpp"

namespace stzcli {

enum class Mode { Compress, Decompress, Test, List };

struct Options {
    Mode mode = Mode::Compress;
    std::vector<std::string> files;
    std::string output;  // -o
    bool to_stdout = false, force = false, remove_input = false;  // inputs are kept unless --rm
    int verbosity = 1;  // 0 = -q, 1 = default, 2+ = -v
    int progress = -1;  // -1 auto (stderr is a terminal), 0 off, 1 on
    unsigned threads = 0;
    stz::CompressOptions compress;
    std::string patch_from;                        // --patch-from=REF (patch_cli.hpp)
    std::shared_ptr<stz::InputSource> reference;   // REF, opened once by run_files
};

int run_files(Options& o);
int run_inspect(const std::vector<std::string>& files, bool json, const stz::ParseHints& hints);

struct BenchOptions {
    std::vector<std::string> files;
    std::vector<std::string> pipelines;  // empty = the built-in list
    int runs = 3;
    double min_time_ms = 10;  // a timed sample repeats the call until it lasts this long
    bool json = false, csv = false, sections = false, external = true, quick = false;
    std::string plot;
    std::vector<std::string> lossy;  // --lossy specs: preset rows again with each (bench_lossy.cpp)
    unsigned threads = 1;
    int progress = -1;
    stz::ParseHints hints;
};
int run_bench(const BenchOptions& b);

// Message helpers: "statezip: <file>: <message>" on stderr.
void print_error(const std::string& file, const std::string& message);
// -T: 0 = all cores; never more than 4 x cores nor more than `work_units` (chunks to do).
unsigned resolve_threads(unsigned requested, uint64_t work_units);
unsigned max_threads();
std::string default_sample_path();

}  // namespace stzcli
