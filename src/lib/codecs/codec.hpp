// The codec interface: every codec is an exact encode/decode pair over byte spans.
// Codecs know nothing about llama.cpp: they see bytes plus a generic DataShape
// (element width, row geometry) that the caller derives from whatever it knows.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/bytes.hpp"

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
    // Records: the data is a sequence of records of record_bytes, each record_head bytes of
    // other data followed by a body that the fields above describe (e.g. several sections of
    // one layout, each after its small header, coded as one unit). 0 = no records.
    uint64_t record_bytes = 0;
    uint32_t record_head = 0;
};

class Codec {
public:
    virtual ~Codec() = default;
    virtual uint8_t id() const = 0;
    virtual std::string_view name() const = 0;
    // Turns the user's arguments ("19", "long") and the data's shape into the parameter
    // bytes stored with each chunk, so a chunk decodes without any outside knowledge.
    virtual Bytes make_params(const std::vector<std::string>& args, const DataShape& shape) const = 0;
    // Throws stz::Error unless `params` is exactly what make_params can produce (right size,
    // known flags, every number in range, layout sizes small enough that no arithmetic on them
    // can overflow). Called by the reader when a chunk is read and by encode/decode: there are
    // no silent defaults. Default: no parameters.
    virtual void check_params(ByteSpan params) const;
    virtual void encode(ByteSpan in, ByteSpan params, Bytes& out) const = 0;
    // encode for a caller whose `in` lies inside memory with kSlack readable bytes before and
    // after it (a graph stage's planes, side by side in its output): a codec whose library
    // reads past its input codes it where it lies instead of from a padded copy. Default: encode.
    virtual void encode_in_slack(ByteSpan in, ByteSpan params, Bytes& out) const { encode(in, params, out); }
    // encode, unless the stage would change nothing (dedup finding no repeat, which encode
    // marks "copied unchanged"): then it writes nothing and returns false, and the chunk's
    // recipe leaves the stage out, so that neither side passes every byte through it for
    // nothing. Called only where the recipe is the chunk's own (its record lists the stages;
    // a plane's recipe is fixed by the graph's parameters). Default: encode.
    virtual bool encode_unless_unchanged(ByteSpan in, ByteSpan params, Bytes& out) const {
        encode(in, params, out);
        return true;
    }
    // False when encode certainly cannot make `in` smaller, found cheaply: a graph stage then
    // stores the input without encoding it (and copying it twice). Default: it may.
    virtual bool may_shrink(ByteSpan in, ByteSpan params) const {
        (void)in, (void)params;
        return true;
    }
    // Must append exactly `out_size` bytes to `out` or throw; `in` and `params` are untrusted.
    virtual void decode(ByteSpan in, ByteSpan params, size_t out_size, Bytes& out) const = 0;
    // The same into `dst`, which holds `out_size` bytes (a plane of a graph stage's buffer):
    // codecs that can write in place override it and save a copy. On a throw, `dst` may hold
    // anything. Default: decode, then copy.
    virtual void decode_into(ByteSpan in, ByteSpan params, size_t out_size, uint8_t* dst) const;
    // True when decode_into writes straight into `dst`, with no buffer of its own to copy
    // from: a pipeline whose first stage's codec says so decodes a chunk into the caller's
    // memory (decode_pipeline_into); otherwise that stage decodes into a buffer freed after.
    // Only a matter of speed and memory, never of the bytes. Default: false.
    virtual bool writes_into() const { return false; }
    // Bytes after `dst + out_size` that decode_into_slack may overwrite with anything, and
    // (when `in_slack`) bytes after `in` that it may read; for encode_in_slack, the readable
    // bytes on either side of `in`.
    static constexpr size_t kSlack = 64;
    // decode_into for a caller whose `dst` is followed by kSlack bytes it does not need
    // yet (a graph stage decoding its planes in order into one buffer, with slack after the
    // last), and whose `in` is followed by kSlack readable bytes if `in_slack` (later
    // records of the same payload): a codec whose library is only known safe with slack
    // around its buffers uses the caller's memory instead of padded copies. Default: decode_into.
    virtual void decode_into_slack(ByteSpan in, ByteSpan params, size_t out_size, uint8_t* dst, bool in_slack) const {
        (void)in_slack;
        decode_into(in, params, out_size, dst);
    }
    // Whether decode_pair_into decodes this payload together with another (rans: a small order-0
    // stream, whose lanes alone wait on their table lookups), told from its first bytes; the
    // payload is checked when decoded. Default: false.
    virtual bool decodes_in_pairs(ByteSpan in, ByteSpan params, size_t out_size) const {
        (void)in, (void)params, (void)out_size;
        return false;
    }
    // Two payloads of this codec, independent of each other (two planes of one chunk), into
    // `a_dst` and `b_dst` (a_size and b_size bytes, no slack): together (decode_pair_together)
    // where decodes_in_pairs takes both, else decode_into of each.
    void decode_pair_into(ByteSpan a, ByteSpan a_params, size_t a_size, uint8_t* a_dst, ByteSpan b, ByteSpan b_params,
                          size_t b_size, uint8_t* b_dst) const {
        if (decodes_in_pairs(a, a_params, a_size) && decodes_in_pairs(b, b_params, b_size))
            return decode_pair_together(a, a_params, a_size, a_dst, b, b_params, b_size, b_dst);
        decode_into(a, a_params, a_size, a_dst);
        decode_into(b, b_params, b_size, b_dst);
    }
    // decode_pair_into's work on two payloads that decodes_in_pairs takes (a codec that says it
    // pairs implements it; a codec wrapping another calls its wrapped codec's). Throws on a bad
    // payload as decode_into does. Default: decode_into of each.
    virtual void decode_pair_together(ByteSpan a, ByteSpan a_params, size_t a_size, uint8_t* a_dst, ByteSpan b,
                                      ByteSpan b_params, size_t b_size, uint8_t* b_dst) const {
        decode_into(a, a_params, a_size, a_dst);
        decode_into(b, b_params, b_size, b_dst);
    }
    // decode on the previous stage's output itself, where this block's decoded bytes are its
    // own with a mark cut off (a dedup that found no repeat leaves its input as it was): true
    // when done (`buf` then holds exactly `out_size` bytes), false to have decode called (for
    // every other block, and for a bad one, whose error decode reports). Saves a copy of the
    // chunk. Default: false.
    virtual bool decode_in_place(Bytes& buf, ByteSpan params, size_t out_size) const {
        (void)buf, (void)params, (void)out_size;
        return false;
    }
    // decode for codecs whose decode_into writes every byte or throws: grows `out` by
    // `out_size` without zero-filling it (bytes.hpp) and decodes into the new bytes. Call it
    // once the sizes are checked, so that nothing unjustified is allocated; a size over
    // max_decoded_size is refused here too (a codec called directly, not through the reader).
    void decode_appending(ByteSpan in, ByteSpan params, size_t out_size, Bytes& out) const {
        if (out_size > max_decoded_size(params, in.size()))
            throw Error(std::string(name()) + ": " + std::to_string(out_size) + " bytes cannot come from " +
                        std::to_string(in.size()) + " encoded bytes");
        const size_t base = out.size();
        out.resize(base + out_size);
        decode_into(in, params, out_size, out.data() + base);
    }
    // The spec string for these parameters, e.g. "zstd:19:long".
    virtual std::string describe(ByteSpan params) const { (void)params; return std::string(name()); }
    // The shape of this codec's output, for the next stage's parameters (e.g. trim leaves
    // shorter rows).
    virtual DataShape output_shape(const DataShape& in) const { return in; }
    // The same for a codec whose output shape depends on its parameters (headdup's rows
    // shrink by its group). Default: output_shape(in).
    virtual DataShape output_shape(const DataShape& in, ByteSpan params) const { (void)params; return output_shape(in); }
    // Proven upper bound of encode's output for `n` input bytes. The reader rejects a stage
    // whose encoded size exceeds it, so override only with a bound that always holds.
    // Default: none (the container's kMaxStageBytes still applies).
    virtual size_t max_encoded_size(size_t n) const { (void)n; return SIZE_MAX; }
    // Proven upper bound of decode's output from `encoded` input bytes with these (valid)
    // parameters: the reader rejects a stage that declares more before decoding anything, so
    // a few bytes cannot claim a 64 MiB output from a slow codec. Default: none.
    virtual uint64_t max_decoded_size(ByteSpan params, uint64_t encoded) const {
        (void)params, (void)encoded;
        return UINT64_MAX;
    }
    // Specs that exercise this codec in the round-trip tests and the fuzz targets,
    // e.g. {"zstd:1", "zstd:19:long"}. Default: the bare name.
    virtual std::vector<std::string> sample_specs() const { return {std::string(name())}; }
};

