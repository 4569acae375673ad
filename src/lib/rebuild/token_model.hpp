// Tokens of a `--patch-from` file predicted from the cells they produced (patch.hpp).
//
// A state file's first V layer holds, for each cell, a function of the cell's token alone (no
// position enters it), so two positions whose cells have equal layer-0 V bytes almost always
// hold the same token. When REF has those cells but not the tokens (a session file given the
// raw blob of its context, where the 732 tokens were ~70 % of the patch), the decoder can
// take each position's *key* (its cell's bytes in one layer, read from REF through the map)
// and predict the token from the last position with the same key. Only tokens with no
// prediction are stored, plus the positions where a prediction is wrong.
//
// Encoder and decoder compute keys and predictions with the same functions, and the encoder
// lists every wrong prediction, so the tokens come back exact whatever the cells hold; the
// map's output hash checks the whole file as always.
#pragma once
#include <functional>
#include <optional>

#include "base/hashing.hpp"
#include "base/io.hpp"
#include "patch_map.hpp"

namespace stz {

// The cell of each of the first n_tokens positions (kNoTokenCell: none) from a mainline
// `cells` section (u32 count, count × {i32 pos, u32 n_seq, per-cell extension, n_seq × i32
// seq id}, u32 v_trans, u32 n_layer). The sequence whose cells cover most of the positions is
// taken. Empty when the bytes are not such a section (then nothing is predicted).
std::vector<uint64_t> token_cells(ByteSpan cells_section, uint64_t n_tokens);
// The same mapping as runs (patch map record).
std::vector<TokenCellRun> token_cell_runs(const std::vector<uint64_t>& cells);

using TokenKey = Hash128;

// The key of each position of `t` (prefix + tail): a hash of its cell's bytes in group
// t.group, where the map takes them from REF; none where the cell is new or there is none.
// Computed kTokenKeyChunk positions at a time (memory stays bounded whatever the token
// count), so positions should be asked in increasing order. Throws DataError when the keys
// would read and copy more of REF than a real map needs (kTokenKeyReadFactor × its size + 64 MiB).
inline constexpr uint64_t kTokenKeyReadFactor = 4, kTokenKeyChunk = 1u << 20;
class TokenKeys {
public:
    TokenKeys(const PatchMap& m, const PatchTokenModel& t, InputSource& ref);
    std::optional<TokenKey> operator()(uint64_t position);
    uint64_t size() const { return t_.prefix + t_.tail; }

private:
    void load(uint64_t first);
    const PatchMap& m_;
    const PatchTokenModel& t_;
    InputSource& ref_;
    uint64_t budget_;
    std::vector<uint64_t> starts_;  // first cell of each run of the group
    uint64_t first_ = 0;
    std::vector<std::optional<TokenKey>> keys_;  // of positions first_ ..
};
using KeyOf = std::function<std::optional<TokenKey>(uint64_t position)>;

// Encoder: the stored form of tokens[prefix..] (tokens holds every position): varint count of
// wrong predictions, their positions (varint gaps, from the tail's start), then the tokens
// not predicted (u32 LE, in order). `predicted` gets the number of tokens not stored.
Bytes predict_tokens(const std::vector<uint32_t>& tokens, uint64_t prefix, const KeyOf& key, uint64_t* predicted = nullptr);
// Decoder: `tokens` holds the prefix; appends the tail (up to `positions` tokens) read from
// `in` (the stored form above). Returns the bytes of `in` used; `base` is for error offsets.
size_t restore_tokens(ByteSpan in, uint64_t positions, const KeyOf& key, std::vector<uint32_t>& tokens, uint64_t base);

// The meta bytes of a head (patch.cpp) with the token tail of m.tokens back in its original
// form: the prefix read from REF, the tail restored at m.tokens->meta_offset.
void restore_meta_tokens(const PatchMap& m, InputSource& ref, Bytes& meta);

}  // namespace stz
