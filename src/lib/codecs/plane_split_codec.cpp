// planes: a graph stage. It splits its input into byte planes and sends each plane through
// its own sub-pipeline, e.g. `planes(top=rans:1,rest=store)`: the sign/exponent byte of
// every float through order-1 rANS, the near-random mantissa bytes stored.
//
// Planes of a scalar type (f16, bf16, f32, i32): one per byte of the element, `top` being the
// most significant (sign/exponent) byte. Planes of a quant block type: one per header byte
// (`lo`/`hi` = the f16 scale's low/high byte, `top` = `hi`), then one for the quants (`q`).
// Order: channel-major (`cm`, default: channel c's values of every row in turn, so order-1
// context is the same channel's previous token) or storage order (`rm`). Rows that do not
// fill a whole row (e.g. dedup's reference list) and a partial element go to a stored tail.
//
// Parameters carry the layout and every sub-pipeline (codec ids and their parameters), so a
// chunk decodes with no outside knowledge; they are validated whenever they are read.
// Payload: per plane a mode byte {0 stored, 1 coded, 2 constant}; coded = varint input sizes
// of sub-stages 1..n-1, varint length, bytes; constant = the one byte value. Then the tail.
//
// Records (flag 4, set when the shape has records, e.g. K layers each after its 12-byte
// header gathered into one chunk): the input is n records of `record` bytes, each `head`
// bytes of other data then a body. The payload starts with the heads: the first head raw,
// then one plane record (stored or constant) of every later head XORed with the one before
// (equal heads cost two bytes). The concatenated bodies follow, split as above.
//
// This file: the plane records, the records' heads, the codec. The parameters (the spec, the
// parameter bytes) are plane_split_params.cpp's, the element <-> plane transposition
// plane_split_permute.cpp's; plane_split.hpp is what the three share.
#include <algorithm>
#include <cstdint>
#include <cstring>

#include "codec_impls.hpp"
#include "plane_split.hpp"
#include "varint.hpp"

