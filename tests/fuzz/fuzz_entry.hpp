// Fuzz entry points shared by the libFuzzer targets and the regression test that replays
// every input once found to crash (tests/fuzz/regressions/<target>/*).
#pragma once
#include <cstddef>
#include <cstdint>

namespace stzfuzz {
// Every state-file parser: must return sections that tile the input, never crash.
void parse(const uint8_t* data, size_t size);
// The container reader and decoder, from a stream and from a seekable source.
void container(const uint8_t* data, size_t size);
// Every codec's decoder on arbitrary parameters and payloads; every registered sample
// spec's decoder on arbitrary payloads and its round trip on the data.
void codecs(const uint8_t* data, size_t size);
}  // namespace stzfuzz
