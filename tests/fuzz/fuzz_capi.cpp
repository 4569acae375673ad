// libFuzzer target: the C API's decoders (stz_decompressed_size, stz_decompress into a buffer,
// stz_decompress_stream through callbacks that return odd-sized pieces, stz_inspect_json) on
// arbitrary bytes. Each must return a code (never crash, hang or abort); a success must agree
// between the buffer and the streaming decoder.
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "statezip.h"

namespace {

struct Input {
    const uint8_t* data;
    size_t size, pos = 0;
};
long long read_cb(void* ctx, void* buf, size_t n) {
    auto* in = static_cast<Input*>(ctx);
    n = std::min({n, in->size - in->pos, size_t(1) + in->pos % 1021});  // odd pieces
    if (n) std::memcpy(buf, in->data + in->pos, n);
    in->pos += n;
    return static_cast<long long>(n);
}
int write_cb(void* ctx, const void* buf, size_t n) {
    auto* out = static_cast<std::vector<uint8_t>*>(ctx);
    if (out->size() + n > (64u << 20)) return 1;  // the fuzzer's memory, not the library's limit
    out->insert(out->end(), static_cast<const uint8_t*>(buf), static_cast<const uint8_t*>(buf) + n);
    return 0;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    uint64_t original = 0;
    std::vector<uint8_t> whole;
    int rc_buffer = STZ_ERROR_GENERIC;
    if (stz_decompressed_size(data, size, &original) == STZ_OK && original <= (64u << 20)) {
        whole.resize(original);
        size_t n = 0;
        rc_buffer = stz_decompress(data, size, whole.data(), whole.size(), &n);
        if (rc_buffer == STZ_OK && n != original) std::abort();
    }
    Input in{data, size};
    std::vector<uint8_t> streamed;
    const int rc_stream = stz_decompress_stream(read_cb, &in, write_cb, &streamed, 1);
    if (rc_buffer == STZ_OK && rc_stream == STZ_OK && streamed != whole) std::abort();
    if (rc_stream > 0 || rc_buffer > 0) std::abort();
    char* json = nullptr;
    if (stz_inspect_json(data, size, &json) == STZ_OK) stz_free(json);
    return 0;
}
