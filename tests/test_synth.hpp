// Synthetic state files (tools/synth.cpp, written per the spec) and parsing them from memory:
// the helpers of the tests that plan or parse whole files.
#pragma once
#include "formats/detect.hpp"
#include "synth.hpp"
#include "test_util.hpp"

namespace stztest {

// The bytes of the state file `s` describes.
inline stz::Bytes synth(const stzsynth::Spec& s) {
    stz::MemorySink sink;
    stzsynth::write_state(s, sink);
    return sink.out;
}

// `b` parsed as a state file (throws, as parse_state_file does, on a bad file).
inline stz::ParsedFile parse(const stz::Bytes& b, const stz::ParseHints& h = {}) {
    stz::MemorySource src(b);
    return stz::parse_state_file(src, h);
}

}  // namespace stztest
