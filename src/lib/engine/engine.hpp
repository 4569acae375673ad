// Compress and decompress whole inputs: parse into sections, plan (plan.hpp: pipelines and
// chunks), run each chunk through its pipeline (in parallel), write chunks in order.
// Memory in flight is bounded by a byte budget, whatever the input size and thread count.
#pragma once
#include <functional>

#include "container/container.hpp"
#include "formats/detect.hpp"
#include "lossy/lossy.hpp"
#include "plan/plan.hpp"

namespace stz {

using ProgressFn = std::function<void(uint64_t done, uint64_t total, const std::string& section)>;

// Bytes the chunks in flight may hold together (raw data and codec stage buffers, as
// estimated from their sizes). A chunk larger than the budget runs alone.
inline constexpr uint64_t kDefaultMemoryBudget = 512ull << 20;

struct CompressOptions {
    CodecChoice codec;
    ParseHints hints;
    uint32_t chunk_bytes = 4u << 20;
    unsigned threads = 1;
    ProgressFn progress;
    uint64_t memory_budget = kDefaultMemoryBudget;
    std::vector<HeaderProperty> properties;  // written into the header (container.hpp)
    // Opt-in: K/V values rounded while read (lossy.hpp); the header then carries the optional
    // property kLossyProperty with the mode and the error, and the whole-file hash is of the
    // rounded file.
    LossySpec lossy;
    // The records written (container.hpp): version 3, or fixed-width ones (versions 1/2) for
    // tools and tests that edit records by their fixed offsets.
    ContainerLayout container = ContainerLayout::Compact;
};
inline constexpr const char* kLossyProperty = "lossy";

struct SectionStats {
    std::string pipeline;  // as chosen (a chunk may still fall back to store)
    uint64_t raw = 0, stored = 0;
};

struct CompressResult {
    ParsedFile parsed;  // as written: the parsed file, or its fallback layout (plan.hpp) with a note
    uint64_t original_bytes = 0, compressed_bytes = 0;
    std::vector<SectionStats> sections;  // per section of the parsed file given (merged ones share out their bytes)
    PlanLayout layout = PlanLayout::AsParsed;
    std::optional<LossyReport> lossy;  // when CompressOptions::lossy was active
};

CompressResult compress_stream(InputSource& in, OutputSink& out, const CompressOptions& opt);
// Compresses with an already parsed section list (bench reuses one parse for many pipelines).
CompressResult compress_parsed(InputSource& in, const ParsedFile& parsed, OutputSink& out, const CompressOptions& opt);

struct DecompressResult {
    ContainerHeader header;
    uint64_t bytes_out = 0;
};
struct DecompressOptions {
    unsigned threads = 1;
    ProgressFn progress;
    uint64_t memory_budget = kDefaultMemoryBudget;
    // The reference file of a --patch-from file (patch.hpp); such a file is refused without it.
    InputSource* reference = nullptr;
    // When each chunk's record checksum is checked (container.hpp): OnFailure decompresses as
    // safely and faster; testing a file, or verifying it before its input goes, names any damaged
    // byte with BeforeDecode.
    RecordCheck record_check = RecordCheck::OnFailure;
};
// Decodes and verifies every chunk and the whole-file hash; `out` may be a NullSink (test).
DecompressResult decompress_stream(InputStream& in, OutputSink& out, const DecompressOptions& opt);
DecompressResult decompress_stream(InputStream& in, OutputSink& out, unsigned threads = 1, ProgressFn progress = {});

// Memory a chunk may hold while it is decoded: its payload, every stage's input (the
// decoded chunk is the first) as its record states them, and the decoded chunk again.
uint64_t chunk_decode_cost(const ChunkRecord& c);

}  // namespace stz
