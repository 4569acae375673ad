#include "synth.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

namespace stzsynth {

using namespace stz;

namespace {

struct Rng {
    uint64_t s;
    explicit Rng(uint64_t seed) : s(seed * 0x9E3779B97F4A7C15ull + 1) {}
    uint64_t next() {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        return s;
    }
    double uni() { return (next() >> 11) * (1.0 / 9007199254740992.0); }
    double tri() { return uni() + uni() - 1.0; }  // cheap bell-ish noise in (-1, 1)
};

uint16_t f32_to_f16(float f) {
    uint32_t x;
    std::memcpy(&x, &f, 4);
    uint32_t sign = (x >> 16) & 0x8000;
    int32_t exp = ((x >> 23) & 0xff) - 127 + 15;
    uint32_t mant = x & 0x7fffff;
    if (exp <= 0) {
        if (exp < -10) return sign;
        mant |= 0x800000;
        uint32_t shift = 14 - exp;
        uint32_t half = mant >> shift;
        if ((mant >> (shift - 1)) & 1) ++half;
        return sign | half;
    }
    if (exp >= 31) return sign | 0x7c00;
    uint32_t h = sign | (exp << 10) | (mant >> 13);
    if ((mant & 0x1fff) > 0x1000 || ((mant & 0x1fff) == 0x1000 && (h & 1))) ++h;
    return h;
}

uint16_t f32_to_bf16(float f) {
    uint32_t x;
    std::memcpy(&x, &f, 4);
    x += 0x7fff + ((x >> 16) & 1);
    return x >> 16;
}

// One model "layer": per-channel offset/scale; a row (one position) is a smooth function of
// the position plus noise, so the data has the structure of real K/V.
struct LayerModel {
    std::vector<float> mean, scale, freq;
    LayerModel(uint32_t width, Rng& r) {
        for (uint32_t c = 0; c < width; ++c) {
            mean.push_back(static_cast<float>(r.tri() * 1.5));
            scale.push_back(static_cast<float>(0.05 + r.uni() * 1.2));
            freq.push_back(static_cast<float>(r.uni() * 0.2));
        }
    }
    void row(uint32_t pos, Rng& r, std::vector<float>& out) const {
        out.resize(mean.size());
        for (size_t c = 0; c < mean.size(); ++c)
            out[c] = static_cast<float>(mean[c] + scale[c] * (0.6 * std::sin(freq[c] * pos + c) + 0.5 * r.tri()));
    }
};

// One block of q4_1, q5_0, q5_1 or iq4_nl (ggml's layouts: f16 d [, f16 m] [, u32 high bits],
// 16 bytes of nibbles, value j in the low and j + 16 in the high nibble of byte j).
void encode_block(const float* x, ElemType t, Bytes& out) {
    static const int8_t kIq4nl[16] = {-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113};
    float lo = x[0], hi = x[0], amax = 0;
    for (int i = 0; i < 32; ++i) lo = std::min(lo, x[i]), hi = std::max(hi, x[i]), amax = std::max(amax, std::fabs(x[i]));
    const bool with_min = t == ElemType::Q4_1 || t == ElemType::Q5_1;
    const int levels = t == ElemType::Q4_1 || t == ElemType::IQ4_NL ? 16 : 32;
    float d = with_min ? (hi - lo) / (levels - 1) : t == ElemType::IQ4_NL ? amax / 127 : amax / -(levels / 2);
    uint8_t q[32];
    for (int i = 0; i < 32; ++i) {
        long v = 0;
        if (t == ElemType::IQ4_NL) {
            int best = 0;
            for (int k = 1; k < 16; ++k)
                if (std::fabs(kIq4nl[k] * d - x[i]) < std::fabs(kIq4nl[best] * d - x[i])) best = k;
            v = best;
        } else if (d) {
            v = with_min ? std::lround((x[i] - lo) / d) : std::lround(x[i] / d) + levels / 2;
        }
        q[i] = static_cast<uint8_t>(std::clamp(v, 0L, long(levels - 1)));
    }
    append_le<uint16_t>(out, f32_to_f16(d));
    if (with_min) append_le<uint16_t>(out, f32_to_f16(lo));
    if (levels == 32 && t != ElemType::IQ4_NL) {
        uint32_t qh = 0;
        for (int i = 0; i < 32; ++i) qh |= uint32_t(q[i] >> 4) << i;
        append_le<uint32_t>(out, qh);
    }
    for (int i = 0; i < 16; ++i) out.push_back(static_cast<uint8_t>((q[i] & 15) | (q[i + 16] & 15) << 4));
}

void encode_row(const std::vector<float>& x, ElemType t, Bytes& out) {
    switch (t) {
        case ElemType::F32: for (float v : x) append_le<float>(out, v); break;
        case ElemType::F16: for (float v : x) append_le<uint16_t>(out, f32_to_f16(v)); break;
        case ElemType::BF16: for (float v : x) append_le<uint16_t>(out, f32_to_bf16(v)); break;
        case ElemType::Q8_0:
        case ElemType::Q4_0:
            for (size_t b = 0; b + 32 <= x.size(); b += 32) {
                float amax = 0;
                for (size_t i = 0; i < 32; ++i) amax = std::max(amax, std::fabs(x[b + i]));
                if (t == ElemType::Q8_0) {
                    float d = amax / 127;
                    append_le<uint16_t>(out, f32_to_f16(d));
                    for (size_t i = 0; i < 32; ++i) out.push_back(static_cast<uint8_t>(static_cast<int8_t>(d ? std::lround(x[b + i] / d) : 0)));
                } else {
                    float d = amax / -8;
                    append_le<uint16_t>(out, f32_to_f16(d));
                    for (size_t i = 0; i < 16; ++i) {
                        auto q = [&](float v) { return static_cast<uint8_t>(std::min(15L, std::max(0L, d ? std::lround(v / d) + 8 : 8))); };
                        out.push_back(q(x[b + i]) | (q(x[b + i + 16]) << 4));
                    }
                }
            }
            break;
        case ElemType::Q4_1: case ElemType::Q5_0: case ElemType::Q5_1: case ElemType::IQ4_NL:
            for (size_t b = 0; b + 32 <= x.size(); b += 32) encode_block(&x[b], t, out);
            break;
        default: throw Error("synthetic writer: unsupported type");
    }
}

int32_t ggml_id(ElemType t) {
    switch (t) {
        case ElemType::F32: return 0;
        case ElemType::F16: return 1;
        case ElemType::BF16: return 30;
        case ElemType::Q8_0: return 8;
        case ElemType::Q4_0: return 2;
        case ElemType::Q4_1: return 3;
        case ElemType::Q5_0: return 6;
        case ElemType::Q5_1: return 7;
        case ElemType::IQ4_NL: return 20;
        default: throw Error("synthetic writer: unsupported type");
    }
}

uint64_t row_bytes(ElemType t, uint32_t w) {
    const auto& i = elem_type_info(t);
    return uint64_t(w) / i.block_elems * i.block_bytes;
}

class Writer {
public:
    explicit Writer(OutputSink& o) : o_(o) {}
    template <class T> void put(T v) { Bytes b; append_le<T>(b, v); bytes(b); }
    void bytes(const Bytes& b) { o_.write(b.data(), b.size()); }
    void zeros(uint64_t n) {
        Bytes z(std::min<uint64_t>(n, 1 << 20), 0);
        while (n) {
            uint64_t k = std::min<uint64_t>(n, z.size());
            o_.write(z.data(), k);
            n -= k;
        }
    }
    void text(const std::string& s) { o_.write(reinterpret_cast<const uint8_t*>(s.data()), s.size()); }

private:
    OutputSink& o_;
};

std::string rng_text(uint64_t seed) {
    Rng r(seed);
    std::string s;
    for (int i = 0; i < 624; ++i) s += std::to_string(r.next() & 0xffffffffu) + " ";
    return s + "624";
}

// Writes `rows` rows of layer `l` (positions first..first+rows) of one type.
void layer_rows(Writer& w, const LayerModel& m, ElemType t, uint32_t first, uint32_t rows, Rng& r) {
    std::vector<float> x;
    Bytes buf;
    for (uint32_t p = first; p < first + rows; ++p) {
        m.row(p, r, x);
        encode_row(x, t, buf);
        if (buf.size() > (1 << 20)) w.bytes(buf), buf.clear();
    }
    w.bytes(buf);
}

// V transposed: for each channel, `cells` values (then `pad` zero elements, legacy arena).
void layer_transposed(Writer& w, const LayerModel& m, ElemType t, uint32_t cells, uint32_t pad, Rng& r) {
    std::vector<std::vector<float>> rows(cells);
    for (uint32_t p = 0; p < cells; ++p) m.row(p, r, rows[p]);
    const uint64_t elt = elem_type_info(t).block_bytes;
    Bytes buf;
    for (size_t c = 0; c < m.mean.size(); ++c) {
        std::vector<float> col(cells);
        for (uint32_t p = 0; p < cells; ++p) col[p] = rows[p][c];
        encode_row(col, t, buf);
        buf.insert(buf.end(), pad * elt, 0);
        if (buf.size() > (1 << 20)) w.bytes(buf), buf.clear();
    }
    w.bytes(buf);
}

void tokens(Writer& w, uint32_t n, Rng& r) {
    w.put<uint32_t>(n);
    for (uint32_t i = 0; i < n; ++i) w.put<int32_t>(static_cast<int32_t>(r.next() % 512));
}

// Mainline KvRecord (STATE-FORMATS.md §7.2) for `cells` cells of sequence 0.
// K of every layer, row by row: its type, its row size, then the cells' rows (one model each).
void k_layers(Writer& w, const Spec& s, const std::vector<LayerModel>& models, Rng& r) {
    for (uint32_t l = 0; l < s.n_layer; ++l) {
        w.put<int32_t>(ggml_id(s.k_type));
        w.put<uint64_t>(row_bytes(s.k_type, s.n_embd));
        layer_rows(w, models[l], s.k_type, 0, s.cells, r);
    }
}

void kv_record(Writer& w, const Spec& s, Rng& r, uint32_t ext_bytes, bool n_stream) {
    std::vector<LayerModel> km, vm;
    for (uint32_t l = 0; l < s.n_layer; ++l) km.emplace_back(s.n_embd, r), vm.emplace_back(s.n_embd, r);
    if (n_stream) w.put<uint32_t>(s.n_stream);
    for (uint32_t st = 0; st < s.n_stream; ++st) {
        w.put<uint32_t>(s.cells);
        for (uint32_t c = 0; c < s.cells; ++c) {
            w.put<int32_t>(c);
            w.put<uint32_t>(1);
            for (uint32_t e = 0; e < ext_bytes / 4; ++e) w.put<int32_t>(e == 2 ? 7 : c);
            w.put<int32_t>(st);
        }
        w.put<uint32_t>(s.v_trans ? 1 : 0);
        w.put<uint32_t>(s.n_layer);
        k_layers(w, s, km, r);
        for (uint32_t l = 0; l < s.n_layer; ++l) {
            w.put<int32_t>(ggml_id(s.v_type));
            if (s.v_trans) {
                w.put<uint32_t>(elem_type_info(s.v_type).block_bytes);
                w.put<uint32_t>(s.n_embd);
                layer_transposed(w, vm[l], s.v_type, s.cells, 0, r);
            } else {
                w.put<uint64_t>(row_bytes(s.v_type, s.n_embd));
                layer_rows(w, vm[l], s.v_type, 0, s.cells, r);
            }
        }
    }
}

void legacy_prefix(Writer& w, Rng& r, uint64_t seed) {
    std::string t = rng_text(seed);
    w.put<uint64_t>(t.size());
    w.text(t);
    w.zeros(65536 - t.size());
    w.put<uint64_t>(512);
    w.put<uint64_t>(512);
    for (int i = 0; i < 512; ++i) w.put<float>(static_cast<float>(r.tri() * 8));
    w.put<uint64_t>(0);
}

// seq v1: tokens, a cell count and dims, the cells' positions, K per layer, V transposed.
void write_seq1(Writer& w, const Spec& s, Rng& r) {
    w.put<uint32_t>(0x67677371);
    w.put<uint32_t>(1);
    tokens(w, s.cells, r);
    w.put<uint32_t>(8);
    w.put<uint32_t>(s.cells);
    w.put<uint32_t>(s.n_layer);
    w.put<uint32_t>(s.n_embd);
    for (uint32_t c = 0; c < s.cells; ++c) w.put<int32_t>(c);
    std::vector<LayerModel> m;
    for (uint32_t l = 0; l < s.n_layer; ++l) m.emplace_back(s.n_embd, r);
    k_layers(w, s, m, r);
    for (uint32_t l = 0; l < s.n_layer; ++l) {
        w.put<int32_t>(ggml_id(s.v_type));
        w.put<uint64_t>(elem_type_info(s.v_type).block_bytes);
        layer_transposed(w, m[l], s.v_type, s.cells, 0, r);
    }
}

// ik_llama.cpp's session v10: rng, outputs, then its KV record (no streams, n_seq_id 1).
void write_ik_session10(Writer& w, const Spec& s, Rng& r) {
    w.put<uint32_t>(0x6767736E);
    w.put<uint32_t>(10);
    tokens(w, s.cells, r);
    w.put<uint32_t>(5);
    w.text("llama");
    std::string t = rng_text(s.seed);
    w.put<uint32_t>(t.size());
    w.text(t);
    w.put<uint32_t>(1);
    w.put<int32_t>(0);
    w.put<uint64_t>(512);
    for (int i = 0; i < 512; ++i) w.put<float>(static_cast<float>(r.tri()));
    w.put<uint64_t>(0);
    Spec k = s;
    k.n_stream = 1;
    kv_record(w, k, r, 0, false);
    w.put<uint32_t>(0);  // qnext_state
    w.put<uint32_t>(0);  // dsa_indexer_state
}

// A 2023 blob with the whole KV arena (legacy-full), or a session v0 around one (`f`).
void write_legacy_full(Writer& w, const Spec& s, Rng& r, const std::string& f) {
    if (f == "session0") {  // header + 32-byte hparams + tokens
        w.put<uint32_t>(0x6767736E);
        w.put<uint32_t>(0);
        for (uint32_t v : {512u, s.n_ctx, s.n_embd, 4u, 8u, s.n_layer, 8u, 0u}) w.put<uint32_t>(v);
        tokens(w, s.cells, r);
    }
    legacy_prefix(w, r, s.seed);
    const uint64_t elt = elem_type_info(s.k_type).block_bytes, T = 208;
    const uint64_t n_el = uint64_t(s.n_layer) * s.n_ctx * s.n_embd, kb = n_el * elt;
    const uint64_t kv_size = 2 * kb + (2u << 20), base = 0x7f0000001000ull;
    w.put<uint64_t>(kv_size);
    w.put<int32_t>(0);
    auto tensor = [&](const char* name, uint64_t data_ptr, uint64_t next, uint64_t offs) {
        w.put<uint64_t>(offs);
        w.put<uint64_t>(kb + T);
        w.put<uint64_t>(next);
        w.zeros(8);
        w.put<int32_t>(s.k_type == ElemType::F16 ? 1 : 0);
        w.put<int32_t>(1);
        for (uint64_t v : {n_el, uint64_t(1), uint64_t(1), uint64_t(1), elt, kb, kb, kb}) w.put<uint64_t>(v);
        w.zeros(160 - 72);
        w.put<uint64_t>(data_ptr);
        std::string nm(name);
        nm.resize(32, '\0');
        w.text(nm);
        w.zeros(8);
    };
    std::vector<LayerModel> km, vm;
    for (uint32_t l = 0; l < s.n_layer; ++l) km.emplace_back(s.n_embd, r), vm.emplace_back(s.n_embd, r);
    tensor("cache_k", base + 32 + T, base + 32 + T + kb, 32);
    for (uint32_t l = 0; l < s.n_layer; ++l) {
        layer_rows(w, km[l], s.k_type, 0, s.cells, r);
        w.zeros(uint64_t(s.n_ctx - s.cells) * s.n_embd * elt);
    }
    tensor("cache_v", base + 64 + 2 * T + kb, 0, 64 + T + kb);
    for (uint32_t l = 0; l < s.n_layer; ++l) layer_transposed(w, vm[l], s.k_type, s.cells, s.n_ctx - s.cells, r);
    w.zeros(kv_size - 64 - 2 * T - 2 * kb);
}

// A 2023 blob with the used cells only (legacy-compact; legacy-dump pads it to the arena's
// size), or a session v1 around one (`f`).
void write_legacy_compact(Writer& w, const Spec& s, Rng& r, const std::string& f) {
    if (f == "session1") {
        w.put<uint32_t>(0x6767736E);
        w.put<uint32_t>(1);
        for (uint32_t v : {512u, s.n_ctx, s.n_embd, 4u, 8u, s.n_layer, 8u, 0u}) w.put<uint32_t>(v);
        tokens(w, s.cells, r);
    }
    legacy_prefix(w, r, s.seed);
    const uint64_t elt = elem_type_info(s.k_type).block_bytes;
    const uint64_t kv_size = 2 * uint64_t(s.n_layer) * s.n_ctx * s.n_embd * elt + (2u << 20);
    w.put<uint64_t>(kv_size);
    w.put<int32_t>(s.cells);
    std::vector<LayerModel> m;
    for (uint32_t l = 0; l < s.n_layer; ++l) m.emplace_back(s.n_embd, r);
    for (uint32_t l = 0; l < s.n_layer; ++l) layer_rows(w, m[l], s.k_type, 0, s.cells, r);
    for (uint32_t l = 0; l < s.n_layer; ++l) layer_transposed(w, m[l], s.k_type, s.cells, 0, r);
    if (f == "legacy-dump") w.zeros(kv_size - 2 * uint64_t(s.n_layer) * s.cells * s.n_embd * elt);
}

}  // namespace

std::vector<std::string> flavours() {
    return {"session9", "session10", "seq2", "seq3", "raw", "seqraw", "seq1", "ik-session10",
            "legacy-full", "legacy-compact", "legacy-dump", "session0", "session1"};
}

uint32_t cells_for_size(const Spec& s, uint64_t bytes) {
    uint64_t per = s.n_layer * (row_bytes(s.k_type, s.n_embd) + row_bytes(s.v_type, s.n_embd)) + 12;
    return static_cast<uint32_t>(std::max<uint64_t>(1, bytes / per));
}

void write_state(const Spec& s, OutputSink& out) {
    Writer w(out);
    Rng r(s.seed);
    const std::string& f = s.flavour;
    if (f == "session9" || f == "session10") {
        w.put<uint32_t>(0x6767736E);
        w.put<uint32_t>(f == "session9" ? 9 : 10);
        tokens(w, s.cells + 1, r);
        w.put<uint32_t>(5);
        w.text("llama");
        kv_record(w, s, r, 0, true);
    } else if (f == "seq2" || f == "seq3") {
        w.put<uint32_t>(0x67677371);
        w.put<uint32_t>(f == "seq2" ? 2 : 3);
        tokens(w, s.cells, r);
        kv_record(w, s, r, 0, true);
    } else if (f == "raw") {
        w.put<uint32_t>(5);
        w.text("llama");
        kv_record(w, s, r, 0, true);
    } else if (f == "seqraw") {
        w.put<uint32_t>(0xAF143CD8);
        w.put<int32_t>(0);
        kv_record(w, s, r, 0, true);
    } else if (f == "seq1") {
        write_seq1(w, s, r);
    } else if (f == "ik-session10") {
        write_ik_session10(w, s, r);
    } else if (f == "legacy-full" || f == "session0") {
        write_legacy_full(w, s, r, f);
    } else if (f == "legacy-compact" || f == "legacy-dump" || f == "session1") {
        write_legacy_compact(w, s, r, f);
    } else {
        throw Error("unknown synthetic flavour '" + f + "'");
    }
}

}  // namespace stzsynth
