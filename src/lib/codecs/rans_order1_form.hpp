// statezip's own forms of an order-1 X32 rANS stream (flag kRansOrderGrouped of the stream's
// flags byte): the byte that starts the kernel part, and the split of a plane in two halves.
// The encoder (rans_order1_encoder.cpp) and the decoder (rans_order1_decoder.cpp) share them.
#pragma once

#include <cstddef>
#include <cstdint>

namespace stz::order1_form {

// Bits 0-2: the context shift s (a step's row is its lane's previous symbol >> s).
constexpr int kContextShiftBits = 0x07;
// The plane in two halves, each coded by its own 32 lanes over the one frequency table, the
// first half's lanes (states and words) before the second's, after a uint7 of their length.
// Why: each lane's steps are a chain of dependent table gathers, and with 32 lanes (two
// vectors of sixteen) the decoder waits on each gather's latency; with two halves it steps
// four vectors at once, and the gathers' throughput bounds it instead (rans_order1_steps.cpp).
constexpr int kTwoHalves = 0x80;
// Bits a form byte may have.
constexpr int kFormBits = kContextShiftBits | kTwoHalves;

// Planes from this size are written in two halves (smaller ones: 32 more lane states cost more,
// relative to the plane, than their decoding time gains).
constexpr size_t kTwoHalvesMinBytes = 32u << 10;

// The first half of an n-byte plane: the whole steps of 32 lanes in n / 2; the second half, the
// rest, has as many steps or one more and the bytes left after whole steps.
constexpr size_t first_half_bytes(size_t n) { return 32 * (n / 64); }

}  // namespace stz::order1_form
