// Recovering the model geometry of 2023 blobs from their zero pattern (STATE-FORMATS.md §11.4).
// The guesses only decide how sections are labelled and cut; trim verifies every byte it
// drops, so a wrong guess costs ratio, never correctness.
#pragma once
#include "base/io.hpp"
#include "sections/types.hpp"

namespace stz {

struct LegacyGeometry {
    uint64_t n_layer = 0, n_ctx = 0, n_embd = 0, n_past = 0;
};

// Flavour A: n_past = the widest filled prefix over all transposed V rows (at least `hint`).
uint64_t find_full_buffer_n_past(InputSource& in, uint64_t v_start, uint64_t elt, const LegacyGeometry& g,
                                 std::optional<uint64_t> hint);
// Flavour A without hparams: n_ctx from the V islands, n_embd from the first K island.
bool guess_full_buffer_geometry(InputSource& in, uint64_t k_start, uint64_t v_start, uint64_t n_elements, uint64_t elt,
                                LegacyGeometry& g);
bool verify_full_buffer(InputSource& in, uint64_t k_start, uint64_t v_start, uint64_t elt, const LegacyGeometry& g);
// Flavour B dumps: bytes per position of all layers (n_layer * n_embd * elt), from the
// arena size and the end of the non-zero payload; 0 if it cannot be told.
uint64_t guess_compact_row_bytes(InputSource& in, uint64_t payload_start, uint64_t kv_bytes, uint64_t ntok,
                                 std::optional<uint64_t> n_ctx_hint);
// f32 data read as f16 halves shows Inf/NaN exponents from its random low halves; f16 K/V does not.
ElemType guess_half_or_float(InputSource& in, uint64_t start, uint64_t bytes);

}  // namespace stz
