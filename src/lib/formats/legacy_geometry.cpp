#include "legacy_geometry.hpp"

#include <optional>

namespace stz {

namespace {

bool is_zero(const uint8_t* p, uint64_t elt) {
    for (uint64_t i = 0; i < elt; ++i)
        if (p[i]) return false;
    return true;
}

// Reads elements [first, first+count) of elt bytes each.
Bytes read_elems(InputSource& in, uint64_t start, uint64_t first, uint64_t count, uint64_t elt) {
    Bytes b(count * elt);
    in.read_at(start + first * elt, b.data(), b.size());
    return b;
}

// Last non-zero element + 1 of a row (0 if all zero).
uint64_t filled(const uint8_t* row, uint64_t n, uint64_t elt) {
    for (uint64_t i = n; i-- > 0;)
        if (!is_zero(row + i * elt, elt)) return i + 1;
    return 0;
}

}  // namespace

uint64_t find_full_buffer_n_past(InputSource& in, uint64_t v_start, uint64_t elt, const LegacyGeometry& g,
                                 std::optional<uint64_t> hint) {
    uint64_t rows = g.n_layer * g.n_embd, best = 0;
    const uint64_t per_read = std::max<uint64_t>(1, (4u << 20) / (g.n_ctx * elt));
    for (uint64_t r = 0; r < rows; r += per_read) {
        uint64_t n = std::min(per_read, rows - r);
        Bytes b = read_elems(in, v_start, r * g.n_ctx, n * g.n_ctx, elt);
        for (uint64_t i = 0; i < n; ++i) best = std::max(best, filled(b.data() + i * g.n_ctx * elt, g.n_ctx, elt));
    }
    if (hint && *hint <= g.n_ctx) best = std::max(best, *hint);
    return best;
}

bool guess_full_buffer_geometry(InputSource& in, uint64_t k_start, uint64_t v_start, uint64_t n_elements, uint64_t elt,
                                LegacyGeometry& g) {
    // V: rows of n_ctx elements, each n_past values then zeros. Candidate n_ctx: the start of
    // an island (a non-zero element right after a zero one) that divides the element count.
    const uint64_t window = std::min<uint64_t>(n_elements, 1u << 20);
    Bytes v = read_elems(in, v_start, 0, window, elt);
    auto vz = [&](uint64_t i) { return is_zero(v.data() + i * elt, elt); };
    if (vz(0)) return false;
    for (uint64_t c = 2; c < window; ++c) {
        if (vz(c) || !vz(c - 1) || n_elements % c) continue;
        // Check up to 64 rows spread over V: each starts non-zero; find the widest prefix.
        uint64_t rows = n_elements / c, p = 0;
        bool ok = true;
        for (uint64_t k = 0; k < 64 && ok; ++k) {
            uint64_t row = rows * k / 64;
            Bytes b = read_elems(in, v_start, row * c, c, elt);
            if (is_zero(b.data(), elt)) ok = false;
            p = std::max(p, filled(b.data(), c, elt));
        }
        if (!ok || p == 0 || p >= c) continue;
        // K: layer 0 holds p rows of n_embd values, then zeros up to n_ctx rows.
        uint64_t layer_guess_limit = std::min<uint64_t>(n_elements, 1u << 24);
        Bytes k = read_elems(in, k_start, 0, layer_guess_limit, elt);
        uint64_t z = 0;
        while (z < layer_guess_limit && !is_zero(k.data() + z * elt, elt)) ++z;
        if (z == 0 || z % p) continue;
        uint64_t n_embd = z / p;
        if (n_elements % (c * n_embd)) continue;
        g = {n_elements / (c * n_embd), c, n_embd, p};
        if (g.n_layer > 1 && c * n_embd < layer_guess_limit && is_zero(k.data() + c * n_embd * elt, elt)) continue;
        g.n_past = find_full_buffer_n_past(in, v_start, elt, g, std::nullopt);
        return true;
    }
    return false;
}

bool verify_full_buffer(InputSource& in, uint64_t k_start, uint64_t, uint64_t elt, const LegacyGeometry& g) {
    if (!g.n_layer || !g.n_ctx || !g.n_embd || g.n_past > g.n_ctx) return false;
    // Each K layer should start with data where n_past > 0 (a pass-through of the pattern).
    if (g.n_past == 0) return true;
    for (uint64_t l = 0; l < g.n_layer; l += std::max<uint64_t>(1, g.n_layer / 8)) {
        Bytes b = read_elems(in, k_start, l * g.n_ctx * g.n_embd, g.n_embd, elt);
        if (filled(b.data(), g.n_embd, elt) == 0) return false;
    }
    return true;
}

uint64_t guess_compact_row_bytes(InputSource& in, uint64_t payload_start, uint64_t kv_bytes, uint64_t ntok,
                                 std::optional<uint64_t> n_ctx_hint) {
    // End of the non-zero payload, scanning back from EOF.
    uint64_t end = in.size(), last = payload_start;
    Bytes b;
    while (end > payload_start) {
        uint64_t n = std::min<uint64_t>(1u << 20, end - payload_start);
        b.resize(n);
        in.read_at(end - n, b.data(), n);
        uint64_t i = n;
        while (i > 0 && b[i - 1] == 0) --i;
        if (i) {
            last = end - n + i;
            break;
        }
        end -= n;
    }
    uint64_t need = last - payload_start, avail = in.size() - payload_start, best = 0, best_p = UINT64_MAX;
    auto consider = [&](uint64_t n_ctx) {
        if (!n_ctx || n_ctx > kv_bytes / 2 || kv_bytes % (2 * n_ctx)) return;  // (a hint may be any number)
        uint64_t y = kv_bytes / (2 * n_ctx);
        if (ntok > n_ctx || y % 2) return;
        uint64_t p = 2 * ntok * y;
        if (p >= need && p <= avail && p < best_p) best = y, best_p = p;
    };
    if (n_ctx_hint) consider(*n_ctx_hint);
    else
        for (uint64_t c = 1; c <= (1u << 20); ++c) consider(c);
    return best;
}

ElemType guess_half_or_float(InputSource& in, uint64_t start, uint64_t bytes) {
    uint64_t n = std::min<uint64_t>(bytes, 1u << 16) & ~uint64_t(3);
    if (n == 0) return ElemType::F16;
    Bytes b(n);
    in.read_at(start, b.data(), n);
    uint64_t special = 0;
    for (uint64_t i = 0; i + 1 < n; i += 2)
        if (((load_le<uint16_t>(b.data() + i) >> 10) & 0x1f) == 0x1f) ++special;
    return special * 200 > n / 2 ? ElemType::F32 : ElemType::F16;
}

}  // namespace stz
