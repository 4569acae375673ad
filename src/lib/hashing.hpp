// xxHash, with the runtime-dispatched XXH3 where the library has it: Debian's libxxhash is
// built for baseline x86-64 (SSE2), and its *_dispatch entry points pick AVX2/AVX-512 once at
// first use. Hashing every chunk twice (raw and stored) and the whole file once cost 13 % of
// the instructions of a --fast compression with the SSE2 code.
#pragma once
#include <xxhash.h>
#if defined(__x86_64__) && __has_include(<xxh_x86dispatch.h>)
#include <xxh_x86dispatch.h>  // XXH3_64bits & co. now name the dispatching functions
#endif
