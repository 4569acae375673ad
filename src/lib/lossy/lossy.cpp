#include "lossy.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace stz {

namespace {

unsigned parse_bits(const std::string& v, const std::string& item) {
    if (v.empty() || v.size() > 2 || v.find_first_not_of("0123456789") != std::string::npos)
        throw Error("--lossy: '" + item + "' needs a number of bits (0-23)");
    const unsigned n = static_cast<unsigned>(std::stoul(v));
    if (n > 23) throw Error("--lossy: '" + item + "': at most 23 bits (an f32 mantissa)");
    return n;
}

bool is_kv(SectionKind k) { return k == SectionKind::KvKey || k == SectionKind::KvValue; }

bool is_float(ElemType t) { return t == ElemType::F16 || t == ElemType::BF16 || t == ElemType::F32; }

// Mantissa bits and width of a float type.
unsigned mantissa_bits(ElemType t) { return t == ElemType::F32 ? 23 : t == ElemType::F16 ? 10 : 7; }
unsigned width_bits(ElemType t) { return t == ElemType::F32 ? 32 : 16; }

uint32_t load_elem(const uint8_t* p, ElemType t) {
    return t == ElemType::F32 ? load_le<uint32_t>(p) : load_le<uint16_t>(p);
}
void store_elem(uint8_t* p, ElemType t, uint32_t v) {
    if (t == ElemType::F32) store_le<uint32_t>(p, v);
    else store_le<uint16_t>(p, static_cast<uint16_t>(v));
}

double to_double(uint32_t bits, ElemType t) {
    uint32_t f = t == ElemType::F32 ? bits : t == ElemType::F16 ? f16_to_f32_bits(static_cast<uint16_t>(bits)) : bits << 16;
    float x;
    std::memcpy(&x, &f, 4);
    return x;
}

uint32_t round_one(uint32_t bits, ElemType t, const SectionRounding& r) {
    if (r.op == RoundOp::F16Exact) return round_f32_through_f16(bits);
    return round_low_mantissa(bits, width_bits(t), mantissa_bits(t), r.drop);
}

std::string sci(double v) {
    char b[32];
    std::snprintf(b, sizeof b, "%.3g", v);
    return b;
}

}  // namespace

std::string LossySpec::text() const {
    switch (mode) {
        case LossyMode::F16Exact: return "f16-exact";
        case LossyMode::DropBits: return "drop:K=" + std::to_string(k) + ",V=" + std::to_string(v);
        case LossyMode::KeepBits: return "keep:K=" + std::to_string(k) + ",V=" + std::to_string(v);
        default: return "none";
    }
}

LossySpec parse_lossy_spec(const std::string& text) {
    LossySpec s;
    if (text == "f16-exact") {
        s.mode = LossyMode::F16Exact;
        return s;
    }
    const size_t colon = text.find(':');
    const std::string head = text.substr(0, colon);
    if (colon == std::string::npos || (head != "drop" && head != "keep"))
        throw Error("--lossy: unknown mode '" + text + "' (f16-exact, drop:K=N,V=M, keep:K=N,V=M)");
    s.mode = head == "drop" ? LossyMode::DropBits : LossyMode::KeepBits;
    s.k = s.v = head == "drop" ? 0 : 23;  // an omitted group is left exact
    bool seen_k = false, seen_v = false;
    std::string rest = text.substr(colon + 1) + ",";
    size_t start = 0;
    for (size_t comma; (comma = rest.find(',', start)) != std::string::npos; start = comma + 1) {
        const std::string item = rest.substr(start, comma - start);
        const size_t eq = item.find('=');
        const std::string key = item.substr(0, eq);
        if (eq == std::string::npos || (key != "K" && key != "V" && key != "k" && key != "v"))
            throw Error("--lossy: expected K=N or V=N, got '" + item + "'");
        bool& seen = (key == "K" || key == "k") ? seen_k : seen_v;
        if (seen) throw Error("--lossy: " + key + " given twice");
        seen = true;
        ((key == "K" || key == "k") ? s.k : s.v) = parse_bits(item.substr(eq + 1), item);
    }
    if (!seen_k && !seen_v) throw Error("--lossy: " + head + ": give K=N and/or V=N");
    return s;
}

