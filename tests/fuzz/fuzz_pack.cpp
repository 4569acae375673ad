// libFuzzer target: see fuzz_pack_entry.hpp.
#include "fuzz_pack_entry.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    stzfuzz::pack(data, size);
    return 0;
}
