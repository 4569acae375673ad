// Factories of the built-in codecs, declared from the one list in codecs.def.
#pragma once
#include "codec.hpp"

namespace stz {
#define STZ_CODEC(id, name, factory) std::unique_ptr<Codec> make_##factory##_codec();
#include "codecs.def"
#undef STZ_CODEC
}  // namespace stz
