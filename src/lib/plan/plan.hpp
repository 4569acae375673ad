// The compression plan: a pure function of the parsed file, the codec choice and the chunk
// size. It decides the sections as written (the parsed ones, with runs of small equal K/V
// layers gathered into one section each, or fewer when the parsed structure would cost more
// container bytes than it is worth), each section's pipeline
// alternatives and the shape they were built for, and the chunks in file order. The engine
// only executes a plan (read, encode in parallel, write in order).
#pragma once
#include "container/container.hpp"
#include "policy.hpp"

namespace stz {

struct ChunkJob {
    uint32_t section;  // index into Plan::sections (the written sections)
    uint64_t offset;   // in the input file
    uint32_t size;
};

struct SectionPlan {
    std::string spec;   // pipeline text as chosen by the policy
    DataShape shape;    // the shape the alternatives were built for (records for a gathered run)
    // Rows larger than a chunk can hold: the section is cut and coded as plain bytes
    // (the shape's row structure was dropped, so no chunk ever splits a row silently).
    bool rows_as_bytes = false;
    std::vector<Pipeline> alternatives;  // each chunk keeps the smallest output (or store)
};

// How the parsed structure was written (a plan never expands its input and never exceeds a reader's limit).
enum class PlanLayout {
    AsParsed,     // every parsed section (runs of equal K/V layers with their small headers gathered
                  // into one section of records, "kv.k[0]..kv.k[4]", when the pipeline is planes)
    TinyMerged,   // runs of adjacent tiny sections merged into one bytes section each
    Opaque,       // the whole file as one bytes section
};
const char* plan_layout_name(PlanLayout l);

struct Plan {
    ContainerHeader header;             // sections as written
    std::vector<SectionPlan> sections;  // one per header section
    std::vector<ChunkJob> chunks;       // in file order, tiling the file
    std::vector<uint32_t> written_of;   // per parsed section: the written section that holds it
    PlanLayout layout = PlanLayout::AsParsed;
    uint32_t chunk_bytes = 0;           // target chunk size used
    // Upper bound of the container bytes beyond the chunk payloads (header uncompressed,
    // chunk records, end record, trailer). Every payload is at most its raw size (a chunk
    // that does not shrink is stored), so the output is at most input + overhead_bound.
    uint64_t overhead_bound = 0;
    uint64_t header_bound = 0;  // the header's part of it (the reader's limit is kMaxHeaderBytes)
};

// Container bytes a file of `input_bytes` may add at most when its data does not compress:
// a constant for the fixed parts plus 0.1 %. The engine guarantees it (see compress_parsed).
uint64_t expansion_allowance(uint64_t input_bytes);
// Container bytes a parsed structure may cost before the plan gives it up without trying it:
// 4 KiB + 12.5 % for small files, 4 KiB + 64 KiB + 0.4 % for large ones. Real small files
// spend 1-8 % on section tables and chunk records and earn it back where their data
// compresses (the engine checks that, see compress_parsed); hostile ones cost many times
// their size and are cut down here without being tried.
uint64_t structure_allowance(uint64_t input_bytes);
inline constexpr uint64_t kTinySectionBytes = 4096;  // runs of smaller sections are merged in a fallback

enum class PlanLimit {
    Structure,  // keep the parsed structure when it costs at most structure_allowance
    Strict,     // keep within expansion_allowance (after a structured attempt expanded the file)
};

// Pure: same inputs, same plan. `parsed.sections` must tile [0, total size).
Plan make_plan(const ParsedFile& parsed, const CodecChoice& codec, uint32_t chunk_bytes,
               PlanLimit limit = PlanLimit::Structure);

}  // namespace stz