uint16_t f32_to_f16_bits(uint32_t x) {
    const uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000);
    const uint32_t mag = x & 0x7fffffffu;
    if (mag > 0x7f800000u) return sign | 0x7e00 | static_cast<uint16_t>((mag >> 13) & 0x3ff);  // NaN, quieted
    const uint32_t exp = mag >> 23;
    if (exp >= 143) return sign | 0x7c00;  // |x| >= 65536 (and Inf): Inf
    uint32_t m, shift;
    if (exp >= 113) {  // normal f16: keep 10 of 23 mantissa bits; a carry may reach Inf, as it should
        m = ((exp - 112) << 10 << 13) | (mag & 0x7fffff);
        shift = 13;
    } else {  // subnormal f16 (or zero): value = m * 2^(exp - 150), unit 2^-24
        if (exp < 102) return sign;  // below 2^-25: rounds to zero (2^-25 exactly ties to even zero)
        m = (mag & 0x7fffff) | 0x800000;
        shift = 126 - exp;
    }
    const uint32_t half = 1u << (shift - 1), rem = m & ((1u << shift) - 1);
    uint32_t h = m >> shift;
    if (rem > half || (rem == half && (h & 1))) ++h;
    return sign | static_cast<uint16_t>(h);
}

uint32_t f16_to_f32_bits(uint16_t h) {
    const uint32_t sign = uint32_t(h & 0x8000) << 16;
    const uint32_t exp = (h >> 10) & 0x1f, man = h & 0x3ff;
    if (exp == 0x1f) return sign | 0x7f800000u | (man << 13);
    if (exp) return sign | ((exp + 112) << 23) | (man << 13);
    if (!man) return sign;
    unsigned e = 113, m = man;  // subnormal: normalise
    while (!(m & 0x400)) m <<= 1, --e;
    return sign | (e << 23) | ((m & 0x3ff) << 13);
}

uint32_t round_low_mantissa(uint32_t bits, unsigned width, unsigned mant, unsigned drop) {
    drop = std::min(drop, mant);
    if (!drop) return bits;
    const uint32_t sign = 1u << (width - 1), mag_mask = sign - 1;
    const uint32_t exp_mask = mag_mask & ~((1u << mant) - 1);
    const uint32_t mag = bits & mag_mask;
    if ((mag & exp_mask) == exp_mask) return bits;  // Inf, NaN: untouched
    const uint32_t low = (1u << drop) - 1, half = 1u << (drop - 1);
    const uint32_t rem = mag & low;
    uint32_t r = mag & ~low;
    // Round to nearest even on the magnitude: a carry out of the mantissa steps the exponent,
    // which is exactly the next representable value (also from subnormal to normal).
    if (rem > half || (rem == half && (r & (1u << drop)))) r += 1u << drop;
    if ((r & exp_mask) == exp_mask) r = (exp_mask - 1) & ~low;  // would be Inf: largest finite
    return (bits & sign) | r;
}

bool LossyPlan::changes_anything() const {
    return std::any_of(sections.begin(), sections.end(), [](const SectionRounding& r) { return r.op != RoundOp::None; });
}

LossyPlan plan_lossy(const ParsedFile& parsed, const LossySpec& spec) {
    LossyPlan plan;
    plan.spec = spec;
    plan.sections.resize(parsed.sections.size());
    std::vector<std::string> notes;
    auto add_note = [&](const std::string& n) {
        if (std::find(notes.begin(), notes.end(), n) == notes.end()) notes.push_back(n);
    };
    bool any_kv = false, v_transposed = false;
    for (const Section& s : parsed.sections) {
        if (!is_kv(s.kind)) continue;
        any_kv = true;
        v_transposed |= s.kind == SectionKind::KvValue && s.transposed;
    }
    if (!any_kv) add_note("no K/V sections recognised: left exact");
    if (spec.mode == LossyMode::F16Exact && v_transposed)
        add_note("V is transposed (flash attention off): rounding to f16 would not be exact there, left exact");
    for (size_t i = 0; i < parsed.sections.size() && spec.active(); ++i) {
        const Section& s = parsed.sections[i];
        if (!is_kv(s.kind)) continue;
        const bool key = s.kind == SectionKind::KvKey;
        if (!is_float(s.type)) {
            add_note(s.type_string() + " K/V are quantised: left exact");
            continue;
        }
        SectionRounding& r = plan.sections[i];
        if (spec.mode == LossyMode::F16Exact) {
            if (s.type != ElemType::F32) add_note(s.type_string() + " K/V: f16-exact applies to f32 caches only, left exact");
            else if (!v_transposed) r.op = RoundOp::F16Exact;
            continue;
        }
        const unsigned mant = mantissa_bits(s.type), n = key ? spec.k : spec.v;
        const unsigned drop = spec.mode == LossyMode::DropBits ? std::min(n, mant) : mant - std::min(n, mant);
        if (spec.mode == LossyMode::DropBits && n > mant)
            add_note(s.type_string() + " has " + std::to_string(mant) + " mantissa bits: dropping " + std::to_string(mant));
        if (drop) r = {RoundOp::Mantissa, drop};
    }
    for (const auto& n : notes) plan.note += (plan.note.empty() ? "" : "; ") + n;
    return plan;
}