// Registry: codecs.def lists every codec (id, name, factory) once; codec_registry.cpp
// expands it into the id-indexed table and checks at startup that each codec's id() matches.
const Codec* find_codec(uint8_t id);
const Codec* find_codec(std::string_view name);
std::vector<const Codec*> all_codecs();

// Helper for codecs: a small integer argument with bounds.
int parse_int_arg(const std::string& s, int lo, int hi, std::string_view codec);
// Helper for check_params: throws Error("<codec>: bad parameters (<why>)") unless `ok`.
void require_params(bool ok, std::string_view codec, const char* why);
// Helper for codecs made of planes: decodes planes 0..n-1, two that `pairable` says a codec
// decodes together (decodes_in_pairs) by `pair(a, b)`, every other by `alone(p, later_done)`.
// Planes are decoded in order except that a plane that may pair waits for the next one that
// may; one left waiting at the end is decoded last, with `later_done` set: the planes after it
// are decoded already (a decoder that writes past its plane's end must not then).
template <class Pairable, class Pair, class Alone>
void decode_planes_in_pairs(size_t n, Pairable&& pairable, Pair&& pair, Alone&& alone) {
    size_t waiting = n;  // a plane that may pair, not decoded yet; n: none
    for (size_t p = 0; p < n; ++p) {
        if (!pairable(p)) {
            alone(p, false);
        } else if (waiting == n) {
            waiting = p;
        } else {
            pair(waiting, p);
            waiting = n;
        }
    }
    if (waiting != n) alone(waiting, waiting + 1 < n);
}
// Helper for max_decoded_size: a * b + c, saturating at UINT64_MAX instead of wrapping.
inline uint64_t saturating_mul_add(uint64_t a, uint64_t b, uint64_t c) {
    if (b && a > (UINT64_MAX - c) / b) return UINT64_MAX;
    return a * b + c;
}

}  // namespace stz
