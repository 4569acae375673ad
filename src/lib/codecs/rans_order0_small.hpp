// htscodecs' order-0 4x16 stream (the body rans_compress_O0_4x16 writes: what the library's
// wrapper codes planes under 1,001 bytes with, and what packs a large order-1 frequency table),
// written and read by statezip's own coder (rans_order0_small.cpp): the same bytes as the
// library's, without its per-call set-up.
#pragma once

#include <cstddef>
#include <cstdint>

#include "rans_order1_lanes.hpp"

namespace stz {

// The body for n bytes at `in`: the frequency table, 4 states, the 16-bit words. `*out_size`:
// the room at `out`, then the body's length. False (nothing promised at `out`) if n is 0 or the
// body does not fit. `counts`, where the caller has them: the counts of every byte of `in` (256),
// not counted again.
bool rans_order0_small_encode(const uint8_t* in, size_t n, uint8_t* out, size_t* out_size,
                              const uint32_t* counts = nullptr);

// A body into exactly n bytes at `out`, its slots filled by `fill` (any form: the same table;
// the caller's kernel set picks the widest it allows). False if the table is malformed or the
// states are not valid; reads nothing outside [in, in + in_size). A corrupt body with a valid
// table decodes to some bytes (the chunk's checksum rejects them), as in the library.
bool rans_order0_small_decode(const uint8_t* in, size_t in_size, uint8_t* out, size_t n, order1::FillFn fill);

}  // namespace stz
