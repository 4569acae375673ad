// htscodecs' 32-way rANS kernels, chosen once and called directly.
//
// htscodecs 1.3.0's rans_compress_to_4x16 / rans_uncompress_to_4x16 run CPUID (leaves 0, 1
// and 7) on every call to pick a kernel. Under a hypervisor CPUID traps: 7.5 us each here,
// ~16 us a call, 5-8 % of the default preset's time on the corpus's 0.1-1 MB files (perf:
// the CPUID instructions were the wrappers' whole self time). For the one stream form the
// rans codec writes above 1000 bytes (flag byte RANS_ORDER_X32 | order, the size as 7-bit
// groups, the kernel's output) the wrapper's work is that header: written and read here, with
// the kernel picked once per mask. Anything else (small inputs, other flags, a library built
// without a kernel: the kernels are weak symbols, not in the public header) takes the wrapper.
#include "rans_codec.hpp"
#include "rans_encoder_parts.hpp"
#include "rans_order0_encoder.hpp"
#include "rans_order0_halves.hpp"
#include "rans_order0_small.hpp"
#include "rans_order1_decoder.hpp"
#include "rans_order1_encoder.hpp"
#include "uint7.hpp"

#include <htscodecs/rANS_static4x16.h>

#include <array>
#include <atomic>

extern "C" {
#define STZ_RANS_KERNEL(name, type) __attribute__((weak)) unsigned char* name(unsigned char*, unsigned int, unsigned char*, type);
STZ_RANS_KERNEL(rans_compress_O0_32x16, unsigned int*)
STZ_RANS_KERNEL(rans_compress_O1_32x16, unsigned int*)
STZ_RANS_KERNEL(rans_compress_O0_32x16_avx2, unsigned int*)
STZ_RANS_KERNEL(rans_compress_O1_32x16_avx2, unsigned int*)
STZ_RANS_KERNEL(rans_compress_O0_32x16_avx512, unsigned int*)
STZ_RANS_KERNEL(rans_compress_O1_32x16_avx512, unsigned int*)
STZ_RANS_KERNEL(rans_uncompress_O0_32x16, unsigned int)
STZ_RANS_KERNEL(rans_uncompress_O1_32x16, unsigned int)
STZ_RANS_KERNEL(rans_uncompress_O0_32x16_avx2, unsigned int)
STZ_RANS_KERNEL(rans_uncompress_O1_32x16_avx2, unsigned int)
STZ_RANS_KERNEL(rans_uncompress_O0_32x16_avx512, unsigned int)
STZ_RANS_KERNEL(rans_uncompress_O1_32x16_avx512, unsigned int)
#undef STZ_RANS_KERNEL
}

