// The rANS codec's CPU-path policy, visible to tests: htscodecs 1.3.0 picks a SIMD kernel per
// call from a process-wide mask, and its SSE4 order-1 decoder mis-decodes valid streams
// (fixed upstream in 1.5.2). statezip installs this mask once, before its first rANS call.
// Also the codec's encoder at an order the caller decided (for another codec's planes).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>

#include "../base/bytes.hpp"
#include "rans_order1_encoder.hpp"

namespace stz {

// RANS_CPU_* bits statezip allows: AVX-512, AVX2 and NEON kernels (and the scalar ones, which
// need no bit); never the SSE4 kernels. A CPU without AVX2 therefore runs the scalar code.
int rans_allowed_cpu_mask();
// Installs rans_allowed_cpu_mask() process-wide, once (std::call_once); every rANS encode and
// decode calls it first, so no thread codes before the mask is in place.
void rans_init_cpu_once();
// Installs `mask` into htscodecs and picks the kernels rans_encode_stream and
// rans_decode_stream call under it (rans_kernels.cpp); tests switch masks with it.
void rans_select_cpu(int mask);

// rans_compress_to_4x16(in, n, out, out_size, flags) without its per-call CPU detection: the
// same stream (at order 1, a stream with grouped contexts instead where that is smaller: see
// kRansOrderGrouped), or false where the wrapper would fail or store `in` raw (RANS_ORDER_CAT:
// its caller then stores the bytes itself). `in` and `out` need the kernels' slack (kPad).
// `order0_counts`, where the caller has them: the counts of every byte of `in` (256), which a
// small order-0 plane's stream then takes instead of counting them again.
bool rans_encode_stream(uint8_t* in, unsigned n, uint8_t* out, unsigned* out_size, int flags,
                        const uint32_t* order0_counts = nullptr);
// The order-1 stream rans_encode_stream writes, written only if `test` says order 1 given every
// pair of `in` (statezip's own order-1 encoder counts them before it writes: the order is then
// decided from all the pairs for free; without that encoder on this CPU the same pairs are
// counted, so that the verdict, and the .stz, do not depend on the CPU). NotHere: a size that
// encoder does not take (nothing counted); Declined: `verdict` is what the test said instead;
// Failed: no stream smaller than `in` could be written (store it). `in` needs the kernels' slack.
enum class MeasuredEncode { NotHere, Declined, Failed, Written };
MeasuredEncode rans_encode_order1_if(uint8_t* in, unsigned n, uint8_t* out, unsigned* out_size, OrderTest test,
                                     OrderVerdict& verdict);
// rans_uncompress_to_4x16 of a whole stream into exactly out_size bytes at `out`; a stream with
// grouped contexts by statezip's decoder.
bool rans_decode_stream(uint8_t* in, unsigned in_size, uint8_t* out, unsigned out_size);
// Whether rans_decode_stream decodes this stream (into out_size bytes) by statezip's decoders
// alone, which read no byte outside the stream and write none outside the output: the stream
// may then be read where it lies and decoded into memory without slack. Otherwise a library
// kernel reads past the stream's end (the caller gives it kPad bytes of slack, as before).
bool rans_decodes_within(const uint8_t* in, unsigned in_size, unsigned out_size);
// Whether rans_decode_stream gives this stream (into out_size bytes) to the one-stream order-0
// decoder (a plane written as one stream, under 32 KB; on a CPU that steps two streams' lanes
// together): two such streams then decode together by rans_decode_two_streams.
bool rans_decodes_in_pairs(const uint8_t* in, unsigned in_size, unsigned out_size);
// Two whole streams that rans_decodes_in_pairs takes (two planes) into exactly a_n bytes at
// a_out and b_n at b_out, their lanes stepped together; false if either is malformed (the
// outputs may then hold anything). Reads no byte outside the streams, writes none outside the
// outputs.
bool rans_decode_two_streams(const uint8_t* a, unsigned a_size, uint8_t* a_out, unsigned a_n, const uint8_t* b,
                             unsigned b_size, uint8_t* b_out, unsigned b_n);
// A flag of the stream's flags byte that htscodecs does not use: an order-1 X32 stream of
// statezip's own form (rans_order1_form.hpp: grouped contexts where they are smaller, a plane in
// two halves from kTwoHalvesMinBytes), which rans_encode_stream and rans_encode_order1_if write,
// or, with order 0, a plane in two halves from order0_halves::kMinBytes (rans_order0_halves.hpp),
// which rans_encode_stream writes; only statezip decodes them (a release before a form rejects it).
inline constexpr int kRansOrderGrouped = 0x02;

// Planes up to this size are judged on every pair (the order-1 encoder's own counts: free when
// order 1 wins, at most about twice the sample's cost when it loses); larger ones on a sample,
// whose cost grows far slower than the plane (a random-weight q8_0 quant plane of 1 MB counted
// whole only to be coded at order 0 cost more than a sample).
inline constexpr size_t kRansExactOrderBytes = 256u << 10;

// What the rans codec's encode() with order `order` (0 or 1) writes, except that order 1 is
// taken as decided: for a caller that has measured the same pairs itself (qctx's quant plane),
// the codec's own order-1 estimate would be the same work twice. The stream decodes as any
// of the codec's (a plane too small for order 1, or not worth coding, is still order-0 or
// stored).
void rans_encode_decided(ByteSpan in, int order, Bytes& out);

// The bytes of a rans stage's output that stored its input of out_size bytes, where they lie;
// nullopt where the stage coded them (decode them then). For a caller that only moves the
// plane on: no copy of it first.
std::optional<ByteSpan> rans_stored_bytes(ByteSpan stage_output, size_t out_size);

}  // namespace stz