namespace stz::planes {

namespace {

constexpr uint8_t kModeStored = 0, kModeCoded = 1, kModeConstant = 2;
constexpr size_t kKeptCodedBytes = size_t{8} << 20;

// The decoder's plane buffer, reused per thread (a fresh zeroed buffer per chunk costs page faults).
// Sub-pipelines never re-enter planes (nesting is refused), so one buffer per thread suffices.
// Bytes: a chunk-sized one is in huge pages (large_buffers.hpp), not 1,024 small pages per 4 MiB
// that each new thread faulted in one by one.
uint8_t* scratch(uint64_t n) {
    thread_local Bytes buf;
    if (n > buf.size()) {
        Bytes larger(static_cast<size_t>(n));  // (not resize: the old bytes need no copy)
        buf.swap(larger);
    }
    return buf.data();
}

bool is_store(const Pipeline& r) { return r.stages.size() == 1 && r.stages[0].codec->id() == 0; }

// Turns the plane whose bytes lie at out[at + 1, at + 1 + size) into its record at out[w...]
// (w <= at: records before it may have shrunk) and returns where the record ends. A record is
// never longer than the stored one (1 + size bytes), so it never reaches a later plane's bytes;
// a stored plane that has not moved costs nothing (the mantissa planes: no second copy).
size_t place_plane_record(Bytes& out, size_t w, size_t at, uint64_t size, const Pipeline& recipe) {
    const ByteSpan plane(out.data() + at + 1, size);
    if (plane.size() >= 2 && std::all_of(plane.begin(), plane.end(), [&](uint8_t b) { return b == plane[0]; })) {
        const uint8_t value = plane[0];
        out[w] = kModeConstant, out[w + 1] = value;
        return w + 2;
    }
    const bool may_shrink = !recipe.stages.empty() && recipe.stages[0].codec->may_shrink(plane, recipe.stages[0].params);
    if (!plane.empty() && !is_store(recipe) && may_shrink) {
        // One stage (every preset's planes): coded into a buffer reused per thread, not into a
        // fresh one per plane (whose pages the kernel faults in and zeroes every time).
        thread_local Bytes coded;
        EncodedChunk e;
        const bool one_stage = recipe.stages.size() == 1;
        // The planes lie side by side in `out`, with slack after the last (lay_out_planes):
        // plane bytes kSlack from either end of it are coded where they lie.
        const bool in_slack = at + 1 >= Codec::kSlack && out.size() - (at + 1 + size) >= Codec::kSlack;
        if (one_stage) {
            coded.clear();
            const Codec& codec = *recipe.stages[0].codec;
            if (in_slack) codec.encode_in_slack(plane, recipe.stages[0].params, coded);
            else codec.encode(plane, recipe.stages[0].params, coded);
        } else {
            e = encode_pipeline(recipe, plane);
        }
        const Bytes& payload = one_stage ? coded : e.payload;
        Bytes rec{kModeCoded};
        for (size_t i = 1; i < e.stage_input_sizes.size(); ++i) put_varint(rec, e.stage_input_sizes[i]);
        put_varint(rec, payload.size());
        const bool coded_smaller = rec.size() + payload.size() < 1 + plane.size();
        if (coded_smaller) {  // the plane's bytes are no longer needed
            std::memcpy(out.data() + w, rec.data(), rec.size());
            std::memcpy(out.data() + w + rec.size(), payload.data(), payload.size());
            w += rec.size() + payload.size();
        }
        // Kept for the next plane up to the planes of a default-sized chunk; a larger one
        // (--chunk-size up to 64 MiB) is not held by every worker between chunks.
        if (coded.capacity() > kKeptCodedBytes) Bytes().swap(coded);
        if (coded_smaller) return w;
    }
    out[w] = kModeStored;
    if (w != at && size) std::memmove(out.data() + w + 1, plane.data(), size);
    return w + 1 + size;
}

void encode_plane(ByteSpan plane, const Pipeline& recipe, Bytes& out) {
    const size_t at = out.size();
    out.resize(at + 1 + plane.size());
    if (!plane.empty()) std::memcpy(out.data() + at + 1, plane.data(), plane.size());
    out.resize(place_plane_record(out, at, at, plane.size(), recipe));
}

// One plane record, read and checked: its mode and, coded, its outermost payload with the
// sizes its stages decode to (the plane's first).
struct PlaneRecord {
    uint8_t mode = 0;
    ByteSpan payload;  // stored: the plane; constant: its byte; coded: the recipe's payload
    std::vector<uint64_t> sizes;
    bool in_slack = false;  // later records follow the payload (Codec::kSlack readable bytes)
};

// Reads the plane record at `pos` (a plane of exactly `size` bytes), moving `pos` past it.
PlaneRecord read_plane_record(ByteSpan in, size_t& pos, const Pipeline& recipe, uint64_t size) {
    if (pos >= in.size()) throw Error("planes: truncated plane");
    PlaneRecord r;
    r.mode = in[pos++];
    if (r.mode == kModeStored || r.mode == kModeConstant) {
        uint64_t n = r.mode == kModeStored ? size : 1;
        if (r.mode == kModeConstant && size < 2) throw Error("planes: bad constant plane");
        if (n > in.size() - pos) throw Error("planes: truncated plane");
        r.payload = in.subspan(pos, n);
        pos += n;
        return r;
    }
    if (r.mode != kModeCoded || size == 0) throw Error("planes: bad plane mode");
    r.sizes.push_back(size);
    for (size_t i = 1; i < recipe.stages.size(); ++i) r.sizes.push_back(get_varint(in, pos, "planes"));
    uint64_t len = get_varint(in, pos, "planes");
    if (len > in.size() - pos) throw Error("planes: truncated plane");
    check_stage_sizes(recipe, r.sizes, len);  // nested sizes are as untrusted as a chunk's
    r.payload = in.subspan(pos, len);
    r.in_slack = in.size() - pos - len >= Codec::kSlack;
    pos += len;
    return r;
}

// A coded record whose recipe has one stage: the planes a codec may decode two at a time.
bool one_stage(const PlaneRecord& r, const Pipeline& recipe) { return r.mode == kModeCoded && recipe.stages.size() == 1; }

// Decodes a read record (a plane of `size` bytes) and returns where the plane is: a stored plane
// where it lies in `in`, any other in `dst`. `slack`: dst is followed by Codec::kSlack bytes
// that may be overwritten (the planes decoded after it, in order).
const uint8_t* decode_plane_record(const PlaneRecord& r, const Pipeline& recipe, uint8_t* dst, uint64_t size, bool slack) {
    if (r.mode == kModeStored) return r.payload.data();
    if (r.mode == kModeConstant) {
        std::fill(dst, dst + size, r.payload[0]);
        return dst;
    }
    if (recipe.stages.size() == 1) {  // the common case: decoded straight into the plane buffer
        const Codec& codec = *recipe.stages[0].codec;
        if (slack) codec.decode_into_slack(r.payload, recipe.stages[0].params, size, dst, r.in_slack);
        else codec.decode_into(r.payload, recipe.stages[0].params, size, dst);
    } else {
        Bytes plane = decode_pipeline(recipe, r.payload, r.sizes);
        if (plane.size() != size) throw Error("planes: plane decoded to a wrong size");
        std::copy(plane.begin(), plane.end(), dst);
    }
    return dst;
}

// Decodes one plane record at `pos` (exactly `size` bytes), as decode_plane_record.
const uint8_t* decode_plane(ByteSpan in, size_t& pos, const Pipeline& recipe, uint8_t* dst, uint64_t size, bool slack) {
    return decode_plane_record(read_plane_record(in, pos, recipe, size), recipe, dst, size, slack);
}

// Where each plane's stored record goes in `out` (from `base` on), the output grown to hold
// them all (not zero-filled, bytes.hpp: permute writes every plane byte), and the planes' starts.
std::vector<uint8_t*> lay_out_planes(const Geometry& g, Bytes& out, size_t base, std::vector<size_t>& at) {
    at.resize(g.fields.size());
    size_t end = base;
    for (size_t p = 0; p < at.size(); ++p) at[p] = end, end += 1 + g.plane_size(p);
    out.resize(end + Codec::kSlack);  // slack after the last plane; cut off by place_planes' caller
    std::vector<uint8_t*> plane(g.fields.size());
    for (size_t p = 0; p < plane.size(); ++p) plane[p] = out.data() + at[p] + 1;
    return plane;
}

// The permuted planes at `at` turned into their records in order; returns where they end.
size_t place_planes(const Geometry& g, const PlanesParams& P, Bytes& out, size_t base, const std::vector<size_t>& at) {
    size_t w = base;
    for (size_t p = 0; p < g.fields.size(); ++p) w = place_plane_record(out, w, at[p], g.plane_size(p), P.recipes[P.plane_recipe[p]]);
    return w;
}

// Data without records: the planes, then the tail. The planes are permuted straight into
// `out`, each where its stored record would be, and then turned into their records in order.
void encode_body(ByteSpan in, const PlanesParams& P, Bytes& out) {
    Geometry g = geometry(P, in.size());
    const size_t base = out.size();
    std::vector<size_t> at;
    std::vector<uint8_t*> plane = lay_out_planes(g, out, base, at);
    permute<true>(const_cast<uint8_t*>(in.data()), plane.data(), P, g);  // reads only
    out.resize(place_planes(g, P, out, base, at));
    append_bytes(out, in.subspan(g.body));
}

// Decodes the plane records of `in` (data without records, out_size bytes once decoded) into
// the per-thread plane buffer, or finds them where they lie stored; returns the tail.
ByteSpan decode_planes(ByteSpan in, const PlanesParams& P, const Geometry& g, uint64_t out_size, std::vector<uint8_t*>& plane) {
    const uint64_t tail = out_size - g.body;
    if (tail > in.size()) throw Error("planes: truncated tail");
    ByteSpan records = in.first(in.size() - tail);
    // In plane order (the planes lie in the buffer in that order: fields() are in byte order),
    // with slack after the last: what a plane's decoder writes past its end lands in planes
    // not decoded yet.
    uint8_t* planes = scratch(g.body + Codec::kSlack);
    const size_t n = g.fields.size();
    std::vector<PlaneRecord> record(n);
    size_t pos = 0;
    auto recipe = [&](size_t p) -> const Pipeline& { return P.recipes[P.plane_recipe[p]]; };
    for (size_t p = 0; p < n; ++p) record[p] = read_plane_record(records, pos, recipe(p), g.plane_size(p));
    if (pos != records.size()) throw Error("planes: bytes left after the last plane");
    plane.resize(n);
    // Two at a time where their codec decodes them together (it then writes nothing past their
    // ends: the slack of the planes before them is not disturbed).
    auto dst = [&](size_t p) { return planes + g.offset[p]; };
    decode_planes_in_pairs(
        n,
        [&](size_t p) {
            const PlaneRecord& r = record[p];
            return one_stage(r, recipe(p)) &&
                   recipe(p).stages[0].codec->decodes_in_pairs(r.payload, recipe(p).stages[0].params, g.plane_size(p));
        },
        [&](size_t a, size_t b) {
            const Stage &sa = recipe(a).stages[0], &sb = recipe(b).stages[0];
            if (sa.codec == sb.codec) {
                sa.codec->decode_pair_together(record[a].payload, sa.params, g.plane_size(a), dst(a),
                                               record[b].payload, sb.params, g.plane_size(b), dst(b));
            } else {  // (planes after `a` are decoded: no slack for it)
                sa.codec->decode_into(record[a].payload, sa.params, g.plane_size(a), dst(a));
                sb.codec->decode_into_slack(record[b].payload, sb.params, g.plane_size(b), dst(b), record[b].in_slack);
            }
            plane[a] = dst(a), plane[b] = dst(b);
        },
        [&](size_t p, bool later_done) {  // permute only reads the planes: const_cast is safe
            plane[p] = const_cast<uint8_t*>(decode_plane_record(record[p], recipe(p), dst(p), g.plane_size(p), !later_done));
        });
    return in.last(tail);
}

// Into `dst`, which holds out_size bytes: permute and the tail's copy write every byte.
void decode_body(ByteSpan in, const PlanesParams& P, uint64_t out_size, uint8_t* dst) {
    Geometry g = geometry(P, out_size);
    std::vector<uint8_t*> plane;
    ByteSpan tail = decode_planes(in, P, g, out_size, plane);
    permute<false>(dst, plane.data(), P, g);
    if (!tail.empty()) std::memcpy(dst + g.body, tail.data(), tail.size());
}

const Pipeline& store_recipe() {
    static const Pipeline store = [] {
        Pipeline p;
        p.stages.push_back({find_codec(uint8_t{0}), {}});
        return p;
    }();
    return store;
}

// Every head after the first, XORed with the one before.
Bytes head_deltas(ByteSpan in, uint64_t n, uint64_t R, uint64_t H) {
    Bytes deltas;
    deltas.reserve(n ? H * (n - 1) : 0);
    for (uint64_t i = 1; i < n; ++i)
        for (uint64_t k = 0; k < H; ++k) deltas.push_back(in[i * R + k] ^ in[(i - 1) * R + k]);
    return deltas;
}

// Records: the heads (first raw, the others XORed with their predecessor), then the bodies.
void encode_records(ByteSpan in, const PlanesParams& P, Bytes& out) {
    const uint64_t R = P.record, H = P.record_head, B = R - H;
    if (in.size() % R) throw Error("planes: the input is not a whole number of records");
    const uint64_t n = in.size() / R;
    if (n) append_bytes(out, in.first(H));
    encode_plane(head_deltas(in, n, R, H), store_recipe(), out);
    if (planes_split_by_record(P, B, n)) {  // each body permuted straight from its record
        const Geometry g = geometry(P, B * n);
        const size_t base = out.size();
        std::vector<size_t> at;
        std::vector<uint8_t*> plane = lay_out_planes(g, out, base, at);
        permute_records<true>(const_cast<uint8_t*>(in.data()), plane.data(), P, n, R, H);  // reads only
        out.resize(place_planes(g, P, out, base, at));
        return;
    }
    thread_local Bytes bodies;  // reused: a fresh buffer per chunk costs page faults
    bodies.clear();
    bodies.reserve(B * n);
    for (uint64_t i = 0; i < n; ++i) append_bytes(bodies, in.subspan(i * R + H, B));
    encode_body(bodies, P, out);
}

// Into `o`, which holds out_size bytes: every head and body byte is written.
void decode_records(ByteSpan in, const PlanesParams& P, uint64_t out_size, uint8_t* o) {
    const uint64_t R = P.record, H = P.record_head, B = R - H;
    if (out_size % R) throw Error("planes: the output is not a whole number of records");
    const uint64_t n = out_size / R;
    const uint64_t first = n ? H : 0;
    if (first >= in.size()) throw Error("planes: truncated record heads");
    Bytes heads(H * n);
    std::copy(in.begin(), in.begin() + first, heads.begin());
    size_t pos = first;
    if (in[pos] == kModeCoded) throw Error("planes: bad record heads mode");
    uint8_t* later = heads.data() + first;
    if (const uint8_t* at = decode_plane(in, pos, store_recipe(), later, H * n - first, false); at != later)
        std::copy(at, at + (H * n - first), later);
    for (uint64_t i = first; i < heads.size(); ++i) heads[i] ^= heads[i - H];
    if (planes_split_by_record(P, B, n)) {  // each body permuted straight into its record
        const Geometry g = geometry(P, B * n);
        std::vector<uint8_t*> plane;
        if (!decode_planes(in.subspan(pos), P, g, B * n, plane).empty()) throw Error("planes: bytes after the record bodies");
        permute_records<false>(o, plane.data(), P, n, R, H);
        if (H)
            for (uint64_t i = 0; i < n; ++i) std::memcpy(o + i * R, heads.data() + i * H, H);
        return;
    }
    // The bodies are decoded in place, then spread out from the last record to the first
    // (record i's body moves from i * B to i * R + H, never before where it was).
    decode_body(in.subspan(pos), P, B * n, o);
    for (uint64_t i = n; i-- > 0;) {
        std::memmove(o + i * R + H, o + i * B, B);
        if (H) std::memcpy(o + i * R, heads.data() + i * H, H);
    }
}

class PlaneSplitCodec final : public Codec {
public:
    uint8_t id() const override { return kPlanesId; }
    std::string_view name() const override { return "planes"; }
    Bytes make_params(const std::vector<std::string>& args, const DataShape& shape) const override {
        return planes::make_params(args, shape);
    }
    void check_params(ByteSpan params) const override { (void)read_params(params); }
    std::vector<std::string> sample_specs() const override {
        return {"planes(all=zstd:1)", "planes(top=rans:1,rest=store)", "planes:rm(top=rans:0,rest=zstd:3)",
                "planes(lo=store,hi=rans:1,q=zstd:3,rest=store)"};
    }
    void encode(ByteSpan in, ByteSpan params, Bytes& out) const override {
        PlanesParams P = read_params(params);
        P.record ? encode_records(in, P, out) : encode_body(in, P, out);
    }
    // The output is grown before the planes are decoded (not zero-filled, bytes.hpp): its
    // size is the stage's, which the reader bounded by what the input can decode to.
    void decode(ByteSpan in, ByteSpan params, size_t out_size, Bytes& out) const override {
        (void)read_params(params);  // before anything is allocated
        decode_appending(in, params, out_size, out);
    }
    bool writes_into() const override { return true; }
    void decode_into(ByteSpan in, ByteSpan params, size_t out_size, uint8_t* dst) const override {
        PlanesParams P = read_params(params);
        P.record ? decode_records(in, P, out_size, dst) : decode_body(in, P, out_size, dst);
    }
    std::string describe(ByteSpan params) const override { return describe_params(params); }
    // + 1: the mode byte of the heads' plane record (the heads themselves are input bytes).
    size_t max_encoded_size(size_t n) const override { return n + 2 * (kMaxHead + kMaxScalarPlanes) + 1; }
    // The output has no records (nor the input's rows), whatever follows sees plain bytes of planes.
    DataShape output_shape(const DataShape& in) const override {
        DataShape s = in;
        s.record_bytes = s.record_head = 0;
        return s;
    }
};

}  // namespace

}  // namespace stz::planes

namespace stz {

std::unique_ptr<Codec> make_plane_split_codec() { return std::make_unique<planes::PlaneSplitCodec>(); }

}  // namespace stz
