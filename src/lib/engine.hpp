// Compress and decompress whole inputs: parse into sections, cut each section into
// chunks, run each chunk through its pipeline (in parallel), write chunks in order.
// Memory is bounded by threads x chunk size, whatever the input size.
#pragma once
#include <functional>

#include "container.hpp"
#include "formats/detect.hpp"
#include "policy.hpp"

namespace stz {

using ProgressFn = std::function<void(uint64_t done, uint64_t total, const std::string& section)>;

struct CompressOptions {
    CodecChoice codec;
    ParseHints hints;
    uint32_t chunk_bytes = 4u << 20;
    unsigned threads = 1;
    ProgressFn progress;
};

struct SectionStats {
    std::string pipeline;  // as chosen (a chunk may still fall back to store)
    uint64_t raw = 0, stored = 0;
};

struct CompressResult {
    ParsedFile parsed;
    uint64_t original_bytes = 0, compressed_bytes = 0;
    std::vector<SectionStats> sections;
};

CompressResult compress_stream(InputSource& in, OutputSink& out, const CompressOptions& opt);
// Compresses with an already parsed section list (bench reuses one parse for many pipelines).
CompressResult compress_parsed(InputSource& in, const ParsedFile& parsed, OutputSink& out, const CompressOptions& opt);

struct DecompressResult {
    ContainerHeader header;
    uint64_t bytes_out = 0;
};
// Decodes and verifies every chunk and the whole-file hash; `out` may be a NullSink (test).
DecompressResult decompress_stream(InputStream& in, OutputSink& out, unsigned threads = 1, ProgressFn progress = {});

}  // namespace stz
