// A pipeline is a chain of codecs applied in order on encode and in reverse on decode,
// like a liblzma filter chain. Each stage records the size of its input, so every decode
// step knows exactly how many bytes it must produce.
#pragma once
#include "codec.hpp"

namespace stz {

struct Stage {
    const Codec* codec = nullptr;
    Bytes params;
};

struct Pipeline {
    std::vector<Stage> stages;
    std::string describe() const;  // "shuffle:2+zstd:3"
};

// Splits at `sep` outside parentheses ("a(b+c)+d" -> "a(b+c)", "d"); throws on unbalanced ones.
std::vector<std::string> split_top_level(std::string_view s, char sep);
// Parses "name[:arg]...[(body)][+name[:arg]...]" for data of the given shape; a stage's
// "(body)" reaches its codec as the last argument, parentheses included.
Pipeline parse_pipeline(std::string_view spec, const DataShape& shape);
// Parses "pipeline|pipeline|...": alternatives of which each chunk keeps the smallest.
std::vector<Pipeline> parse_alternatives(std::string_view spec, const DataShape& shape);

struct EncodedChunk {
    Bytes payload;
    std::vector<uint64_t> stage_input_sizes;  // one per stage
    std::vector<size_t> unchanged_stages;     // stages that changed nothing (own_recipe), in order
};

EncodedChunk encode_pipeline(const Pipeline& p, ByteSpan raw);

// The number of stages that p and q begin with alike (the same codec with the same parameters).
size_t shared_stages(const Pipeline& p, const Pipeline& q);
// What the first `stages` stages of a pipeline made of one chunk: alternatives that begin alike
// ("deltarun|deltarun+zstd:19") code those stages once per chunk, not once per alternative.
struct StagePrefix {
    size_t stages = 0;  // 0: nothing kept
    Bytes output;       // the last of those stages' output
    std::vector<uint64_t> input_sizes;
};
// encode_pipeline, starting after `prefix`'s stages (which p must begin with: made by an
// alternative q with shared_stages(q, p) >= prefix.stages), and leaving in `prefix` what p's
// first `keep` stages made (for the next alternative; keep = 0 keeps nothing). Codecs are pure
// functions of their input and parameters, so the payload is the one encode_pipeline makes.
// `own_recipe`: p is the chunk's own recipe, so a stage that changes nothing may be left out
// (Codec::encode_unless_unchanged; listed in unchanged_stages, chunk_recipe drops them), but
// never the last. Not where alternatives share stages (prefix or keep): those run in full.
EncodedChunk encode_pipeline(const Pipeline& p, ByteSpan raw, StagePrefix& prefix, size_t keep, bool own_recipe = false);
// The recipe a chunk's record lists: p without e's unchanged stages, whose input sizes leave e.
Pipeline chunk_recipe(const Pipeline& p, EncodedChunk& e);
// Throws unless each stage's declared sizes are ones its codec can produce (sizes[i] is the
// input of stage i, `payload` the last stage's output): bounds work and memory by the input.
// Whoever reads sizes from untrusted bytes calls it before decode_pipeline (the container
// reader for each chunk, planes for each nested recipe).
void check_stage_sizes(const Pipeline& p, const std::vector<uint64_t>& sizes, uint64_t payload);
// `sizes[i]` is the input size of stage i at encode time; `max_size` caps every intermediate.
Bytes decode_pipeline(const Pipeline& p, ByteSpan payload, const std::vector<uint64_t>& sizes);
// The same into `dst`, which holds exactly `out_size` bytes (a chunk's place in the caller's
// memory); throws unless the pipeline decodes to out_size bytes. On a throw `dst` may hold
// anything; nothing past dst + out_size is written.
void decode_pipeline_into(const Pipeline& p, ByteSpan payload, const std::vector<uint64_t>& sizes, uint8_t* dst,
                          size_t out_size);

}  // namespace stz
