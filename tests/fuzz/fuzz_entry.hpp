// Fuzz entry points shared by the libFuzzer targets and the regression test that replays
// every input once found to crash (tests/fuzz/regressions/<target>/*).
#pragma once
#include <cstddef>
#include <cstdint>

#include "base/bytes.hpp"

namespace stzfuzz {
// Every state-file parser: must return sections that tile the input, never crash.
void parse(const uint8_t* data, size_t size);
// The container reader and decoder, from a stream and from a seekable source.
void container(const uint8_t* data, size_t size);
// Every codec's decoder on arbitrary parameters and payloads; every registered sample
// spec's decoder on arbitrary payloads and its round trip on the data.
void codecs(const uint8_t* data, size_t size);
// The --patch-from head decoder after its zstd frame: the patch map (every record, the token
// model), the token tail restored with keys read from a fixed reference, and the walk that
// rebuilds the file from the map; the input is the frame's content (map, then meta bytes).
void patch(const uint8_t* data, size_t size);
// The fixed reference file of `patch`.
const stz::Bytes& patch_reference();
// Seeds for `patch`: contents of real-shaped maps over that reference, written into `dir`.
void write_patch_seeds(const char* dir);
}  // namespace stzfuzz