void round_elements(uint8_t* data, size_t n_bytes, ElemType type, const SectionRounding& r) {
    if (r.op == RoundOp::None) return;
    const size_t w = width_bits(type) / 8;
    for (size_t i = 0; i + w <= n_bytes; i += w) store_elem(data + i, type, round_one(load_elem(data + i, type), type, r));
}

std::string LossyReport::summary() const {
    std::string s = plan.spec.text();
    auto group = [&](const char* name, const LossyGroupStats& g) {
        if (!g.values) return;
        s += std::string("; ") + name + ": max abs " + sci(g.max_abs) + ", max rel " + sci(g.max_rel) + ", " +
             std::to_string(g.changed) + " of " + std::to_string(g.values) + " changed";
    };
    group("K", k);
    group("V", v);
    if (!k.changed && !v.changed) s += "; nothing rounded, the file is stored exactly";
    if (!plan.note.empty()) s += " (" + plan.note + ")";
    return s;
}

LossyReport measure_lossy(InputSource& in, const ParsedFile& parsed, const LossyPlan& plan) {
    LossyReport rep;
    rep.plan = plan;
    Bytes buf;
    for (size_t i = 0; i < parsed.sections.size() && i < plan.sections.size(); ++i) {
        const SectionRounding& r = plan.sections[i];
        if (r.op == RoundOp::None) continue;
        const Section& s = parsed.sections[i];
        LossyGroupStats& g = s.kind == SectionKind::KvKey ? rep.k : rep.v;
        const size_t w = width_bits(s.type) / 8;
        constexpr uint64_t kPiece = 1u << 20;  // a multiple of every element width
        for (uint64_t done = 0; done + w <= s.size; done += kPiece) {
            const size_t n = static_cast<size_t>(std::min<uint64_t>(kPiece, s.size - done) / w * w);
            buf.resize(n);
            in.read_at(s.offset + done, buf.data(), n);
            for (size_t e = 0; e < n; e += w) {
                const uint32_t a = load_elem(buf.data() + e, s.type), b = round_one(a, s.type, r);
                ++g.values;
                if (a == b) continue;
                ++g.changed;
                const double x = to_double(a, s.type), y = to_double(b, s.type);
                if (!std::isfinite(x) || !std::isfinite(y)) continue;  // NaN payloads: no error to measure
                const double d = std::fabs(x - y);
                g.max_abs = std::max(g.max_abs, d);
                if (x != 0) g.max_rel = std::max(g.max_rel, d / std::fabs(x));
            }
        }
    }
    return rep;
}

RoundingSource::RoundingSource(InputSource& base, const ParsedFile& parsed, const LossyPlan& plan) : base_(base) {
    for (size_t i = 0; i < parsed.sections.size() && i < plan.sections.size(); ++i) {
        if (plan.sections[i].op == RoundOp::None) continue;
        const Section& s = parsed.sections[i];
        ranges_.push_back({s.offset, s.offset + s.size, s.type, width_bits(s.type) / 8, plan.sections[i]});
    }
}

void RoundingSource::read_at(uint64_t off, uint8_t* dst, size_t n) {
    base_.read_at(off, dst, n);
    if (n == 0) return;  // dst may be null
    const uint64_t end = off + n;
    auto it = std::upper_bound(ranges_.begin(), ranges_.end(), off, [](uint64_t o, const Range& r) { return o < r.end; });
    for (; it != ranges_.end() && it->begin < end; ++it) {
        const Range& r = *it;
        // Whole elements of this section that overlap [off, end); the partial ones at either
        // edge are read whole from the base, rounded, and the overlapping bytes copied.
        const uint64_t lo = std::max(off, r.begin), hi = std::min(end, r.end);
        uint64_t first = r.begin + (lo - r.begin) / r.elem * r.elem;
        while (first < hi) {
            const uint64_t elem_end = first + r.elem;
            if (elem_end > r.end) break;  // a section's trailing partial element stays as it is
            if (first >= off && elem_end <= end) {
                const uint64_t whole_end = std::min(end, r.end);
                const uint64_t count = (whole_end - first) / r.elem;
                round_elements(dst + (first - off), count * r.elem, r.type, r.r);
                first += count * r.elem;
                continue;
            }
            uint8_t e[4];
            base_.read_at(first, e, r.elem);
            round_elements(e, r.elem, r.type, r.r);
            const uint64_t a = std::max(first, off), b = std::min(elem_end, end);
            std::memcpy(dst + (a - off), e + (a - first), b - a);
            first = elem_end;
        }
    }
}

Bytes apply_lossy(ByteSpan file, const ParsedFile& parsed, const LossySpec& spec) {
    MemorySource src(file);
    RoundingSource rounded(src, parsed, plan_lossy(parsed, spec));
    Bytes out(file.size());
    rounded.read_at(0, out.data(), out.size());
    return out;
}

}  // namespace stz