namespace stz {
namespace {

// Below this the wrapper writes scalar 4x16 streams (it drops RANS_ORDER_X32), not X32 ones.
constexpr unsigned kMinX32 = 1001;

// The kernels for one order: encode and decode, or null for "use the wrapper"; encode_small
// and decode_small, where set, code inputs (outputs) of up to kSmallEncodeBytes
// (kSmallDecodeBytes; order 0: kSmallOrder0DecodeBytes) instead; decode_grouped decodes
// statezip's own streams that encode_small writes (rans_order1_form.hpp: grouped contexts,
// planes in two halves), of any size.
using SmallEncodeKernel = unsigned char* (*)(unsigned char*, unsigned int, unsigned char*, unsigned int*, OrderTest,
                                              OrderVerdict*, int*);
struct KernelPair {
    RansEncodeKernel encode = nullptr;
    RansDecodeKernel decode = nullptr;
    SmallEncodeKernel encode_small = nullptr;  // statezip's order-1 encoder (rans_order1_encoder.hpp)
    RansDecodeKernel decode_small = nullptr;
    RansDecodeKernel decode_grouped = nullptr;
    bool decode_in_pairs = false;  // order 0 in two halves: both halves' lanes stepped together
};
// statezip's order-1 encoder writes the library's bytes with a fraction of its set-up, and its
// loop is faster too (best of 20, AVX-512, against the library's AVX-512 encoder on the same
// planes: 20 KB 2.8-3.8x, 0.1 MB 2.0-2.4x, 1 MB 1.5x, 3 MB 1.4-1.7x). The limit bounds the
// step-major copy of the input it keeps (one chunk's plane at the engine's default).
constexpr unsigned kSmallEncodeBytes = 4u << 20;
// statezip's order-1 decoder builds its tables at a fraction of the library's cost, and its
// loop runs up to 10 % slower than the library's on planes of megabytes (best of 30, the same
// streams, AVX-512: 0.1 MB 1.5-2.4x the library's speed, 0.25 MB 1.15-1.9x, 1 MB 0.9-1.2x,
// 1.5 MB 0.9-1.0x, 4 MB 0.87x; AVX2 against the library's AVX2 decoder: 0.1 MB 1.4-2.1x,
// 0.25 MB 1.1-1.8x, 1 MB 0.9-1.1x): below this size it decodes, above the library does.
constexpr unsigned kSmallDecodeBytes = 1u << 20;
// statezip's order-0 decoder of one stream fills its 4096 slots a vector at a time where the
// library fills them one by one (half of the library's time on planes of 2-16 KB, a q5_1 cache's
// scale planes: that cache decompresses 1.15x as fast); its loop runs ~6 % slower than the
// library's, which the fill no longer pays for on planes above this.
constexpr unsigned kSmallOrder0DecodeBytes = 64u << 10;
struct KernelSet {
    KernelPair order[2];
    // The slot fill of statezip's decoders of the library's small order-0 streams (any form
    // writes the same table): the widest the mask's decoder bits allow.
    order1::FillFn fill_slots = order1::fill_row_scalar;
};

// The kernels htscodecs would run under `mask` on this CPU, minus SSE4 (never allowed, see
// rans_allowed_cpu_mask): AVX-512, else AVX2, else the portable 32-way code. SIMD needs
// POPCNT and SSSE3 as in htscodecs' own detection. __builtin_cpu_supports reads what libgcc
// detected once at start-up: no CPUID here.
KernelSet kernels_for(int mask) {
    __builtin_cpu_init();
    const bool simd = __builtin_cpu_supports("popcnt") && __builtin_cpu_supports("ssse3");
    const bool avx512 = simd && __builtin_cpu_supports("avx512f"), avx2 = simd && __builtin_cpu_supports("avx2");
    KernelSet k;
    // Order 0 by statezip's encoder on every CPU: from 64 KB its table is counted on a sample
    // (rans_order0_encoder.cpp), which the library's encoders cannot be told, and a .stz must not
    // depend on the CPU.
    k.order[0] = {rans_order0_encode_x32_scalar, rans_uncompress_O0_32x16};
    k.order[1] = {rans_compress_O1_32x16, rans_uncompress_O1_32x16};
    // statezip's order-1 coder one lane at a time where no vector form is allowed: streams with
    // grouped contexts are written and read on every CPU, and the same ones.
    k.order[1].encode_small = rans_order1_encode_if_scalar;
    k.order[1].decode_grouped = rans_order1_decode_grouped_scalar;
    if (avx2 && (mask & RANS_CPU_ENC_AVX2)) {
        if (rans_enc::steps_avx2_available()) k.order[0].encode = rans_order0_encode_x32_avx2;
        k.order[1].encode = rans_compress_O1_32x16_avx2;
        if (rans_order1_encoder_avx2_available()) k.order[1].encode_small = rans_order1_encode_if_avx2;
    }
    // On AMD's cores order 0's AVX-512 gathering steps are slower than the AVX2 ones, which
    // write the same bytes (htscodecs' encoders, whose steps these follow; Zen 5, best of 30 on
    // 0.5-2 MB planes: 700-740 MB/s against 840-950, q8_0 quants, f16 exponent and mantissa
    // planes alike); its order-1 encoder and both decoders are as fast or faster there (decoding
    // 1830-1900 against 1580-1650 MB/s).
    const bool avx2_order0_encoder = avx2 && (mask & RANS_CPU_ENC_AVX2) && __builtin_cpu_is("amd");
    if (avx512 && (mask & RANS_CPU_ENC_AVX512)) {
        if (!avx2_order0_encoder && rans_enc::steps_avx512_available()) k.order[0].encode = rans_order0_encode_x32_avx512;
        k.order[1].encode = rans_compress_O1_32x16_avx512;
        // Order 1 by statezip's own encoder, in the widest form allowed: the same bytes
        // (rans_order1_encoder.cpp).
        if (rans_order1_encoder_avx512_available()) k.order[1].encode_small = rans_order1_encode_if_avx512;
        // Order 0 by statezip's own encoder where its permute steps run: the same bytes, about
        // twice the library's speed (Zen 5, best of 40 on 0.1-4 MB of int8 quants: 2.1-2.2 GB/s
        // against its AVX2 kernel's 1.1 and its AVX-512 one's 0.85; rans_order0_encoder.cpp).
        if (rans_order0_encoder_available()) k.order[0].encode = rans_order0_encode_x32;
    }
    if (avx2 && (mask & RANS_CPU_DEC_AVX2)) {
        k.fill_slots = order1::fill_row_avx2;
        k.order[0].decode = rans_uncompress_O0_32x16_avx2, k.order[1].decode = rans_uncompress_O1_32x16_avx2;
        if (rans_order1_avx2_available())
            k.order[1].decode_small = rans_order1_decode_avx2, k.order[1].decode_grouped = rans_order1_decode_grouped_avx2;
    }
    if (avx512 && (mask & RANS_CPU_DEC_AVX512)) {
        k.fill_slots = order1::fill_row_avx512;
        k.order[0].decode = rans_uncompress_O0_32x16_avx512, k.order[1].decode = rans_uncompress_O1_32x16_avx512;
    }
    k.order[0].decode_in_pairs = avx512 && (mask & RANS_CPU_DEC_AVX512) && rans_order0_pairs_available();
    if (k.order[0].decode_in_pairs) k.order[0].decode_small = rans_order0_decode_one;
    // Order 1 of small planes by statezip's own decoder, in the widest form allowed: the same
    // bytes (rans_order1_decoder.cpp).
    if (avx512 && (mask & RANS_CPU_DEC_AVX512) && rans_order1_avx512_available())
        k.order[1].decode_small = rans_order1_decode_avx512, k.order[1].decode_grouped = rans_order1_decode_grouped_avx512;
    return k;
}

// The kernels under every mask (its encoder and decoder bits: 16 x 16 sets), computed once: a
// coder that read the current set while a test switches masks still calls valid kernels.
constexpr int kMaskBits = 4;
size_t mask_index(int mask) { return (mask & 0xf) | ((mask >> 8) & 0xf) << kMaskBits; }
const std::array<KernelSet, 1u << (2 * kMaskBits)>& all_kernel_sets() {
    static const auto sets = [] {
        std::array<KernelSet, 1u << (2 * kMaskBits)> a;
        for (int enc = 0; enc < 16; ++enc)
            for (int dec = 0; dec < 16; ++dec) a[mask_index(enc | dec << 8)] = kernels_for(enc | dec << 8);
        return a;
    }();
    return sets;
}
std::atomic<const KernelSet*> current_kernels{nullptr};

const KernelSet& kernels() {
    const KernelSet* k = current_kernels.load(std::memory_order_acquire);
    if (!k) rans_init_cpu_once(), k = current_kernels.load(std::memory_order_acquire);
    return *k;
}

// The stream form the kernels are called for: the flags byte, n as a uint7, then what
// `body(dst, &size)` writes (a kernel's output; false if it wrote none). False too where the
// stream would not be smaller than the input (the wrapper would store it: RANS_ORDER_CAT).
// `*out_size` (at least 1 + kMaxUint7Bytes) is the room, then the stream's length.
template <class Body>
bool frame_stream(uint8_t* out, unsigned* out_size, unsigned n, int flags, Body&& body) {
    out[0] = static_cast<uint8_t>(flags);
    const unsigned header = 1 + put_uint7(out + 1, n);
    unsigned size = *out_size - header;
    if (!body(out + header, &size) || size >= n) return false;
    *out_size = header + size;
    return true;
}

}  // namespace

void rans_select_cpu(int mask) {
    rans_set_cpu(mask);
    current_kernels.store(&all_kernel_sets()[mask_index(mask)], std::memory_order_release);
}

bool rans_encode_stream(uint8_t* in, unsigned n, uint8_t* out, unsigned* out_size, int flags, const uint32_t* order0_counts) {
    const KernelPair& k = kernels().order[flags & 1];
    // A small order-0 plane: the library's 4x16 stream (its wrapper drops X32 under kMinX32),
    // by statezip's coder (rans_order0_small.hpp), which writes the same bytes.
    if (n < kMinX32 && (flags & ~RANS_ORDER_X32) == 0 && *out_size >= 1 + kMaxUint7Bytes)
        return frame_stream(out, out_size, n, 0, [&](uint8_t* body, unsigned* room) {
            size_t size = *room;
            const bool written = rans_order0_small_encode(in, n, body, &size, order0_counts);
            *room = static_cast<unsigned>(size);
            return written;
        });
    if (n < kMinX32 || flags != (RANS_ORDER_X32 | (flags & 1)) || !k.encode || *out_size < 1 + kMaxUint7Bytes)
        return rans_compress_to_4x16(in, n, out, out_size, flags) != nullptr;
    // Order 0 from kMinBytes: the plane in two halves (rans_order0_halves.hpp), else one stream.
    if (!(flags & 1) && rans_order0_halves_pay(in, n)) {
        unsigned size = *out_size;
        if (frame_stream(out, &size, n, flags, [&](uint8_t* body, unsigned* room) {
                return rans_order0_encode_halves(in, n, body, room, k.encode);
            })) {
            out[0] |= kRansOrderGrouped;
            *out_size = size;
            return true;
        }
    }
    if (!k.encode_small || n > kSmallEncodeBytes)
        return frame_stream(out, out_size, n, flags, [&](uint8_t* body, unsigned* size) { return k.encode(in, n, body, size) != nullptr; });
    int stream_form = 0;
    const bool written = frame_stream(out, out_size, n, flags, [&](uint8_t* body, unsigned* size) {
        return k.encode_small(in, n, body, size, nullptr, nullptr, &stream_form) != nullptr;
    });
    if (written && stream_form) out[0] |= kRansOrderGrouped;
    return written;
}

MeasuredEncode rans_encode_order1_if(uint8_t* in, unsigned n, uint8_t* out, unsigned* out_size, OrderTest test,
                                     OrderVerdict& verdict) {
    if (n < kMinX32 || n > kSmallEncodeBytes || *out_size < 1 + kMaxUint7Bytes) return MeasuredEncode::NotHere;
    const SmallEncodeKernel encode = kernels().order[1].encode_small;
    if (!encode) {  // the same counts and verdict on any CPU (the .stz must not depend on it), the library's encoder
        verdict = test(rans_order1_pair_counts(in, n));
        if (verdict != OrderVerdict::Order1) return MeasuredEncode::Declined;
        return rans_encode_stream(in, n, out, out_size, RANS_ORDER_X32 | 1) ? MeasuredEncode::Written : MeasuredEncode::Failed;
    }
    verdict = OrderVerdict::Order1;
    int stream_form = 0;
    if (frame_stream(out, out_size, n, RANS_ORDER_X32 | 1, [&](uint8_t* body, unsigned* size) {
            return encode(in, n, body, size, test, &verdict, &stream_form) != nullptr;
        })) {
        if (stream_form) out[0] |= kRansOrderGrouped;
        return MeasuredEncode::Written;
    }
    return verdict == OrderVerdict::Order1 ? MeasuredEncode::Failed : MeasuredEncode::Declined;
}

namespace {
// The kernel that decodes a stream of these flags into out_size bytes, or null for the wrapper.
RansDecodeKernel decoder_for(int flags, unsigned out_size) {
    if (flags == (RANS_ORDER_X32 | 1 | kRansOrderGrouped)) return kernels().order[1].decode_grouped;
    if (flags != RANS_ORDER_X32 && flags != (RANS_ORDER_X32 | 1)) return nullptr;
    const KernelPair& k = kernels().order[flags & 1];
    if (!k.decode) return nullptr;
    const unsigned small_max = flags & 1 ? kSmallDecodeBytes : kSmallOrder0DecodeBytes;
    return k.decode_small && out_size <= small_max ? k.decode_small : k.decode;
}

// How rans_decode_stream decodes a stream: an order-0 plane in two halves (`halves`), a small
// order-0 4x16 stream by statezip's decoder (`small`), else by `kernel` (null: the library's
// wrapper). `own`: every step of it is statezip's, which reads no byte outside the stream and
// writes none outside the output (the library's kernels and wrapper read past the stream).
struct DecodeRoute {
    bool framed = false, halves = false, small = false, own = false;
    unsigned header = 0;
    RansDecodeKernel kernel = nullptr;
};
DecodeRoute route_of(const uint8_t* in, unsigned in_size, unsigned out_size) {
    DecodeRoute r;
    const int flags = in_size ? in[0] : -1;
    unsigned size = 0;
    const unsigned size_bytes = in_size ? get_uint7(in + 1, in_size - 1, size) : 0;
    r.framed = size_bytes && size == out_size && 1 + size_bytes < in_size;
    r.header = 1 + size_bytes;
    const KernelPair& k0 = kernels().order[0];
    if (flags == (RANS_ORDER_X32 | kRansOrderGrouped)) {
        // Statezip's own decoder reads the halves exactly when rans_order0_decode_halves takes
        // decode_own (in pairs, or without a library kernel): the two conditions change together.
        r.halves = true, r.own = k0.decode_in_pairs || !k0.decode;
        return r;
    }
    if (flags == 0 && r.framed) {
        r.small = r.own = true;
        return r;
    }
    r.kernel = r.framed ? decoder_for(flags, out_size) : nullptr;
    const KernelPair& k = kernels().order[flags & 1];
    r.own = r.kernel && (r.kernel == k.decode_small || r.kernel == k.decode_grouped);
    return r;
}
}  // namespace

bool rans_decodes_within(const uint8_t* in, unsigned in_size, unsigned out_size) {
    return route_of(in, in_size, out_size).own;
}

bool rans_decode_stream(uint8_t* in, unsigned in_size, uint8_t* out, unsigned out_size) {
    const DecodeRoute r = route_of(in, in_size, out_size);
    // An order-0 plane in two halves (rans_order0_halves.hpp): the halves after the size.
    if (r.halves) {
        const KernelPair& k = kernels().order[0];
        return r.framed &&
               rans_order0_decode_halves(in + r.header, in_size - r.header, out, out_size, k.decode_in_pairs, k.decode);
    }
    // A small order-0 plane (the library's 4x16 stream): statezip's own decoder.
    if (r.small) return rans_order0_small_decode(in + r.header, in_size - r.header, out, out_size, kernels().fill_slots);
    if (!r.kernel) {
        if (in_size && (in[0] & kRansOrderGrouped)) return false;  // statezip's own: never the library's
        unsigned got = out_size;
        return rans_uncompress_to_4x16(in, in_size, out, &got) == out && got == out_size;
    }
    return r.kernel(in + r.header, in_size - r.header, out, out_size) == out;
}

bool rans_decodes_in_pairs(const uint8_t* in, unsigned in_size, unsigned out_size) {
    // The streams rans_decode_stream gives the one-stream order-0 decoder: their lanes are the
    // ones rans_order0_decode_two steps together.
    const RansDecodeKernel one = rans_order0_decode_one;
    return route_of(in, in_size, out_size).kernel == one;
}

bool rans_decode_two_streams(const uint8_t* a, unsigned a_size, uint8_t* a_out, unsigned a_n, const uint8_t* b,
                             unsigned b_size, uint8_t* b_out, unsigned b_n) {
    const unsigned a_header = route_of(a, a_size, a_n).header, b_header = route_of(b, b_size, b_n).header;
    return rans_order0_decode_two(a + a_header, a_size - a_header, a_out, a_n, b + b_header, b_size - b_header, b_out,
                                  b_n);
}

}  // namespace stz
