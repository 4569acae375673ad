// Synthetic llama.cpp state files, written per docs/STATE-FORMATS.md with realistic float
// K/V data (per-channel offset and scale, smooth over positions). Used by the unit tests
// (which must run without ../shared) and to make large files for the scale benchmarks.
#pragma once
#include <string>

#include "base/io.hpp"
#include "sections/types.hpp"

namespace stzsynth {

struct Spec {
    // session9, session10, seq2, seq3, raw, seqraw, seq1, ik-session10, legacy-full, legacy-compact,
    // legacy-dump (compact + zero tail), session0, session1
    std::string flavour = "session9";
    uint32_t n_layer = 5;
    uint32_t n_embd = 32;   // K and V row width (elements)
    uint32_t n_ctx = 512;   // legacy: arena positions
    uint32_t cells = 100;   // positions filled
    stz::ElemType k_type = stz::ElemType::F16;
    stz::ElemType v_type = stz::ElemType::F16;
    bool v_trans = true;
    uint32_t n_stream = 1;
    uint64_t seed = 1;
};

// Writes the file in one pass (memory stays small whatever the size).
void write_state(const Spec& s, stz::OutputSink& out);
// Cells needed so that the file is about `bytes` long.
uint32_t cells_for_size(const Spec& s, uint64_t bytes);
std::vector<std::string> flavours();

}  // namespace stzsynth
