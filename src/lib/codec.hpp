// The codec interface: every codec is an exact encode/decode pair over byte spans.
// Codecs know nothing about llama.cpp: they see bytes plus a generic DataShape
// (element width, row geometry) that the caller derives from whatever it knows.
#pragma once
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "bytes.hpp"

namespace stz {

// Numeric element kinds a transform may exploit. Block layouts are described by their
// field widths (e.g. a 34-byte block = a 2-byte scale then 32 one-byte values).
enum class ElemKind : uint8_t { Bytes = 0, F16 = 1, BF16 = 2, F32 = 3, I32 = 4, Block = 5 };

struct DataShape {
    ElemKind kind = ElemKind::Bytes;
    uint32_t elem_bytes = 1;    // bytes per element (or per block for ElemKind::Block)
    uint32_t block_head = 0;    // Block only: bytes of the per-block header (scales) before the payload
    uint64_t row_bytes = 0;     // bytes per row, 0 when the data has no row structure
    uint64_t keep_bytes = 0;    // bytes of each row that may be non-zero (trim); 0 = unknown
    bool transposed = false;    // rows are channels (each row one channel's run of values)
};

class Codec {
public:
    virtual ~Codec() = default;
    virtual uint8_t id() const = 0;
    virtual std::string_view name() const = 0;
    // Turns the user's arguments ("19", "long") and the data's shape into the parameter
    // bytes stored with each chunk, so a chunk decodes without any outside knowledge.
    virtual Bytes make_params(const std::vector<std::string>& args, const DataShape& shape) const = 0;
    virtual void encode(ByteSpan in, ByteSpan params, Bytes& out) const = 0;
    // Must append exactly `out_size` bytes to `out` or throw; `in` is untrusted.
    virtual void decode(ByteSpan in, ByteSpan params, size_t out_size, Bytes& out) const = 0;
    // The spec string for these parameters, e.g. "zstd:19:long".
    virtual std::string describe(ByteSpan params) const { (void)params; return std::string(name()); }
    // The shape of this codec's output, for the next stage's parameters (e.g. trim leaves
    // shorter rows).
    virtual DataShape output_shape(const DataShape& in) const { return in; }
    // Upper bound of encoded size for `n` input bytes (used to cap what a reader accepts).
    virtual size_t max_encoded_size(size_t n) const { return n + n / 8 + 1024; }
};

// Registry (codec_registry.cpp holds the one-line registrations).
const Codec* find_codec(uint8_t id);
const Codec* find_codec(std::string_view name);
std::vector<const Codec*> all_codecs();

// Helper for codecs: a small integer argument with bounds.
int parse_int_arg(const std::string& s, int lo, int hi, std::string_view codec);

}  // namespace stz
