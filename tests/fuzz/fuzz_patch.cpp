// libFuzzer target: see fuzz_entry.hpp.
#include "fuzz_entry.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    stzfuzz::patch(data, size);
    return 0;
}
