// Opt-in lossy modes: the K/V values of a state file are rounded in place (same type, same
// layout, so llama.cpp still loads the file) and the rounded file is then compressed
// losslessly. Everything here is a pure transform over bytes and the parsed section list;
// the engine applies it while it reads (RoundingSource), the CLI only passes the spec.
//
//   f16-exact       f32 K/V of a file whose V is row-major (a flash-attention context) are
//                   rounded to the nearest f16 and stored back as f32: the conversion ggml
//                   itself does before flash attention (round to nearest even, NaN/Inf kept,
//                   overflow to Inf, subnormals), so the runtime computes the same numbers.
//   drop:K=N,V=M    the N (K) and M (V) lowest mantissa bits of f16/bf16/f32 K/V values are
//                   rounded away (to nearest even; NaN/Inf untouched; a value never rounds up
//                   to Inf: it stays at the largest finite value it can hold).
//   keep:K=N,V=M    the same, saying how many mantissa bits are kept (f16 10, bf16 7, f32 23).
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "base/io.hpp"
#include "sections/section.hpp"

namespace stz {

enum class LossyMode : uint8_t { None, F16Exact, DropBits, KeepBits };

struct LossySpec {
    LossyMode mode = LossyMode::None;
    unsigned k = 0, v = 0;  // DropBits: bits dropped; KeepBits: mantissa bits kept
    bool active() const { return mode != LossyMode::None; }
    std::string text() const;  // as the user writes it, e.g. "drop:K=0,V=6"
};

// "f16-exact", "drop:K=N,V=M", "keep:K=N,V=M" (either of K/V may be omitted: K=0 dropped /
// all kept). Throws stz::Error naming what is wrong.
LossySpec parse_lossy_spec(const std::string& text);

// The conversions, on raw bits (exposed for tests).
uint16_t f32_to_f16_bits(uint32_t f32);  // ggml's f32 -> f16
uint32_t f16_to_f32_bits(uint16_t f16);
inline uint32_t round_f32_through_f16(uint32_t f32) { return f16_to_f32_bits(f32_to_f16_bits(f32)); }
// Rounds away the `drop` low mantissa bits of a float of `width` bits with `mant` mantissa
// bits (f16 16/10, bf16 16/7, f32 32/23). `drop` is capped at `mant`.
uint32_t round_low_mantissa(uint32_t bits, unsigned width, unsigned mant, unsigned drop);

// What happens to one section.
enum class RoundOp : uint8_t { None, F16Exact, Mantissa };
struct SectionRounding {
    RoundOp op = RoundOp::None;
    unsigned drop = 0;  // Mantissa: bits dropped (already capped to the type)
};

// Per parsed section, what to do; `note` says what was left exact and why (empty if nothing).
struct LossyPlan {
    LossySpec spec;
    std::vector<SectionRounding> sections;  // parallel to ParsedFile::sections
    std::string note;
    bool changes_anything() const;
};
LossyPlan plan_lossy(const ParsedFile& parsed, const LossySpec& spec);

// Rounds the elements of one section held in `data` (whole elements, in place).
void round_elements(uint8_t* data, size_t n_bytes, ElemType type, const SectionRounding& r);

// Error of the rounding, per group (K, V).
struct LossyGroupStats {
    uint64_t values = 0, changed = 0;
    double max_abs = 0, max_rel = 0;  // over finite values; relative to |original| (non-zero)
};
struct LossyReport {
    LossyPlan plan;
    LossyGroupStats k, v;
    // One line for the .stz header property "lossy" and the summary: mode and per-group error.
    std::string summary() const;
};
// Reads every section the plan rounds (in pieces) and measures the error. Pure w.r.t. `in`.
LossyReport measure_lossy(InputSource& in, const ParsedFile& parsed, const LossyPlan& plan);

// An InputSource that returns the bytes of `base` with the plan's rounding applied: what a
// lossy compression stores. Reads of any offset and length are rounded element-exactly.
class RoundingSource final : public InputSource {
public:
    RoundingSource(InputSource& base, const ParsedFile& parsed, const LossyPlan& plan);
    uint64_t size() const override { return base_.size(); }
    void read_at(uint64_t off, uint8_t* dst, size_t n) override;

private:
    struct Range {
        uint64_t begin, end;
        ElemType type;
        uint32_t elem;
        SectionRounding r;
    };
    InputSource& base_;
    std::vector<Range> ranges_;  // sections that change, in file order
};

// The whole file as a lossy compression stores it (bench and tests compare against it).
Bytes apply_lossy(ByteSpan file, const ParsedFile& parsed, const LossySpec& spec);

}  // namespace stz
